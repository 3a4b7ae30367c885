//! Components as a scenario names them: queue disciplines, error models, applications and agents
//! are tagged tables (`queue = { kind = "red", max_p = 0.1 }`); loss recovery and spurious-timeout
//! detection and response are chosen by a bare name (`tcp.recovery = "sack"`, [`build_named`]).
//! Every kind is declared once, as every component is ([`crate::component::Component`]: name,
//! aliases, summary, source, parameters, constructor); this module reads the scenario's tables
//! against those declarations, writes their canonical form, and turns errors into ones that name
//! the full key (`topology.bottleneck.queue.max_p: 1.5 is outside the accepted range 0..1`).

use super::config::{invalid, ConfigError};
use crate::params::{ParamError, ParamSpec};

pub use crate::component::{Args, Component, Declaration, Family};

/// A component's error as the scenario reader reports it: naming the full key `path.key`.
fn at(path: &str, e: ParamError) -> ConfigError {
    match e {
        ParamError::Malformed {
            key,
            value,
            expected,
            ..
        } => invalid(
            format!("{path}.{key}"),
            format!("cannot read '{value}' as {expected}"),
        ),
        ParamError::OutOfRange {
            key, value, range, ..
        } => invalid(
            format!("{path}.{key}"),
            format!("{value} is outside the accepted range {range}"),
        ),
        ParamError::UnknownKey { key, known, .. } => invalid(
            format!("{path}.{key}"),
            format!("unknown parameter (known: {known})"),
        ),
        ParamError::Invalid { key, reason, .. } => invalid(format!("{path}.{key}"), reason),
        ParamError::Inconsistent { reason, .. } => invalid(path, reason),
        ParamError::Unknown {
            family,
            name,
            known,
        } => invalid(path, format!("unknown {family} '{name}' (known: {known})")),
    }
}

