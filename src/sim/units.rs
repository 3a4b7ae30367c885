//! Quantities as users write them in scenario files: `10Mbps`, `20ms`, `1500B`, `100p`.
//!
//! Each parser returns `None` on anything it does not understand; the config layer turns that into
//! an error naming the key. Decimal prefixes are powers of ten (`10Mbps` = 10⁷ b/s, `1MB` = 10⁶ B),
//! binary ones are powers of two (`64KiB`), as in the SI/IEC conventions.

use crate::time::{parse_duration, Nanos};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Split `"10 Mbps"` into (10.0, "Mbps").
fn split_number(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() || c == '/')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some((value, unit.trim()))
}

/// `10Mbps`, `10 Mb/s`, `1.5Gbps`, `64kbps`, `9600bps`; a bare number is bits per second.
pub fn parse_bandwidth(text: &str) -> Option<u64> {
    let (value, unit) = split_number(text)?;
    let scale = match unit {
        "" | "bps" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1e3,
        "Mbps" | "mbps" | "Mb/s" => 1e6,
        "Gbps" | "gbps" | "Gb/s" => 1e9,
        "Tbps" | "Tb/s" => 1e12,
        _ => return None,
    };
    let bps = value * scale;
    (bps >= 1.0 && bps <= u64::MAX as f64).then(|| bps.round() as u64)
}

/// `1500B`, `64KB`, `64KiB`, `1MB`, `2MiB`, `1GB`; a bare number is bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let (value, unit) = split_number(text)?;
    let scale = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = value * scale;
    (bytes.fract() == 0.0 && bytes <= u64::MAX as f64).then_some(bytes as u64)
}

/// A quantity written with its unit, in SI base units: a bandwidth in bit/s, a size in bytes, a
/// packet count, a duration in seconds — the value a figure's axis or a summary sorts by. None for
/// a bare number (its unit is not known here) and for anything none of the parsers reads.
pub fn parse_quantity(text: &str) -> Option<f64> {
    let (_, unit) = split_number(text)?;
    if unit.is_empty() {
        return None;
    }
    parse_bandwidth(text)
        .map(|bps| bps as f64)
        .or_else(|| match parse_limit(text)? {
            Limit::Packets(n) | Limit::Bytes(n) => Some(n as f64),
        })
        .or_else(|| parse_duration(text).map(|ns| ns as f64 / 1e9))
}

/// A queue capacity: `100p` / `100pkts` / `100` packets, or a byte size (`150000B`, `64KiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

pub fn parse_limit(text: &str) -> Option<Limit> {
    let (value, unit) = split_number(text)?;
    match unit {
        "" | "p" | "pkt" | "pkts" | "packets" => {
            (value.fract() == 0.0).then_some(Limit::Packets(value as u64))
        }
        _ => parse_bytes(text).map(Limit::Bytes),
    }
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:expr, $expect:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        let parse: fn(&str) -> Option<$inner> = $parse;
                        parse(s)
                            .map($name)
                            .ok_or_else(|| E::invalid_value(de::Unexpected::Str(s), &self))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(
    Bandwidth,
    u64,
    parse_bandwidth,
    "a bandwidth such as \"10Mbps\"",
    "Bits per second."
);
unit_type!(
    Duration,
    Nanos,
    parse_duration,
    "a duration such as \"20ms\" or \"1h\" (units ns, us, ms, s, min, h; a bare number is seconds)",
    "Nanoseconds."
);
unit_type!(
    ByteSize,
    u64,
    parse_bytes,
    "a size such as \"1500B\" or \"64KiB\"",
    "Bytes."
);
unit_type!(
    QueueLimit,
    Limit,
    parse_limit,
    "a queue limit such as \"100p\" (packets) or \"150000B\"",
    "Packets or bytes."
);

pub use crate::time::exact_duration;

/// A bandwidth parameter's one spelling ([`exact_bandwidth`]), or None when it does not read.
pub fn spell_bandwidth(text: &str) -> Option<String> {
    parse_bandwidth(text.trim()).map(exact_bandwidth)
}

/// A byte-size parameter's one spelling, in bytes as [`ByteSize`] is written.
pub fn spell_bytes(text: &str) -> Option<String> {
    parse_bytes(text.trim()).map(|n| format!("{n}B"))
}

/// A queue limit's one spelling, as [`QueueLimit`] is written (`100p`, `150000B`).
pub fn spell_limit(text: &str) -> Option<String> {
    parse_limit(text.trim()).map(|l| match l {
        Limit::Packets(n) => format!("{n}p"),
        Limit::Bytes(n) => format!("{n}B"),
    })
}

/// `bps` in the largest of Gbps, Mbps, kbps, bps that states it exactly.
pub fn exact_bandwidth(bps: u64) -> String {
    for (unit, scale) in [
        ("Gbps", 1_000_000_000u64),
        ("Mbps", 1_000_000),
        ("kbps", 1_000),
    ] {
        if bps != 0 && bps.is_multiple_of(scale) {
            return format!("{}{unit}", bps / scale);
        }
    }
    format!("{bps}bps")
}

// The canonical spellings the scenario's resolved form uses (each parses back to the same value).
impl Serialize for Bandwidth {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&exact_bandwidth(self.0))
    }
}
impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&exact_duration(self.0))
    }
}
impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}B", self.0))
    }
}
impl Serialize for QueueLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Limit::Packets(n) => s.serialize_str(&format!("{n}p")),
            Limit::Bytes(n) => s.serialize_str(&format!("{n}B")),
        }
    }
}

