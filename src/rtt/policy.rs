//! RTO policies: what turns an estimator's RTO into the timer value, kept apart from the estimator
//! so one policy wraps any estimator. `none` uses the estimator's own RTO; `ca-rto` adds
//! CA-RTO's contention extension (Psaras, Tsaoussidis & Mamatas 2005 §IV-A, [`super::ca_rto::ContentionExtension`]).
//!
//! Adding a policy: one file implementing its arithmetic, one variant in [`Policy`] and one
//! [`Component`] in [`FAMILY`] below.

use super::ca_rto::{self, ContentionExtension, ExtensionConfig};
use super::{Context, RttEstimator};
use crate::component::{Component, Declaration, Family};
use crate::params::ParamError;
use crate::time::Nanos;

/// Enum dispatch: the policy is consulted on every timer arm, so no virtual call.
#[derive(Debug, Clone, Default)]
pub enum Policy {
    /// The estimator's own RTO.
    #[default]
    None,
    /// CA-RTO's random contention extension added to the estimator's RTO.
    CaRto(ContentionExtension),
}

impl Policy {
    /// The base RTO (before back-off) this policy makes of `estimator`'s.
    #[inline]
    pub fn rto<E: RttEstimator + ?Sized>(&self, estimator: &E) -> Nanos {
        match self {
            Policy::None => estimator.rto(),
            Policy::CaRto(ext) => ext.rto(estimator),
        }
    }

    /// The RTO in force after `count` expiries: the base doubled `count` times and capped
    /// (RFC 6298 §5.5) — unless the policy adds its part after back-off (CA-RTO `backoff = after`).
    #[inline]
    pub fn backed_off_rto<E: RttEstimator + ?Sized>(&self, estimator: &E, count: u32) -> Nanos {
        match self {
            Policy::CaRto(ext) if ext.config().backoff == ca_rto::Backoff::After => {
                ext.rto_after_backoff(estimator, count)
            }
            _ => super::timer::backed_off(self.rto(estimator), count, estimator.max_rto()),
        }
    }

    /// The timer was (re)armed: a policy may draw afresh (CA-RTO draws p here).
    #[inline]
    pub fn on_timer_armed(&mut self, ctx: &Context) {
        match self {
            Policy::None => {}
            Policy::CaRto(ext) => ext.on_timer_armed(ctx),
        }
    }

    /// A valid RTT sample reached the estimator (CA-RTO with `draw = sample` draws p here).
    #[inline]
    pub fn on_sample(&mut self, ctx: &Context) {
        match self {
            Policy::None => {}
            Policy::CaRto(ext) => ext.on_sample(ctx),
        }
    }

    /// Give the policy's randomness its own stream: `stream` comes from the owner (the simulator
    /// derives one per flow from the simulation seed), mixed with the policy's `seed` parameter.
    pub fn seed_stream(&mut self, stream: u64) {
        match self {
            Policy::None => {}
            Policy::CaRto(ext) => ext.seed_stream(stream),
        }
    }

    /// The registered name, as `tcp.rto.policy` takes it.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::CaRto(_) => "ca-rto",
        }
    }
}

/// Every RTO policy, in listing order (`rttlab components rto-policy`).
pub static FAMILY: Family<Policy> = Family {
    key: "rto-policy",
    noun: "RTO policy",
    members: &[
        Component {
            decl: Declaration {
                name: "none",
                aliases: &[],
                summary: "the estimator's own RTO",
                source: "RFC 6298 §2",
                params: &[],
                defaults: &[],
            },
            build: |_| Ok(Policy::None),
        },
        Component {
            decl: Declaration {
                name: "ca-rto",
                aliases: &[],
                summary:
                    "CA-RTO's random extension c·p (grows with cwnd contention) over any estimator",
                source: "Psaras, Tsaoussidis, Mamatas, CA-RTO §IV-A; docs/algorithms.md §7",
                params: ca_rto::POLICY_PARAMS,
                defaults: &[],
            },
            build: |p| {
                Ok(Policy::CaRto(ContentionExtension::new(
                    ExtensionConfig::from_params(p)?,
                )))
            },
        },
    ],
};

