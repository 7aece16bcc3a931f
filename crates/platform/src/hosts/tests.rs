//! The host table's tests: paths, keys, entries and snippets for every host.

use super::*;

#[test]
fn every_host_has_a_config_path_and_its_key() {
    let home = Path::new("/Users/ana");
    assert_eq!(
        Host::ClaudeDesktop.config_path(home, Os::MacOs),
        Path::new("/Users/ana/Library/Application Support/Claude/claude_desktop_config.json")
    );
    assert_eq!(
        Host::ClaudeDesktop.config_path(home, Os::Linux),
        Path::new("/Users/ana/.config/Claude/claude_desktop_config.json")
    );
    assert_eq!(
        Host::VsCode.config_path(home, Os::MacOs),
        Path::new("/Users/ana/Library/Application Support/Code/User/mcp.json")
    );
    assert_eq!(
        Host::Codex.config_path(home, Os::Linux),
        Path::new("/Users/ana/.codex/config.toml")
    );
    for host in Host::ALL {
        assert_eq!(Host::from_id(host.id()), Some(host));
        assert!(host.modes().contains(&Mode::Tools));
        assert_eq!(
            host.modes().contains(&Mode::Channel),
            host == Host::ClaudeCode
        );
    }
    assert_eq!(Host::from_id("VS-Code"), Some(Host::VsCode));
    assert_eq!(Host::from_id("notepad"), None);
}
#[test]
fn the_four_newer_hosts_have_their_paths_keys_and_names() {
    let home = Path::new("/Users/ana");
    let cases = [
        (
            Host::GeminiCli,
            "gemini",
            "Gemini CLI",
            ".gemini/settings.json",
            "mcpServers",
        ),
        (
            Host::Goose,
            "goose",
            "Goose",
            ".config/goose/config.yaml",
            "extensions",
        ),
        (
            Host::Windsurf,
            "windsurf",
            "Windsurf",
            ".codeium/windsurf/mcp_config.json",
            "mcpServers",
        ),
        (
            Host::LmStudio,
            "lm-studio",
            "LM Studio",
            ".lmstudio/mcp.json",
            "mcpServers",
        ),
    ];
    for (host, id, name, path, key) in cases {
        assert_eq!(host.id(), id);
        assert_eq!(host.display_name(), name);
        assert_eq!(host.servers_key(), key, "{host:?}");
        for os in [Os::MacOs, Os::Linux] {
            assert_eq!(
                host.config_path(home, os),
                home.join(path),
                "{host:?} {os:?}"
            );
        }
        assert_eq!(host.modes(), [Mode::Tools, Mode::Events]);
    }
    assert_eq!(Host::GeminiCli.format(), Format::JsonComments);
    assert_eq!(Host::Goose.format(), Format::Yaml);
    assert_eq!(Host::Windsurf.format(), Format::Json);
    assert_eq!(Host::LmStudio.format(), Format::Json);
    assert_eq!(Host::from_id("Gemini-CLI"), Some(Host::GeminiCli));
    assert_eq!(Host::from_id("lmstudio"), Some(Host::LmStudio));

    assert!(Host::GeminiCli.announced_as("gemini-cli-mcp-client"));
    assert!(Host::Goose.announced_as("goose") && Host::Goose.announced_as("goose-cli"));
    assert!(!Host::Goose.announced_as("gooseberry"));
    assert!(Host::Windsurf.announced_as("windsurf-client"));
    assert!(Host::LmStudio.announced_as("LM Studio"));
    assert!(!Host::Zed.announced_as("gemini-cli-mcp-client"));
    assert_eq!(Host::LmStudio.process_names(Os::MacOs), ["LM Studio"]);
    assert_eq!(Host::Windsurf.process_names(Os::Linux), ["windsurf"]);
    assert!(Host::Goose.process_names(Os::MacOs).contains(&"goosed"));
}
#[test]
fn lm_studio_follows_its_home_pointer_and_its_older_home() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    assert_eq!(
        Host::LmStudio.config_path(home, Os::Linux),
        home.join(".lmstudio/mcp.json")
    );
    // An install older than 0.3.x: only ~/.cache/lm-studio.
    std::fs::create_dir_all(home.join(".cache/lm-studio")).unwrap();
    assert_eq!(lm_studio_home(home), home.join(".cache/lm-studio"));
    // Both: the current one wins.
    std::fs::create_dir_all(home.join(".lmstudio")).unwrap();
    assert_eq!(lm_studio_home(home), home.join(".lmstudio"));
    // The pointer file, when it names a directory, wins over both.
    let moved = home.join("Models Drive/lmstudio");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::write(home.join(".lmstudio-home-pointer"), moved.to_str().unwrap()).unwrap();
    assert_eq!(
        Host::LmStudio.config_path(home, Os::MacOs),
        moved.join("mcp.json")
    );
    // A pointer to nothing, or a relative one, is ignored.
    std::fs::write(home.join(".lmstudio-home-pointer"), "relative/dir\n").unwrap();
    assert_eq!(lm_studio_home(home), home.join(".lmstudio"));
}
#[test]
fn entries_carry_the_mode_arguments_and_the_host_shape() {
    let shim = Path::new("/A/tidings-mcp");
    assert_eq!(
        Host::ClaudeCode.entry(&Launch::new(shim, Mode::Channel)),
        json!({"command": "/A/tidings-mcp", "args": ["--channel"]})
    );
    assert_eq!(
        Host::VsCode.entry(&Launch::new(shim, Mode::Tools)),
        json!({"type": "stdio", "command": "/A/tidings-mcp", "args": []})
    );
    for host in [Host::GeminiCli, Host::Windsurf, Host::LmStudio] {
        assert_eq!(
            host.entry(&Launch::new(shim, Mode::Tools)),
            json!({"command": "/A/tidings-mcp", "args": []}),
            "{host:?}"
        );
    }
    // Goose: `cmd`, `envs`, and its own fields, in its order; the socket lands in `args`.
    let socket = Path::new("/run/t/tidings.sock");
    let goose = Host::Goose.entry_fields(&Launch::new(shim, Mode::Tools).with_socket(Some(socket)));
    let names: Vec<&str> = goose.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        names,
        [
            "enabled",
            "type",
            "name",
            "description",
            "cmd",
            "args",
            "envs",
            "timeout"
        ]
    );
    let goose = Host::Goose.entry(&Launch::new(shim, Mode::Tools).with_socket(Some(socket)));
    assert_eq!(goose["cmd"], "/A/tidings-mcp");
    assert_eq!(goose["args"], json!(["--socket", "/run/t/tidings.sock"]));
    assert_eq!(goose["type"], "stdio");
    assert_eq!(goose["enabled"], true);
    assert_eq!(goose["timeout"], 300);
    assert_eq!(goose["envs"], json!({}));
    let socket = Path::new("/run/t/tidings.sock");
    assert_eq!(
        Host::Codex.entry(&Launch::new(shim, Mode::Channel).with_socket(Some(socket)))["args"],
        json!(["--socket", "/run/t/tidings.sock", "--channel"])
    );
    assert_eq!(Mode::of_args(&Mode::Channel.args()), Mode::Channel);
    assert_eq!(Mode::of_args(&Mode::Events.args()), Mode::Tools);
}
#[test]
fn snippets_parse_back_to_the_entry() {
    let shim = Path::new("/Applications/My Apps/Tidings.app/Contents/MacOS/tidings-mcp");
    for host in Host::ALL {
        let launch = Launch::new(shim, Mode::Tools).with_socket(Some(Path::new("/s/t.sock")));
        let text = host.snippet(&launch);
        let value: Value = if host.format() == Format::Toml {
            let table: toml::Table = text.parse().unwrap();
            serde_json::to_value(&table["mcp_servers"]["tidings"]).unwrap()
        } else if host.format() == Format::Yaml {
            let docs = <saphyr::Yaml as saphyr::LoadableYamlNode>::load_from_str(&text).unwrap();
            yaml_json(&docs[0]["extensions"]["tidings"])
        } else {
            let json = text.rsplit("\n\n").next().unwrap();
            serde_json::from_str::<Value>(json).unwrap()[host.servers_key()]["tidings"].clone()
        };
        assert_eq!(value, host.entry(&launch), "{host:?}: {text}");
    }
    assert_eq!(
        claude_mcp_add(&Launch::new(shim, Mode::Channel)),
        "claude mcp add --scope user tidings -- \
         '/Applications/My Apps/Tidings.app/Contents/MacOS/tidings-mcp' --channel"
    );
}
/// A parsed YAML node as JSON (scalars, sequences, string-keyed mappings).
fn yaml_json(node: &saphyr::Yaml<'_>) -> Value {
    use saphyr::{Scalar, Yaml};
    match node {
        Yaml::Value(Scalar::String(s)) => json!(s.as_ref()),
        Yaml::Value(Scalar::Integer(i)) => json!(i),
        Yaml::Value(Scalar::Boolean(b)) => json!(b),
        Yaml::Sequence(items) => Value::Array(items.iter().map(yaml_json).collect()),
        Yaml::Mapping(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_owned(), yaml_json(v)))
                .collect(),
        ),
        other => panic!("unexpected YAML node {other:?}"),
    }
}
#[test]
fn the_goose_snippet_is_its_config_shape() {
    let launch = Launch::new(Path::new("/A/tidings-mcp"), Mode::Tools);
    assert_eq!(
        Host::Goose.snippet(&launch),
        "extensions:\n  tidings:\n    enabled: true\n    type: \"stdio\"\n    name: \"tidings\"\n    \
         description: \"New mail and messages from Tidings (envelopes only)\"\n    \
         cmd: \"/A/tidings-mcp\"\n    args: []\n    envs: {}\n    timeout: 300"
    );
    assert!(
        Host::GeminiCli
            .snippet(&launch)
            .starts_with("{\n  \"mcpServers\": {\n    \"tidings\": {")
    );
}
