//! The cursor parser (`Cursor::from_str`) on arbitrary bytes: never panics, and a cursor it
//! accepts prints to a string that parses back to the same cursor.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::Cursor;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<Cursor>() {
        Ok(cursor) => {
            let printed = cursor.to_string();
            assert_eq!(printed.parse::<Cursor>(), Ok(cursor), "{printed}");
        }
        // The message is a fixed phrase: nothing of the input is echoed.
        Err(e) => assert!(e.to_string().len() < 200),
    }
});
