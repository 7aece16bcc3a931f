//! One version for everything we ship: the workspace (every crate inherits it, the shim
//! included), the app's `tauri.conf.json` (which must not set its own, so Tauri takes the
//! app crate's), and the npm packages that build the settings window and the bundle.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(relative: &str) -> serde_json::Value {
    serde_json::from_str(&read(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

#[test]
fn workspace_app_and_npm_packages_share_one_version() {
    let manifest: toml::Table = toml::from_str(&read("Cargo.toml")).unwrap();
    let workspace = manifest["workspace"]["package"]["version"]
        .as_str()
        .expect("Cargo.toml: workspace.package.version");
    // The shim is built from that version (`version.workspace = true`).
    assert_eq!(env!("CARGO_PKG_VERSION"), workspace);

    // Tauri uses the app crate's version when tauri.conf.json has none; a literal here would
    // drift the first time someone bumps Cargo.toml.
    let tauri = json("src-tauri/tauri.conf.json");
    assert_eq!(
        tauri.get("version"),
        None,
        "src-tauri/tauri.conf.json: remove \"version\"; Tauri then reads it from Cargo.toml"
    );
    let app: toml::Table = toml::from_str(&read("src-tauri/Cargo.toml")).unwrap();
    assert_eq!(
        app["package"]["version"]
            .as_table()
            .map(|t| t.get("workspace")),
        Some(Some(&toml::Value::Boolean(true))),
        "src-tauri/Cargo.toml: set `version.workspace = true`"
    );

    for package in ["ui/package.json", "packaging/package.json"] {
        assert_eq!(
            json(package)["version"].as_str(),
            Some(workspace),
            "{package}: \"version\" must be the workspace version {workspace} (Cargo.toml)"
        );
    }
}
