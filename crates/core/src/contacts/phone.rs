//! A card's phone number or address to the form the stores keep, in the user's region.
//!
//! chat.db keeps a phone handle as E.164 (`+12025550101`) or, for a short code, its digits
//! (`56249`); Mail and Messages keep addresses as written, compared without ASCII case. A card
//! keeps numbers as typed (`(202) 555-0101`), so a national number needs a region to become
//! E.164: libphonenumber's metadata (the `phonenumber` crate) reads it the way the phone would
//! dial it. See docs/decisions/people.md, "Matching handles to cards".

use std::collections::HashMap;

use phonenumber::Mode;
use phonenumber::country::Id;

/// A region (ISO 3166 alpha-2, upper case) national numbers are read in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Region(Id);

impl Region {
    /// `us`, `GB`: two ASCII letters that the phone metadata knows.
    pub fn parse(code: &str) -> Option<Region> {
        let code = code.trim();
        if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        code.to_ascii_uppercase().parse::<Id>().ok().map(Region)
    }

    /// The region of a locale (`en_US`, `en-GB`, `fr_FR.UTF-8`, `de_DE@euro`,
    /// `zh-Hant-TW`): the last two-letter part after the language.
    pub fn from_locale(locale: &str) -> Option<Region> {
        let base = locale.split(['.', '@']).next().unwrap_or("");
        base.split(['_', '-'])
            .skip(1)
            .filter(|p| p.len() == 2)
            .last()
            .and_then(Region::parse)
    }

    /// The upper-case code.
    pub fn code(&self) -> &str {
        self.0.as_ref()
    }
}

/// Digits a short code has (`56249`, `729725`): a number this short, written without `+`,
/// that the region does not read as a whole number, is kept as its digits.
const SHORT_CODE_DIGITS: std::ops::RangeInclusive<usize> = 3..=8;

/// The characters people type between a number's digits.
fn is_separator(c: char) -> bool {
    matches!(
        c,
        ' ' | '-' | '(' | ')' | '.' | '/' | '\u{a0}' | '\u{2011}' | '\u{2012}'
    )
}

/// The numbers the last load read, and their keys: turning a typed number into E.164 is most
/// of a load's time, and a reload (after any edit in Contacts) finds nearly all of them again.
/// Holds only what the latest load saw, so it never outgrows the address book.
#[derive(Debug, Default)]
pub struct PhoneCache {
    region: Option<Region>,
    last: HashMap<String, Option<String>>,
    this: HashMap<String, Option<String>>,
}

impl PhoneCache {
    /// [`phone_key`] of `written` in `region`, from the last load when it read the same text.
    pub(super) fn key(&mut self, written: &str, region: &Region) -> Option<String> {
        if self.region.as_ref() != Some(region) {
            self.region = Some(region.clone());
            self.last.clear();
            self.this.clear();
        }
        if let Some(key) = self.this.get(written) {
            return key.clone();
        }
        let key = match self.last.remove(written) {
            Some(key) => key,
            None => phone_key(written, region),
        };
        self.this.insert(written.to_owned(), key.clone());
        key
    }

    /// A load is over: what it read is what the next one looks up.
    pub(super) fn finish(&mut self) {
        self.last = std::mem::take(&mut self.this);
    }
}

