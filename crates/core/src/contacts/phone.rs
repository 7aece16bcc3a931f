//! A card's phone number or address to the form the stores keep, in the user's region.

/// A region (ISO 3166 alpha-2, upper case) national numbers are read in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Region(String);

impl Region {
    /// `us`, `GB`: two ASCII letters, known to the phone metadata.
    pub fn parse(code: &str) -> Option<Region> {
        let _ = code;
        todo!()
    }

    /// The region of a locale (`en_US`, `en-GB`, `fr_FR.UTF-8`, `de_DE@euro`).
    pub fn from_locale(locale: &str) -> Option<Region> {
        let _ = locale;
        todo!()
    }

    /// The upper-case code.
    pub fn code(&self) -> &str {
        &self.0
    }
}

/// A phone number as written on a card to its store form, in `region`.
pub fn phone_key(written: &str, region: &Region) -> Option<String> {
    let _ = (written, region);
    todo!()
}

/// Any handle on a card (an address or a phone number) to its store form.
pub fn handle_key(written: &str, region: &Region) -> Option<String> {
    let _ = (written, region);
    todo!()
}

/// A store's own handle (already E.164, an address, or a short code) to its key.
pub(super) fn store_handle_key(handle: &str) -> Option<String> {
    let _ = handle;
    todo!()
}
