//! The socket framer's inbound half (line splitting and the checks made before rmcp) on
//! arbitrary bytes cut into arbitrary chunks: never panics; the chunking never changes the
//! outcome; every answer is one JSON-RPC error line that carries an `id`; nothing forwarded
//! to rmcp holds a newline (which would split it into two frames).
//!
//! Input layout: two bytes pick the frame limit (1..=8192, so lines over the limit and over
//! the 4 KiB head both happen), one byte the chunk size; the rest is the stream. (Duplicate
//! stream ids are decided by the connection's state, outside this pure half.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tidings_server::frames::{Inbound, inbound_for_fuzzing};

fuzz_target!(|data: &[u8]| {
    let [a, b, chunk, stream @ ..] = data else {
        return;
    };
    let max = 1 + usize::from(u16::from_le_bytes([*a, *b]) % 8192);
    let chunk = 1 + usize::from(*chunk);
    let chunks: Vec<&[u8]> = stream.chunks(chunk).collect();
    let out = inbound_for_fuzzing(&chunks, max);
    assert_eq!(
        out,
        inbound_for_fuzzing(&[stream], max),
        "chunking changed the outcome"
    );
    for inbound in out {
        match inbound {
            Inbound::Skip => {}
            Inbound::Forward { line, .. } => assert!(!line.contains(&b'\n')),
            Inbound::Reply(frame) => {
                let (last, body) = frame.split_last().expect("a reply is not empty");
                assert_eq!(*last, b'\n');
                assert!(!body.contains(&b'\n'));
                let v: Value = serde_json::from_slice(body).expect("a reply is JSON");
                assert_eq!(v["jsonrpc"], "2.0");
                let id = v.get("id").expect("a reply carries an id");
                assert!(id.is_null() || id.is_string() || id.is_i64() || id.is_u64());
                assert!(v["error"]["code"].is_i64());
                assert!(v["error"]["message"].as_str().is_some_and(|m| m.len() < 600));
            }
        }
    }
});
