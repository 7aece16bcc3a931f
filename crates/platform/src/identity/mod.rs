//! Who an agent is, as the OS tells it: [`identify`] walks up from a socket peer's pid past
//! our shim, shells and launchers to the program that started it, and names it by its
//! executable (an interpreter by its script; on macOS a signed program by its team and
//! identifier), never by what the agent says about itself.
//!
//! The walk and every parser are shared by both OSes and tested on Linux; only the libc calls
//! that read a macOS process (`DarwinTable`) and [`default_identifier`] are picked by `cfg`.

mod label;
mod linux;
mod macos;
mod script;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use label::{LabelError, MAX_LABEL_BYTES};
pub use linux::{NoCodeSigning, ProcFsTable};
#[cfg(target_os = "macos")]
pub use macos::DarwinTable;
pub use macos::{Codesign, parse_codesign, parse_procargs2};

/// The most processes one walk looks at: a deeper chain (or a loop in a broken table) is
/// unidentified rather than followed.
pub const MAX_STEPS: usize = 16;

/// The most bytes of a process's argument list that are read; what lies beyond is dropped.
pub const MAX_ARGS_BYTES: usize = 64 * 1024;

/// Programs that only pass the connection through (our own shim and CLI, shells, launchers):
/// the walk goes on to their parent. Matched on the executable's file name.
pub const PASS_THROUGH: &[&str] = &[
    "tidings-mcp",
    "tidings",
    "sh",
    "bash",
    "zsh",
    "dash",
    "fish",
    "ksh",
    "env",
    "nohup",
    "timeout",
    "xargs",
    "npx",
    "npm",
    "uvx",
    "uv",
];

/// Who an agent is, as the OS tells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentIdentity {
    /// The stable key a grant is stored under (settings.toml `identity = "..."`):
    /// `exe:/usr/bin/foo` (a program, by its executable's path),
    /// `exe:/usr/bin/python3 script:/home/u/x.py` (an interpreter by its script, or
    /// `module:NAME` for `python -m NAME`), `signed:TEAMID:IDENTIFIER` (macOS, signed with a
    /// team identifier), `token:NAME` (an HTTP agent token), `unidentified`.
    pub key: String,
    /// Short display name: "claude", `python3 host_a.py`, "Cursor".
    pub name: String,
    /// Who vouches for it (macOS: the Developer ID's name, "Anthropic PBC"; "Apple"); `None`
    /// on Linux and for unsigned programs.
    pub signer: Option<String>,
    /// The program's path (the executable, or the script for an interpreter), where known.
    pub program: Option<PathBuf>,
}

/// The key of the one agent for everything that cannot be identified.
const UNIDENTIFIED: &str = "unidentified";

impl AgentIdentity {
    /// The one agent for what cannot be identified.
    pub fn unidentified() -> Self {
        AgentIdentity {
            key: UNIDENTIFIED.to_owned(),
            name: "Unidentified program".to_owned(),
            signer: None,
            program: None,
        }
    }

    /// An HTTP agent known by its bearer token's name.
    pub fn token(name: &str) -> Self {
        AgentIdentity {
            key: format!("token:{name}"),
            name: name.to_owned(),
            signer: None,
            program: None,
        }
    }

    /// The agent's id for the CLI and the settings table (see [`agent_id`]).
    pub fn id(&self) -> String {
        agent_id(&self.name, &self.key)
    }

    /// Whether this is the one agent for what cannot be identified.
    pub fn is_unidentified(&self) -> bool {
        self.key == UNIDENTIFIED
    }
}

/// The longest slug an id starts with.
const SLUG_MAX: usize = 24;

