//! Tests of the entry in Goose's YAML: edits that keep every other byte, and what is refused.

use super::*;
use serde_json::json;

const KEY: &str = "extensions";

fn entry(cmd: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("enabled", json!(true)),
        ("type", json!("stdio")),
        ("name", json!("tidings")),
        ("cmd", json!(cmd)),
        ("args", json!(["--socket", "/tmp/my dir/t.sock"])),
        ("envs", json!({})),
        ("timeout", json!(300)),
    ]
}

const GOOSE: &str = "# Goose settings, by hand\nGOOSE_PROVIDER: anthropic   # the provider\nGOOSE_MODEL: claude-sonnet-4\nextensions:\n  # built in\n  developer:\n    enabled: true\n    type: builtin\n    name: developer\n    timeout: 300\n  github:\n    args:\n    - -y\n    - '@modelcontextprotocol/server-github'\n    cmd: npx   # from npm\n    enabled: false\n    envs: {}\n    type: stdio\n# the end\nGOOSE_MODE: smart_approve\n";

#[test]
fn appending_keeps_every_comment_and_other_extension_byte_for_byte() {
    let out = set(KEY, GOOSE, &entry("/A/tidings-mcp")).unwrap();
    let (head, tail) = GOOSE.split_at(GOOSE.find("# the end").unwrap());
    assert!(out.starts_with(head), "{out}");
    assert!(out.ends_with(tail), "{out}");
    let added = &out[head.len()..out.len() - tail.len()];
    assert!(
        added.starts_with("  tidings:\n    enabled: true\n"),
        "{added}"
    );
    let read_back = read(KEY, &out).unwrap().unwrap();
    assert_eq!(read_back["cmd"], "/A/tidings-mcp");
    assert_eq!(read_back["args"], json!(["--socket", "/tmp/my dir/t.sock"]));
    assert_eq!(read_back["timeout"], 300);
    // Removing gives back the original bytes.
    assert_eq!(remove(KEY, &out).unwrap().unwrap(), GOOSE);
    assert_eq!(remove(KEY, GOOSE).unwrap(), None);
    assert_eq!(read(KEY, GOOSE).unwrap(), None);
}

#[test]
fn an_existing_entry_is_replaced_in_place() {
    let text = "extensions:\n  tidings:\n    enabled: false\n    cmd: /old/tidings-mcp\n    args: []\n  memory:\n    enabled: true   # keep\n    type: builtin\n";
    let out = set(KEY, text, &entry("/New/tidings-mcp")).unwrap();
    assert!(out.starts_with("extensions:\n  tidings:\n"), "{out}");
    assert!(
        out.ends_with("  memory:\n    enabled: true   # keep\n    type: builtin\n"),
        "{out}"
    );
    assert!(!out.contains("/old/"), "{out}");
    assert_eq!(read(KEY, &out).unwrap().unwrap()["enabled"], true);
    // The same entry again changes nothing.
    assert_eq!(set(KEY, &out, &entry("/New/tidings-mcp")).unwrap(), out);
}

#[test]
fn an_empty_file_a_missing_key_and_an_empty_key_get_the_block() {
    for text in ["", "\n", "# nothing yet\n"] {
        let out = set(KEY, text, &entry("/A/tidings-mcp")).unwrap();
        assert!(out.starts_with(text.trim_end()), "{out}");
        assert!(
            out.contains("extensions:\n  tidings:\n    enabled: true\n"),
            "{out}"
        );
        assert_eq!(read(KEY, &out).unwrap().unwrap()["type"], "stdio");
    }
    for text in [
        "GOOSE_MODEL: x\n",
        "GOOSE_MODEL: x\nextensions:\n",
        "extensions: ~\nGOOSE_MODEL: x\n",
    ] {
        let out = set(KEY, text, &entry("/A/tidings-mcp")).unwrap();
        assert!(out.contains("GOOSE_MODEL: x"), "{out}");
        assert_eq!(
            read(KEY, &out).unwrap().unwrap()["cmd"],
            "/A/tidings-mcp",
            "{out}"
        );
        // The last one out leaves an empty mapping, not a null.
        let removed = remove(KEY, &out).unwrap().unwrap();
        assert!(removed.contains("extensions: {}"), "{removed}");
        assert_eq!(read(KEY, &removed).unwrap(), None);
    }
    // Flow style is edited in flow style.
    let out = set(
        KEY,
        "extensions: {developer: {enabled: true}}\n",
        &entry("/A b/c"),
    )
    .unwrap();
    assert!(
        out.starts_with("extensions: {developer: {enabled: true}, tidings: {"),
        "{out}"
    );
    assert_eq!(read(KEY, &out).unwrap().unwrap()["cmd"], "/A b/c");
}

