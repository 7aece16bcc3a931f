//! Where Tidings keeps things: the Unix socket, the config and data directories, and the
//! checks a private directory must pass before a socket goes in it.
//!
//! This is the one module that decides locations; the app, the `tidings` CLI and the
//! `tidings-mcp` shim all ask it, so they cannot disagree about where the socket is.
//!
//! # Socket path, in lookup order
//!
//! 1. `TIDINGS_SOCKET`, used as given. It must be absolute (the shim runs in whatever
//!    directory the MCP client picked) and fit in [`MAX_SOCKET_PATH_BYTES`]; an explicit
//!    choice that cannot work is an error rather than a silent fallback.
//! 2. The platform default:
//!    - macOS: a `run` folder in the app data dir,
//!      `~/Library/Application Support/dev.tidings.Tidings/run/tidings.sock`
//!      (`directories::ProjectDirs::from_path(BUNDLE_ID)`, whose data dir equals its config
//!      dir on macOS). Not the data dir itself: it also holds `settings.toml` and whatever
//!      Tauri keeps there, is often created 0755 by them, and the socket's directory must be
//!      0700 and is refused, never repaired, when it is not; a folder of its own is created
//!      0700 by [`ensure_private_dir`] and nothing else writes there;
//!    - Linux: `$XDG_RUNTIME_DIR/tidings/tidings.sock` (`$XDG_RUNTIME_DIR` must be absolute).
//! 3. `/tmp/tidings-<uid>/tidings.sock`, when step 2 has no answer (no home directory on
//!    macOS, no `$XDG_RUNTIME_DIR` on Linux) or its answer is longer than
//!    [`MAX_SOCKET_PATH_BYTES`] (103 bytes on macOS, 107 on Linux). Whoever binds there must first call [`ensure_private_dir`]
//!    on the parent, because `/tmp` is shared.
//!
//! # Config and data directories
//!
//! 1. `TIDINGS_CONFIG_DIR` / `TIDINGS_DATA_DIR`, used as given;
//! 2. `ProjectDirs::from_path(BUNDLE_ID)`: macOS `~/Library/Application Support/dev.tidings.Tidings`
//!    for both; Linux `~/.config/dev.tidings.Tidings` and `~/.local/share/dev.tidings.Tidings`
//!    (the bundle id as folder name on every OS, matching Tauri's `app_data_dir`).
//!
//! # Log directory
//!
//! `TIDINGS_LOG_DIR`, else macOS `~/Library/Logs/Tidings`, Linux `$XDG_STATE_HOME/tidings/logs`
//! ([`log_dir`]).
//!
//! Empty environment variables count as unset.

use std::ffi::OsString;
use std::fs::DirBuilder;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::PathError;

/// The macOS bundle id, which is also the `LaunchAgent` label and the folder name for the
/// config and data directories.
pub const BUNDLE_ID: &str = "dev.tidings.Tidings";

/// File name of the Unix socket inside its directory.
pub const SOCKET_FILE_NAME: &str = "tidings.sock";

/// Longest socket path we accept on this platform, in bytes: [`Os::max_socket_path_bytes`]
/// of [`Os::CURRENT`].
pub const MAX_SOCKET_PATH_BYTES: usize = Os::CURRENT.max_socket_path_bytes();

/// Overrides the socket path.
pub const SOCKET_ENV: &str = "TIDINGS_SOCKET";
/// Overrides the config directory.
pub const CONFIG_DIR_ENV: &str = "TIDINGS_CONFIG_DIR";
/// Overrides the data directory.
pub const DATA_DIR_ENV: &str = "TIDINGS_DATA_DIR";
/// Overrides the log directory.
pub const LOG_DIR_ENV: &str = "TIDINGS_LOG_DIR";

/// The directory under `$XDG_RUNTIME_DIR` that holds the socket on Linux.
const LINUX_RUNTIME_SUBDIR: &str = "tidings";

/// The directory under the app data dir that holds the socket on macOS (see the module docs
/// for why the socket does not sit in the data dir itself).
const MACOS_RUN_SUBDIR: &str = "run";

/// Which platform's rules to follow; a parameter so both are unit-tested on either OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// macOS: the socket lives in the app data dir.
    MacOs,
    /// Linux and other XDG systems: the socket lives under `$XDG_RUNTIME_DIR`.
    Linux,
}

impl Os {
    /// The platform this crate was compiled for.
    pub const CURRENT: Os = if cfg!(target_os = "macos") {
        Os::MacOs
    } else {
        Os::Linux
    };