/// An agent's id: a slug of `name` (lower-case ASCII letters, digits and '-', at most 24
/// characters; "agent" if nothing is left) + "-" + the first 6 hex digits of the SHA-256 of
/// `key`; "unidentified" for the unidentified key. The hash keeps two agents of the same name
/// apart and the id stable for as long as the key is.
pub fn agent_id(name: &str, key: &str) -> String {
    if key == UNIDENTIFIED {
        return UNIDENTIFIED.to_owned();
    }
    let mut slug = String::new();
    for c in name.chars() {
        if slug.len() >= SLUG_MAX {
            break;
        }
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() { "agent" } else { slug };
    let digest = Sha256::digest(key.as_bytes());
    format!("{slug}-{:02x}{:02x}{:02x}", digest[0], digest[1], digest[2])
}

/// What the walk reads about processes: `/proc` on Linux ([`ProcFsTable`]), libc on macOS
/// (`DarwinTable`). `None` means the process is gone or cannot be read.
pub trait ProcessTable: Send + Sync {
    /// The parent's pid.
    fn parent(&self, pid: i32) -> Option<i32>;
    /// The (effective) user id it runs as.
    fn uid(&self, pid: i32) -> Option<u32>;
    /// Its executable's path.
    fn exe(&self, pid: i32) -> Option<PathBuf>;
    /// Its arguments, `argv[0]` first (lossy UTF-8, at most [`MAX_ARGS_BYTES`] read).
    fn args(&self, pid: i32) -> Option<Vec<String>>;
    /// Its working directory.
    fn cwd(&self, pid: i32) -> Option<PathBuf>;
}

/// Code signing of a program file: macOS `codesign` ([`Codesign`]); the Linux twin
/// ([`NoCodeSigning`]) answers `None`.
pub trait CodeSigning: Send + Sync {
    /// How `program` is signed; `None` when it is not signed or cannot be checked.
    fn signing(&self, program: &Path) -> Option<Signing>;
}

/// What a code signature says. Its label (`TEAMID:identifier`) and whether two come from
/// the same developer are in `label`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signing {
    /// The signing identifier (`com.anthropic.claude-code`).
    pub identifier: String,
    /// The team identifier, `None` for ad-hoc and Apple's own signatures.
    pub team: Option<String>,
    /// Who signed it, from the first authority ("Anthropic PBC", "Apple").
    pub signer: Option<String>,
}

/// Identify the agent behind socket peer `pid` of user `uid`: walk up past pass-through
/// programs ([`PASS_THROUGH`]) to the first other program. A walk that meets pid <= 1, a
/// process of another user, a process that vanished or cannot be read, or more than
/// [`MAX_STEPS`] processes gives [`AgentIdentity::unidentified`].
pub fn identify(
    pid: i32,
    uid: u32,
    table: &dyn ProcessTable,
    signing: &dyn CodeSigning,
) -> AgentIdentity {
    let mut pid = pid;
    for _ in 0..MAX_STEPS {
        if pid <= 1 || table.uid(pid) != Some(uid) {
            break;
        }
        let Some(exe) = table.exe(pid) else {
            break;
        };
        let args = table.args(pid).unwrap_or_default();
        if is_pass_through(&exe, &args, || table.cwd(pid)) {
            match table.parent(pid) {
                Some(parent) if parent != pid => pid = parent,
                _ => break,
            }
            continue;
        }
        return program_identity(pid, &exe, &args, table, signing);
    }
    AgentIdentity::unidentified()
}

/// The file name of `path` as text ("" when it has none).
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether a process only passes the connection on: by its executable, or, for an
/// interpreter, by its script (`npx` and `npm` are Node scripts, so their executable is
/// `node`).
fn is_pass_through(exe: &Path, args: &[String], cwd: impl FnOnce() -> Option<PathBuf>) -> bool {
    let name = file_name(exe);
    if PASS_THROUGH.contains(&name.as_str()) {
        return true;
    }
    let Some(interpreter) = script::Interpreter::of(&name) else {
        return false;
    };
    match interpreter.target(args) {
        script::Target::Script(given) => {
            let resolved = script::resolve(&given, cwd().as_deref());
            [Path::new(&given), resolved.as_path()]
                .iter()
                .any(|p| script::is_pass_through_script(&file_name(p)))
        }
        _ => false,
    }
}

