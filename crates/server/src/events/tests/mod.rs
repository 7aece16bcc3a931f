//! Handler-level tests: a raw NDJSON client joined to the daemon with `tokio::io::duplex`, over
//! fixture stores in a tempdir.

mod backfill;
mod connection;
mod requests;
mod settings_file;
mod streams;
mod support;
