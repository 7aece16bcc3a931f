//! The events extension's ServerHandler (being written).
