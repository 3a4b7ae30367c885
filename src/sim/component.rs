//! Declarative components: queue disciplines, error models and applications are tagged tables
//! in a scenario (`queue = { kind = "red", max_p = 0.1 }`); loss recovery and spurious-timeout
//! detection and response are chosen by a bare name (`tcp.recovery = "sack"`, [`build_named`]),
//! with the same declaration. Each kind declares its parameters
//! once ([`ParamSpec`]: name, default, range, meaning, as estimators do, from `crate::params`) in its
//! own file, next to its own validation; the same declaration feeds the scenario reader, the
//! catalogue (`crate::catalogue`: `rttlab components`) and the docs. Errors name the full key
//! (`topology.bottleneck.queue.max_p: 1.5 is outside the accepted range 0..1`).

use super::config::{invalid, ConfigError};
use crate::params::{ParamError, ParamSpec, Params};
use crate::time::Nanos;

/// One kind of component: its name in scenario files, what it is, and how to build it from
/// checked parameters and a build context `C` (e.g. the link's bandwidth for a queue).
pub struct Component<T: 'static, C: 'static = ()> {
    pub name: &'static str,
    /// Other spellings accepted in scenario files.
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    /// Where the algorithm comes from (paper, RFC section).
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    pub build: fn(&Args<'_, C>) -> Result<T, ConfigError>,
}

impl<T, C> Component<T, C> {
    fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// A component's parameters as given, checked against its declaration; readers turn every
/// mistake into a [`ConfigError`] naming `path.key`.
pub struct Args<'a, C> {
    path: &'a str,
    params: Params<'a>,
    pub ctx: &'a C,
}

impl<C> Args<'_, C> {
    fn err(&self, e: ParamError) -> ConfigError {
        match e {
            ParamError::Malformed { key, value, expected, .. } => invalid(format!("{}.{key}", self.path), format!("cannot read '{value}' as {expected}")),
            ParamError::OutOfRange { key, value, range, .. } => invalid(format!("{}.{key}", self.path), format!("{value} is outside the accepted range {range}")),
            ParamError::UnknownKey { key, known, .. } => invalid(format!("{}.{key}", self.path), format!("unknown parameter (known: {known})")),
            ParamError::Inconsistent { reason, .. } => invalid(self.path, reason),
            ParamError::Unknown { family, name, known } => invalid(self.path, format!("unknown {family} '{name}' (known: {known})")),
        }
    }

    /// An error about the component as a whole (a prerequisite missing), naming its key.
    pub fn inconsistent(&self, reason: impl Into<String>) -> ConfigError {
        invalid(self.path, reason)
    }

    /// An error about parameter `key` of this component.
    pub fn invalid(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        invalid(format!("{}.{key}", self.path), reason)
    }

    pub fn is_given(&self, key: &str) -> bool {
        self.params.is_given(key)
    }

    pub fn duration(&self, key: &str) -> Result<Nanos, ConfigError> {
        self.params.duration(key).map_err(|e| self.err(e))
    }

    pub fn float(&self, key: &str) -> Result<f64, ConfigError> {
        self.params.float(key).map_err(|e| self.err(e))
    }

    pub fn int(&self, key: &str) -> Result<u64, ConfigError> {
        self.params.int(key).map_err(|e| self.err(e))
    }

    pub fn choice(&self, key: &str) -> Result<&'static str, ConfigError> {
        self.params.choice(key).map_err(|e| self.err(e))
    }

    /// A `true`/`false` parameter (declared as a choice of the two).
    pub fn flag(&self, key: &str) -> Result<bool, ConfigError> {
        Ok(self.choice(key)? == "true")
    }

    pub fn quantity<T>(&self, key: &str, expected: &str, parse: impl Fn(&str) -> Option<T>, magnitude: impl Fn(&T) -> f64) -> Result<T, ConfigError> {
        self.params.quantity(key, expected, parse, magnitude).map_err(|e| self.err(e))
    }
}