/// A phone number as written on a card to its store form, in `region`: E.164 for a number
/// the metadata can read (an international one as written, a national one in `region`),
/// the digits of a short code, `None` for anything else (it then matches no handle).
pub fn phone_key(written: &str, region: &Region) -> Option<String> {
    let s = written.trim();
    let bare: String = s.chars().filter(|&c| !is_separator(c)).collect();
    let (plus, digits) = match bare.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, bare.as_str()),
    };
    if digits.is_empty() {
        return None;
    }
    let all_digits = digits.bytes().all(|b| b.is_ascii_digit());
    if plus {
        // Written international: the region plays no part.
        return all_digits
            .then(|| phonenumber::parse(None, &bare).ok())
            .flatten()
            .map(|n| n.format().mode(Mode::E164).to_string());
    }
    let parsed = phonenumber::parse(Some(region.0), s).ok();
    if let Some(n) = &parsed
        && n.is_valid()
    {
        return Some(n.format().mode(Mode::E164).to_string());
    }
    if all_digits && SHORT_CODE_DIGITS.contains(&digits.len()) {
        return Some(digits.to_owned());
    }
    // A whole national number the metadata does not list as valid (a new range, a fictional
    // 555 number): still the number the phone would dial, as long as it is long enough to be
    // one.
    parsed
        .filter(|_| digits.len() > *SHORT_CODE_DIGITS.end())
        .map(|n| n.format().mode(Mode::E164).to_string())
}

/// An e-mail address as written (`Ana@Example.COM`, `<ana@example.com>`,
/// `mailto:ana@example.com`) to its store form: trimmed, unwrapped, ASCII lower-case (the
/// stores compare addresses the way `SQLite`'s `NOCASE` does).
pub fn email_key(written: &str) -> Option<String> {
    let mut s = written.trim();
    if s.len() >= 7 && s[..7].eq_ignore_ascii_case("mailto:") {
        s = s[7..].trim();
    }
    let s = s.trim_start_matches('<').trim_end_matches('>').trim();
    let valid = s
        .split_once('@')
        .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty())
        && !s.chars().any(|c| c.is_whitespace() || c.is_control());
    valid.then(|| s.to_ascii_lowercase())
}

/// Any handle on a card (an address or a phone number) to its store form.
pub fn handle_key(written: &str, region: &Region) -> Option<String> {
    if written.contains('@') {
        email_key(written)
    } else {
        phone_key(written, region)
    }
}

/// A store's own handle (already E.164, an address, or a short code) to its key: no region
/// is needed, the stores keep numbers in their final form.
pub(super) fn store_handle_key(handle: &str) -> Option<String> {
    if handle.contains('@') {
        return email_key(handle);
    }
    let bare: String = handle
        .trim()
        .chars()
        .filter(|&c| !is_separator(c))
        .collect();
    let digits = bare.strip_prefix('+').unwrap_or(&bare);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(bare)
}