#[test]
fn invalid_yaml_is_refused_with_line_and_column() {
    let err = set(
        KEY,
        "GOOSE_MODEL: x\nextensions:\n  a: b: c\n",
        &entry("/A"),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EditError::Invalid {
                format: "YAML",
                line: 3,
                column: 7,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("is not valid YAML (line 3, column 7: "),
        "{err}"
    );
    let err = read(KEY, "a: [1, 2\n").unwrap_err();
    assert!(
        matches!(
            err,
            EditError::Invalid {
                line: 2,
                column: 1,
                ..
            }
        ),
        "{err:?}"
    );
    let err = remove(KEY, "a: 1\na: 2\n").unwrap_err();
    assert!(matches!(err, EditError::Invalid { line: 2, .. }), "{err:?}");
}

#[test]
fn shapes_we_do_not_edit_are_refused_with_where() {
    assert_eq!(
        set(KEY, "- 1\n- 2\n", &entry("/A")),
        Err(EditError::NotAnObject { what: "mapping" })
    );
    assert_eq!(
        set(KEY, "extensions: [a]\n", &entry("/A")),
        Err(EditError::KeyNotAnObject {
            key: "extensions",
            what: "mapping"
        })
    );
    let cases = [
        ("extensions:\n\tdev: 1\n", "a tab in the indentation", 2, 1),
        ("a: 1\n---\nb: 2\n", "more than one YAML document", 2, 1),
        (
            "defaults: &d {enabled: true}\nextensions:\n  dev: *d\n",
            "a YAML alias inside `extensions`",
            3,
            8,
        ),
        (
            "extensions:\n  dev: &d\n    enabled: true\n",
            "a YAML anchor inside `extensions`",
            2,
            8,
        ),
        (
            "extensions: !!map {}\n",
            "a YAML tag inside `extensions`",
            1,
            13,
        ),
    ];
    for (text, what, line, column) in cases {
        let err = set(KEY, text, &entry("/A")).unwrap_err();
        assert_eq!(
            err,
            EditError::Unsupported {
                what: what.into(),
                line,
                column
            },
            "{text}"
        );
        assert!(
            err.to_string().contains("--print-config --client goose"),
            "{err}"
        );
    }
    // An anchor and alias outside the block are fine: we do not touch them.
    let text = "base: &b {x: 1}\nother: *b\nextensions:\n  dev: {enabled: true}\n";
    let out = set(KEY, text, &entry("/A")).unwrap();
    assert!(out.starts_with("base: &b {x: 1}\nother: *b\n"), "{out}");
}

#[test]
fn a_change_that_does_not_read_back_is_refused() {
    let root = Yaml::load_from_str("a: 1\nextensions: {}\n").unwrap();
    let err = check(KEY, root.first(), "a: 2\nextensions: {}\n", None).unwrap_err();
    assert_eq!(
        err,
        EditError::Unverified("another top-level key changed".into())
    );
    let err = check(
        KEY,
        root.first(),
        "a: 1\nextensions:\n  tidings: {cmd: /B}\n",
        Some(&entry("/A")),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("reads back as {\"cmd\":\"/B\"}"),
        "{err}"
    );
}