/// A TOML value as the text a user would write after `key =` (strings unquoted).
fn text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Build a component from its tagged table: `kind` picks the entry of `registry` (or
/// `default_kind` when absent); every other key must be one of its parameters. `what` names
/// the family in errors ("queue", "error model", "application").
pub fn build<T, C>(registry: &'static [Component<T, C>], what: &str, default_kind: &str, table: &toml::Table, path: &str, ctx: &C) -> Result<T, ConfigError> {
    let kind = match table.get("kind") {
        None => default_kind.to_string(),
        Some(toml::Value::String(s)) => s.clone(),
        Some(other) => return Err(invalid(format!("{path}.kind"), format!("expected a name, got {other}"))),
    };
    let known = || registry.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
    let comp = registry
        .iter()
        .find(|c| c.answers_to(&kind))
        .ok_or_else(|| invalid(format!("{path}.kind"), format!("unknown {what} '{kind}' (known: {})", known())))?;
    let mut given = Vec::with_capacity(table.len());
    for (k, v) in table.iter().filter(|(k, _)| *k != "kind") {
        if !comp.params.iter().any(|p| p.name == k) {
            let theirs = comp.params.iter().map(|p| p.name).collect::<Vec<_>>();
            let theirs = if theirs.is_empty() { "none".to_string() } else { theirs.join(", ") };
            return Err(invalid(format!("{path}.{k}"), format!("does not apply to kind = \"{}\" (its parameters: {theirs})", comp.name)));
        }
        given.push((k.clone(), text(v)));
    }
    let params = Params::new(comp.name, comp.params, &given).map_err(|e| invalid(path, e.to_string()))?;
    (comp.build)(&Args { path, params, ctx })
}

/// Build a component chosen by a bare name (`tcp.recovery = "sack"`): no parameters given, the
/// declared defaults apply; errors name `path`. None when no entry answers to `name`, so the
/// caller words the unknown-name error for its key.
pub fn build_named<T, C>(registry: &'static [Component<T, C>], name: &str, path: &str, ctx: &C) -> Option<Result<T, ConfigError>> {
    let comp = registry.iter().find(|c| c.answers_to(name))?;
    Some(Params::new(comp.name, comp.params, &[]).map_err(|e| invalid(path, e.to_string())).and_then(|params| (comp.build)(&Args { path, params, ctx })))
}

/// The registered names of a registry, in its order (aliases left out).
pub fn names<T, C>(registry: &'static [Component<T, C>]) -> Vec<&'static str> {
    registry.iter().map(|c| c.name).collect()
}

/// Defaults that stand for "no value" rather than a value (the parameter stays absent).
const NO_DEFAULT: &[&str] = &["required", "none", "off"];

/// A tagged table in canonical form: `kind` spelled by its registered name and every declared
/// parameter present — as given, else its default — in one spelling (durations exact, numbers
/// as numbers, flags as booleans), so two tables that build the same component compare equal. This is what a
/// run's content hash sees (`Scenario::to_canonical_toml`). Parameters without a default stay
/// absent unless given; quantities (`100p`, `64KB`) keep the text given. A table that would not
/// build (unknown kind) is returned as it is: building it reports the error.
pub fn canonical<T, C>(registry: &'static [Component<T, C>], default_kind: &str, table: &toml::Table) -> toml::Table {
    let kind = match table.get("kind") {
        None => default_kind,
        Some(toml::Value::String(s)) => s.as_str(),
        Some(_) => return table.clone(),
    };
    let Some(comp) = registry.iter().find(|c| c.answers_to(kind)) else { return table.clone() };
    let mut out = toml::Table::new();
    out.insert("kind".into(), toml::Value::String(comp.name.into()));
    for spec in comp.params {
        let value = match table.get(spec.name) {
            Some(v) => v.clone(),
            None if NO_DEFAULT.contains(&spec.default) => continue,
            None => toml::Value::String(spec.default.into()),
        };
        out.insert(spec.name.into(), canonical_value(spec, value));
    }
    // Keys the component does not declare are kept, so building still names them.
    for (k, v) in table {
        out.entry(k.clone()).or_insert_with(|| v.clone());
    }
    out
}

/// One spelling per value of a parameter; text that does not parse is left for the builder to reject.
fn canonical_value(spec: &ParamSpec, value: toml::Value) -> toml::Value {
    use crate::params::Kind;
    let raw = text(&value);
    match spec.kind {
        Kind::Duration => crate::time::parse_duration(&raw).map(|n| toml::Value::String(super::units::exact_duration(n))),
        Kind::Float => raw.trim().parse::<f64>().ok().map(toml::Value::Float),
        Kind::Int => raw.trim().parse::<i64>().ok().map(toml::Value::Integer),
        // A true/false choice (see `Args::flag`) is written as a TOML boolean, as users write it.
        Kind::Choice(["true", "false"]) => raw.parse::<bool>().ok().map(toml::Value::Boolean),
        Kind::Choice(_) => Some(toml::Value::String(raw)),
        Kind::Quantity(_) => None,
    }
    .unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[ParamSpec] = &[ParamSpec::float("p", "0.5", 0.0, 1.0, "a probability"), ParamSpec::choice("on", "false", &["true", "false"], "a flag")];

    fn pick(a: &Args<'_, u32>) -> Result<(f64, bool, u32), ConfigError> {
        Ok((a.float("p")?, a.flag("on")?, *a.ctx))
    }

    static REG: &[Component<(f64, bool, u32), u32>] = &[Component { name: "thing", aliases: &["gadget"], summary: "", source: "", params: PARAMS, build: pick }];

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn defaults_fill_in_and_the_context_reaches_the_builder() {
        assert_eq!(build(REG, "widget", "thing", &table(""), "a.b", &7).unwrap(), (0.5, false, 7));
        assert_eq!(build(REG, "widget", "thing", &table("kind = \"gadget\"\np = 0.25\non = true"), "a.b", &7).unwrap(), (0.25, true, 7));
    }

    #[test]
    fn every_mistake_names_the_full_key() {
        let err = |t: &str| build(REG, "widget", "thing", &table(t), "a.b", &0).unwrap_err().to_string();
        assert_eq!(err("kind = \"nope\""), "a.b.kind: unknown widget 'nope' (known: thing)");
        assert_eq!(err("q = 1"), "a.b.q: does not apply to kind = \"thing\" (its parameters: p, on)");
        assert_eq!(err("p = 2"), "a.b.p: 2 is outside the accepted range 0..1");
        assert_eq!(err("p = \"lots\""), "a.b.p: cannot read 'lots' as a number");
        assert_eq!(err("on = 3"), "a.b.on: cannot read '3' as one of true|false");
    }

    #[test]
    fn a_component_chosen_by_name_builds_from_its_defaults_and_answers_to_its_aliases() {
        assert_eq!(build_named(REG, "gadget", "a.b", &3).unwrap().unwrap(), (0.5, false, 3));
        assert!(build_named(REG, "nope", "a.b", &3).is_none());
        assert_eq!(names(REG), ["thing"]);
    }

    #[test]
    fn tables_that_build_the_same_queue_have_one_canonical_form() {
        use crate::sim::queue::{DEFAULT_KIND, REGISTRY};
        let short = canonical(REGISTRY, DEFAULT_KIND, &table("kind = \"red\""));
        let spelled = canonical(REGISTRY, DEFAULT_KIND, &table("kind = \"red\"\nmin_th = 5\nw_q = \"0.002\"\nlimit = \"100p\"\ngentle = \"false\""));
        assert_eq!(short, spelled);
        assert_eq!(short.get("max_th"), Some(&toml::Value::Float(15.0)));
        assert_eq!(short.get("gentle"), Some(&toml::Value::Boolean(false)));
        assert_eq!(short.get("byte_mode_max"), None, "a default meaning 'off' stays absent");
        assert_eq!(canonical(REGISTRY, DEFAULT_KIND, &toml::Table::new()).get("kind"), Some(&toml::Value::String("droptail".into())));
    }
}
