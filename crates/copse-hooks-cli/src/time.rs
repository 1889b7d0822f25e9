//! Timestamps for `log` and `show` (labelled: local time with its offset, or UTC),
//! and strict `--since` parsing, with jiff.

use jiff::tz::TimeZone;
use jiff::{Timestamp, civil};

/// Unix milliseconds as `2026-12-02 13:34:12 +01:00` (local) or `… UTC`.
pub fn format_time(ms: u64, utc: bool) -> String {
    let Ok(ts) = Timestamp::from_millisecond(i64::try_from(ms).unwrap_or(i64::MAX)) else {
        return format!("{ms} ms");
    };
    if utc {
        return format!("{} UTC", ts.strftime("%Y-%m-%d %H:%M:%S"));
    }
    let zoned = ts.to_zoned(TimeZone::system());
    zoned.strftime("%Y-%m-%d %H:%M:%S %:z").to_string()
}

/// Parses `--since`: unix milliseconds, an age (`90s`, `10m`, `2h`, `3d`, `1w`), an
/// RFC 3339 instant (`2026-12-01T08:30:00Z`, `…+01:00`), or a civil date or date-time
/// in `tz` (`2026-12-01`, `2026-12-01T08:30`). Impossible dates (`2026-02-31`) are
/// rejected.
pub fn parse_since(text: &str, now_ms: u64, tz: &TimeZone) -> Result<u64, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<u64>()
            .map_err(|e| format!("--since {text:?}: {e}"));
    }
    if let Some(unit) = t.chars().last().filter(|c| "smhdw".contains(*c))
        && let Ok(n) = t[..t.len() - 1].parse::<u64>()
    {
        let secs = match unit {
            's' => n,
            'm' => n.saturating_mul(60),
            'h' => n.saturating_mul(3600),
            'd' => n.saturating_mul(86_400),
            _ => n.saturating_mul(7 * 86_400),
        };
        return Ok(now_ms.saturating_sub(secs.saturating_mul(1000)));
    }
    let to_ms =
        |ts: Timestamp| u64::try_from(ts.as_millisecond()).map_err(|_| bad(text, "before 1970"));
    if let Ok(ts) = t.parse::<Timestamp>() {
        return to_ms(ts);
    }
    let civil = t
        .parse::<civil::DateTime>()
        .or_else(|_| {
            t.parse::<civil::Date>()
                .map(|d| d.to_datetime(civil::Time::midnight()))
        })
        .map_err(|e| bad(text, &e.to_string()))?;
    let zoned = civil
        .to_zoned(tz.clone())
        .map_err(|e| bad(text, &e.to_string()))?;
    to_ms(zoned.timestamp())
}

fn bad(text: &str, why: &str) -> String {
    format!(
        "--since {text:?}: {why} (expected unix milliseconds, an age like 30m / 2h / 7d, a local date like 2026-12-01 or 2026-12-01T08:30, or an RFC 3339 time like 2026-12-01T08:30:00Z)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_forms_and_strictness() {
        let utc = TimeZone::UTC;
        let ms = parse_since("2026-12-02T13:34:12Z", 0, &utc).unwrap();
        assert_eq!(format_time(ms, true), "2026-12-02 13:34:12 UTC");
        assert_eq!(
            parse_since("2024-02-29", 0, &utc).map(|m| format_time(m, true)),
            Ok("2024-02-29 00:00:00 UTC".to_string())
        );
        assert_eq!(parse_since("10m", 1_000_000, &utc), Ok(400_000));
        assert_eq!(parse_since("1700000000000", 0, &utc), Ok(1_700_000_000_000));
        assert!(parse_since("yesterday", 0, &utc).is_err());
        assert!(parse_since("2026-13-01", 0, &utc).is_err());
        assert!(parse_since("2026-02-31", 0, &utc).is_err());
        assert!(parse_since("2025-02-29", 0, &utc).is_err());
        let plus1 = TimeZone::fixed(jiff::tz::offset(1));
        assert_eq!(
            parse_since("2026-12-02T13:00", 0, &plus1).map(|m| format_time(m, true)),
            Ok("2026-12-02 12:00:00 UTC".to_string())
        );
    }
}
