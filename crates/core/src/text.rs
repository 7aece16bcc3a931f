//! Untrusted text: subjects, names and chat titles are written by strangers.
//!
//! They go out as data, but a client may paste them into a prompt or a terminal, so we strip
//! control characters (C0, C1, DEL), bidirectional overrides and zero-width format characters
//! that can hide or reorder text, and cap the length. Also a path escaped for an `SQLite`
//! `file:` URI, which every store reader opens with.

use std::fmt::Write as _;
use std::path::Path;

/// The longest subject we pass on, in characters.
pub const MAX_SUBJECT_CHARS: usize = 500;
/// The longest display name, address, handle or chat title we pass on, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The longest Message-ID we pass on, in characters: ids are machine-made and longer than
/// names (RFC 5322 bounds only the line), but still capped.
pub const MAX_MESSAGE_ID_CHARS: usize = 2 * MAX_NAME_CHARS;
/// The most of a client's own input (an event type, argument, tool or request id) an error
/// message echoes back, in characters: enough to recognise it, never a flood.
pub const MAX_ECHO_CHARS: usize = 64;
/// The most of a value a refusal quotes (a sender pattern, an account, a mailbox or chat
/// name), in characters: patterns run longer than names, so a little more than
/// [`MAX_ECHO_CHARS`].
pub const MAX_QUOTE_CHARS: usize = 80;

/// Clean `input` for a payload: drop control and invisible format characters, turn line breaks
/// and tabs into spaces, trim, and cap at `max_chars` (ending in `…` when cut).
pub fn sanitize(input: &str, max_chars: usize) -> String {
    // Printable ASCII (most addresses and ids, many names and subjects) has nothing to drop
    // or fold, and a byte is a character: only the trim is left, and a catch-up does not walk
    // such text a character at a time.
    if input.len() <= max_chars && input.bytes().all(|b| matches!(b, b' '..=b'~')) {
        return input.trim().to_owned();
    }
    sanitize_chars(input, max_chars)
}

/// [`sanitize`], a character at a time.
fn sanitize_chars(input: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(input.len().min(max_chars * 4));
    let mut count = 0;
    let mut truncated = false;
    for ch in input.chars() {
        let ch = match ch {
            // Line and paragraph breaks of every kind fold to a space.
            '\t' | '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' => ' ',
            c if is_hidden(c) => continue,
            c => c,
        };
        if count == max_chars {
            truncated = true;
            break;
        }
        out.push(ch);
        count += 1;
    }
    let trimmed = out.trim();
    if truncated {
        let mut cut: String = trimmed.chars().take(max_chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_owned()
    }
}

/// Characters that control a terminal, or that are invisible yet change or carry text: the
/// Unicode format characters (general category Cf), such as bidi overrides and the tag
/// characters U+E0000–E007F, which can smuggle ASCII past a reader ("ASCII smuggling"). The
/// zero-width joiner and non-joiner stay: emoji sequences and several scripts need them.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}'                  // soft hyphen
            | '\u{0600}'..='\u{0605}'   // Arabic number signs
            | '\u{061C}'                // Arabic letter mark
            | '\u{06DD}' | '\u{070F}' | '\u{0890}' | '\u{0891}' | '\u{08E2}'
            | '\u{180E}'                // Mongolian vowel separator
            | '\u{200B}'                // zero-width space
            | '\u{200E}' | '\u{200F}'   // LRM, RLM
            | '\u{202A}'..='\u{202E}'   // bidi embeddings and overrides
            | '\u{2060}'..='\u{2064}'   // word joiner, invisible operators
            | '\u{2066}'..='\u{206F}'   // bidi isolates, deprecated format characters
            | '\u{FEFF}'                // BOM / zero-width no-break space
            | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotation
            | '\u{110BD}' | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}' // Egyptian hieroglyph format controls
            | '\u{1BCA0}'..='\u{1BCA3}' // shorthand format controls
            | '\u{1D173}'..='\u{1D17A}' // musical symbol format controls
            | '\u{E0001}' | '\u{E0020}'..='\u{E007F}' // language tag, tag characters
        )
}

/// Escape a path for an `SQLite` `file:` URI: `%`, `?` and `#` end or change the path, and a
/// space (as in "Envelope Index") is safest escaped too.
pub fn uri_escape(path: &Path) -> String {
    let mut out = String::new();
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b if b.is_ascii_graphic() && !matches!(b, b'%' | b'?' | b'#') => out.push(*b as char),
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_controls_and_bidi_overrides() {
        assert_eq!(sanitize("Hi\u{1b}[31m there\u{7}", 100), "Hi[31m there");
        assert_eq!(sanitize("invoice\u{202E}fdp.exe", 100), "invoicefdp.exe");
        assert_eq!(sanitize("a\u{009b}b\u{0090}c", 100), "abc");
    }

    #[test]
    fn strips_tag_characters_and_other_invisible_format_characters() {
        // "hi" followed by "IGNORE" spelled in tag characters: invisible, but a model reads it.
        let smuggled: String = "hi"
            .chars()
            .chain(
                "IGNORE"
                    .chars()
                    .map(|c| char::from_u32(0xE0000 + c as u32).unwrap()),
            )
            .collect();
        assert_eq!(sanitize(&smuggled, 100), "hi");
        assert_eq!(
            sanitize("soft\u{00AD}hyphen\u{061C}\u{180E}", 100),
            "softhyphen"
        );
        assert_eq!(
            sanitize("family 👨\u{200D}👩\u{200D}👧", 100),
            "family 👨\u{200D}👩\u{200D}👧"
        );
    }

    #[test]
    fn folds_line_breaks_and_trims() {
        assert_eq!(
            sanitize("  line one\r\nline two\t ", 100),
            "line one  line two"
        );
    }

    #[test]
    fn caps_length_with_an_ellipsis() {
        let long = "é".repeat(600);
        let out = sanitize(&long, MAX_SUBJECT_CHARS);
        assert_eq!(out.chars().count(), MAX_SUBJECT_CHARS);
        assert!(out.ends_with('…'));
        assert_eq!(sanitize("short", 5), "short");
        assert_eq!(sanitize("longer", 5), "long…");
    }

    #[test]
    fn the_ascii_shortcut_answers_as_the_character_walk_does() {
        let printable: String = (b' '..=b'~').map(char::from).collect();
        let inputs = [
            String::new(),
            "   ".to_owned(),
            "  padded both ways  ".to_owned(),
            "ana@example.com".to_owned(),
            printable.clone(),
            // Just outside the shortcut: DEL, a tab, a line break, a non-ASCII letter.
            "del\u{7f}ete".to_owned(),
            "tab\there".to_owned(),
            "two\nlines ".to_owned(),
            "café".to_owned(),
        ];
        for input in &inputs {
            // Every cap around the input's length: under, at and over.
            for max in 0..=input.len() + 2 {
                assert_eq!(
                    sanitize(input, max),
                    sanitize_chars(input, max),
                    "{input:?} capped at {max}"
                );
            }
        }
    }

    #[test]
    fn uri_escape_keeps_slashes_and_escapes_specials() {
        assert_eq!(
            uri_escape(Path::new("/a b/c?d#e%f")),
            "/a%20b/c%3Fd%23e%25f"
        );
        assert_eq!(uri_escape(Path::new("/x/ü")), "/x/%C3%BC");
    }
}
