//! One declaration for every kind of component — estimators, RTO policies, congestion controls,
//! loss recovery, spurious-timeout detection and response, queues, error models, applications,
//! agents, loss discriminators. Like Linux's `struct tcp_congestion_ops` (a name, the hooks, one
//! `tcp_register_congestion_control` line) and quinn's `ControllerFactory` (a config that builds
//! the controller), a component is a value: its name and other spellings, what it is, where it
//! comes from, its parameters ([`ParamSpec`]: default, range, unit, meaning) and a constructor.
//! A [`Family`] is the list of them, kept next to the family's code; `crate::catalogue` walks the
//! families for every listing, scenario readers build from them, errors name the family and the
//! component (`unknown congestion control 'tahoe'`, `vegas: alpha (5) must not exceed beta (4)`).
//!
//! The declaration knows nothing of where parameters come from: `key=value` pairs on the command
//! line or in Python, a tagged table in a scenario (`crate::sim::component` turns its errors into
//! ones that name the scenario key).

use crate::params::{ParamError, ParamSpec, Params};

/// What every listing shows of one component, whatever its family: its name and other
/// spellings, what it is, where it comes from, its parameters and the settings it brings. Declared
/// once, inside the component's [`Component`]; `crate::catalogue` lists these.
#[derive(Debug)]
pub struct Declaration {
    /// The name in scenario files, on the command line and in listings.
    pub name: &'static str,
    /// Other spellings accepted where the name is.
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    /// Where the algorithm comes from (RFC section, paper, source file; docs/algorithms.md section).
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    /// Settings of other keys the component brings unless the scenario names them (a congestion
    /// control's loss recovery without SACK: `("recovery", "reno")`).
    pub defaults: &'static [(&'static str, &'static str)],
}

impl Declaration {
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// The value of one of [`Self::defaults`].
    pub fn default_for(&self, key: &str) -> Option<&'static str> {
        self.defaults
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }
}

/// One kind of component: its [`Declaration`] and how it is built. `T` is what it builds, `C`
/// what the builder is given besides parameters (a queue: the link's bandwidth; a recovery
/// strategy: the TCP options it needs). Reads as its declaration (`component.name`) through `Deref`.
pub struct Component<T: 'static, C: 'static = ()> {
    pub decl: Declaration,
    pub build: fn(&Args<'_, C>) -> Result<T, ParamError>,
}

impl<T, C> std::ops::Deref for Component<T, C> {
    type Target = Declaration;
    fn deref(&self) -> &Declaration {
        &self.decl
    }
}

impl<T, C> Component<T, C> {
    /// Build from `key=value` pairs: unknown keys and bad values are errors naming this component.
    pub fn build_from(&self, given: &[(String, String)], ctx: &C) -> Result<T, ParamError> {
        let params = Params::new(self.name, self.params, given)?;
        (self.build)(&Args { params, ctx })
    }
}

/// Every component of one family, in listing order.
pub struct Family<T: 'static, C: 'static = ()> {
    /// The family's key in listings (`rttlab components cc`).
    pub key: &'static str,
    /// What one member is called in sentences ("congestion control").
    pub noun: &'static str,
    pub members: &'static [Component<T, C>],
}

impl<T, C> Family<T, C> {
    /// The member called `name` (or one of its aliases).
    pub fn find(&self, name: &str) -> Option<&'static Component<T, C>> {
        self.members.iter().find(|c| c.answers_to(name))
    }

    /// The member called `name`, or an error listing the known ones.
    pub fn lookup(&self, name: &str) -> Result<&'static Component<T, C>, ParamError> {
        self.find(name).ok_or_else(|| ParamError::Unknown {
            family: self.noun,
            name: name.into(),
            known: self.names().join(", "),
        })
    }

    /// The registered names, in order (aliases left out).
    pub fn names(&self) -> Vec<&'static str> {
        self.members.iter().map(|c| c.name).collect()
    }

    /// Build the member called `name` from `key=value` pairs.
    pub fn build(&self, name: &str, given: &[(String, String)], ctx: &C) -> Result<T, ParamError> {
        self.lookup(name)?.build_from(given, ctx)
    }
}

/// What a constructor reads: the parameters as given, checked against the declaration (every
/// [`Params`] reader through `Deref`), and the build context.
pub struct Args<'a, C> {
    params: Params<'a>,
    pub ctx: &'a C,
}

impl<'a, C> std::ops::Deref for Args<'a, C> {
    type Target = Params<'a>;
    fn deref(&self) -> &Params<'a> {
        &self.params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[ParamSpec] = &[
        ParamSpec::float("p", "0.5", 0.0, 1.0, "a probability"),
        ParamSpec::choice("on", "false", &["true", "false"], "a flag"),
    ];

    fn pick(a: &Args<'_, u32>) -> Result<(f64, bool, u32), ParamError> {
        if a.float("p")? == 0.25 && *a.ctx == 0 {
            return Err(a.inconsistent("p = 0.25 needs a context"));
        }
        Ok((a.float("p")?, a.flag("on")?, *a.ctx))
    }

    static WIDGETS: Family<(f64, bool, u32), u32> = Family {
        key: "widget",
        noun: "widget",
        members: &[Component {
            decl: Declaration {
                name: "thing",
                aliases: &["gadget"],
                summary: "",
                source: "",
                params: PARAMS,
                defaults: &[("colour", "red")],
            },
            build: pick,
        }],
    };

    fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_member_builds_from_its_defaults_or_given_values_with_the_context() {
        assert_eq!(WIDGETS.build("thing", &[], &7).unwrap(), (0.5, false, 7));
        assert_eq!(
            WIDGETS
                .build("gadget", &given(&[("p", "0.25"), ("on", "true")]), &7)
                .unwrap(),
            (0.25, true, 7)
        );
        assert_eq!(
            WIDGETS.find("gadget").unwrap().default_for("colour"),
            Some("red")
        );
    }

    #[test]
    fn errors_name_the_family_and_the_component() {
        let err = |name: &str, g: &[(&str, &str)]| {
            WIDGETS.build(name, &given(g), &0).unwrap_err().to_string()
        };
        assert_eq!(err("nope", &[]), "unknown widget 'nope' (known: thing)");
        assert_eq!(
            err("gadget", &[("q", "1")]),
            "thing: unknown parameter 'q' (known: p, on)"
        );
        assert_eq!(
            err("thing", &[("p", "2")]),
            "thing.p: 2 is outside the accepted range 0..1"
        );
        assert_eq!(
            err("thing", &[("p", "0.25")]),
            "thing: p = 0.25 needs a context"
        );
    }
}
