//! The errors of the core crate: store failures and the errors a request can earn.

use std::path::PathBuf;

/// Why a store could not be read. Each variant is a distinct condition a user or a client can
/// act on, and its message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store file does not exist (Mail or Messages never ran, or the path is wrong).
    #[error("{store} store not found at {path}")]
    Missing {
        /// Which store ("Mail" or "Messages").
        store: &'static str,
        /// The path that was looked up.
        path: PathBuf,
    },
    /// The operating system refused access: on macOS this is Full Disk Access.
    #[error(
        "{store} store at {path} cannot be read (permission denied); on macOS grant Tidings \
         Full Disk Access in System Settings > Privacy & Security > Full Disk Access"
    )]
    PermissionDenied {
        /// Which store.
        store: &'static str,
        /// The path that was refused.
        path: PathBuf,
    },
    /// Another process holds a lock that outlasted our busy timeout.
    #[error("{store} store at {path} is locked by another process (waited {waited_ms} ms)")]
    Locked {
        /// Which store.
        store: &'static str,
        /// The locked file.
        path: PathBuf,
        /// How long we waited before giving up.
        waited_ms: u64,
    },
    /// The file is not a database, or `SQLite` found it damaged.
    #[error("{store} store at {path} is corrupt or not a database: {detail}")]
    Corrupt {
        /// Which store.
        store: &'static str,
        /// The damaged file.
        path: PathBuf,
        /// `SQLite`'s own words.
        detail: String,
    },
    /// The file is there but empty: wiped in place, or being created. Nothing is held open
    /// on it, so its owner can write it again; reading resumes when it does.
    #[error("{store} store at {path} is empty (wiped, or being created)")]
    Empty {
        /// Which store.
        store: &'static str,
        /// The empty file.
        path: PathBuf,
    },
    /// The file is a database but lacks a table or column every supported version has.
    #[error("{store} store at {path} has an unsupported schema: {detail}")]
    Schema {
        /// Which store.
        store: &'static str,
        /// The file.
        path: PathBuf,
        /// What is missing.
        detail: String,
    },
    /// The OS failed a file operation on the store (other than not found or permission
    /// denied, which have their own variants).
    #[error("{store} store at {path}: {source}")]
    Io {
        /// Which store.
        store: &'static str,
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// Any other `SQLite` failure, with the store it happened on.
    #[error("{store} store at {path}: {source}")]
    Sqlite {
        /// Which store.
        store: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// The message for a client: what is wrong and how to fix it, without the store's path,
    /// which would tell an agent the user's account name (`/Users/<name>/…`).
    pub fn public_message(&self) -> String {
        match self {
            StoreError::Missing { store, .. } => format!("{store} store not found"),
            StoreError::PermissionDenied { store, .. } => format!(
                "{store} store cannot be read (permission denied); on macOS grant Tidings Full \
                 Disk Access in System Settings > Privacy & Security > Full Disk Access"
            ),
            StoreError::Locked {
                store, waited_ms, ..
            } => {
                format!("{store} store is locked by another process (waited {waited_ms} ms)")
            }
            StoreError::Corrupt { store, .. } => {
                format!("{store} store is corrupt or not a database")
            }
            StoreError::Empty { store, .. } => {
                format!("{store} store is empty (wiped, or being created)")
            }
            StoreError::Schema { store, detail, .. } => {
                format!("{store} store has an unsupported schema: {detail}")
            }
            StoreError::Io { store, .. } | StoreError::Sqlite { store, .. } => {
                format!("{store} store could not be read")
            }
        }
    }

    /// Which kind of failure this is, without its details.
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            StoreError::Missing { .. } => StoreErrorKind::Missing,
            StoreError::PermissionDenied { .. } => StoreErrorKind::PermissionDenied,
            StoreError::Locked { .. } => StoreErrorKind::Locked,
            StoreError::Corrupt { .. } => StoreErrorKind::Corrupt,
            StoreError::Empty { .. } => StoreErrorKind::Empty,
            StoreError::Schema { .. } => StoreErrorKind::Schema,
            StoreError::Io { .. } | StoreError::Sqlite { .. } => StoreErrorKind::Other,
        }
    }

    /// A short machine-readable reason, used in `data.reason` of wire errors.
    pub fn reason(&self) -> &'static str {
        self.kind().reason()
    }
}

/// The kind of a [`StoreError`]: what a caller keeps to tell one failure from another without
/// its message (the hub between checks, the daemon's state). Not `non_exhaustive`, so a new
/// kind does not compile until each match on it says where it belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreErrorKind {
    /// [`StoreError::Missing`].
    Missing,
    /// [`StoreError::PermissionDenied`].
    PermissionDenied,
    /// [`StoreError::Locked`].
    Locked,
    /// [`StoreError::Corrupt`].
    Corrupt,
    /// [`StoreError::Empty`].
    Empty,
    /// [`StoreError::Schema`].
    Schema,
    /// [`StoreError::Io`], [`StoreError::Sqlite`], or a check that failed before it could
    /// read the store.
    Other,
}

impl StoreErrorKind {
    /// A short machine-readable reason, used in `data.reason` of wire errors.
    pub fn reason(self) -> &'static str {
        match self {
            StoreErrorKind::Missing => "store_missing",
            StoreErrorKind::PermissionDenied => "permission_denied",
            StoreErrorKind::Locked => "store_locked",
            StoreErrorKind::Corrupt => "store_corrupt",
            StoreErrorKind::Empty => "store_empty",
            StoreErrorKind::Schema => "store_schema",
            StoreErrorKind::Other => "store_error",
        }
    }
}

/// The errors a poll or stream request can end with; the server maps each to a JSON-RPC code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A parameter is missing, of the wrong type or out of range (-32602). `field` names it,
    /// e.g. `cursor` or `arguments.from`.
    #[error("{message}")]
    InvalidParams {
        /// The offending field, as a dotted path from `params`.
        field: String,
        /// What was wrong and what was expected.
        message: String,
    },
    /// No event type has this name (-32023, `kind: "event"`).
    #[error("unknown event type `{name}`")]
    NotFound {
        /// The requested name (already sanitised for display).
        name: String,
    },
    /// The type exists but the user turned it off (-32023 too: it is not in `events/list`,
    /// but the message says so and how to turn it on, with `data.reason: "disabled"`).
    #[error("`{event_type}` is turned off in Tidings")]
    Disabled {
        /// The type that is off.
        event_type: crate::event::EventType,
    },
    /// The store could not be read; the request may succeed later.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RequestError {
    /// Build an [`RequestError::InvalidParams`] for `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        RequestError::InvalidParams {
            field: field.into(),
            message: message.into(),
        }
    }
}
