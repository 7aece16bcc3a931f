//! Handler-level tests: a raw NDJSON client joined to the daemon with `tokio::io::duplex`, over
//! fixture stores in a tempdir.

// `h` (the harness), `c` (a client), `d` (a discovery result): the tests' short vocabulary.
#![allow(clippy::many_single_char_names)]

mod agents;
mod backfill;
mod categories;
mod connection;
mod people;
mod requests;
mod settings_file;
mod state;
mod streams;
mod support;