/// Build a policy by name from `key=value` parameters (unknown names, keys and bad values rejected
/// with an error naming them).
pub fn build(name: &str, given: &[(String, String)]) -> Result<Policy, ParamError> {
    FAMILY.build(name, given, &())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::{build as estimator, Context};
    use crate::time::MS;

    fn contended() -> Context {
        Context {
            cwnd: Some(2.0),
            max_cwnd: Some(50.0),
            ..Context::default()
        }
    }

    #[test]
    fn ca_rto_as_a_policy_over_rfc6298_equals_the_registered_ca_rto_estimator() {
        let mut fused = estimator("ca-rto", &[]).unwrap();
        let mut base = estimator("rfc6298", &[]).unwrap();
        let mut policy = build("ca-rto", &[]).unwrap();
        for (i, ms) in [100u64, 120, 300, 80, 2000, 90].into_iter().enumerate() {
            let ctx = Context {
                now: i as u64 * 100 * MS,
                ..contended()
            };
            fused.on_sample(ms * MS, &ctx);
            base.on_sample(ms * MS, &ctx);
            fused.on_timer_armed(&ctx);
            policy.on_timer_armed(&ctx);
            assert_eq!(policy.rto(&base), fused.rto(), "sample {i}");
        }
    }

    #[test]
    fn ca_rto_over_linux_adds_the_extension_to_linux_rto_and_keeps_its_cap() {
        let mut linux = estimator("linux", &[]).unwrap();
        let mut policy = build("ca-rto", &[]).unwrap();
        linux.on_sample(100 * MS, &Context::default());
        let Policy::CaRto(ext) = &policy else {
            unreachable!()
        };
        assert_eq!(ext.extension(), 0);
        assert_eq!(
            policy.rto(&linux),
            linux.rto(),
            "no draw yet: Linux's own RTO"
        );
        policy.on_timer_armed(&contended());
        let Policy::CaRto(ext) = &policy else {
            unreachable!()
        };
        let e = ext.extension();
        assert!(e > 0);
        assert!(
            policy.rto(&linux).abs_diff(linux.rto() + e) <= 1,
            "{} vs {} + {e}",
            policy.rto(&linux),
            linux.rto()
        );
    }

    #[test]
    fn without_a_window_the_ca_rto_policy_leaves_any_estimator_unchanged() {
        for name in ["rfc6298", "linux", "eifel", "quic"] {
            let mut est = estimator(name, &[]).unwrap();
            let mut policy = build("ca-rto", &[]).unwrap();
            for ms in [100u64, 300, 80] {
                est.on_sample(ms * MS, &Context::default());
                policy.on_timer_armed(&Context::default());
                assert_eq!(policy.rto(&est), est.rto(), "{name}");
            }
        }
    }

    #[test]
    fn with_draw_per_sample_p_changes_at_samples_and_not_at_arms() {
        let mut est = estimator("rfc6298", &[]).unwrap();
        let mut policy = build("ca-rto", &[("draw".into(), "sample".into())]).unwrap();
        let ext = |p: &Policy| match p {
            Policy::CaRto(e) => e.extension(),
            Policy::None => unreachable!(),
        };
        est.on_sample(100 * MS, &contended());
        policy.on_sample(&contended());
        let first = ext(&policy);
        assert!(first > 0);
        for _ in 0..5 {
            policy.on_timer_armed(&contended());
            assert_eq!(ext(&policy), first, "arming keeps the sample's draw");
        }
        policy.on_sample(&contended());
        assert_ne!(ext(&policy), first, "a new sample draws again");
    }

    #[test]
    fn after_backoff_the_extension_is_added_once_and_not_doubled() {
        use crate::rtt::timer::backed_off;
        let mut est = estimator("rfc6298", &[("min_rto".into(), "0".into())]).unwrap();
        est.on_sample(100 * MS, &Context::default());
        let mut before = build("ca-rto", &[]).unwrap();
        let mut after = build("ca-rto", &[("backoff".into(), "after".into())]).unwrap();
        before.on_timer_armed(&contended());
        after.on_timer_armed(&contended());
        let Policy::CaRto(e) = &after else {
            unreachable!()
        };
        let e = e.extension();
        assert!(e > 0);
        assert_eq!(
            before.backed_off_rto(&est, 0),
            after.backed_off_rto(&est, 0),
            "same seed, same draw: equal before any expiry"
        );
        assert_eq!(
            before.backed_off_rto(&est, 2),
            backed_off(est.rto() + e, 2, est.max_rto()).min(est.max_rto())
        );
        assert_eq!(after.backed_off_rto(&est, 2), 4 * est.rto() + e);
    }

    #[test]
    fn seeding_the_stream_gives_different_flows_different_draws_and_the_same_flow_the_same() {
        let draws = |stream| {
            let mut p = build("ca-rto", &[]).unwrap();
            p.seed_stream(stream);
            (0..20)
                .map(|_| {
                    p.on_timer_armed(&contended());
                    match &p {
                        Policy::CaRto(e) => e.extension(),
                        Policy::None => unreachable!(),
                    }
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(11), draws(11));
        assert_ne!(draws(11), draws(12));
    }

    #[test]
    fn unknown_policies_and_keys_are_named_in_the_error() {
        let err = build("eifel-undo", &[]).unwrap_err().to_string();
        assert_eq!(err, "unknown RTO policy 'eifel-undo' (known: none, ca-rto)");
        let err = build("ca-rto", &[("min_rto".into(), "1s".into())])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("ca-rto: unknown parameter 'min_rto'"),
            "{err}"
        );
    }
}
