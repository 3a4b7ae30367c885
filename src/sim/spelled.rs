//! Scenario choices read into their types as the scenario is read: `tcp.cc`, `tcp.recovery`,
//! `tcp.spurious_detection`, `tcp.spurious_response`, `tcp.delayed_ack` and `tcp.sample_clock`
//! become a [`CcSpec`], a [`RecoveryKind`], a [`SpuriousDetection`], ... with their parameters
//! checked, and a mistake is reported then, naming its key (`tcp.cc: vegas: unknown parameter
//! 'alfa'`). Building the engine reads the typed values; nothing downstream parses these strings
//! again.
//!
//! Each value also keeps the TOML it was written as ([`Spelled`]): canonical form 1 writes that
//! back, as stores written before form 2 were keyed by it; form 2 respells every value by its
//! registered name with its declared defaults ([`super::canonical`], docs/experiments.md
//! "Canonical form"). Prerequisites that involve other keys (`"sack"`
//! recovery needs `sack = true`) are checked when the engine is built, where every key is known.

use super::tcp::cc::CcSpec;
use super::tcp::recovery::{self, RecoveryKind};
use super::tcp::{SpuriousDetection, SpuriousResponse, SPURIOUS_DETECTION, SPURIOUS_RESPONSE};
use crate::time::{parse_duration, Nanos, SEC};
use serde::{Deserialize, Serialize};

/// A scenario value that is read from its TOML into a type, or refused with a one-line reason.
pub trait FromToml: Sized {
    fn from_toml(v: &toml::Value) -> Result<Self, String>;
}

/// A typed value and the TOML it was written as.
#[derive(Debug, Clone, PartialEq)]
pub struct Spelled<T> {
    pub value: T,
    spelling: toml::Value,
}

impl<T> Spelled<T> {
    /// A value and its spelling (the defaults a scenario does not write).
    pub fn new(value: T, spelling: impl Into<toml::Value>) -> Self {
        Self {
            value,
            spelling: spelling.into(),
        }
    }

    /// What the scenario wrote.
    pub fn spelling(&self) -> &toml::Value {
        &self.spelling
    }
}

impl<T: FromToml> Spelled<T> {
    /// Read a value written as `spelling`.
    pub fn read(spelling: toml::Value) -> Result<Self, String> {
        Ok(Self {
            value: T::from_toml(&spelling)?,
            spelling,
        })
    }
}

impl<'de, T: FromToml> Deserialize<'de> for Spelled<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::read(toml::Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl<T> Serialize for Spelled<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.spelling.serialize(s)
    }
}

/// The text of a value written as a string, or the reason it is not one (the words the rest of
/// the reader uses for a value of the wrong type).
fn text(v: &toml::Value) -> Result<&str, String> {
    v.as_str()
        .ok_or_else(|| format!("expected text in quotes, got {v}"))
}

/// A TOML value as the `key=value` text parameters take.
pub(crate) fn param_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `"name"` or `{ name = "name", key = value, ... }`: the name and the parameters.
pub(crate) fn named_table(v: &toml::Value) -> Result<(String, Vec<(String, String)>), String> {
    match v {
        toml::Value::String(name) => Ok((name.clone(), Vec::new())),
        toml::Value::Table(t) => {
            let name = t
                .get("name")
                .and_then(|n| n.as_str())
                .ok_or("a table needs name = \"...\"")?;
            Ok((
                name.to_string(),
                t.iter()
                    .filter(|(k, _)| *k != "name")
                    .map(|(k, v)| (k.clone(), param_text(v)))
                    .collect(),
            ))
        }
        other => Err(format!(
            "expected a name or {{ name = ..., parameters }}, found {other}"
        )),
    }
}

/// Words as a sentence lists them: "a", "a or b", "a, b or c".
pub(crate) fn either(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [only] => only.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `tcp.cc`: `"vegas"` or `{ name = "vegas", alpha = 2, beta = 4 }`, checked against the scheme's
/// declared parameters.
impl FromToml for CcSpec {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        let (name, params) = named_table(v)?;
        CcSpec::new(&name, params).map_err(|e| e.to_string())
    }
}

/// `tcp.rto.policy`: `"ca-rto"` or `{ name = "ca-rto", scale = "100ms" }`, checked against the
/// policy's declared parameters.
impl FromToml for crate::rtt::policy::Policy {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        let (name, params) = named_table(v)?;
        crate::rtt::policy::build(&name, &params).map_err(|e| e.to_string())
    }
}

/// `tcp.recovery`: a registered strategy's name or alias.
impl FromToml for RecoveryKind {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        let name = text(v)?;
        recovery::FAMILY
            .find(name)
            .and_then(|c| RecoveryKind::named(c.name))
            .ok_or_else(|| {
                format!(
                    "'{name}' is not one of {}",
                    recovery::FAMILY.names().join(", ")
                )
            })
    }
}

/// `tcp.spurious_detection`: "off" or a registered detector.
impl FromToml for SpuriousDetection {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        let name = text(v)?;
        if name == "off" {
            return Ok(SpuriousDetection::Off);
        }
        SPURIOUS_DETECTION
            .find(name)
            .and_then(|c| SpuriousDetection::named(c.name))
            .ok_or_else(|| {
                let mut known = vec!["off"];
                known.extend(SPURIOUS_DETECTION.names());
                format!("'{name}' is not {}", either(&known))
            })
    }
}

