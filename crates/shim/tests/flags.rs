//! `--version`, `--help`/`-h`, and bad command lines (exit code USAGE, one stderr line).

use crate::util::{USAGE, shim, within};

async fn run(args: &[&str]) -> std::process::Output {
    let child = shim(args).spawn().unwrap();
    within("the shim to exit", child.wait_with_output())
        .await
        .unwrap()
}

#[tokio::test]
async fn version_prints_name_version_and_commit() {
    let output = run(&["--version"]).await;
    assert!(output.status.success());
    let expected = format!(
        "tidings-mcp {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        git_short_head()
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

/// The commit the binary should name, asked of git independently of build.rs; "unknown"
/// outside a checkout, as build.rs falls back.
fn git_short_head() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=9", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |output| String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        )
}

#[tokio::test]
async fn help_explains_flags_env_and_client_config() {
    for flag in ["--help", "-h"] {
        let output = run(&[flag]).await;
        assert!(output.status.success(), "{flag}");
        let help = String::from_utf8(output.stdout).unwrap();
        for needle in [
            "Usage: tidings-mcp",
            "--socket PATH",
            "TIDINGS_SOCKET",
            "\"mcpServers\"",
        ] {
            assert!(help.contains(needle), "{flag}: missing {needle}\n{help}");
        }
        assert!(output.stderr.is_empty());
    }
}

#[tokio::test]
async fn unknown_flag_is_a_usage_error_on_one_line() {
    let output = run(&["--bogus"]).await;
    assert_eq!(output.status.code(), Some(USAGE));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--bogus"), "{stderr}");
    assert!(stderr.contains("--help"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn socket_flag_without_path_is_a_usage_error() {
    let output = run(&["--socket"]).await;
    assert_eq!(output.status.code(), Some(USAGE));
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("--socket")
    );
}

#[tokio::test]
async fn channel_flags_without_channel_are_a_usage_error() {
    let output = run(&["--domains", "example.com"]).await;
    assert_eq!(output.status.code(), Some(USAGE));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--domains only applies with --channel"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn an_unknown_preset_is_a_config_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settings.toml"), "[mail]\nenabled = true\n").unwrap();
    let mut cmd = crate::util::shim(&["--channel", "--preset", "work"]);
    cmd.env("TIDINGS_CONFIG_DIR", dir.path());
    let output = within("the shim to exit", cmd.spawn().unwrap().wait_with_output())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(78));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("no preset `work`") && stderr.contains("none"),
        "{stderr}"
    );
}

#[tokio::test]
async fn print_config_names_a_socket_the_host_would_not_find() {
    let socket = "/tmp/tidings-print-config-test/tidings.sock";
    let output = run(&["--print-config", "--client", "codex", "--socket", socket]).await;
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    // Codex passes its servers no TIDINGS_SOCKET: the entry must carry the path itself.
    assert!(
        text.contains(&format!("args = [\"--socket\",\"{socket}\"]")),
        "{text}"
    );
}
