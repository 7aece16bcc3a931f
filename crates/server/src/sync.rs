//! The one poison-recovering lock the server crate uses.

use std::sync::{Mutex, MutexGuard};

/// Lock `m`, carrying on past poison: a poisoned lock only means a panic elsewhere while it
/// was held, and every value the server guards (settings serialisation, a watcher, a stamp,
/// a token state) is replaced whole, so it is still sound.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
