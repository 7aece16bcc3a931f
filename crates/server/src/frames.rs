//! (stub; see daemon.rs)
