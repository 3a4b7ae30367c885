//! The catalogue: every component of every family — estimators, RTO policies, congestion
//! controls, loss recovery, spurious-timeout detection and response, queues, error models,
//! applications, agents — in one record shape ([`Entry`]). Each family keeps its registry next to
//! its code; this module only walks them, in listing order, for `_core.catalogue()` (and through
//! it `rttlab components`, `rttlab estimators` and docs/estimators.md).
//!
//! Loss discriminators (`crate::discriminator`) have no registry yet: they are chosen inside the
//! schemes that use them (SpecTCP's predictor), not by name in a scenario.

use crate::params::ParamSpec;
use crate::rtt::{self, policy::PolicyInfo};
use crate::sim::component::Component;
use crate::sim::tcp::{self, cc::CcInfo};
use crate::sim::{agent, app, error_model, queue};

/// One component as every listing shows it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// "estimator", "queue", "error", "app", "agent", "cc", "recovery", "rto-policy",
    /// "spurious-detection", "spurious-response" ([`FAMILIES`]).
    pub family: &'static str,
    pub name: &'static str,
    /// Other spellings accepted where the name is.
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    /// Where the algorithm comes from (RFC section, paper, source file).
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    /// Settings the component brings unless the scenario names them (a congestion control's
    /// loss recovery without SACK: `("recovery", "reno")`).
    pub defaults: Vec<(&'static str, &'static str)>,
}

/// Every family, in the order [`catalogue`] lists them.
pub const FAMILIES: &[&str] = &["estimator", "queue", "error", "app", "agent", "cc", "recovery", "rto-policy", "spurious-detection", "spurious-response"];

/// Every component of every family, family by family, each registry in its own order.
pub fn catalogue() -> Vec<Entry> {
    let mut out: Vec<Entry> = rtt::registry().iter().map(estimator).collect();
    out.extend(queue::REGISTRY.iter().map(|c| component("queue", c)));
    out.extend(error_model::REGISTRY.iter().map(|c| component("error", c)));
    out.extend(app::REGISTRY.iter().map(|c| component("app", c)));
    out.extend(agent::REGISTRY.iter().map(|c| component("agent", c)));
    out.extend(tcp::cc::registry().iter().map(congestion_control));
    out.extend(tcp::recovery::REGISTRY.iter().map(|c| component("recovery", c)));
    out.extend(rtt::policy::registry().iter().map(rto_policy));
    out.extend(tcp::SPURIOUS_DETECTION.iter().map(|c| component("spurious-detection", c)));
    out.extend(tcp::SPURIOUS_RESPONSE.iter().map(|c| component("spurious-response", c)));
    out
}

fn component<T, C>(family: &'static str, c: &Component<T, C>) -> Entry {
    Entry { family, name: c.name, aliases: c.aliases, summary: c.summary, source: c.source, params: c.params, defaults: Vec::new() }
}

fn estimator(i: &rtt::Info) -> Entry {
    Entry { family: "estimator", name: i.name, aliases: &[], summary: i.summary, source: i.source, params: i.params, defaults: Vec::new() }
}

fn rto_policy(i: &PolicyInfo) -> Entry {
    Entry { family: "rto-policy", name: i.name, aliases: &[], summary: i.summary, source: i.source, params: i.params, defaults: Vec::new() }
}

fn congestion_control(i: &CcInfo) -> Entry {
    Entry { family: "cc", name: i.name, aliases: i.aliases, summary: i.summary, source: i.source, params: i.params, defaults: vec![("recovery", i.recovery.name())] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(family: &str) -> Vec<&'static str> {
        catalogue().into_iter().filter(|e| e.family == family).map(|e| e.name).collect()
    }

    #[test]
    fn every_family_is_listed_once_in_order() {
        let mut seen: Vec<&str> = catalogue().iter().map(|e| e.family).collect();
        seen.dedup();
        assert_eq!(seen, FAMILIES);
    }

    #[test]
    fn loss_recovery_and_spurious_timeout_handling_are_listed() {
        assert_eq!(names("recovery"), ["reno", "newreno", "sack"]);
        assert_eq!(names("spurious-detection"), ["eifel", "frto", "frto-sack"]);
        assert_eq!(names("spurious-response"), ["linux", "rfc4015"]);
    }

    #[test]
    fn no_two_components_of_a_family_answer_to_the_same_name() {
        for family in FAMILIES {
            let mut spellings: Vec<&str> = catalogue().iter().filter(|e| e.family == *family).flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied())).collect();
            let n = spellings.len();
            spellings.sort_unstable();
            spellings.dedup();
            assert_eq!(spellings.len(), n, "{family}");
        }
    }

    #[test]
    fn every_congestion_control_brings_a_registered_recovery() {
        let recovery = names("recovery");
        for e in catalogue().iter().filter(|e| e.family == "cc") {
            let [("recovery", r)] = e.defaults.as_slice() else { panic!("{}: {:?}", e.name, e.defaults) };
            assert!(recovery.contains(r), "{}: {r}", e.name);
        }
    }
}
