//! Why a host's config text cannot be edited: the one error every format's editor returns.

/// Why a config text cannot be edited; the caller adds the file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The text does not parse.
    #[error("is not valid {format} (line {line}, column {column}: {message})")]
    Invalid {
        /// "JSON", "JSON with comments", "TOML" or "YAML".
        format: &'static str,
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
        /// The parser's words.
        message: String,
    },
    /// The top level is not an object (a table in TOML, a mapping in YAML).
    #[error("has no {what} at the top level")]
    NotAnObject {
        /// "object", "table" or "mapping".
        what: &'static str,
    },
    /// The servers key holds something else than an object (table, mapping).
    #[error("has `{key}` that is not an {what}")]
    KeyNotAnObject {
        /// The servers key.
        key: &'static str,
        /// "object", "table" or "mapping".
        what: &'static str,
    },
    /// Valid, but written in a way we do not edit (YAML anchors in the servers block, tabs,
    /// several documents): the user adds the entry by hand.
    // Only Goose's YAML is refused this way, hence the hint's client.
    #[error(
        "uses {what} (line {line}, column {column}), which tidings does not edit; add the \
         entry by hand (`tidings-mcp --print-config --client goose` prints it)"
    )]
    Unsupported {
        /// What we found, e.g. "a YAML anchor inside `extensions`".
        what: String,
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
    },
    /// The edited text did not read back as the intended change: nothing is written.
    #[error(
        "could not be edited safely ({0}); nothing was written: add the entry by hand \
         (`tidings-mcp --print-config --client goose` prints it)"
    )]
    Unverified(String),
}
