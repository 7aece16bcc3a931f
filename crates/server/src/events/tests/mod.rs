//! Handler-level tests: a raw NDJSON client joined to the daemon with tokio::io::duplex.