/// `tcp.spurious_response`: a registered response.
impl FromToml for SpuriousResponse {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        let name = text(v)?;
        SPURIOUS_RESPONSE
            .find(name)
            .and_then(|c| SpuriousResponse::named(c.name))
            .ok_or_else(|| format!("'{name}' is not {}", either(&SPURIOUS_RESPONSE.names())))
    }
}

/// A link's `error_direction`: which of its channels the error model applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorDirection {
    /// The data direction (default).
    Forward,
    /// The ACK direction.
    Reverse,
    Both,
}

impl ErrorDirection {
    /// Whether the forward (data) and the reverse (ACK) channel carry the error model.
    pub fn channels(self) -> (bool, bool) {
        match self {
            Self::Forward => (true, false),
            Self::Reverse => (false, true),
            Self::Both => (true, true),
        }
    }
}

impl FromToml for ErrorDirection {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        match text(v)? {
            "forward" => Ok(Self::Forward),
            "reverse" => Ok(Self::Reverse),
            "both" => Ok(Self::Both),
            other => Err(format!("'{other}' is not forward, reverse or both")),
        }
    }
}

/// `tcp.delayed_ack`: "off" (also "none", "false") or the timer, e.g. "200ms".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckTimer(pub Option<Nanos>);

impl FromToml for AckTimer {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        match text(v)?.trim() {
            "off" | "none" | "false" => Ok(AckTimer(None)),
            t => parse_duration(t)
                .filter(|&ns| ns > 0)
                .map(|ns| AckTimer(Some(ns)))
                .ok_or_else(|| {
                    format!("cannot read '{t}': use \"off\" or a timer such as \"200ms\"")
                }),
        }
    }
}

/// `tcp.sample_clock`: the tick RTT samples are counted in, "off"/"0s" for exact samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleClock(pub Nanos);

impl FromToml for SampleClock {
    fn from_toml(v: &toml::Value) -> Result<Self, String> {
        match text(v)?.trim() {
            "off" => Ok(SampleClock(0)),
            t => parse_duration(t)
                .filter(|&ns| ns <= 10 * SEC)
                .map(SampleClock)
                .ok_or_else(|| format!("cannot read '{t}': use a tick such as \"4ms\" (at most 10 s), or \"0s\" for exact samples")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: FromToml>(toml_value: &str) -> Result<Spelled<T>, String> {
        let v: toml::Table = format!("v = {toml_value}").parse().unwrap();
        Spelled::read(v["v"].clone())
    }

    #[test]
    fn a_choice_is_read_into_its_type_and_keeps_its_spelling() {
        let r = read::<RecoveryKind>("\"rfc6675\"").unwrap();
        assert_eq!(
            (r.value, r.spelling().as_str()),
            (RecoveryKind::Sack, Some("rfc6675"))
        );
        assert_eq!(
            read::<SpuriousDetection>("\"frto-sack\"").unwrap().value,
            SpuriousDetection::Frto(super::super::tcp::frto::Variant::Sack)
        );
        assert_eq!(
            read::<SpuriousDetection>("\"off\"").unwrap().value,
            SpuriousDetection::Off
        );
        assert_eq!(
            read::<SpuriousResponse>("\"rfc4015\"").unwrap().value,
            SpuriousResponse::Rfc4015
        );
        assert_eq!(read::<AckTimer>("\"none\"").unwrap().value, AckTimer(None));
        assert_eq!(
            read::<AckTimer>("\"0.2s\"").unwrap().value,
            AckTimer(Some(200_000_000))
        );
        assert_eq!(
            read::<SampleClock>("\"4ms\"").unwrap().value,
            SampleClock(4_000_000)
        );
        assert_eq!(
            read::<ErrorDirection>("\"both\"").unwrap().value.channels(),
            (true, true)
        );
        let cc = read::<CcSpec>("{ name = \"vegas\", alpha = 2, beta = 4 }").unwrap();
        assert_eq!(cc.value.name, "vegas");
        assert!(
            cc.spelling().is_table(),
            "canonical form 1 writes the table as given"
        );
    }

    #[test]
    fn a_value_that_is_not_one_says_what_would_be() {
        assert_eq!(
            read::<RecoveryKind>("\"fack\"").unwrap_err(),
            "'fack' is not one of reno, newreno, sack"
        );
        assert_eq!(
            read::<SpuriousDetection>("\"dsack\"").unwrap_err(),
            "'dsack' is not off, eifel, frto or frto-sack"
        );
        assert_eq!(
            read::<SpuriousResponse>("\"bsd\"").unwrap_err(),
            "'bsd' is not linux, rfc4015 or rate-halving"
        );
        assert_eq!(
            read::<ErrorDirection>("\"up\"").unwrap_err(),
            "'up' is not forward, reverse or both"
        );
        assert_eq!(
            read::<SampleClock>("0.004").unwrap_err(),
            "expected text in quotes, got 0.004"
        );
        assert!(read::<AckTimer>("\"sometimes\"")
            .unwrap_err()
            .starts_with("cannot read 'sometimes'"));
        assert!(read::<SampleClock>("\"11s\"")
            .unwrap_err()
            .contains("at most 10 s"));
        assert!(read::<CcSpec>("{ alpha = 2 }")
            .unwrap_err()
            .starts_with("a table needs name"));
        assert!(read::<CcSpec>("{ name = \"vegas\", alfa = 1 }")
            .unwrap_err()
            .starts_with("vegas: unknown parameter 'alfa'"));
    }
}
