//! Declarative parameters: every component (estimator, RTO policy, congestion control, queue, ...)
//! lists its parameters with default, range and meaning, and reads them through [`Params`], which
//! rejects unknown keys and out-of-range values with an error that names the component, the key
//! and the accepted range.

use crate::time::{parse_duration, Nanos};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A duration (`200ms`, `1s`; a bare number is seconds). Range in seconds.
    Duration,
    /// A real number.
    Float,
    /// A whole number.
    Int,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A quantity written with a unit (`2Mbps`, `64KB`, `100p`), read with its own parser;
    /// the text says how it is written and in which unit the range is (simulator components).
    Quantity(&'static str),
}

/// One parameter of one component.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    /// Default, written as a user would write it.
    pub default: &'static str,
    /// Inclusive bounds for numeric kinds (seconds for durations).
    pub min: f64,
    pub max: f64,
    pub doc: &'static str,
    /// A choice's other spellings, each with the registered word it stands for (`("exp",
    /// "exponential")`): read as that word, and written as it in the canonical form.
    pub aliases: &'static [(&'static str, &'static str)],
    /// A quantity's one spelling (the canonical form): the text for a value as given, or None
    /// when it does not read (left for the builder to reject) or has no other spelling.
    pub spell: Option<fn(&str) -> Option<String>>,
}

impl ParamSpec {
    pub const fn duration(
        name: &'static str,
        default: &'static str,
        min: f64,
        max: f64,
        doc: &'static str,
    ) -> Self {
        Self {
            name,
            kind: Kind::Duration,
            default,
            min,
            max,
            doc,
            aliases: &[],
            spell: None,
        }
    }
    pub const fn float(
        name: &'static str,
        default: &'static str,
        min: f64,
        max: f64,
        doc: &'static str,
    ) -> Self {
        Self {
            name,
            kind: Kind::Float,
            default,
            min,
            max,
            doc,
            aliases: &[],
            spell: None,
        }
    }
    pub const fn int(
        name: &'static str,
        default: &'static str,
        min: f64,
        max: f64,
        doc: &'static str,
    ) -> Self {
        Self {
            name,
            kind: Kind::Int,
            default,
            min,
            max,
            doc,
            aliases: &[],
            spell: None,
        }
    }
    pub const fn quantity(
        name: &'static str,
        default: &'static str,
        unit: &'static str,
        min: f64,
        max: f64,
        doc: &'static str,
    ) -> Self {
        Self {
            name,
            kind: Kind::Quantity(unit),
            default,
            min,
            max,
            doc,
            aliases: &[],
            spell: None,
        }
    }
    pub const fn choice(
        name: &'static str,
        default: &'static str,
        options: &'static [&'static str],
        doc: &'static str,
    ) -> Self {
        Self {
            name,
            kind: Kind::Choice(options),
            default,
            min: 0.0,
            max: 0.0,
            doc,
            aliases: &[],
            spell: None,
        }
    }

    /// The same choice, also answering to `aliases` (other word, registered word).
    pub const fn with_aliases(self, aliases: &'static [(&'static str, &'static str)]) -> Self {
        Self { aliases, ..self }
    }

    /// The same quantity, written by `spell` in the canonical form.
    pub const fn spelled_by(self, spell: fn(&str) -> Option<String>) -> Self {
        Self {
            spell: Some(spell),
            ..self
        }
    }

    /// A choice's word as registered: an alias respelled, anything else as it is.
    pub fn registered<'a>(&self, word: &'a str) -> &'a str {
        self.aliases
            .iter()
            .find(|(alias, _)| *alias == word)
            .map_or(word, |(_, registered)| registered)
    }

    /// The unit the range is written in: seconds for durations, the quantity's own text for
    /// quantities, none for plain numbers and choices.
    pub fn unit(&self) -> &'static str {
        match self.kind {
            Kind::Duration => "s",
            Kind::Quantity(unit) => unit,
            Kind::Float | Kind::Int | Kind::Choice(_) => "",
        }
    }

    /// The accepted values, for error messages and the listings (`rttlab estimators`, `rttlab components`).
    pub fn range_text(&self) -> String {
        match self.kind {
            Kind::Duration => format!("{}s..{}s", fmt_num(self.min), fmt_num(self.max)),
            Kind::Float | Kind::Int => format!("{}..{}", fmt_num(self.min), fmt_num(self.max)),
            Kind::Choice(options) if self.aliases.is_empty() => options.join("|"),
            Kind::Choice(options) => {
                let aliases: Vec<String> = self
                    .aliases
                    .iter()
                    .map(|(a, w)| format!("{a} = {w}"))
                    .collect();
                format!("{} (also {})", options.join("|"), aliases.join(", "))
            }
            Kind::Quantity(unit) => format!("{}..{} {unit}", fmt_num(self.min), fmt_num(self.max)),
        }
    }
}

