//! The command line's parsing: defaults, repeated flags, the flags that need others.

use super::*;
use clap::CommandFactory;

#[test]
fn the_command_line_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn simulate_takes_seconds_or_off() {
    assert_eq!(parse_simulate("off"), Ok(Simulate(None)));
    assert_eq!(
        parse_simulate("0.5"),
        Ok(Simulate(Some(Duration::from_millis(500))))
    );
    assert!(parse_simulate("0").is_err());
    assert!(parse_simulate("soon").is_err());
}

#[test]
fn tail_collects_repeated_filters() {
    let cli = Cli::try_parse_from([
        "tidings",
        "tail",
        "mail.received",
        "--domains",
        "a.com",
        "--domains",
        "b.com",
        "--max-age",
        "10m",
    ])
    .unwrap();
    let Command::Tail(tail) = cli.command else {
        panic!("not tail")
    };
    assert_eq!(tail.domains, ["a.com", "b.com"]);
    assert_eq!(tail.max_age, Some(Duration::from_secs(600)));
}

#[test]
fn no_auth_needs_demo_and_http() {
    let parse = |args: &[&str]| Cli::try_parse_from(["tidings", "serve"].iter().chain(args));
    assert!(parse(&["--http", "127.0.0.1:3917", "--no-auth"]).is_err());
    assert!(parse(&["--demo", "--no-auth"]).is_err());
    assert!(parse(&["--demo", "--http", "127.0.0.1:3917", "--no-auth"]).is_ok());
    assert!(parse(&["--http", "localhost"]).is_err());
    let err = parse(&["--demo", "--http", "0.0.0.0:3917"]).unwrap_err();
    assert!(err.to_string().contains("not a loopback address"), "{err}");
    assert!(parse(&["--http", "[::1]:3917"]).is_ok());
}

#[test]
fn conformance_controls_need_demo() {
    let parse = |args: &[&str]| Cli::try_parse_from(["tidings", "serve"].iter().chain(args));
    assert!(parse(&["--conformance-controls"]).is_err());
    assert!(parse(&["--demo", "--conformance-controls"]).is_ok());
}

#[test]
fn doctor_takes_the_demo_directory_by_serves_name_too() {
    for flag in ["--demo-dir", "--data-dir"] {
        let cli = Cli::try_parse_from(["tidings", "doctor", flag, "/tmp/d"]).unwrap();
        let Command::Doctor(args) = cli.command else {
            panic!("not doctor: {cli:?}");
        };
        assert_eq!(args.demo_dir, Some(PathBuf::from("/tmp/d")));
    }
}

#[test]
fn data_dir_needs_demo() {
    assert!(Cli::try_parse_from(["tidings", "serve", "--data-dir", "/tmp/x"]).is_err());
}

#[test]
fn webhooks_lists_allows_and_removes() {
    let cli = Cli::try_parse_from(["tidings", "webhooks", "--json", "--demo-dir", "/d"]).unwrap();
    let Command::Webhooks(args) = cli.command else {
        panic!("not webhooks: {cli:?}");
    };
    assert!(args.json && args.command.is_none());
    assert_eq!(args.demo_dir, Some(PathBuf::from("/d")));
    let cli = Cli::try_parse_from(["tidings", "webhooks", "allow", "https://h.example"]).unwrap();
    let Command::Webhooks(WebhooksArgs {
        command: Some(WebhooksCommand::Allow(a)),
        ..
    }) = cli.command
    else {
        panic!("not allow: {cli:?}");
    };
    assert_eq!(a.origin, "https://h.example");
    let cli = Cli::try_parse_from([
        "tidings",
        "webhooks",
        "remove",
        "https://h.example",
        "--data-dir",
        "/d",
    ])
    .unwrap();
    let Command::Webhooks(WebhooksArgs {
        command: Some(WebhooksCommand::Remove(_)),
        demo_dir: Some(_),
        ..
    }) = cli.command
    else {
        panic!("not remove: {cli:?}");
    };
    assert!(Cli::try_parse_from(["tidings", "webhooks", "allow"]).is_err());
    assert!(Cli::try_parse_from(["tidings", "webhooks", "forget", "x"]).is_err());
}
