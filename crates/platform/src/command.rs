//! [`CommandRunner`], the only way this workspace runs OS tools such as `launchctl`, with a
//! real [`SystemRunner`] and a scripted [`RecordingRunner`] for tests.
//!
//! Going through a trait lets tests check the exact command line and feed back any exit
//! code without launchd or systemd being present.

use std::collections::VecDeque;
use std::io;
use std::process::Command;
use std::sync::Mutex;

/// What a finished command left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// Exit code; `None` if the process was killed by a signal.
    pub code: Option<i32>,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

impl CommandOutput {
    /// A successful run (exit code 0) with no output.
    pub fn success() -> Self {
        Self {
            code: Some(0),
            ..Self::default()
        }
    }

    /// A failed run with the given exit code and stderr.
    pub fn failure(code: i32, stderr: &str) -> Self {
        Self {
            code: Some(code),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    /// Whether the command exited with code 0.
    pub fn is_success(&self) -> bool {
        self.code == Some(0)
    }

    /// The first line of stderr with text, trimmed: what an error naming the command quotes,
    /// kept to one line so the message stays one line.
    pub fn stderr_first_line(&self) -> String {
        let stderr = String::from_utf8_lossy(&self.stderr);
        stderr.trim().lines().next().unwrap_or("").trim().to_owned()
    }
}

/// `program args…` as a shell would take it (for messages and dry runs): arguments with
/// anything but plain characters are single-quoted.
pub fn command_line(program: &str, args: &[&str]) -> String {
    std::iter::once(program)
        .chain(args.iter().copied())
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` as one POSIX shell word: bare when it is only safe characters, else single-quoted.
pub fn shell_quote(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Runs a program to completion and collects its output.
pub trait CommandRunner: Send + Sync {
    /// Runs `program` with `args`, waits for it, and returns its exit code and output.
    ///
    /// An `Err` means the program could not be started (or waited for); a program that ran
    /// and failed is an `Ok` with a non-zero [`CommandOutput::code`].
    fn run(&self, program: &str, args: &[&str]) -> io::Result<CommandOutput>;
}

/// Runs commands for real with [`std::process::Command`], stdin closed.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemRunner;

impl CommandRunner for SystemRunner {
    fn run(&self, program: &str, args: &[&str]) -> io::Result<CommandOutput> {
        let output = Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()?;
        Ok(CommandOutput {
            code: output.status.code(),
            stdout: output.stdout,
            stderr: output.stderr,
        })
    }
}

/// One call seen by a [`RecordingRunner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// A test double: records every call and answers from a script, never running anything.
///
/// It is public (not behind a feature) so tests in other crates can use it without extra
/// cargo flags; it has no cost for code that does not name it. Answers are consumed in the
/// order they were pushed; once the script is empty every call succeeds with no output.
#[derive(Debug, Default)]
pub struct RecordingRunner {
    calls: Mutex<Vec<RecordedCall>>,
    script: Mutex<VecDeque<Result<CommandOutput, io::ErrorKind>>>,
}

impl RecordingRunner {
    /// A runner with an empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `output` as the answer to the next unanswered call.
    pub fn push_output(&self, output: CommandOutput) -> &Self {
        lock(&self.script).push_back(Ok(output));
        self
    }

    /// Queues a spawn failure of `kind` (e.g. `NotFound` for a missing program).
    pub fn push_error(&self, kind: io::ErrorKind) -> &Self {
        lock(&self.script).push_back(Err(kind));
        self
    }

    /// Every call so far, oldest first.
    pub fn calls(&self) -> Vec<RecordedCall> {
        lock(&self.calls).clone()
    }
}

impl CommandRunner for RecordingRunner {
    fn run(&self, program: &str, args: &[&str]) -> io::Result<CommandOutput> {
        lock(&self.calls).push(RecordedCall {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        });
        match lock(&self.script).pop_front() {
            Some(Ok(output)) => Ok(output),
            Some(Err(kind)) => Err(io::Error::new(
                kind,
                format!("scripted {kind} for {program}"),
            )),
            None => Ok(CommandOutput::success()),
        }
    }
}

/// Locks, ignoring poisoning: a panicking test must not hide its own message behind ours.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_runner_reports_exit_code_and_output() {
        let out = SystemRunner
            .run("sh", &["-c", "printf out; printf err >&2; exit 3"])
            .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout, b"out");
        assert_eq!(out.stderr, b"err");
        assert!(!out.is_success());
    }

    #[test]
    fn system_runner_missing_program_is_an_error() {
        let err = SystemRunner
            .run("/nonexistent/tidings-no-such-program", &[])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn recording_runner_records_and_answers_in_order() {
        let runner = RecordingRunner::new();
        runner
            .push_output(CommandOutput::failure(5, "nope"))
            .push_error(io::ErrorKind::NotFound);

        assert_eq!(runner.run("a", &["1"]).unwrap().code, Some(5));
        assert_eq!(
            runner.run("b", &[]).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(runner.run("c", &["x", "y"]).unwrap().is_success());

        let calls = runner.calls();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].program, "a");
        assert_eq!(calls[0].args, ["1"]);
        assert_eq!(calls[2].args, ["x", "y"]);
    }
}
