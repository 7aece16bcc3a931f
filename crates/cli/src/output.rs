//! Lines for the user on stdout and stderr that never fail the caller. `println!` and
//! `eprintln!` panic when the stream is gone (a closed pipe, `/dev/full`, a terminal that
//! went away), and a daemon must not die of who reads its messages: these drop the line.
//! Also the one way a time is written in them ([`utc`]).

use std::io::Write;

/// A line on stdout; a write error is ignored.
pub fn out(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// A line on stderr; a write error is ignored.
pub fn err(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Milliseconds since the Unix epoch as `2025-01-31 14:02:11 UTC`.
pub fn utc(ms: u64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(time::macros::format_description!(
                "[year]-[month]-[day] [hour]:[minute]:[second] UTC"
            ))
            .ok()
        })
        .unwrap_or_else(|| "?".to_owned())
}

/// `1 stream`, `3 streams`: a count with its noun, plural unless one.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