/// Serialisation time of `bytes` at `bps`, rounded up to the next nanosecond so that a link never
/// carries more than its rate.
#[inline]
pub fn tx_time(bytes: u64, bps: u64) -> Nanos {
    // Fast path in 64 bits (every real packet); u128 only for absurd sizes.
    if bytes < 2_000_000_000 {
        return (bytes * 8_000_000_000).div_ceil(bps.max(1));
    }
    let bits = bytes as u128 * 8 * 1_000_000_000;
    bits.div_ceil(bps.max(1) as u128).min(u64::MAX as u128) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantity_is_read_in_si_units_by_the_parser_of_its_kind() {
        assert_eq!(parse_quantity("20Mbps"), Some(2e7));
        assert_eq!(parse_quantity("64 kb/s"), Some(64e3));
        assert_eq!(parse_quantity("1500B"), Some(1500.0));
        assert_eq!(parse_quantity("64KiB"), Some(65536.0));
        assert_eq!(parse_quantity("100p"), Some(100.0));
        assert_eq!(parse_quantity("20ms"), Some(0.02));
        assert_eq!(parse_quantity("2min"), Some(120.0));
    }

    #[test]
    fn a_bare_number_or_a_name_is_no_quantity() {
        assert_eq!(parse_quantity("1.7"), None);
        assert_eq!(parse_quantity("cubic"), None);
        assert_eq!(parse_quantity("20 furlongs"), None);
    }

    #[test]
    fn bandwidths_parse_with_decimal_prefixes() {
        assert_eq!(parse_bandwidth("10Mbps"), Some(10_000_000));
        assert_eq!(parse_bandwidth("10 Mb/s"), Some(10_000_000));
        assert_eq!(parse_bandwidth("1.5Gbps"), Some(1_500_000_000));
        assert_eq!(parse_bandwidth("64kbps"), Some(64_000));
        assert_eq!(parse_bandwidth("9600"), Some(9600));
    }

    #[test]
    fn nonsense_and_zero_bandwidths_are_rejected() {
        for bad in ["", "fast", "10 MB", "-1Mbps", "0bps", "nanMbps"] {
            assert_eq!(parse_bandwidth(bad), None, "{bad}");
        }
    }

    #[test]
    fn byte_sizes_distinguish_decimal_and_binary_prefixes() {
        assert_eq!(parse_bytes("1500B"), Some(1500));
        assert_eq!(parse_bytes("64KB"), Some(64_000));
        assert_eq!(parse_bytes("64KiB"), Some(65_536));
        assert_eq!(parse_bytes("1.5MB"), Some(1_500_000));
        assert_eq!(parse_bytes("1.5B"), None, "fractional bytes make no sense");
    }

    #[test]
    fn queue_limits_are_packets_unless_a_byte_unit_is_given() {
        assert_eq!(parse_limit("100"), Some(Limit::Packets(100)));
        assert_eq!(parse_limit("100p"), Some(Limit::Packets(100)));
        assert_eq!(parse_limit("150000B"), Some(Limit::Bytes(150_000)));
        assert_eq!(parse_limit("2.5p"), None);
    }

    #[test]
    fn a_1500_byte_packet_takes_1_2_ms_at_10_mbps() {
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
        assert_eq!(tx_time(1, 3), 2_666_666_667, "rounded up");
    }
}