/// The identity of the first program that is not a pass-through.
fn program_identity(
    pid: i32,
    exe: &Path,
    args: &[String],
    table: &dyn ProcessTable,
    signing: &dyn CodeSigning,
) -> AgentIdentity {
    let exe_name = file_name(exe);
    let exe_key = format!("exe:{}", exe.display());
    if let Some(interpreter) = script::Interpreter::of(&exe_name) {
        // The interpreter as the user typed it ("python3") reads better than the file the
        // symlinks end at ("python3.12"); the key keeps the real executable.
        let shown = args
            .first()
            .map(|a| file_name(Path::new(a)))
            .filter(|a| script::Interpreter::of(a).is_some())
            .unwrap_or_else(|| exe_name.clone());
        match interpreter.target(args) {
            script::Target::Script(given) => {
                let path = script::resolve(&given, table.cwd(pid).as_deref());
                let name = match interpreter.package_name(&path) {
                    Some(package) => package,
                    None => format!("{shown} {}", file_name(&path)),
                };
                return AgentIdentity {
                    key: format!("{exe_key} script:{}", path.display()),
                    name,
                    signer: None,
                    program: Some(path),
                };
            }
            script::Target::Module(module) => {
                return AgentIdentity {
                    key: format!("{exe_key} module:{module}"),
                    name: format!("{shown} -m {module}"),
                    signer: None,
                    program: Some(exe.to_path_buf()),
                };
            }
            // Inline code or a bare REPL: the interpreter is all there is to go by.
            script::Target::Inline | script::Target::Nothing => {}
        }
    }
    if let Some(Signing {
        identifier,
        team: Some(team),
        signer,
    }) = signing.signing(exe)
    {
        let name = app_bundle_name(exe).unwrap_or_else(|| {
            identifier
                .rsplit('.')
                .next()
                .unwrap_or(&identifier)
                .to_owned()
        });
        return AgentIdentity {
            key: format!("signed:{team}:{identifier}"),
            name,
            signer,
            program: Some(exe.to_path_buf()),
        };
    }
    AgentIdentity {
        key: exe_key,
        name: exe_name,
        signer: None,
        program: Some(exe.to_path_buf()),
    }
}

/// The outermost `X.app` the path lies in ("Cursor" for `/Applications/Cursor.app/Contents/
/// Frameworks/Cursor Helper.app/…`): the app the user knows, not its helper.
fn app_bundle_name(path: &Path) -> Option<String> {
    path.parent()?.components().find_map(|c| {
        let part = c.as_os_str().to_string_lossy();
        part.strip_suffix(".app")
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    })
}

/// The OS's process table and code signing, what the daemon identifies peers with.
pub struct Identifier {
    table: Box<dyn ProcessTable>,
    signing: Box<dyn CodeSigning>,
}

impl Identifier {
    /// An identifier over any table and signing (tests give fakes).
    pub fn new(table: Box<dyn ProcessTable>, signing: Box<dyn CodeSigning>) -> Self {
        Identifier { table, signing }
    }

    /// [`identify`] with this table and signing.
    pub fn identify(&self, pid: i32, uid: u32) -> AgentIdentity {
        identify(pid, uid, self.table.as_ref(), self.signing.as_ref())
    }
}

impl std::fmt::Debug for Identifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identifier").finish_non_exhaustive()
    }
}

/// The identifier for this OS: `/proc` and no signing on Linux; libc and `codesign` on macOS.
pub fn default_identifier() -> Identifier {
    #[cfg(target_os = "macos")]
    {
        Identifier::new(
            Box::new(DarwinTable),
            Box::new(Codesign::new(crate::command::SystemRunner)),
        )
    }
    #[cfg(not(target_os = "macos"))]
    {
        Identifier::new(Box::new(ProcFsTable::default()), Box::new(NoCodeSigning))
    }
}
