//! Integration tests for the engine on real fixture stores (built by `tidings-fixtures`). Built
//! as one test binary (link time matters on a small machine); one module per behaviour. A new
//! module starts with `use crate::common::*;` (no `mod common;`).

// A fake Mac home with fixture stores, an engine on it, and drains.
mod common;

// Backfill is not news: old-dated rows appearing among new ones are held back.
mod backfill;
// A stranger's row with bad values is decoded leniently or skipped, never fatal.
mod bad_rows;
// Categories and priority, junk and blocked chats, recent senders.
mod categories;
// Filters against hostile senders and big lists.
mod filters;
// A cursor for another file or past the head is a gap, never a silent skip.
mod gaps;
// Tidings never gets in the owner's way.
mod owner;
// `from.contact`: senders named from Contacts only when the engine is told to.
mod names;
// `events/poll` semantics: bootstrap, maxEvents and hasMore, the bound.
mod poll;
// The columns the queries read are the ones the schema probe requires.
mod schema;
// Each way a store can fail is its own typed error.
mod store_errors;
// Over the fixture variety, exactly the deliverable rows become events.
mod variety;
// A shared read matched in memory answers what each subscription reads on its own.
mod shared;
// The newest rows in the `-wal` are seen by a read-only reader.
mod wal;
