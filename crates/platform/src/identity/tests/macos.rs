//! Signing: the walk with a fake signer, `codesign` output through the recording runner,
//! and the `KERN_PROCARGS2` parser.

use super::*;

/// A signing answer per program path.
struct FakeSigning(Vec<(&'static str, Signing)>);

impl CodeSigning for FakeSigning {
    fn signing(&self, program: &Path) -> Option<Signing> {
        self.0
            .iter()
            .find(|(p, _)| Path::new(p) == program)
            .map(|(_, s)| s.clone())
    }
}

fn signed(identifier: &str, team: Option<&str>) -> Signing {
    Signing {
        identifier: identifier.to_owned(),
        team: team.map(str::to_owned),
        signer: team.map(|_| "Some Company".to_owned()),
    }
}

#[test]
fn a_program_signed_with_a_team_is_known_by_its_signature() {
    let cursor = "/Applications/Cursor.app/Contents/Frameworks/Cursor Helper (Plugin).app/Contents/MacOS/Cursor Helper (Plugin)";
    let signing = FakeSigning(vec![
        (
            cursor,
            signed(
                "com.todesktop.230313mzl4w4u92.helper.Plugin",
                Some("VDXQ22DGB9"),
            ),
        ),
        (
            "/usr/local/bin/claude",
            signed("com.anthropic.claude-code", Some("Q6L2SF6YDW")),
        ),
        ("/usr/local/bin/adhoc", signed("adhoc-1234", None)),
        ("/usr/local/bin/node", signed("node", Some("HX7739G8FX"))),
    ]);
    let procs = FakeProc::new();
    procs.process(10, 1, UID, cursor, &["Cursor Helper (Plugin)"]);
    procs.process(11, 1, UID, "/usr/local/bin/claude", &["claude"]);
    procs.process(12, 1, UID, "/usr/local/bin/adhoc", &["adhoc"]);
    procs.process(13, 1, UID, "/usr/local/bin/node", &["node", "/srv/mcp.js"]);
    procs.process(14, 1, UID, "/usr/local/bin/node", &["node"]);
    let id = |pid| identify(pid, UID, &procs.table(), &signing);

    let app = id(10);
    assert_eq!(
        app.key,
        "signed:VDXQ22DGB9:com.todesktop.230313mzl4w4u92.helper.Plugin"
    );
    assert_eq!(app.name, "Cursor");
    assert_eq!(app.signer.as_deref(), Some("Some Company"));
    let claude = id(11);
    assert_eq!(claude.key, "signed:Q6L2SF6YDW:com.anthropic.claude-code");
    assert_eq!(claude.name, "claude-code");
    let adhoc = id(12);
    assert_eq!(
        (adhoc.key.as_str(), adhoc.signer),
        ("exe:/usr/local/bin/adhoc", None)
    );
    assert_eq!(
        id(13).key,
        "exe:/usr/local/bin/node script:/srv/mcp.js",
        "a script beats the signature"
    );
    assert_eq!(
        id(14).key,
        "signed:HX7739G8FX:node",
        "a bare interpreter is itself"
    );
}

const CLAUDE_CODESIGN: &str = "Executable=/usr/local/bin/claude
Identifier=com.anthropic.claude-code
Format=Mach-O thin (arm64)
CodeDirectory v=20500 size=12345 flags=0x10000(runtime) hashes=375+7 location=embedded
Signature size=9045
Authority=Developer ID Application: Anthropic PBC (Q6L2SF6YDW)
Authority=Developer ID Certification Authority
Authority=Apple Root CA
Timestamp=Jun 1, 2025 at 10:00:00
Info.plist=not bound
TeamIdentifier=Q6L2SF6YDW
Runtime Version=15.0.0
Sealed Resources=none
Internal requirements count=1 size=200
";

const ZSH_CODESIGN: &str = "Executable=/bin/zsh
Identifier=com.apple.zsh
Format=Mach-O universal (x86_64 arm64e)
CodeDirectory v=20400 size=9000 flags=0x0(none) hashes=270+2 location=embedded
Platform identifier=16
Signature size=4442
Authority=Software Signing
Authority=Apple Code Signing Certification Authority
Authority=Apple Root CA
Signed Time=Apr 4, 2025 at 06:00:00
Info.plist=not bound
TeamIdentifier=not set
Sealed Resources=none
Internal requirements count=1 size=64
";

const ADHOC_CODESIGN: &str = "Executable=/Users/u/bin/tool
Identifier=tool-55554944a1b2
Format=Mach-O thin (arm64)
CodeDirectory v=20400 size=500 flags=0x20002(adhoc,linker-signed) hashes=12+0 location=embedded
Signature=adhoc
Info.plist=not bound
TeamIdentifier=not set
Sealed Resources=none
";

#[test]
fn codesign_output_is_read_through_the_runner() {
    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput {
        code: Some(0),
        stdout: Vec::new(),
        stderr: CLAUDE_CODESIGN.into(),
    });
    runner.push_output(CommandOutput {
        code: Some(0),
        stdout: Vec::new(),
        stderr: ZSH_CODESIGN.into(),
    });
    runner.push_output(CommandOutput {
        code: Some(0),
        stdout: Vec::new(),
        stderr: ADHOC_CODESIGN.into(),
    });
    runner.push_output(CommandOutput::failure(
        1,
        "/tmp/x: code object is not signed at all\n",
    ));
    runner.push_error(std::io::ErrorKind::NotFound);
    let codesign = Codesign::new(runner);

    let claude = codesign
        .signing(Path::new("/usr/local/bin/claude"))
        .unwrap();
    assert_eq!(
        claude,
        Signing {
            identifier: "com.anthropic.claude-code".into(),
            team: Some("Q6L2SF6YDW".into()),
            signer: Some("Anthropic PBC".into()),
        }
    );
    let zsh = codesign.signing(Path::new("/bin/zsh")).unwrap();
    assert_eq!((zsh.team, zsh.signer.as_deref()), (None, Some("Apple")));
    let adhoc = codesign.signing(Path::new("/Users/u/bin/tool")).unwrap();
    assert_eq!(
        (adhoc.identifier.as_str(), adhoc.team, adhoc.signer),
        ("tool-55554944a1b2", None, None)
    );
    assert_eq!(codesign.signing(Path::new("/tmp/x")), None, "not signed");
    assert_eq!(
        codesign.signing(Path::new("/tmp/y")),
        None,
        "codesign missing"
    );

    let calls = codesign.runner().calls();
    assert_eq!(calls[0].program, "/usr/bin/codesign");
    assert_eq!(
        calls[0].args,
        ["-dv", "--verbose=2", "/usr/local/bin/claude"]
    );
    assert_eq!(calls.len(), 5);
}

#[test]
fn authorities_name_their_holder() {
    let signer = |authority: &str| {
        parse_codesign(&format!(
            "Identifier=x\nAuthority={authority}\nAuthority=Apple Root CA\n"
        ))
        .unwrap()
        .signer
        .unwrap()
    };
    assert_eq!(
        signer("Developer ID Application: Anthropic PBC (Q6L2SF6YDW)"),
        "Anthropic PBC"
    );
    assert_eq!(
        signer("Developer ID Application: Jane (Doe) Smith (ABCDE12345)"),
        "Jane (Doe) Smith"
    );
    assert_eq!(
        signer("Apple Development: dev@example.com (XYZ)"),
        "dev@example.com"
    );
    assert_eq!(
        signer("Apple Code Signing Certification Authority"),
        "Apple"
    );
    assert_eq!(signer("Some Private CA"), "Some Private CA");
    assert_eq!(
        parse_codesign("TeamIdentifier=ABC\n"),
        None,
        "no identifier"
    );
}

/// A `KERN_PROCARGS2` buffer as macOS lays it out.
fn procargs2(exec: &str, args: &[&[u8]], env: &[&str]) -> Vec<u8> {
    let mut buf = i32::try_from(args.len()).unwrap().to_ne_bytes().to_vec();
    buf.extend_from_slice(exec.as_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]);
    for a in args {
        buf.extend_from_slice(a);
        buf.push(0);
    }
    for e in env {
        buf.extend_from_slice(e.as_bytes());
        buf.push(0);
    }
    buf
}

#[test]
fn procargs2_gives_the_arguments_and_never_the_environment() {
    let buf = procargs2(
        "/usr/bin/python3",
        &[b"python3", b"host_a.py", b"\xffx"],
        &["SECRET=1"],
    );
    assert_eq!(
        parse_procargs2(&buf).unwrap(),
        ["python3", "host_a.py", "\u{fffd}x"]
    );
    assert_eq!(
        parse_procargs2(&procargs2("/bin/x", &[], &["A=1"])).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(parse_procargs2(&[1, 0]), None);
    assert_eq!(parse_procargs2(&(-1i32).to_ne_bytes()), None);
    let long = vec![b'a'; 2 * MAX_ARGS_BYTES];
    let args = parse_procargs2(&procargs2("/bin/x", &[b"x", &long], &[])).unwrap();
    assert_eq!(args[0], "x");
    assert!(args[1].len() < MAX_ARGS_BYTES);
}
