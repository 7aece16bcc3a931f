//! The pull tools' cursor: one core cursor per event type of the call, in one opaque string
//! (`t1.mail.received=v2.….42~messages.received=v2.….7`), and the per-connection memory of
//! the last cursor each type set ended on.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Mutex;

use tidings_core::{Cursor, EventType};

use crate::sync::lock;

const PREFIX: &str = "t1.";
/// The longest cursor we read: two types' core cursors fit many times over.
pub const MAX_CURSOR_LEN: usize = 512;

/// Where each type of a call stands. A type missing from the map starts from now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCursor(pub BTreeMap<EventType, Cursor>);

impl ToolCursor {
    /// Parse a cursor a tool handed out; the error says what is wrong, for `cursor`.
    pub fn parse(text: &str) -> Result<ToolCursor, String> {
        if text.len() > MAX_CURSOR_LEN {
            return Err(format!(
                "cursor is longer than {MAX_CURSOR_LEN} characters; pass the cursor a \
                 tidings_check or tidings_wait result returned, or null to start from now"
            ));
        }
        let bad = || {
            "cursor is not one Tidings' tools returned; pass the cursor of the last result, \
             or null to start from now"
                .to_owned()
        };
        let body = text.strip_prefix(PREFIX).ok_or_else(bad)?;
        let mut map = BTreeMap::new();
        for part in body.split('~').filter(|p| !p.is_empty()) {
            let (name, cursor) = part.split_once('=').ok_or_else(bad)?;
            let ty = EventType::from_name(name).ok_or_else(bad)?;
            let cursor: Cursor = cursor.parse().map_err(|_| bad())?;
            map.insert(ty, cursor);
        }
        Ok(ToolCursor(map))
    }
}

impl std::fmt::Display for ToolCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(PREFIX)?;
        for (i, (ty, cursor)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("~")?;
            }
            write!(f, "{ty}={cursor}")?;
        }
        Ok(())
    }
}

/// The cursor each type set of one connection last ended on, so a caller that omits
/// `cursor` continues where it left off. Keyed by the set, not each type: a call on mail
/// alone must not move the position of a later call on mail and messages.
#[derive(Default)]
pub struct ConnectionCursors(Mutex<HashMap<Vec<EventType>, ToolCursor>>);

/// How many type sets one connection remembers; there are only three non-empty sets today.
const MAX_SETS: usize = 16;

impl ConnectionCursors {
    /// The cursor `types` last ended on, if any.
    pub fn get(&self, types: &[EventType]) -> Option<ToolCursor> {
        lock(&self.0).get(types).cloned()
    }

    /// Remember where `types` ended.
    pub fn set(&self, types: &[EventType], cursor: ToolCursor) {
        let mut map = lock(&self.0);
        if map.len() >= MAX_SETS && !map.contains_key(types) {
            return;
        }
        map.insert(types.to_vec(), cursor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_survives_a_round_trip_and_garbage_is_refused() {
        let c: Cursor = "v2.1-2-3.42".parse().unwrap();
        let mut map = BTreeMap::new();
        map.insert(EventType::MailReceived, c);
        let tool = ToolCursor(map);
        let text = tool.to_string();
        assert_eq!(ToolCursor::parse(&text).unwrap(), tool);
        assert!(ToolCursor::parse("v2.1-2-3.42").is_err());
        assert!(ToolCursor::parse("t1.nope=v2.1-2-3.42").is_err());
        assert!(
            ToolCursor::parse(&"x".repeat(600))
                .unwrap_err()
                .contains("512")
        );
        assert_eq!(ToolCursor::parse("t1.").unwrap(), ToolCursor::default());
    }
}
