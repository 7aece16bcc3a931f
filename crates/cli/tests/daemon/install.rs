//! `tidings install` / `tidings uninstall` as a user runs them: the dry run for each platform
//! (the files in full, the commands), and on Linux a real run in a temporary home with a
//! stand-in `systemctl` on PATH (this machine has no user systemd) that logs its arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::tidings_bin;

/// A temporary home: HOME, XDG and Tidings' own directories all inside it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn tidings(&self, args: &[&str]) -> Output {
        let bin = self.path().join("bin");
        let path = std::env::join_paths(
            std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        Command::new(tidings_bin())
            .args(args)
            .env("HOME", self.path())
            .env_remove("XDG_CONFIG_HOME")
            .env("TIDINGS_CONFIG_DIR", self.path().join("config"))
            .env("TIDINGS_DATA_DIR", self.path().join("data"))
            .env("TIDINGS_SOCKET", self.path().join("tidings.sock"))
            // No Secret Service: the token removal reports instead of waiting on a bus.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env("PATH", path)
            .output()
            .unwrap()
    }

    /// Every file under the home, relative.
    fn files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else {
                    out.push(path.strip_prefix(root).unwrap().to_path_buf());
                }
            }
        }
        let mut out = Vec::new();
        walk(self.path(), self.path(), &mut out);
        out.sort();
        out
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn dry_run_for_macos_prints_the_plist_and_the_launchctl_line() {
    let home = Home::new();
    let exe = "/Applications/Tidings.app/Contents/MacOS/tidings-app";
    let out = home.tidings(&["install", "--dry-run", "--platform", "macos", "--exe", exe]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let plist = home
        .path()
        .join("Library/LaunchAgents/dev.tidings.Tidings.plist");
    assert!(
        text.contains(&format!("write {}:", plist.display())),
        "{text}"
    );
    // The file in full: parse the indented block back.
    let xml: String = text
        .lines()
        .skip_while(|l| !l.starts_with("write "))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .flat_map(|l| [&l[4..], "\n"])
        .collect();
    let dict = plist::Value::from_reader_xml(xml.as_bytes())
        .unwrap()
        .into_dictionary()
        .unwrap();
    assert_eq!(
        dict["ProgramArguments"].as_array().unwrap()[0].as_string(),
        Some(exe)
    );
    assert_eq!(
        dict["KeepAlive"].as_dictionary().unwrap()["SuccessfulExit"].as_boolean(),
        Some(false)
    );
    assert!(
        text.contains("run launchctl bootstrap gui/")
            && text.ends_with(&format!("{}\n", plist.display())),
        "{text}"
    );
    assert!(home.files().is_empty(), "{:?}", home.files());

    let out = home.tidings(&["uninstall", "--dry-run", "--platform", "macos"]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("run launchctl bootout gui/"), "{text}");
    assert!(
        text.contains(&format!("remove {}", plist.display())),
        "{text}"
    );
    assert!(
        text.contains("kept (`tidings uninstall --purge` removes them):"),
        "{text}"
    );
    assert!(home.files().is_empty(), "{:?}", home.files());
}

#[test]
fn dry_run_for_linux_prints_the_unit_and_the_systemctl_lines() {
    let home = Home::new();
    let out = home.tidings(&[
        "install",
        "--dry-run",
        "--platform",
        "linux",
        "--exe",
        "/opt/t/tidings-app",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let unit = home.path().join(".config/systemd/user/tidings.service");
    assert!(
        text.contains(&format!("write {}:", unit.display())),
        "{text}"
    );
    assert!(
        text.contains("    ExecStart=\"/opt/t/tidings-app\"\n"),
        "{text}"
    );
    assert!(text.contains("    Restart=on-failure\n"), "{text}");
    let runs: Vec<&str> = text.lines().filter(|l| l.starts_with("run ")).collect();
    assert_eq!(
        runs,
        [
            "run systemctl --user daemon-reload",
            "run systemctl --user enable --now tidings.service"
        ]
    );
    assert!(home.files().is_empty(), "{:?}", home.files());
}

#[test]
fn the_other_platform_needs_dry_run_and_a_missing_exe_is_named() {
    let home = Home::new();
    let other = if cfg!(target_os = "macos") {
        "linux"
    } else {
        "macos"
    };
    let out = home.tidings(&["install", "--platform", other, "--exe", "/bin/sh"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("add --dry-run"),
        "{out:?}"
    );

    let missing = home.path().join("nope/tidings-app");
    let out = home.tidings(&["install", "--exe", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--exe {}: no such file", missing.display())),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn install_and_uninstall_for_real_in_a_temporary_home() {
    use std::os::unix::fs::PermissionsExt;

    let home = Home::new();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = home.path().join("systemctl.log");
    let systemctl = bin.join("systemctl");
    std::fs::write(
        &systemctl,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\nexit 0\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&systemctl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let app = home.path().join("opt/tidings-app");
    std::fs::create_dir_all(app.parent().unwrap()).unwrap();
    std::fs::write(&app, "").unwrap();

    let out = home.tidings(&["install", "--exe", app.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let unit = home.path().join(".config/systemd/user/tidings.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains(&format!("ExecStart=\"{}\"\n", app.display())),
        "{text}"
    );
    assert!(
        stdout(&out).contains(&format!("  wrote {}", unit.display())),
        "{out:?}"
    );

    // A socket left by a crash, and settings to keep.
    drop(std::os::unix::net::UnixListener::bind(home.path().join("tidings.sock")).unwrap());
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(home.path().join("config/settings.toml"), "").unwrap();

    let out = home.tidings(&["uninstall"]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(!unit.exists());
    assert!(!home.path().join("tidings.sock").exists());
    assert!(text.contains("removed the socket"), "{text}");
    assert!(home.path().join("config/settings.toml").exists());
    assert!(text.contains("  settings: "), "{text}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "--user daemon-reload\n--user enable --now tidings.service\n\
         --user disable --now tidings.service\n--user daemon-reload\n"
    );

    let out = home.tidings(&["uninstall", "--purge"]);
    assert!(out.status.success(), "{out:?}");
    assert!(!home.path().join("config").exists());
    assert!(
        stdout(&out).contains(&format!(
            "  removed {}",
            home.path().join("config").display()
        )),
        "{out:?}"
    );
}
