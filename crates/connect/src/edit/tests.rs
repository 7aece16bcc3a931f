//! Tests of the entry in JSON, JSONC and TOML config text: every other byte kept.

use super::*;
use serde_json::json;

fn entry() -> Vec<(&'static str, Value)> {
    vec![("command", json!("/A/tidings-mcp")), ("args", json!([]))]
}

fn entry_json() -> Value {
    json!({"command": "/A/tidings-mcp", "args": []})
}

#[test]
fn json_adds_beside_other_servers_and_keeps_every_other_byte() {
    let text = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh\",   \"args\": [\"mcp\"]}\n  },\n  \"theme\": \"dark\"\n}\n";
    let out = set(Format::Json, "mcpServers", text, &entry()).unwrap();
    let expected = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh\",   \"args\": [\"mcp\"]},\n    \"tidings\": {\n      \"command\": \"/A/tidings-mcp\",\n      \"args\": []\n    }\n  },\n  \"theme\": \"dark\"\n}\n";
    assert_eq!(out, expected);
    assert_eq!(
        read(Format::Json, "mcpServers", &out)
            .unwrap()
            .unwrap()
            .command,
        "/A/tidings-mcp"
    );
    // Setting again replaces in place; removing gives back the original bytes.
    let again = set(
        Format::Json,
        "mcpServers",
        &out,
        &[("command", json!("/B")), ("args", json!(["--channel"]))],
    )
    .unwrap();
    assert_eq!(
        read(Format::Json, "mcpServers", &again)
            .unwrap()
            .unwrap()
            .args,
        ["--channel"]
    );
    let removed = remove(Format::Json, "mcpServers", &again).unwrap().unwrap();
    assert_eq!(removed, text);
    assert_eq!(remove(Format::Json, "mcpServers", text).unwrap(), None);
}

#[test]
fn jsonc_keeps_comments_and_trailing_commas() {
    let text = "// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n  \"context_servers\": {\n    /* keep */\n    \"other\": {\"command\": \"x\"},\n  },\n}\n";
    let out = set(Format::Jsonc, "context_servers", text, &entry()).unwrap();
    for kept in [
        "// Zed settings",
        "// mine",
        "/* keep */",
        "\"other\": {\"command\": \"x\"},",
    ] {
        assert!(out.contains(kept), "{kept} lost:\n{out}");
    }
    assert_eq!(
        remove(Format::Jsonc, "context_servers", &out)
            .unwrap()
            .unwrap(),
        text
    );
    // Strict JSON refuses the same text, naming where.
    let err = set(Format::Json, "mcpServers", text, &entry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "is not valid JSON (line 1, column 1: expected value)"
    );
}

#[test]
fn json_with_comments_keeps_them_and_refuses_trailing_commas() {
    // Gemini CLI's settings.json: comments are read, a trailing comma is not.
    let text =
        "// Gemini\n{\n  /* theme */ \"ui\": {\"theme\": \"Default\"},\n  \"mcpServers\": {}\n}\n";
    let out = set(Format::JsonComments, "mcpServers", text, &entry()).unwrap();
    assert!(
        out.starts_with("// Gemini\n{\n  /* theme */ \"ui\""),
        "{out}"
    );
    assert_eq!(
        read(Format::JsonComments, "mcpServers", &out)
            .unwrap()
            .unwrap()
            .command,
        "/A/tidings-mcp"
    );
    assert_eq!(
        remove(Format::JsonComments, "mcpServers", &out)
            .unwrap()
            .unwrap(),
        text
    );
    let trailing = "{\n  \"mcpServers\": {},\n}\n";
    assert!(set(Format::Jsonc, "mcpServers", trailing, &entry()).is_ok());
    let err = set(Format::JsonComments, "mcpServers", trailing, &entry()).unwrap_err();
    assert!(
        matches!(
            err,
            EditError::Invalid {
                format: "JSON",
                line: 2,
                column: 19,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn an_entry_reads_gooses_field_names_too() {
    let goose = json!({"enabled": true, "type": "stdio", "cmd": "/A/tidings-mcp",
        "args": ["--channel"], "envs": {"A": "1"}, "timeout": 300});
    assert_eq!(
        Entry::from_json(&goose),
        Some(Entry {
            command: "/A/tidings-mcp".into(),
            args: vec!["--channel".into()],
            env: vec![("A".into(), "1".into())],
        })
    );
    assert_eq!(Entry::from_json(&json!({"args": []})), None);
}

#[test]
fn empty_and_missing_keys_are_created_and_bad_shapes_refused() {
    let out = set(Format::Json, "mcpServers", "", &entry()).unwrap();
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value, json!({"mcpServers": {"tidings": entry_json()}}));
    let out = set(Format::Json, "mcpServers", "{}\n", &entry()).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), value);
    assert_eq!(
        set(Format::Json, "mcpServers", "[1]", &entry()),
        Err(EditError::NotAnObject { what: "object" })
    );
    assert_eq!(
        set(Format::Json, "mcpServers", "{\"mcpServers\": 3}", &entry()),
        Err(EditError::KeyNotAnObject {
            key: "mcpServers",
            what: "object"
        })
    );
    let err = set(Format::Json, "mcpServers", "{\n  \"a\": 1,\n}", &entry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "is not valid JSON (line 3, column 1: key must be a string)"
    );
}

#[test]
fn toml_adds_a_table_and_keeps_the_rest() {
    let text = "# my codex\nmodel = \"o3\"\n\n[mcp_servers.github]\ncommand = \"gh\" # cli\nargs = [\"mcp\"]\n";
    let mut codex = entry();
    codex.push(("startup_timeout_sec", json!(10)));
    let out = set(Format::Toml, "mcp_servers", text, &codex).unwrap();
    assert_eq!(
        out,
        format!(
            "{text}\n[mcp_servers.tidings]\ncommand = \"/A/tidings-mcp\"\nargs = []\nstartup_timeout_sec = 10\n"
        )
    );
    let read_back = read(Format::Toml, "mcp_servers", &out).unwrap().unwrap();
    assert_eq!(read_back.command, "/A/tidings-mcp");
    let again = set(
        Format::Toml,
        "mcp_servers",
        &out,
        &[("command", json!("/B")), ("args", json!(["x"]))],
    )
    .unwrap();
    assert!(again.starts_with(text), "{again}");
    assert_eq!(
        read(Format::Toml, "mcp_servers", &again)
            .unwrap()
            .unwrap()
            .args,
        ["x"]
    );
    let removed = remove(Format::Toml, "mcp_servers", &again)
        .unwrap()
        .unwrap();
    assert_eq!(removed.trim_end(), text.trim_end());

    let fresh = set(Format::Toml, "mcp_servers", "", &codex).unwrap();
    assert!(fresh.starts_with("[mcp_servers.tidings]\n"), "{fresh}");
    let err = set(Format::Toml, "mcp_servers", "model = \n", &codex).unwrap_err();
    assert!(
        matches!(
            err,
            EditError::Invalid {
                format: "TOML",
                line: 1,
                ..
            }
        ),
        "{err}"
    );
}
