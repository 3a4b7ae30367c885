//! Integer time. One unit everywhere in the core: nanoseconds in a `u64` (584 years of range).

/// A point in time or a duration, in nanoseconds.
pub type Nanos = u64;

pub const NS: Nanos = 1;
pub const US: Nanos = 1_000;
pub const MS: Nanos = 1_000_000;
pub const SEC: Nanos = 1_000_000_000;

/// Seconds (as users and files write them) to nanoseconds, rounded to the nearest nanosecond.
/// Callers validate the input first: this saturates rather than fails.
pub fn from_secs_f64(s: f64) -> Nanos {
    if s.is_nan() || s <= 0.0 {
        0
    } else {
        (s * SEC as f64).round().min(u64::MAX as f64) as Nanos
    }
}

pub fn to_secs_f64(t: Nanos) -> f64 {
    t as f64 / SEC as f64
}

/// Parse a duration as users write it: `200ms`, `1.5s`, `250us`, `10ns`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Option<Nanos> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() || c == 'µ')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().ok()?;
    let scale = match unit.trim() {
        "" | "s" => SEC as f64,
        "ms" => MS as f64,
        "us" | "µs" => US as f64,
        "ns" => NS as f64,
        _ => return None,
    };
    let ns = value * scale;
    (ns.is_finite() && ns >= 0.0 && ns <= u64::MAX as f64).then(|| ns.round() as Nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_the_units_users_write() {
        assert_eq!(parse_duration("200ms"), Some(200 * MS));
        assert_eq!(parse_duration("1.5s"), Some(1_500 * MS));
        assert_eq!(parse_duration("0.2"), Some(200 * MS));
        assert_eq!(parse_duration("250us"), Some(250 * US));
        assert_eq!(parse_duration("7 ns"), Some(7));
    }

    #[test]
    fn nonsense_durations_are_rejected() {
        assert_eq!(parse_duration("fast"), None);
        assert_eq!(parse_duration("-1ms"), None);
        assert_eq!(parse_duration("3 parsecs"), None);
        assert_eq!(parse_duration("nan"), None);
    }
}
