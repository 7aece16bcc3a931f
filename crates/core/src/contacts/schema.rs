//! The Core Data entity numbers of one store, looked up by name (they drift between macOS
//! versions), and the table and column names built from them.