/// A TOML value as the text a user would write after `key =` (strings unquoted).
fn text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Build a component from its tagged table: `kind` picks the member of `family` (or
/// `default_kind` when absent); every other key must be one of its parameters. Errors name the
/// family by its noun ("queue", "error model", "application").
pub fn build<T, C>(
    family: &Family<T, C>,
    default_kind: &str,
    table: &toml::Table,
    path: &str,
    ctx: &C,
) -> Result<T, ConfigError> {
    let what = family.noun;
    let kind = match table.get("kind") {
        None => default_kind.to_string(),
        Some(toml::Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(invalid(
                format!("{path}.kind"),
                format!("expected a name, got {other}"),
            ))
        }
    };
    let comp = family.find(&kind).ok_or_else(|| {
        invalid(
            format!("{path}.kind"),
            format!(
                "unknown {what} '{kind}' (known: {})",
                family.names().join(", ")
            ),
        )
    })?;
    let mut given = Vec::with_capacity(table.len());
    for (k, v) in table.iter().filter(|(k, _)| *k != "kind") {
        if !comp.params.iter().any(|p| p.name == k) {
            let theirs = comp.params.iter().map(|p| p.name).collect::<Vec<_>>();
            let theirs = if theirs.is_empty() {
                "none".to_string()
            } else {
                theirs.join(", ")
            };
            return Err(invalid(
                format!("{path}.{k}"),
                format!(
                    "does not apply to kind = \"{}\" (its parameters: {theirs})",
                    comp.name
                ),
            ));
        }
        given.push((k.clone(), text(v)));
    }
    comp.build_from(&given, ctx).map_err(|e| at(path, e))
}

/// Build a component chosen by a bare name (`tcp.recovery = "sack"`): no parameters given, the
/// declared defaults apply; errors name `path`. None when no entry answers to `name`, so the
/// caller words the unknown-name error for its key.
pub fn build_named<T, C>(
    family: &Family<T, C>,
    name: &str,
    path: &str,
    ctx: &C,
) -> Option<Result<T, ConfigError>> {
    Some(
        family
            .find(name)?
            .build_from(&[], ctx)
            .map_err(|e| at(path, e)),
    )
}

/// Defaults that stand for "no value" rather than a value (the parameter stays absent).
const NO_DEFAULT: &[&str] = &["required", "none", "off"];

/// A tagged table in canonical form: `kind` spelled by its registered name and every declared
/// parameter present — as given, else its default — in one spelling (durations exact, numbers
/// as numbers, flags as booleans), so two tables that build the same component compare equal. This is what a
/// run's content hash sees (`Scenario::to_canonical_toml`). Parameters without a default stay
/// absent unless given; quantities (`100p`, `64KB`) and a choice's aliases keep the text given
/// (version 1; version 2 respells them, [`respelled`]). A table that would not
/// build (unknown kind) is returned as it is: building it reports the error.
pub fn canonical<T, C>(
    family: &Family<T, C>,
    default_kind: &str,
    table: &toml::Table,
) -> toml::Table {
    let kind = match table.get("kind") {
        None => default_kind,
        Some(toml::Value::String(s)) => s.as_str(),
        Some(_) => return table.clone(),
    };
    let Some(comp) = family.find(kind) else {
        return table.clone();
    };
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

/// A component's parameters in canonical form (version 2, [`super::canonical`]): each given one in
/// one spelling ([`canonical_value`]), each absent one at its declared default — except a default
/// that stands for "no value" (`"none"`, `"required"`, `"off"`), and a parameter the component
/// refuses to be given together with what was given (regression's `k` with `form = "paper"`, its
/// `b0` with `coef`): filling those would change the component or make it fail, so they stay
/// absent. Filling a default otherwise builds the same component, as a parameter not given is
/// read at its declared default ([`crate::params::Params`]). Keys the component does not declare
/// are kept, so building still names them.
pub fn filled_params<T, C>(comp: &Component<T, C>, given: &toml::Table, ctx: &C) -> toml::Table {
    let mut out = toml::Table::new();
    for spec in comp.params {
        if let Some(v) = given.get(spec.name) {
            out.insert(spec.name.into(), spelled_value(spec, v.clone()));
        }
    }
    for (k, v) in given {
        out.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let absent: Vec<&ParamSpec> = comp
        .params
        .iter()
        .filter(|s| !given.contains_key(s.name) && !NO_DEFAULT.contains(&s.default))
        .collect();
    let builds = |t: &toml::Table| {
        comp.build_from(
            &t.iter()
                .map(|(k, v)| (k.clone(), text(v)))
                .collect::<Vec<_>>(),
            ctx,
        )
        .is_ok()
    };
    let default = |spec: &ParamSpec| spelled_value(spec, toml::Value::String(spec.default.into()));
    let mut all = out.clone();
    for spec in &absent {
        all.insert(spec.name.into(), default(spec));
    }
    // One build in the common case; parameter by parameter only when some default is refused.
    if absent.is_empty() || builds(&all) || !builds(&out) {
        return all;
    }
    for spec in absent {
        let mut with = out.clone();
        with.insert(spec.name.into(), default(spec));
        if builds(&with) {
            out = with;
        }
    }
    out
}

/// A component chosen by `"name"` or `{ <name_key> = "name", parameters... }` in canonical form
/// (version 2): always the table, `name_key` holding the registered name (an alias respelled) and
/// the parameters as [`filled_params`] writes them. A value that names no member is returned as
/// it is (reading it has already refused it).
pub fn canonical_named<T, C>(
    family: &Family<T, C>,
    name_key: &str,
    value: &toml::Value,
    ctx: &C,
) -> toml::Value {
    let (name, mut given) = match value {
        toml::Value::String(name) => (name.as_str(), toml::Table::new()),
        toml::Value::Table(t) => match t.get(name_key) {
            Some(toml::Value::String(name)) => (name.as_str(), t.clone()),
            _ => return value.clone(),
        },
        _ => return value.clone(),
    };
    let Some(comp) = family.find(name) else {
        return value.clone();
    };
    given.remove(name_key);
    let mut out = filled_params(comp, &given, ctx);
    out.insert(name_key.into(), toml::Value::String(comp.name.into()));
    toml::Value::Table(out)
}

/// A tagged table [`canonical`] has written, in version 2's spelling ([`super::canonical`]): each
/// declared parameter present written by [`spelled_value`] (a choice's alias as its registered
/// word, a quantity in its one spelling). A table naming no member is returned as it is.
pub fn respelled<T, C>(family: &Family<T, C>, table: &toml::Table) -> toml::Table {
    let Some(comp) = table
        .get("kind")
        .and_then(|k| k.as_str())
        .and_then(|k| family.find(k))
    else {
        return table.clone();
    };
    let mut out = table.clone();
    for spec in comp.params {
        if let Some(v) = out.get_mut(spec.name) {
            *v = spelled_value(spec, v.clone());
        }
    }
    out
}

/// Version 2's one spelling of a parameter's value: version 1's ([`canonical_value`]), then a
/// choice's alias respelled as its registered word and a quantity written by its declared
/// spelling ([`ParamSpec::spell`]: the largest exact unit, as the topology's keys are written).
/// Text that does not read is left for the builder to reject.
pub(crate) fn spelled_value(spec: &ParamSpec, value: toml::Value) -> toml::Value {
    use crate::params::Kind;
    let value = canonical_value(spec, value);
    match (&spec.kind, &value) {
        (Kind::Choice(_), toml::Value::String(word)) => {
            toml::Value::String(spec.registered(word.trim()).to_string())
        }
        (Kind::Quantity(_), v) => spec
            .spell
            .and_then(|spell| spell(&text(v)))
            .map_or(value, toml::Value::String),
        _ => value,
    }
}

/// One spelling per value of a parameter (version 1: quantities and choice aliases as given);
/// text that does not parse is left for the builder to reject.
fn canonical_value(spec: &ParamSpec, value: toml::Value) -> toml::Value {
    use crate::params::Kind;
    let raw = text(&value);
    match spec.kind {
        Kind::Duration => crate::time::parse_duration(&raw)
            .map(|n| toml::Value::String(super::units::exact_duration(n))),
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

    const PARAMS: &[ParamSpec] = &[
        ParamSpec::float("p", "0.5", 0.0, 1.0, "a probability"),
        ParamSpec::choice("on", "false", &["true", "false"], "a flag"),
    ];

    fn pick(a: &Args<'_, u32>) -> Result<(f64, bool, u32), ParamError> {
        Ok((a.float("p")?, a.flag("on")?, *a.ctx))
    }

    static REG: &Family<(f64, bool, u32), u32> = &Family {
        key: "widget",
        noun: "widget",
        members: &[Component {
            decl: Declaration {
                name: "thing",
                aliases: &["gadget"],
                summary: "",
                source: "",
                params: PARAMS,
                defaults: &[],
            },
            build: pick,
        }],
    };

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn defaults_fill_in_and_the_context_reaches_the_builder() {
        assert_eq!(
            build(REG, "thing", &table(""), "a.b", &7).unwrap(),
            (0.5, false, 7)
        );
        assert_eq!(
            build(
                REG,
                "thing",
                &table("kind = \"gadget\"\np = 0.25\non = true"),
                "a.b",
                &7
            )
            .unwrap(),
            (0.25, true, 7)
        );
    }

    #[test]
    fn every_mistake_names_the_full_key() {
        let err = |t: &str| {
            build(REG, "thing", &table(t), "a.b", &0)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("kind = \"nope\""),
            "a.b.kind: unknown widget 'nope' (known: thing)"
        );
        assert_eq!(
            err("q = 1"),
            "a.b.q: does not apply to kind = \"thing\" (its parameters: p, on)"
        );
        assert_eq!(err("p = 2"), "a.b.p: 2 is outside the accepted range 0..1");
        assert_eq!(err("p = \"lots\""), "a.b.p: cannot read 'lots' as a number");
        assert_eq!(
            err("on = 3"),
            "a.b.on: cannot read '3' as one of true|false"
        );
    }

    #[test]
    fn a_component_chosen_by_name_builds_from_its_defaults_and_answers_to_its_aliases() {
        assert_eq!(
            build_named(REG, "gadget", "a.b", &3).unwrap().unwrap(),
            (0.5, false, 3)
        );
        assert!(build_named(REG, "nope", "a.b", &3).is_none());
        assert_eq!(REG.names(), ["thing"]);
    }

    #[test]
    fn tables_that_build_the_same_queue_have_one_canonical_form() {
        use crate::sim::queue::{DEFAULT_KIND, FAMILY as REGISTRY};
        let short = canonical(&REGISTRY, DEFAULT_KIND, &table("kind = \"red\""));
        let spelled = canonical(
            &REGISTRY,
            DEFAULT_KIND,
            &table(
                "kind = \"red\"\nmin_th = 5\nw_q = \"0.002\"\nlimit = \"100p\"\ngentle = \"false\"",
            ),
        );
        assert_eq!(short, spelled);
        assert_eq!(short.get("max_th"), Some(&toml::Value::Float(15.0)));
        assert_eq!(short.get("gentle"), Some(&toml::Value::Boolean(false)));
        assert_eq!(
            short.get("byte_mode_max"),
            None,
            "a default meaning 'off' stays absent"
        );
        assert_eq!(
            canonical(&REGISTRY, DEFAULT_KIND, &toml::Table::new()).get("kind"),
            Some(&toml::Value::String("droptail".into()))
        );
    }
}
