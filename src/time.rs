//! Commit times: nanoseconds since the Unix epoch (UTC) in an `i64`, read from and written
//! as text the way users give them.
//!
//! An input names a time as Unix seconds, possibly fractional (`1009843200`,
//! `1009843200.25`), or as RFC 3339 with its offset (`2002-01-01T00:00:00Z`,
//! `2001-12-31T19:00:00-05:00`). An `i64` of nanoseconds spans the years 1677 to 2262.

use chrono::{DateTime, SecondsFormat, Utc};

/// The wall clock now, in Unix nanoseconds (before 1970: negative; past 2262: the last
/// nanosecond an `i64` holds).
pub fn now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    match since {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

/// `t` as RFC 3339 in UTC, with only the fractional digits it needs
/// (`2002-01-01T00:00:00Z`, `2002-01-01T00:00:00.250Z`).
pub fn show(t: i64) -> String {
    DateTime::<Utc>::from_timestamp_nanos(t).to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// What a time outside an `i64` of nanoseconds is told.
const RANGE: &str = "outside the times evograph holds: the years 1677 to 2262 (Unix seconds -9223372036 to 9223372036)";

/// Parses a time as an input gives it (see the module documentation), or a date alone
/// (`2002-01-01`: its midnight, UTC); the error says what was expected. Digits finer than
/// a nanosecond are dropped, rounding towards the past: a point reads "at or before" it.
pub fn parse(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let bad = || {
        format!(
            "'{text}' is not a time: expected Unix seconds (such as 1009843200 or 1009843200.5), RFC 3339 with an offset (such as 2002-01-01T00:00:00Z) or a date (2002-01-01, its midnight UTC)"
        )
    };
    if text.contains(['T', 't', ' ']) && text.contains([':']) {
        let dt = DateTime::parse_from_rfc3339(text).map_err(|e| format!("{}: {e}", bad()))?;
        return dt
            .timestamp_nanos_opt()
            .ok_or_else(|| format!("{text} is {RANGE}"));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc();
        return midnight
            .timestamp_nanos_opt()
            .ok_or_else(|| format!("{text} is {RANGE}"));
    }
    match parse_seconds(text) {
        Seconds::Time(t) => Ok(t),
        Seconds::OutOfRange => Err(format!("{text} is {RANGE}")),
        Seconds::Malformed => Err(bad()),
    }
}

/// What [`parse_seconds`] made of its text.
enum Seconds {
    Time(i64),
    OutOfRange,
    Malformed,
}

/// Decimal Unix seconds, exactly: a float would round `1009843200.1` to another nanosecond.
/// Digits past the ninth fractional one are dropped, towards the past.
fn parse_seconds(text: &str) -> Seconds {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && frac.is_empty() || !all_digits(whole) || !all_digits(frac) {
        return Seconds::Malformed;
    }
    let finer = frac.len() > 9 && frac[9..].bytes().any(|b| b != b'0');
    let secs: i64 = match whole.parse() {
        Ok(s) => s,
        Err(_) if whole.is_empty() => 0,
        Err(_) => return Seconds::OutOfRange,
    };
    let mut nanos: i64 = 0;
    for (i, b) in frac.bytes().take(9).enumerate() {
        nanos += i64::from(b - b'0') * 10i64.pow(8 - i as u32);
    }
    let t = secs
        .checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(nanos));
    let t = match (t, neg) {
        (Some(t), false) => Some(t),
        // Before the epoch, the dropped digits made it later: one nanosecond back.
        (Some(t), true) => (-t).checked_sub(i64::from(finer)),
        (None, _) => None,
    };
    t.map_or(Seconds::OutOfRange, Seconds::Time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_rfc3339_name_the_same_instants() {
        let jan = 1_009_843_200_000_000_000i64; // 2002-01-01T00:00:00Z
        for (text, want) in [
            ("1009843200", jan),
            ("1009843200.25", jan + 250_000_000),
            ("1009843200.000000001", jan + 1),
            ("1009843200.1000000000", jan + 100_000_000),
            ("-1.5", -1_500_000_000),
            ("0", 0),
            ("2002-01-01T00:00:00Z", jan),
            ("2001-12-31T19:00:00-05:00", jan),
            ("2002-01-01T00:00:00.25+00:00", jan + 250_000_000),
            ("2002-01-01", jan),
            ("1009843200.0000000019", jan + 1),
            ("-0.0000000011", -2),
        ] {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
        assert_eq!(show(jan), "2002-01-01T00:00:00Z");
        assert_eq!(show(jan + 250_000_000), "2002-01-01T00:00:00.250Z");
        assert_eq!(parse(&show(jan + 7)), Ok(jan + 7));
    }

    #[test]
    fn what_is_not_a_time_says_so() {
        for text in [
            "",
            ".",
            "12a",
            "1.2.3",
            "2002-13-01",
            "1e9",
            "2002-13-01T00:00:00Z",
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains("is not a time"), "{text}: {e}");
        }
        for text in ["99999999999", "99999999999999999999", "-99999999999"] {
            let e = parse(text).unwrap_err();
            assert!(
                e.contains("outside the times evograph holds: the years 1677 to 2262"),
                "{text}: {e}"
            );
        }
    }
}