    /// The longest socket path that binds: `sun_path` less its terminating NUL. macOS's
    /// `sun_path` is 104 bytes, Linux's 108, so 103 and 107.
    pub const fn max_socket_path_bytes(self) -> usize {
        match self {
            Os::MacOs => 103,
            Os::Linux => 107,
        }
    }
}

/// The socket path for this process, following the lookup order in the module docs.
pub fn socket_path() -> Result<PathBuf, PathError> {
    socket_path_in(&|name| std::env::var_os(name))
}

/// The socket path a process with only the environment `env` would find, as [`socket_path`]
/// does for this one: what a host's `tidings-mcp` finds when the host starts it with a
/// filtered environment (`tidings connect` compares it with the daemon's socket).
pub fn socket_path_in(env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, PathError> {
    // On macOS the default depends only on the home directory, which every host passes.
    let app_data_dir = match Os::CURRENT {
        Os::MacOs => project_dirs().map(|dirs| dirs.data_dir().to_path_buf()),
        Os::Linux => None,
    };
    resolve_socket_path(env, Os::CURRENT, current_uid(), app_data_dir.as_deref())
}

/// The pure core of [`socket_path`]: the same lookup with the environment, platform, uid and
/// app data dir passed in.
///
/// `app_data_dir` is the `ProjectDirs` data dir (only read for [`Os::MacOs`]); `None` means
/// no home directory was found.
pub fn resolve_socket_path(
    env: &impl Fn(&str) -> Option<OsString>,
    os: Os,
    uid: u32,
    app_data_dir: Option<&Path>,
) -> Result<PathBuf, PathError> {
    // 1. Explicit override.
    if let Some(value) = non_empty(env(SOCKET_ENV)) {
        let path = PathBuf::from(value);
        if !path.is_absolute() {
            return Err(PathError::NotAbsolute {
                var: SOCKET_ENV,
                value: path,
            });
        }
        let len = path.as_os_str().as_bytes().len();
        let max = os.max_socket_path_bytes();
        if len > max {
            return Err(PathError::SocketPathTooLong { path, len, max });
        }
        return Ok(path);
    }

    // 2. Platform default.
    let preferred = match os {
        Os::MacOs => app_data_dir.map(|dir| dir.join(MACOS_RUN_SUBDIR).join(SOCKET_FILE_NAME)),
        Os::Linux => non_empty(env("XDG_RUNTIME_DIR"))
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(LINUX_RUNTIME_SUBDIR).join(SOCKET_FILE_NAME)),
    };

    // 3. Short private fallback.
    Ok(match preferred {
        Some(path) if path.as_os_str().as_bytes().len() <= os.max_socket_path_bytes() => path,
        _ => fallback_socket_path(uid),
    })
}

/// `/tmp/tidings-<uid>/tidings.sock`: short enough for any `sun_path`, one per user.
fn fallback_socket_path(uid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/tidings-{uid}")).join(SOCKET_FILE_NAME)
}

/// The config directory (holds `settings.toml`): `TIDINGS_CONFIG_DIR`, else the
/// `ProjectDirs` config dir.
pub fn config_dir() -> Result<PathBuf, PathError> {
    resolve_dir(
        &|name| std::env::var_os(name),
        CONFIG_DIR_ENV,
        "config directory",
        project_dirs().map(|dirs| dirs.config_dir().to_path_buf()),
    )
}

/// The data directory: `TIDINGS_DATA_DIR`, else the `ProjectDirs` data dir.
pub fn data_dir() -> Result<PathBuf, PathError> {
    resolve_dir(
        &|name| std::env::var_os(name),
        DATA_DIR_ENV,
        "data directory",
        project_dirs().map(|dirs| dirs.data_dir().to_path_buf()),
    )
}

/// The log directory: `TIDINGS_LOG_DIR`, else where each OS keeps an app's logs: macOS
/// `~/Library/Logs/Tidings` (where Console.app looks), Linux `$XDG_STATE_HOME/tidings/logs`
/// (`~/.local/state/tidings/logs`: logs are state, not data to back up).
pub fn log_dir() -> Result<PathBuf, PathError> {
    let base = directories::BaseDirs::new();
    let home = base.as_ref().map(|b| b.home_dir().to_path_buf());
    let state = base
        .as_ref()
        .and_then(|b| b.state_dir().map(Path::to_path_buf));
    resolve_dir(
        &|name| std::env::var_os(name),
        LOG_DIR_ENV,
        "log directory",
        default_log_dir(Os::CURRENT, home.as_deref(), state.as_deref()),
    )
}

