//! Untrusted text: subjects, names and chat titles are written by strangers.
//!
//! They go out as data, but a client may paste them into a prompt or a terminal, so we strip
//! control characters (C0, C1, DEL), bidirectional overrides and zero-width format characters
//! that can hide or reorder text, and cap the length.

/// The longest subject we pass on, in characters.
pub const MAX_SUBJECT_CHARS: usize = 500;
/// The longest display name, address, handle or chat title we pass on, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Clean `input` for a payload: drop control and invisible format characters, turn line breaks
/// and tabs into spaces, trim, and cap at `max_chars` (ending in `…` when cut).
pub fn sanitize(input: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(input.len().min(max_chars * 4));
    let mut count = 0;
    let mut truncated = false;
    for ch in input.chars() {
        let ch = match ch {
            '\t' | '\n' | '\r' => ' ',
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

/// Characters that control a terminal or change how the surrounding text is displayed.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'   // zero-width space/joiners, LRM, RLM
            | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
            | '\u{2066}'..='\u{2069}' // bidi isolates
            | '\u{FEFF}'              // BOM / zero-width no-break space
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotation
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_controls_and_bidi_overrides() {
        assert_eq!(sanitize("Hi\u{1b}[31m there\u{7}", 100), "Hi[31m there");
        assert_eq!(sanitize("invoice\u{202E}fdp.exe", 100), "invoicefdp.exe");
        assert_eq!(sanitize("a\u{0085}b\u{009b}c", 100), "abc");
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
}
