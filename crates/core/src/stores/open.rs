//! Opening a store read-only, noticing when its file is replaced, and naming what went wrong.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::cursor::FileIdentity;
use crate::error::StoreError;

/// A store file and, once opened, a warm read-only connection to it.
pub(crate) struct StoreHandle {
    label: &'static str,
    path: PathBuf,
    busy_timeout: Duration,
    open: Option<(Connection, FileIdentity)>,
}

impl StoreHandle {
    pub(crate) fn new(label: &'static str, path: PathBuf, busy_timeout: Duration) -> StoreHandle {
        StoreHandle {
            label,
            path,
            busy_timeout,
            open: None,
        }
    }

    pub(crate) fn label(&self) -> &'static str {
        self.label
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The connection to the file now at the path, and whether it was (re)opened by this call.
    /// A vanished file drops the connection; a replaced one (new inode) is reopened.
    pub(crate) fn current(&mut self) -> Result<(&Connection, FileIdentity, bool), StoreError> {
        let identity = match FileIdentity::of(&self.path) {
            Ok(id) => id,
            Err(e) => {
                self.open = None;
                return Err(self.io_error(&e));
            }
        };
        let fresh = !matches!(&self.open, Some((_, id)) if *id == identity);
        if fresh {
            self.open = None;
            let conn = self.connect()?;
            self.open = Some((conn, identity));
        }
        let (conn, id) = self.open.as_ref().expect("opened above");
        Ok((conn, *id, fresh))
    }

    /// Forget the connection, so the next call reopens (after an error that may have left it
    /// in a bad state).
    pub(crate) fn reset(&mut self) {
        self.open = None;
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        // Read access is checked first so that "no permission" is told apart from SQLite's
        // generic "unable to open database file".
        if let Err(e) = std::fs::File::open(&self.path) {
            return Err(self.io_error(&e));
        }
        let uri = format!("file:{}?mode=ro", uri_escape(&self.path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(uri, flags).map_err(|e| self.sqlite_error(e))?;
        conn.busy_timeout(self.busy_timeout)
            .map_err(|e| self.sqlite_error(e))?;
        // Opening is lazy: touch the schema now so a corrupt or locked file fails here.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| self.sqlite_error(e))?;
        Ok(conn)
    }

    fn io_error(&self, e: &std::io::Error) -> StoreError {
        let (store, path) = (self.label, self.path.clone());
        match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::Missing { store, path },
            std::io::ErrorKind::PermissionDenied => StoreError::PermissionDenied { store, path },
            _ => StoreError::Sqlite {
                store,
                path,
                source: rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
                    Some(e.to_string()),
                ),
            },
        }
    }

    /// Classify a SQLite failure on this store.
    pub(crate) fn sqlite_error(&self, e: rusqlite::Error) -> StoreError {
        let (store, path) = (self.label, self.path.clone());
        let code = match &e {
            rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
            _ => None,
        };
        match code {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
                store,
                path,
                waited_ms: self.busy_timeout.as_millis() as u64,
            },
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
                store,
                path,
                detail: e.to_string(),
            },
            // macOS without Full Disk Access: "authorization denied" (extended code 23), often
            // at the first statement rather than at open.
            Some(ErrorCode::AuthorizationForStatementDenied | ErrorCode::PermissionDenied) => {
                StoreError::PermissionDenied { store, path }
            }
            Some(ErrorCode::CannotOpen) if !self.path.exists() => {
                StoreError::Missing { store, path }
            }
            _ => StoreError::Sqlite {
                store,
                path,
                source: e,
            },
        }
    }
}

/// Escape a path for an SQLite `file:` URI: `%`, `?` and `#` end or change the path, and a
/// space (as in "Envelope Index") is safest escaped too.
fn uri_escape(path: &Path) -> String {
    let mut out = String::new();
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' | b' ' => out.push_str(&format!("%{b:02X}")),
            b if b.is_ascii_graphic() => out.push(*b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_escape_keeps_slashes_and_escapes_specials() {
        assert_eq!(
            uri_escape(Path::new("/a b/c?d#e%f")),
            "/a%20b/c%3Fd%23e%25f"
        );
        assert_eq!(uri_escape(Path::new("/x/ü")), "/x/%C3%BC");
    }
}