/// A store's handle as a person reads it: an E.164 number grouped the way its country writes
/// numbers internationally (`+12025550101` → `+1 202-555-0101`); anything else (an address,
/// a short code, a number the metadata cannot read) as it is.
pub fn readable_handle(handle: &str) -> String {
    let h = handle.trim();
    let e164 = h
        .strip_prefix('+')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    e164.then(|| phonenumber::parse(None, h).ok())
        .flatten()
        .map_or_else(
            || handle.to_owned(),
            |n| n.format().mode(Mode::International).to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_answers_as_phone_key_and_keeps_only_the_last_load() {
        let us = Region::parse("US").unwrap();
        let gb = Region::parse("GB").unwrap();
        let mut cache = PhoneCache::default();
        for written in ["(202) 555-0101", "56249", "not a number", "07700 900123"] {
            assert_eq!(
                cache.key(written, &us),
                phone_key(written, &us),
                "{written}"
            );
        }
        cache.finish();
        // The next load: the same text gives the same key, a new text is read.
        assert_eq!(
            cache.key("(202) 555-0101", &us).as_deref(),
            Some("+12025550101")
        );
        assert_eq!(
            cache.key("(202) 555-0143", &us).as_deref(),
            Some("+12025550143")
        );
        cache.finish();
        assert_eq!(cache.last.len(), 2, "only what the last load read");
        // Another region reads the same text again, in that region.
        assert_eq!(
            cache.key("07700 900123", &gb).as_deref(),
            Some("+447700900123")
        );
        assert_eq!(
            cache.key("07700 900123", &gb),
            phone_key("07700 900123", &gb)
        );
    }

    fn us() -> Region {
        Region::parse("us").unwrap()
    }

    #[test]
    fn regions_parse_from_codes_and_locales() {
        assert_eq!(us().code(), "US");
        assert_eq!(Region::parse("GB").unwrap().code(), "GB");
        assert_eq!(Region::parse("zz"), None);
        assert_eq!(Region::parse("usa"), None);
        assert_eq!(Region::parse(""), None);
        assert_eq!(Region::from_locale("en_US.UTF-8"), Some(us()));
        assert_eq!(Region::from_locale("en-GB").unwrap().code(), "GB");
        assert_eq!(Region::from_locale("de_DE@euro").unwrap().code(), "DE");
        assert_eq!(Region::from_locale("zh-Hant-TW").unwrap().code(), "TW");
        assert_eq!(Region::from_locale("C"), None);
        assert_eq!(Region::from_locale("POSIX"), None);
    }

    #[test]
    fn national_numbers_become_e164_in_the_region() {
        for written in [
            "(202) 555-0101",
            "202-555-0101",
            "202.555.0101",
            "1 202 555 0101",
        ] {
            assert_eq!(
                phone_key(written, &us()).as_deref(),
                Some("+12025550101"),
                "{written}"
            );
        }
        let gb = Region::parse("GB").unwrap();
        assert_eq!(
            phone_key("07700 900123", &gb).as_deref(),
            Some("+447700900123")
        );
        // The same digits read in another region are another number.
        assert_ne!(
            phone_key("07700 900123", &us()),
            phone_key("07700 900123", &gb)
        );
    }

    #[test]
    fn international_numbers_ignore_the_region() {
        assert_eq!(
            phone_key("+44 7700 900123", &us()).as_deref(),
            Some("+447700900123")
        );
        assert_eq!(
            phone_key("+1 (202) 555-0101", &Region::parse("FR").unwrap()).as_deref(),
            Some("+12025550101")
        );
    }

    #[test]
    fn short_codes_stay_digits_and_junk_is_none() {
        assert_eq!(phone_key("56249", &us()).as_deref(), Some("56249"));
        assert_eq!(phone_key("729-725", &us()).as_deref(), Some("729725"));
        assert_eq!(phone_key("12", &us()), None);
        assert_eq!(phone_key("call me", &us()), None);
        assert_eq!(phone_key("+", &us()), None);
        assert_eq!(phone_key("+1 abc", &us()), None);
        assert_eq!(phone_key("", &us()), None);
    }

    #[test]
    fn addresses_are_unwrapped_and_lower_cased() {
        for written in [
            "Ana@Example.COM",
            " <ana@example.com> ",
            "mailto:ANA@example.com",
            "MAILTO:<ana@example.com>",
        ] {
            assert_eq!(
                handle_key(written, &us()).as_deref(),
                Some("ana@example.com"),
                "{written}"
            );
        }
        assert_eq!(email_key("@example.com"), None);
        assert_eq!(email_key("ana@"), None);
        assert_eq!(email_key("a na@example.com"), None);
    }

    #[test]
    fn store_handles_need_no_region() {
        assert_eq!(
            store_handle_key("+12025550101").as_deref(),
            Some("+12025550101")
        );
        assert_eq!(store_handle_key("56249").as_deref(), Some("56249"));
        assert_eq!(
            store_handle_key("Ana@Example.com").as_deref(),
            Some("ana@example.com")
        );
        assert_eq!(store_handle_key("chat123"), None);
    }

    #[test]
    fn numbers_read_grouped_and_anything_else_as_it_is() {
        assert_eq!(readable_handle("+12025550101"), "+1 202-555-0101");
        assert_eq!(readable_handle("+447700900123"), "+44 7700 900123");
        for same in ["ana@example.com", "56249", "+12x", "+", ""] {
            assert_eq!(readable_handle(same), same);
        }
    }
}
