//! Integer time. One unit everywhere in the core: nanoseconds in a `u64` (584 years of range).

/// A point in time or a duration, in nanoseconds.
pub type Nanos = u64;

pub const NS: Nanos = 1;
pub const US: Nanos = 1_000;
pub const MS: Nanos = 1_000_000;
pub const SEC: Nanos = 1_000_000_000;

/// A non-negative real number of nanoseconds, rounded half up, saturating; negative and NaN → 0.
/// `f64::round` is a libm call on baseline x86-64 (no SSE4.1), which the hot loops cannot afford;
/// this is two instructions and agrees with it for every value an estimator produces.
#[inline(always)]
pub fn round_ns(x: f64) -> Nanos {
    (x + 0.5) as Nanos
}

/// The units a duration may be written in, with their length in nanoseconds: the one rule for the
/// command line, `--set`, scenario and sweep files, estimator parameters and the Python API (all
/// call [`parse_duration`]; docs/scenarios.md "Units"). `min`, not `m`: `m` reads as metres or
/// milli- and is refused.
pub const DURATION_UNITS: [(&str, Nanos); 8] = [
    ("ns", NS),
    ("us", US),
    ("µs", US),
    ("μs", US),
    ("ms", MS),
    ("s", SEC),
    ("min", 60 * SEC),
    ("h", 3600 * SEC),
];

/// `n` nanoseconds in the largest of s, ms, us, ns that states it exactly (`20ms`, `1500ms`).
pub fn exact_duration(n: Nanos) -> String {
    for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if n != 0 && n.is_multiple_of(scale) {
            return format!("{}{unit}", n / scale);
        }
    }
    format!("{n}ns")
}

/// Parse a duration as users write it: `200ms`, `1.5s`, `250us`/`250µs`, `10ns`, `2min`, `1h`; a
/// bare number is seconds.
pub fn parse_duration(text: &str) -> Option<Nanos> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() || c == 'µ' || c == 'μ')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().ok()?;
    let unit = unit.trim();
    let scale = if unit.is_empty() {
        SEC
    } else {
        DURATION_UNITS.iter().find(|(u, _)| *u == unit)?.1
    } as f64;
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
        assert_eq!(parse_duration("250µs"), Some(250 * US));
        assert_eq!(parse_duration("2min"), Some(120 * SEC));
        assert_eq!(parse_duration("1h"), Some(3600 * SEC));
        assert_eq!(parse_duration("1.5 h"), Some(5400 * SEC));
    }

    #[test]
    fn rounding_matches_the_standard_one_on_estimator_values() {
        for x in [
            0.0,
            0.4,
            0.5,
            1.5,
            2.49,
            1e6 + 0.5,
            123_456_789.123,
            3.6e12 + 0.7,
        ] {
            assert_eq!(round_ns(x), x.round() as Nanos, "{x}");
        }
        assert_eq!(round_ns(-3.0), 0);
        assert_eq!(round_ns(f64::NAN), 0);
        assert_eq!(round_ns(1e300), Nanos::MAX);
    }

    #[test]
    fn nonsense_durations_are_rejected() {
        assert_eq!(parse_duration("fast"), None);
        assert_eq!(parse_duration("-1ms"), None);
        assert_eq!(parse_duration("3 parsecs"), None);
        assert_eq!(parse_duration("nan"), None);
        assert_eq!(parse_duration("2m"), None, "m is not minutes");
        assert_eq!(parse_duration("1hr"), None);
    }
}
