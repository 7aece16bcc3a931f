//! Tool names: the pull tools, on both eras, and the demo's conformance levers.

/// The pull tool that returns what arrived since the last call.
pub const CHECK: &str = "tidings_check";
/// The pull tool that waits for something to arrive.
pub const WAIT: &str = "tidings_wait";

/// The demo's lever: a store unreadable for a moment (`notifications/events/error`).
pub const CONFORMANCE_YIELD_ERROR: &str = "events_conformance_yield_error";
/// The demo's lever: a store rebuilt (a second `active` with `truncated`).
pub const CONFORMANCE_YIELD_GAP: &str = "events_conformance_yield_gap";
/// The demo's lever: a type turned off and on (`notifications/events/terminated`).
pub const CONFORMANCE_TERMINATE: &str = "events_conformance_terminate";
