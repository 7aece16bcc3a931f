//! Lines for the user on stdout and stderr that never fail the caller. `println!` and
//! `eprintln!` panic when the stream is gone (a closed pipe, `/dev/full`, a terminal that
//! went away), and a daemon must not die of who reads its messages: these drop the line.

use std::io::Write;

/// A line on stdout; a write error is ignored.
pub fn out(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// A line on stderr; a write error is ignored.
pub fn err(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