fn fmt_num(x: f64) -> String {
    if x == f64::INFINITY {
        "inf".into()
    } else {
        format!("{x}")
    }
}

/// A component name or parameter that cannot be used. `family` is what kind of component was
/// asked for ("estimator", "RTO policy", "congestion control"); `component` is the registered
/// name of the one whose parameters were read.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParamError {
    #[error("unknown {family} '{name}' (known: {known})")]
    Unknown {
        family: &'static str,
        name: String,
        known: String,
    },
    #[error("{component}: unknown parameter '{key}' (known: {known})")]
    UnknownKey {
        component: String,
        key: String,
        known: String,
    },
    #[error("{component}.{key}: cannot read '{value}' as {expected}")]
    Malformed {
        component: String,
        key: String,
        value: String,
        expected: String,
    },
    #[error("{component}.{key}: {value} is outside the accepted range {range}")]
    OutOfRange {
        component: String,
        key: String,
        value: String,
        range: String,
    },
    /// A value that is in range but cannot be used as given (RED's `max_th` not above `min_th`).
    #[error("{component}.{key}: {reason}")]
    Invalid {
        component: String,
        key: String,
        reason: String,
    },
    #[error("{component}: {reason}")]
    Inconsistent { component: String, reason: String },
}

/// The values a user gave for one component, checked against its specs.
pub struct Params<'a> {
    component: &'static str,
    specs: &'static [ParamSpec],
    given: &'a [(String, String)],
}

impl<'a> Params<'a> {
    /// Checks every given key exists; values are checked when read.
    pub fn new(
        component: &'static str,
        specs: &'static [ParamSpec],
        given: &'a [(String, String)],
    ) -> Result<Self, ParamError> {
        for (key, _) in given {
            if !specs.iter().any(|s| s.name == key) {
                let known = if specs.is_empty() {
                    "none".to_string()
                } else {
                    specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                };
                return Err(ParamError::UnknownKey {
                    component: component.into(),
                    key: key.clone(),
                    known,
                });
            }
        }
        Ok(Self {
            component,
            specs,
            given,
        })
    }

