//! The catalogue: every component of every family — estimators, RTO policies, congestion
//! controls, loss recovery, spurious-timeout detection and response, queues, error models,
//! applications, agents, loss discriminators — in one record shape ([`Entry`]: the family's key
//! and the component's own [`Declaration`], so no field is copied). Each family is a [`Family`]
//! of [`crate::component::Component`]s kept next to its code; this module only walks them, in
//! listing order, for `_core.catalogue()` (and through it `rttlab components`, `rttlab
//! estimators` and docs/estimators.md). Discriminators are listed, not chosen in a scenario:
//! `score_discriminators` runs every one of them.

use crate::component::{Declaration, Family};
use crate::sim::tcp;
use crate::sim::{agent, app, error_model, queue};
use crate::{discriminator, rtt};

/// One component as every listing shows it: its family's key ([`FAMILIES`]: "estimator",
/// "queue", "cc", ...) and its declaration, which the component itself holds.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub family: &'static str,
    pub decl: &'static Declaration,
}

/// Every family, in the order [`catalogue`] lists them.
pub const FAMILIES: &[&str] = &[
    "estimator",
    "queue",
    "error",
    "app",
    "agent",
    "cc",
    "recovery",
    "rto-policy",
    "spurious-detection",
    "spurious-response",
    "discriminator-sender",
    "discriminator-receiver",
];

/// Every component of every family, family by family, each in its own order.
pub fn catalogue() -> Vec<Entry> {
    let mut out = Vec::new();
    list(&mut out, &rtt::FAMILY);
    list(&mut out, &queue::FAMILY);
    list(&mut out, &error_model::FAMILY);
    list(&mut out, &app::FAMILY);
    list(&mut out, &agent::FAMILY);
    list(&mut out, &tcp::cc::FAMILY);
    list(&mut out, &tcp::recovery::FAMILY);
    list(&mut out, &rtt::policy::FAMILY);
    list(&mut out, &tcp::SPURIOUS_DETECTION);
    list(&mut out, &tcp::SPURIOUS_RESPONSE);
    list(&mut out, &discriminator::SENDER);
    list(&mut out, &discriminator::RECEIVER);
    out
}

fn list<T, C>(out: &mut Vec<Entry>, f: &'static Family<T, C>) {
    out.extend(f.members.iter().map(|c| Entry {
        family: f.key,
        decl: &c.decl,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(family: &str) -> Vec<&'static str> {
        catalogue()
            .into_iter()
            .filter(|e| e.family == family)
            .map(|e| e.decl.name)
            .collect()
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
        assert_eq!(
            names("spurious-response"),
            ["linux", "rfc4015", "rate-halving"]
        );
    }

    #[test]
    fn no_two_components_of_a_family_answer_to_the_same_name() {
        for family in FAMILIES {
            let mut spellings: Vec<&str> = catalogue()
                .iter()
                .filter(|e| e.family == *family)
                .flat_map(|e| std::iter::once(e.decl.name).chain(e.decl.aliases.iter().copied()))
                .collect();
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
            let [("recovery", r)] = e.decl.defaults else {
                panic!("{}: {:?}", e.decl.name, e.decl.defaults)
            };
            assert!(recovery.contains(r), "{}: {r}", e.decl.name);
        }
    }
}
