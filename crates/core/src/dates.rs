//! Store dates to ISO 8601.
//!
//! Mail stores `date_received`/`date_sent` as Unix seconds. Messages stores `message.date` as
//! time since 2001-01-01 00:00:00 UTC (Apple's reference date): nanoseconds since macOS 10.13,
//! seconds before it. Zero or NULL means "no date" in both.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Seconds between 1970-01-01 and 2001-01-01.
pub const APPLE_EPOCH_OFFSET_SECS: i64 = 978_307_200;

/// Above this, an Apple timestamp is in nanoseconds (seconds would be ~31 million years).
pub(crate) const APPLE_NANOS_THRESHOLD: i64 = 1_000_000_000_000;

/// A Unix time in seconds from Mail; `None` for NULL, zero or out of range.
pub fn from_unix_secs(secs: Option<i64>) -> Option<OffsetDateTime> {
    match secs {
        Some(s) if s > 0 => OffsetDateTime::from_unix_timestamp(s).ok().filter(writable),
        _ => None,
    }
}

/// RFC 3339 has four-digit years: a later date (a corrupt value) is no date at all.
fn writable(t: &OffsetDateTime) -> bool {
    t.year() <= 9999
}

/// An Apple timestamp from Messages (nanoseconds or legacy seconds since 2001); `None` for
/// NULL, zero or out of range.
pub fn from_apple(value: Option<i64>) -> Option<OffsetDateTime> {
    let v = value.filter(|v| *v > 0)?;
    let nanos = if v > APPLE_NANOS_THRESHOLD {
        i128::from(v)
    } else {
        i128::from(v) * 1_000_000_000
    };
    let unix_nanos = nanos + i128::from(APPLE_EPOCH_OFFSET_SECS) * 1_000_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(unix_nanos)
        .ok()
        .filter(writable)
}

/// The Apple nanosecond value of a Unix time, for seeking through `message_idx_date`.
pub fn to_apple_nanos(t: OffsetDateTime) -> i64 {
    let nanos = t.unix_timestamp_nanos() - i128::from(APPLE_EPOCH_OFFSET_SECS) * 1_000_000_000;
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// RFC 3339 in UTC with a `Z`: whole seconds, or milliseconds when the value has a fraction.
/// Messages stores nanoseconds; more than three fraction digits trips some clients' parsers
/// (Python's `fromisoformat` before 3.11 takes 3 or 6), and no one needs them.
pub fn iso8601(t: OffsetDateTime) -> String {
    let utc = t.to_offset(time::UtcOffset::UTC);
    let millis = utc.millisecond();
    let whole = utc.replace_nanosecond(0).unwrap_or(utc);
    // Formatting a valid UTC date cannot fail; the fallback keeps this total anyway.
    let base = whole
        .format(&Rfc3339)
        .unwrap_or_else(|_| utc.unix_timestamp().to_string());
    match base.strip_suffix('Z') {
        Some(stem) if millis != 0 => format!("{stem}.{millis:03}Z"),
        _ => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mail_seconds_are_unix() {
        let t = from_unix_secs(Some(1_717_243_200)).unwrap();
        assert_eq!(iso8601(t), "2024-06-01T12:00:00Z");
        assert_eq!(from_unix_secs(Some(0)), None);
        assert_eq!(from_unix_secs(None), None);
    }

    #[test]
    fn messages_nanoseconds_and_legacy_seconds_are_from_2001() {
        let t = from_apple(Some(738_936_000_000_000_000)).unwrap();
        assert_eq!(iso8601(t), "2024-06-01T12:00:00Z");
        let legacy = from_apple(Some(738_936_000)).unwrap();
        assert_eq!(legacy, t);
        assert_eq!(to_apple_nanos(t), 738_936_000_000_000_000);
        assert_eq!(from_apple(Some(0)), None);
    }

    #[test]
    fn dates_past_year_9999_are_no_date() {
        // 999,999,999,999 legacy seconds after 2001: about year 33,700.
        assert_eq!(from_apple(Some(999_999_999_999)), None);
        assert_eq!(from_unix_secs(Some(400_000_000_000)), None);
        assert!(from_unix_secs(Some(253_402_300_799)).is_some()); // 9999-12-31T23:59:59Z
    }

    #[test]
    fn fractions_are_cut_to_milliseconds() {
        let t = from_apple(Some(738_936_000_123_456_789)).unwrap();
        assert_eq!(iso8601(t), "2024-06-01T12:00:00.123Z");
        let t = from_apple(Some(738_936_000_000_456_789)).unwrap();
        assert_eq!(iso8601(t), "2024-06-01T12:00:00Z");
    }
}
