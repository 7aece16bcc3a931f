//! The interpreter option rules and agent ids.

use super::*;

#[test]
fn interpreter_options_are_skipped_to_the_script() {
    let cases: &[(&str, &[&str], Target)] = &[
        (
            "python3",
            &["py", "-W", "ignore", "-u", "x.py", "-c"],
            Target::Script("x.py".into()),
        ),
        (
            "python3.12",
            &["py", "-Wignore", "-Bu", "x.py"],
            Target::Script("x.py".into()),
        ),
        (
            "python",
            &["py", "-mhttp.server"],
            Target::Module("http.server".into()),
        ),
        ("python", &["py", "-Bc", "print(1)"], Target::Inline),
        ("python", &["py"], Target::Nothing),
        ("python", &["py", "-"], Target::Nothing),
        (
            "node",
            &["node", "--require", "ts-node/register", "s.ts"],
            Target::Script("s.ts".into()),
        ),
        (
            "node",
            &["node", "--inspect=9229", "--", "-odd.js"],
            Target::Script("-odd.js".into()),
        ),
        ("nodejs", &["node", "--eval=1"], Target::Inline),
        ("node", &["node", "-p", "1"], Target::Inline),
        (
            "ruby",
            &["ruby", "-I", "lib", "-rjson", "a.rb"],
            Target::Script("a.rb".into()),
        ),
        ("ruby", &["ruby", "-e", "puts 1"], Target::Inline),
        (
            "perl",
            &["perl", "-Ilib", "-w", "a.pl"],
            Target::Script("a.pl".into()),
        ),
        (
            "php8.2",
            &["php", "-d", "x=1", "-f", "a.php"],
            Target::Script("a.php".into()),
        ),
        ("php", &["php", "-r", "echo 1;"], Target::Inline),
        (
            "deno",
            &["deno", "run", "-A", "--config", "d.json", "m.ts"],
            Target::Script("m.ts".into()),
        ),
        ("deno", &["deno", "eval", "1"], Target::Inline),
        (
            "bun",
            &["bun", "run", "s.ts"],
            Target::Script("s.ts".into()),
        ),
    ];
    for (exe, args, want) in cases {
        let interpreter = Interpreter::of(exe).unwrap_or_else(|| panic!("{exe} is an interpreter"));
        assert_eq!(&interpreter.target(&strings(args)), want, "{exe} {args:?}");
    }
    for other in [
        "claude",
        "node20x",
        "python3-config",
        "bash",
        "",
        "nodejs-x",
    ] {
        assert_eq!(Interpreter::of(other), None, "{other}");
    }
    assert_eq!(Interpreter::of("Python"), Some(Interpreter::Python));
}

#[test]
fn ids_are_deterministic_slugged_and_differ_by_key() {
    let a = agent_id(
        "python3 host_a.py",
        "exe:/usr/bin/python3 script:/tmp/host_a.py",
    );
    assert_eq!(
        a,
        agent_id(
            "python3 host_a.py",
            "exe:/usr/bin/python3 script:/tmp/host_a.py"
        )
    );
    let (slug, hex) = a.rsplit_once('-').unwrap();
    assert_eq!(slug, "python3-host-a-py");
    assert_eq!(hex.len(), 6);
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    // SHA-256("exe:/usr/bin/claude") starts with these bytes.
    let claude = agent_id("claude", "exe:/usr/bin/claude");
    assert_eq!(
        claude,
        format!("claude-{}", &sha_hex("exe:/usr/bin/claude")[..6])
    );
    assert_ne!(
        a,
        agent_id(
            "python3 host_a.py",
            "exe:/usr/bin/python3 script:/tmp/other/host_a.py"
        )
    );

    assert_eq!(
        agent_id("  Cursor!! Helper (Plugin) and more words", "k"),
        format!("cursor-helper-plugin-and-{}", &sha_hex("k")[..6])
    );
    assert_eq!(agent_id("Ω", "k"), format!("agent-{}", &sha_hex("k")[..6]));
    assert_eq!(AgentIdentity::unidentified().id(), "unidentified");
    assert!(AgentIdentity::unidentified().is_unidentified());
    let token = AgentIdentity::token("ci-bot");
    assert_eq!(token.key, "token:ci-bot");
    assert_eq!(token.name, "ci-bot");
    assert!(!token.is_unidentified());
    assert!(token.id().starts_with("ci-bot-"));
}

/// The SHA-256 of `text` in lower-case hex, computed here independently of `agent_id`.
fn sha_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .fold(String::new(), |mut hex, b| {
            use std::fmt::Write;
            write!(hex, "{b:02x}").unwrap();
            hex
        })
}