    fn raw(&self, name: &str) -> (&ParamSpec, &str) {
        let spec = self
            .specs
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| {
                panic!(
                    "{}: parameter '{name}' read but not declared",
                    self.component
                )
            });
        // The last value given wins, like repeated command-line flags.
        let value = self
            .given
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        (spec, value.unwrap_or(spec.default))
    }

    fn malformed(&self, spec: &ParamSpec, value: &str, expected: &str) -> ParamError {
        ParamError::Malformed {
            component: self.component.into(),
            key: spec.name.into(),
            value: value.into(),
            expected: expected.into(),
        }
    }

    fn check_range(&self, spec: &ParamSpec, value: &str, x: f64) -> Result<(), ParamError> {
        if x.is_finite() && x >= spec.min && x <= spec.max {
            Ok(())
        } else {
            Err(ParamError::OutOfRange {
                component: self.component.into(),
                key: spec.name.into(),
                value: value.into(),
                range: spec.range_text(),
            })
        }
    }

    pub fn duration(&self, name: &str) -> Result<Nanos, ParamError> {
        let (spec, value) = self.raw(name);
        let ns = parse_duration(value).ok_or_else(|| self.malformed(spec, value, "a duration such as 200ms or 1s (units ns, us, ms, s, min, h; a bare number is seconds)"))?;
        self.check_range(spec, value, ns as f64 / 1e9)?;
        Ok(ns)
    }

    pub fn float(&self, name: &str) -> Result<f64, ParamError> {
        let (spec, value) = self.raw(name);
        let x: f64 = value
            .trim()
            .parse()
            .map_err(|_| self.malformed(spec, value, "a number"))?;
        self.check_range(spec, value, x)?;
        Ok(x)
    }

    pub fn int(&self, name: &str) -> Result<u64, ParamError> {
        let (spec, value) = self.raw(name);
        let x: u64 = value
            .trim()
            .parse()
            .map_err(|_| self.malformed(spec, value, "a whole number"))?;
        self.check_range(spec, value, x as f64)?;
        Ok(x)
    }

    pub fn choice(&self, name: &str) -> Result<&'static str, ParamError> {
        let (spec, value) = self.raw(name);
        let Kind::Choice(options) = spec.kind else {
            panic!("{name} is not a choice")
        };
        options
            .iter()
            .copied()
            .find(|o| *o == spec.registered(value.trim()))
            .ok_or_else(|| self.malformed(spec, value, &format!("one of {}", options.join("|"))))
    }

    /// A [`Kind::Quantity`]: `parse` reads the text, `magnitude` gives the number (in the
    /// spec's unit) the range is checked on.
    pub fn quantity<T>(
        &self,
        name: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
        magnitude: impl Fn(&T) -> f64,
    ) -> Result<T, ParamError> {
        let (spec, value) = self.raw(name);
        let x = parse(value.trim()).ok_or_else(|| self.malformed(spec, value, expected))?;
        self.check_range(spec, value, magnitude(&x))?;
        Ok(x)
    }

    /// Whether the user gave this parameter (for parameters whose absence means "off").
    pub fn is_given(&self, name: &str) -> bool {
        self.given.iter().any(|(k, _)| k == name)
    }

    /// A `true`/`false` parameter (declared as a choice of the two).
    pub fn flag(&self, name: &str) -> Result<bool, ParamError> {
        Ok(self.choice(name)? == "true")
    }

    /// The parameters together cannot be used (a prerequisite missing, two that contradict).
    pub fn inconsistent(&self, reason: impl Into<String>) -> ParamError {
        ParamError::Inconsistent {
            component: self.component.into(),
            reason: reason.into(),
        }
    }

    /// Parameter `key` cannot be used as given, for `reason`.
    pub fn invalid(&self, key: &str, reason: impl Into<String>) -> ParamError {
        ParamError::Invalid {
            component: self.component.into(),
            key: key.into(),
            reason: reason.into(),
        }
    }
}

/// A parameter whose value is one of a fixed set of words, read into a typed value.
pub trait Choice: Sized + Copy {
    /// The words accepted, in the order listings show them.
    const OPTIONS: &'static [&'static str];
    /// The value a word stands for; `word` is one of [`Self::OPTIONS`] (checked when read).
    fn from_word(word: &str) -> Self;
}

/// `true`/`false` parameters.
impl Choice for bool {
    const OPTIONS: &'static [&'static str] = &["true", "false"];
    fn from_word(word: &str) -> Self {
        word == "true"
    }
}

impl Params<'_> {
    /// A choice parameter read straight into its type.
    pub fn typed<T: Choice>(&self, name: &str) -> Result<T, ParamError> {
        self.choice(name).map(T::from_word)
    }
}

/// An enum whose variants are the words of a choice parameter:
/// `choices! { pub enum Gain { Fixed = "fixed", OneOverFlight = "one-over-flight" } }`.
#[macro_export]
macro_rules! choices {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $word:literal ),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name { $( $(#[$vmeta])* $variant, )+ }

        impl $crate::params::Choice for $name {
            const OPTIONS: &'static [&'static str] = &[$( $word ),+];
            fn from_word(word: &str) -> Self {
                $( if word == $word { return Self::$variant; } )+
                unreachable!("{word} is not one of {:?}", <Self as $crate::params::Choice>::OPTIONS)
            }
        }
    };
}

