//! Timestamps for `log` and `show`: UTC formatting and `--since` parsing, without a
//! date library (civil-from-days arithmetic).

/// Days since 1970-01-01 for a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) for unix milliseconds.
pub fn format_utc(ms: u64) -> String {
    let secs = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Parses `--since`: unix milliseconds, a relative age (`90s`, `10m`, `2h`, `3d`), or a
/// UTC date / date-time (`2026-12-01`, `2026-12-01T08:30`, `2026-12-01 08:30:00Z`).
pub fn parse_since(text: &str, now_ms: u64) -> Result<u64, String> {
    let t = text.trim();
    if let Ok(ms) = t.parse::<u64>() {
        return Ok(ms);
    }
    if let Some(unit) = t.chars().last().filter(|c| "smhdw".contains(*c))
        && let Ok(n) = t[..t.len() - 1].parse::<u64>()
    {
        let secs = match unit {
            's' => n,
            'm' => n * 60,
            'h' => n * 3600,
            'd' => n * 86_400,
            _ => n * 7 * 86_400,
        };
        return Ok(now_ms.saturating_sub(secs.saturating_mul(1000)));
    }
    let bad = || {
        format!(
            "--since {text:?}: expected unix milliseconds, an age like 30m / 2h / 7d, or a UTC date like 2026-12-01 or 2026-12-01T08:30:00"
        )
    };
    let t = t.trim_end_matches('Z');
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let parts: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let [y, m, d] = parts[..] else {
        return Err(bad());
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    if let Some(time) = time {
        let hms: Vec<i64> = time
            .split(':')
            .map(|p| p.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let (h, mi, s) = match hms[..] {
            [h, mi] => (h, mi, 0),
            [h, mi, s] => (h, mi, s),
            _ => return Err(bad()),
        };
        secs += h * 3600 + mi * 60 + s;
    }
    u64::try_from(secs * 1000).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_since_forms() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00");
        let ms = parse_since("2026-12-02T13:34:12Z", 0).unwrap();
        assert_eq!(format_utc(ms), "2026-12-02 13:34:12");
        assert_eq!(
            parse_since("2024-02-29", 0).map(format_utc).unwrap(),
            "2024-02-29 00:00:00"
        );
        assert_eq!(parse_since("10m", 1_000_000).unwrap(), 400_000);
        assert_eq!(parse_since("1700000000000", 0).unwrap(), 1_700_000_000_000);
        assert!(parse_since("yesterday", 0).is_err());
        assert!(parse_since("2026-13-01", 0).is_err());
    }
}
