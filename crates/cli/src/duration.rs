//! `--max-age` values: a number and a unit, as in `30s`, `10m`, `2h`, `1d` or `500ms`.

use std::time::Duration;

/// Parses `<number><unit>`; the unit is one of `ms`, `s`, `m`, `h`, `d`. A bare number is
/// refused: seconds and milliseconds are both plausible, and guessing wrong replays the
/// wrong amount of history.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}` has no unit; write it as 30s, 10m, 2h, 1d or 500ms"))?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` does not start with a whole number; try 10m"))?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => {
            return Err(format!(
                "unknown unit `{unit}` in `{text}`; use ms, s, m, h or d"
            ));
        }
    };
    n.checked_mul(unit_ms)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("`{text}` is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_parses() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("1d"), Ok(Duration::from_secs(86_400)));
    }

    #[test]
    fn a_bare_number_or_unknown_unit_is_refused_with_a_hint() {
        assert!(parse("10").unwrap_err().contains("no unit"));
        assert!(parse("10w").unwrap_err().contains("`w`"));
        assert!(parse("m").is_err());
        assert!(parse("99999999999999999d").is_err());
    }
}