/// A parameter written with a unit or in a form of its own (`coef = "1,2,3,4,5"`, a duration or
/// `none`), read into a typed value by `params!` (kind `quantity`).
pub trait Quantity: Sized {
    /// How the value is written, for the error when it does not read.
    const EXPECTED: &'static str;
    /// The value `text` stands for, or None when it does not read.
    fn parse(text: &str) -> Option<Self>;
    /// The number, in the declared unit, the declared range is checked on.
    fn magnitude(&self) -> f64;
    /// The one spelling of `text` (the canonical form), or None to keep it as given.
    fn spelling(_text: &str) -> Option<String> {
        None
    }
}

impl Params<'_> {
    /// A [`Quantity`] parameter read straight into its type.
    pub fn typed_quantity<T: Quantity>(&self, name: &str) -> Result<T, ParamError> {
        self.quantity(name, T::EXPECTED, T::parse, T::magnitude)
    }
}

/// A component's parameters declared once: each field of the config struct is a parameter of the
/// same name, with its kind, default, range and meaning. Generates the struct, its `PARAMS`
/// table (what listings, docs and validation read), `Config::from_params` (every field read
/// through [`Params`], then the optional `check`) and `Default` (the declared defaults, so no
/// second copy of them exists).
///
/// ```ignore
/// params! {
///     pub struct Config {
///         granularity: Nanos = duration("1ms", 0.0, 1.0, "clock granularity G"),
///         k: f64 = float("4", 0.0, 100.0, "variance multiplier K"),
///         hz: u64 = int("1000", 1.0, 100000.0, "kernel tick rate"),
///         window: Window = choice("auto", "when an RTT window ends"),   // Window: Choice
///         coef: Coef = quantity("none", "unit", 0.0, 1e6, "..."),     // Coef: Quantity
///         scale: Nanos = duration(SCALE),   // a ParamSpec declared once, shared by two configs
///     }
///     // Optional: what the parameters together must satisfy (errors name the component).
///     check(cfg, p) { if cfg.k > 10.0 && cfg.hz < 100 { return Err(p.inconsistent("...")); } Ok(()) }
/// }
/// ```
/// `const NAME;` before the struct names the table something other than `PARAMS` (two configs in
/// one module).
#[macro_export]
macro_rules! params {
    ($(#[$meta:meta])* pub struct $($rest:tt)*) => {
        $crate::params! { const PARAMS; $(#[$meta])* pub struct $($rest)* }
    };
    (const $table:ident; $(#[$meta:meta])* pub struct $name:ident { $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $kind:ident ( $($arg:expr),* $(,)? ) ),+ $(,)? }
     $( check ( $cfg:ident , $pp:ident ) $check:block )?) => {
        pub const $table: &[$crate::params::ParamSpec] = &[ $( $crate::params!(@spec $kind, $field, $ty, $($arg),*) ),+ ];

        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name { $( $(#[$fmeta])* pub $field: $ty, )+ }

        impl $name {
            /// Every field read from its parameter (declared in the table), then checked together.
            pub fn from_params(p: &$crate::params::Params) -> Result<Self, $crate::params::ParamError> {
                let cfg = Self { $( $field: $crate::params!(@read $kind, p, $field, $ty), )+ };
                $( {
                    let $cfg = &cfg;
                    let $pp = p;
                    let checked: Result<(), $crate::params::ParamError> = $check;
                    checked?;
                } )?
                Ok(cfg)
            }
        }

        impl Default for $name {
            /// The declared defaults.
            fn default() -> Self {
                let none: [(String, String); 0] = [];
                Self::from_params(&$crate::params::Params::new(stringify!($name), $table, &none).expect("no parameters given")).expect("declared defaults lie in their ranges")
            }
        }
    };
    // One argument: a `ParamSpec` declared elsewhere (shared by two configs); its name must be the field's.
    (@spec $kind:ident, $field:ident, $ty:ty, $shared:expr) => { $shared };
    (@spec choice, $field:ident, $ty:ty, $default:expr, $doc:expr) => {
        $crate::params::ParamSpec::choice(stringify!($field), $default, <$ty as $crate::params::Choice>::OPTIONS, $doc)
    };
    (@spec quantity, $field:ident, $ty:ty, $($arg:expr),*) => {
        $crate::params::ParamSpec::quantity(stringify!($field), $($arg),*).spelled_by(<$ty as $crate::params::Quantity>::spelling)
    };
    (@spec $kind:ident, $field:ident, $ty:ty, $($arg:expr),*) => {
        $crate::params::ParamSpec::$kind(stringify!($field), $($arg),*)
    };
    (@read duration, $p:ident, $field:ident, $ty:ty) => { $p.duration(stringify!($field))? };
    (@read float, $p:ident, $field:ident, $ty:ty) => { $p.float(stringify!($field))? };
    // The declared range keeps every value inside the field's type.
    (@read int, $p:ident, $field:ident, $ty:ty) => { $p.int(stringify!($field))? as $ty };
    (@read choice, $p:ident, $field:ident, $ty:ty) => { $p.typed::<$ty>(stringify!($field))? };
    (@read quantity, $p:ident, $field:ident, $ty:ty) => { $p.typed_quantity::<$ty>(stringify!($field))? };
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::duration("min_rto", "1s", 0.0, 60.0, "floor"),
        ParamSpec::float("alpha", "0.125", 0.0, 1.0, "gain"),
        ParamSpec::choice("mode", "a", &["a", "b"], "variant"),
    ];

    fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_apply_when_nothing_is_given() {
        let g = given(&[]);
        let p = Params::new("x", SPECS, &g).unwrap();
        assert_eq!(p.duration("min_rto").unwrap(), crate::time::SEC);
        assert_eq!(p.float("alpha").unwrap(), 0.125);
        assert_eq!(p.choice("mode").unwrap(), "a");
    }

    #[test]
    fn unknown_keys_are_named_with_the_known_ones() {
        let g = given(&[("beta", "1")]);
        let err = Params::new("x", SPECS, &g).err().unwrap().to_string();
        assert_eq!(
            err,
            "x: unknown parameter 'beta' (known: min_rto, alpha, mode)"
        );
    }

    #[test]
    fn a_component_without_parameters_says_it_has_none() {
        let g = given(&[("alpha", "1")]);
        let err = Params::new("reno", &[], &g).err().unwrap().to_string();
        assert_eq!(err, "reno: unknown parameter 'alpha' (known: none)");
    }

    #[test]
    fn out_of_range_values_are_rejected_with_the_range() {
        let g = given(&[("alpha", "1.5")]);
        let err = Params::new("x", SPECS, &g)
            .unwrap()
            .float("alpha")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "x.alpha: 1.5 is outside the accepted range 0..1");
        let g = given(&[("alpha", "NaN")]);
        assert!(Params::new("x", SPECS, &g).unwrap().float("alpha").is_err());
    }

    #[test]
    fn malformed_values_say_what_was_expected() {
        let g = given(&[("min_rto", "soon"), ("mode", "c")]);
        let p = Params::new("x", SPECS, &g).unwrap();
        assert!(p
            .duration("min_rto")
            .unwrap_err()
            .to_string()
            .contains("a duration"));
        assert!(p
            .choice("mode")
            .unwrap_err()
            .to_string()
            .contains("one of a|b"));
    }

    crate::choices! {
        enum Mode { A = "a", B = "b" }
    }

    mod declared {
        use super::Mode;
        use crate::time::Nanos;
        crate::params! {
            pub struct Config {
                /// a floor
                min_rto: Nanos = duration("1s", 0.0, 60.0, "floor"),
                alpha: f64 = float("0.125", 0.0, 1.0, "gain"),
                n: usize = int("8", 1.0, 100.0, "count"),
                mode: Mode = choice("b", "variant"),
                on: bool = choice("false", "a flag"),
            }
        }
    }

    #[test]
    fn a_declared_config_has_one_table_its_declared_defaults_and_typed_fields() {
        use declared::{Config, PARAMS};
        assert_eq!(
            PARAMS.iter().map(|p| p.name).collect::<Vec<_>>(),
            ["min_rto", "alpha", "n", "mode", "on"]
        );
        assert_eq!(PARAMS[3].range_text(), "a|b");
        assert_eq!(
            Config::default(),
            Config {
                min_rto: crate::time::SEC,
                alpha: 0.125,
                n: 8,
                mode: Mode::B,
                on: false
            }
        );
        let g = given(&[("mode", "a"), ("on", "true"), ("n", "3")]);
        let c = Config::from_params(&Params::new("x", PARAMS, &g).unwrap()).unwrap();
        assert_eq!((c.mode, c.on, c.n), (Mode::A, true, 3));
        let g = given(&[("n", "0")]);
        assert_eq!(
            Config::from_params(&Params::new("x", PARAMS, &g).unwrap())
                .unwrap_err()
                .to_string(),
            "x.n: 0 is outside the accepted range 1..100"
        );
    }

    /// A number with a unit suffix, for the `quantity` kind.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Metres(f64);

    impl Quantity for Metres {
        const EXPECTED: &'static str = "a length such as 3m";
        fn parse(text: &str) -> Option<Self> {
            text.strip_suffix('m')?.parse().ok().map(Metres)
        }
        fn magnitude(&self) -> f64 {
            self.0
        }
    }

    mod shared {
        use super::{Metres, Mode};
        use crate::params::ParamSpec;
        const MODE: ParamSpec = ParamSpec::choice("mode", "a", &["a", "b"], "variant");
        crate::params! {
            const WIDE;
            pub struct Wide {
                mode: Mode = choice(MODE),
                lo: u64 = int("1", 0.0, 10.0, "low"),
                hi: u64 = int("2", 0.0, 10.0, "high"),
                reach: Metres = quantity("5m", "m", 0.0, 100.0, "how far"),
            }
            check(cfg, p) {
                if cfg.lo > cfg.hi {
                    return Err(p.inconsistent(format!("lo ({}) must not exceed hi ({})", cfg.lo, cfg.hi)));
                }
                Ok(())
            }
        }
        crate::params! {
            const NARROW;
            pub struct Narrow {
                mode: Mode = choice(MODE),
            }
        }
    }

    #[test]
    fn declared_configs_share_specs_read_quantities_and_check_their_parameters_together() {
        use shared::{Narrow, Wide, NARROW, WIDE};
        assert_eq!(WIDE[0].doc, NARROW[0].doc);
        assert_eq!(WIDE[3].range_text(), "0..100 m");
        assert_eq!(
            Wide::default(),
            Wide {
                mode: Mode::A,
                lo: 1,
                hi: 2,
                reach: Metres(5.0)
            }
        );
        assert_eq!(Narrow::default(), Narrow { mode: Mode::A });
        let read = |g: &[(&str, &str)]| {
            Wide::from_params(&Params::new("w", WIDE, &given(g)).unwrap())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            read(&[("reach", "7m"), ("mode", "b")]).unwrap().reach,
            Metres(7.0)
        );
        assert_eq!(
            read(&[("reach", "7")]).unwrap_err(),
            "w.reach: cannot read '7' as a length such as 3m"
        );
        assert_eq!(
            read(&[("reach", "700m")]).unwrap_err(),
            "w.reach: 700m is outside the accepted range 0..100 m"
        );
        assert_eq!(
            read(&[("lo", "3")]).unwrap_err(),
            "w: lo (3) must not exceed hi (2)"
        );
    }

    #[test]
    fn a_choice_reads_its_aliases_as_the_registered_word_and_lists_them() {
        const DIST: ParamSpec =
            ParamSpec::choice("dist", "exponential", &["exponential", "fixed"], "d")
                .with_aliases(&[("exp", "exponential")]);
        let given = [("dist".to_string(), "exp".to_string())];
        assert_eq!(
            Params::new("c", &[DIST], &given)
                .unwrap()
                .choice("dist")
                .unwrap(),
            "exponential"
        );
        assert_eq!(DIST.registered("exp"), "exponential");
        assert_eq!(DIST.registered("fixed"), "fixed");
        assert_eq!(
            DIST.range_text(),
            "exponential|fixed (also exp = exponential)"
        );
    }
}