/// The per-OS default of [`log_dir`]: `home` is the home directory, `state` the XDG state
/// directory (`$XDG_STATE_HOME` or `~/.local/state`; Linux only).
pub fn default_log_dir(os: Os, home: Option<&Path>, state: Option<&Path>) -> Option<PathBuf> {
    match os {
        Os::MacOs => home.map(|h| h.join("Library/Logs/Tidings")),
        Os::Linux => state
            .map(Path::to_path_buf)
            .or_else(|| home.map(|h| h.join(".local/state")))
            .map(|s| s.join("tidings/logs")),
    }
}

/// The pure core of [`config_dir`] and [`data_dir`]: `var` if set, else `default`.
fn resolve_dir(
    env: &impl Fn(&str) -> Option<OsString>,
    var: &'static str,
    what: &'static str,
    default: Option<PathBuf>,
) -> Result<PathBuf, PathError> {
    match non_empty(env(var)) {
        Some(value) => Ok(PathBuf::from(value)),
        None => default.ok_or(PathError::NoHomeDir { what, var }),
    }
}

/// The bundle id as the folder name on every OS (see the module docs).
fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from_path(PathBuf::from(BUNDLE_ID))
}

fn non_empty(value: Option<OsString>) -> Option<OsString> {
    value.filter(|v| !v.is_empty())
}

/// Makes sure `path` is a directory only we can use, creating it with mode 0700 if missing.
///
/// It refuses (atuin's rules for a socket directory in a shared place) when the path is a
/// symlink, is not a directory, is not owned by our effective uid, or has any group or other
/// permission bit. It never loosens or repairs an existing directory: one that fails these
/// checks may have been planted by someone else.
pub fn ensure_private_dir(path: &Path) -> Result<(), PathError> {
    ensure_private_dir_for(path, current_uid())
}

/// [`ensure_private_dir`] with the expected owner passed in, so the owner check is testable
/// without a second user.
fn ensure_private_dir_for(path: &Path, uid: u32) -> Result<(), PathError> {
    let io_error = |source| PathError::Io {
        path: path.to_path_buf(),
        source,
    };
    // lstat first: a dangling symlink must be refused, not "created" through.
    match std::fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)
                .map_err(io_error)?;
        }
        Err(e) => return Err(io_error(e)),
    }
    // Check again after creating: someone may have raced us to the name.
    let meta = std::fs::symlink_metadata(path).map_err(io_error)?;
    let path = path.to_path_buf();
    if meta.file_type().is_symlink() {
        return Err(PathError::Symlink { path });
    }
    if !meta.is_dir() {
        return Err(PathError::NotADirectory { path });
    }
    if meta.uid() != uid {
        return Err(PathError::WrongOwner {
            path,
            owner: meta.uid(),
            expected: uid,
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(PathError::TooOpen { path, mode });
    }
    Ok(())
}

/// Our effective uid: the owner a private directory and socket peer must have.
#[allow(unsafe_code)]
pub fn current_uid() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory we own and cannot fail
    // (POSIX: "always successful").
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    const MAC_DATA: &str = "/Users/ana/Library/Application Support/dev.tidings.Tidings";

    #[test]
    fn logs_go_where_each_os_keeps_them() {
        let home = Path::new("/Users/ana");
        assert_eq!(
            default_log_dir(Os::MacOs, Some(home), None).unwrap(),
            Path::new("/Users/ana/Library/Logs/Tidings")
        );
        let home = Path::new("/home/ana");
        assert_eq!(
            default_log_dir(Os::Linux, Some(home), Some(Path::new("/x/state"))).unwrap(),
            Path::new("/x/state/tidings/logs")
        );
        assert_eq!(
            default_log_dir(Os::Linux, Some(home), None).unwrap(),
            Path::new("/home/ana/.local/state/tidings/logs")
        );
        assert_eq!(default_log_dir(Os::Linux, None, None), None);
        let env = env_of(&[(LOG_DIR_ENV, "/tmp/logs")]);
        assert_eq!(
            resolve_dir(&env, LOG_DIR_ENV, "log directory", None).unwrap(),
            Path::new("/tmp/logs")
        );
    }

    #[test]
    fn env_override_wins_on_both_platforms() {
        let env = env_of(&[
            (SOCKET_ENV, "/tmp/x/t.sock"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ]);
        for os in [Os::MacOs, Os::Linux] {
            let path = resolve_socket_path(&env, os, 501, Some(Path::new(MAC_DATA))).unwrap();
            assert_eq!(path, Path::new("/tmp/x/t.sock"));
        }
    }

    #[test]
    fn empty_env_override_counts_as_unset() {
        let env = env_of(&[(SOCKET_ENV, ""), ("XDG_RUNTIME_DIR", "/run/user/1000")]);
        let path = resolve_socket_path(&env, Os::Linux, 1000, None).unwrap();
        assert_eq!(path, Path::new("/run/user/1000/tidings/tidings.sock"));
    }

    #[test]
    fn relative_env_override_is_refused() {
        let env = env_of(&[(SOCKET_ENV, "tidings.sock")]);
        let err = resolve_socket_path(&env, Os::Linux, 1000, None).unwrap_err();
        assert!(matches!(
            err,
            PathError::NotAbsolute {
                var: SOCKET_ENV,
                ..
            }
        ));
        assert!(err.to_string().contains("tidings.sock"), "{err}");
    }

    #[test]
    fn too_long_env_override_is_refused_not_replaced() {
        let long = format!("/{}/t.sock", "a".repeat(120));
        let env = env_of(&[(SOCKET_ENV, &long)]);
        let err = resolve_socket_path(&env, Os::Linux, 1000, None).unwrap_err();
        assert!(matches!(err, PathError::SocketPathTooLong { max: 107, .. }));
        let err = resolve_socket_path(&env, Os::MacOs, 1000, None).unwrap_err();
        assert!(matches!(err, PathError::SocketPathTooLong { max: 103, .. }));
        assert!(err.to_string().contains(&long), "{err}");
    }

    #[test]
    fn macos_uses_app_data_dir() {
        let path =
            resolve_socket_path(&env_of(&[]), Os::MacOs, 501, Some(Path::new(MAC_DATA))).unwrap();
        assert_eq!(path, Path::new(MAC_DATA).join("run/tidings.sock"));
    }

    #[test]
    fn macos_ignores_xdg_runtime_dir() {
        let env = env_of(&[("XDG_RUNTIME_DIR", "/run/user/501")]);
        let path = resolve_socket_path(&env, Os::MacOs, 501, Some(Path::new(MAC_DATA))).unwrap();
        assert_eq!(path, Path::new(MAC_DATA).join("run/tidings.sock"));
    }

    #[test]
    fn macos_without_home_falls_back_to_tmp() {
        let path = resolve_socket_path(&env_of(&[]), Os::MacOs, 501, None).unwrap();
        assert_eq!(path, Path::new("/tmp/tidings-501/tidings.sock"));
    }

    #[test]
    fn macos_long_user_name_falls_back_to_tmp() {
        let data = format!(
            "/Users/{}/Library/Application Support/dev.tidings.Tidings",
            "a".repeat(50)
        );
        let path =
            resolve_socket_path(&env_of(&[]), Os::MacOs, 502, Some(Path::new(&data))).unwrap();
        assert_eq!(path, Path::new("/tmp/tidings-502/tidings.sock"));
    }

    #[test]
    fn linux_uses_xdg_runtime_dir() {
        let env = env_of(&[("XDG_RUNTIME_DIR", "/run/user/1000")]);
        let path = resolve_socket_path(&env, Os::Linux, 1000, Some(Path::new("/ignored"))).unwrap();
        assert_eq!(path, Path::new("/run/user/1000/tidings/tidings.sock"));
    }

    #[test]
    fn linux_without_xdg_runtime_dir_falls_back_to_tmp() {
        let path = resolve_socket_path(&env_of(&[]), Os::Linux, 1000, None).unwrap();
        assert_eq!(path, Path::new("/tmp/tidings-1000/tidings.sock"));
    }

    #[test]
    fn linux_relative_xdg_runtime_dir_is_ignored() {
        let env = env_of(&[("XDG_RUNTIME_DIR", "run/user/1000")]);
        let path = resolve_socket_path(&env, Os::Linux, 1000, None).unwrap();
        assert_eq!(path, Path::new("/tmp/tidings-1000/tidings.sock"));
    }

    #[test]
    fn the_longest_path_that_binds_is_kept_and_one_more_byte_falls_back() {
        // sun_path needs room for its NUL: 103 usable bytes on macOS, 107 on Linux. A path that
        // fits sun_path but not its NUL must fall back, not fail at bind.
        let suffix = "/tidings/tidings.sock".len();
        let at_limit = |max: usize| format!("/{}", "r".repeat(max - suffix - 1));
        let linux_max = Os::Linux.max_socket_path_bytes();
        let env = env_of(&[("XDG_RUNTIME_DIR", &at_limit(linux_max))]);
        let path = resolve_socket_path(&env, Os::Linux, 7, None).unwrap();
        assert_eq!(path.as_os_str().len(), linux_max);
        let env = env_of(&[("XDG_RUNTIME_DIR", &format!("{}r", at_limit(linux_max)))]);
        let path = resolve_socket_path(&env, Os::Linux, 7, None).unwrap();
        assert_eq!(path, Path::new("/tmp/tidings-7/tidings.sock"));

        let mac_max = Os::MacOs.max_socket_path_bytes();
        let data = |len: usize| format!("/{}", "m".repeat(len - "/run/tidings.sock".len() - 1));
        let path = resolve_socket_path(&env_of(&[]), Os::MacOs, 8, Some(Path::new(&data(mac_max))))
            .unwrap();
        assert_eq!(path.as_os_str().len(), mac_max);
        let path =
            resolve_socket_path(&env_of(&[]), Os::MacOs, 8, Some(Path::new(&data(104)))).unwrap();
        assert_eq!(path, Path::new("/tmp/tidings-8/tidings.sock"));
    }

    #[test]
    fn a_path_at_this_platforms_limit_really_binds() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().as_os_str().len() + 1;
        let name = "s".repeat(MAX_SOCKET_PATH_BYTES - base);
        let path = dir.path().join(&name);
        assert_eq!(path.as_os_str().len(), MAX_SOCKET_PATH_BYTES);
        std::os::unix::net::UnixListener::bind(&path).expect("a path at the limit binds");
        let longer = dir.path().join(format!("{name}s"));
        assert!(std::os::unix::net::UnixListener::bind(&longer).is_err());
    }

    #[test]
    fn dir_override_wins_and_default_is_used_otherwise() {
        let env = env_of(&[(CONFIG_DIR_ENV, "/etc/t")]);
        let dir = resolve_dir(&env, CONFIG_DIR_ENV, "config directory", None).unwrap();
        assert_eq!(dir, Path::new("/etc/t"));

        let default = PathBuf::from("/home/ana/.config/dev.tidings.Tidings");
        let dir = resolve_dir(
            &env_of(&[]),
            CONFIG_DIR_ENV,
            "config directory",
            Some(default.clone()),
        );
        assert_eq!(dir.unwrap(), default);
    }

    #[test]
    fn dir_without_override_or_home_names_the_variable() {
        let err = resolve_dir(&env_of(&[]), DATA_DIR_ENV, "data directory", None).unwrap_err();
        assert!(err.to_string().contains(DATA_DIR_ENV), "{err}");
    }

    #[test]
    fn project_dirs_use_bundle_id_as_folder_name() {
        // Only meaningful where a home directory exists, as on any developer machine or CI.
        if let Some(dirs) = project_dirs() {
            assert!(dirs.config_dir().ends_with(BUNDLE_ID));
            assert!(dirs.data_dir().ends_with(BUNDLE_ID));
        }
    }

    #[test]
    fn private_dir_is_created_with_mode_0700() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tidings-1");
        ensure_private_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Second call accepts what the first made.
        ensure_private_dir(&dir).unwrap();
    }

    #[test]
    fn private_dir_refuses_group_or_other_bits() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("open");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        let err = ensure_private_dir(&dir).unwrap_err();
        assert!(
            matches!(err, PathError::TooOpen { mode: 0o750, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains(dir.to_str().unwrap()), "{err}");
        assert!(err.to_string().contains("0750"), "{err}");
    }

    #[test]
    fn private_dir_refuses_symlink_even_to_a_good_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        ensure_private_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = ensure_private_dir(&link).unwrap_err();
        assert!(matches!(err, PathError::Symlink { .. }), "{err:?}");
        assert!(err.to_string().contains(link.to_str().unwrap()), "{err}");
    }

    #[test]
    fn private_dir_refuses_dangling_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("missing"), &link).unwrap();
        let err = ensure_private_dir(&link).unwrap_err();
        assert!(matches!(err, PathError::Symlink { .. }), "{err:?}");
        assert!(!tmp.path().join("missing").exists());
    }

    #[test]
    fn private_dir_refuses_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let err = ensure_private_dir(&file).unwrap_err();
        assert!(matches!(err, PathError::NotADirectory { .. }), "{err:?}");
    }

    #[test]
    fn private_dir_refuses_another_owner() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("theirs");
        ensure_private_dir(&dir).unwrap();
        let someone_else = current_uid().wrapping_add(1);
        let err = ensure_private_dir_for(&dir, someone_else).unwrap_err();
        assert!(
            matches!(err, PathError::WrongOwner { expected, .. } if expected == someone_else),
            "{err:?}"
        );
        assert!(err.to_string().contains(dir.to_str().unwrap()), "{err}");
    }

    #[test]
    fn current_uid_owns_new_files() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(std::fs::metadata(tmp.path()).unwrap().uid(), current_uid());
    }
}
