//! RTT estimators and RTO policies (docs/algorithms.md §§0–7, §10).
//!
//! Every algorithm implements [`RttEstimator`]: it sees valid RTT samples (Karn's rule already
//! applied by the caller) and answers with a predicted RTT and a *base* RTO. An RTO [`policy`]
//! may change that base (CA-RTO's contention extension) over any estimator. Exponential back-off,
//! Karn's rule, the timed segment and the deadline live once, in [`timer::RetransmitTimer`],
//! outside every estimator (RFC 6298 §5, docs/architecture.md).
//!
//! Algorithms are chosen by name through [`FAMILY`]; the event loops dispatch over the
//! [`Estimator`] enum, so no virtual call sits in a hot loop.

pub mod baseline;
pub mod ca_rto;
pub mod conformal;
pub mod eifel;
pub mod fixed_share;
pub mod freebsd;
pub mod linux;
pub mod peak_hopper;
pub mod policy;
pub mod quantile_experts;
pub mod quic;
pub mod regression;
pub mod rfc6298;
pub mod timer;
#[cfg(test)]
mod vectors;

use crate::component::Family;
use crate::params::ParamError;
use crate::time::Nanos;

/// What the sender knows besides the sample itself (docs/algorithms.md §0, "evaluation hooks").
/// Trace replay fills only `now`; the simulator fills everything.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Context {
    /// Time of the ACK that produced the sample.
    pub now: Nanos,
    /// Congestion window in segments, if known (CA-RTO, Eifel's flight-based gain).
    pub cwnd: Option<f64>,
    /// Slow-start threshold in segments, if known.
    pub ssthresh: Option<f64>,
    /// The congestion window just before the last congestion event, in segments (CA-RTO §IV-A).
    pub max_cwnd: Option<f64>,
    /// Whether this ACK ends an RTT window: snd_una passed the `rtt_seq` marker (Linux §2.6).
    /// `None`: unknown, estimators that need it approximate it from time.
    pub new_window: Option<bool>,
    /// Peer-reported acknowledgement delay (QUIC RFC 9002 §5.3).
    pub ack_delay: Nanos,
}

/// The interface every estimator/RTO policy implements. All times in nanoseconds.
pub trait RttEstimator {
    /// Feed one valid RTT sample.
    fn on_sample(&mut self, rtt: Nanos, ctx: &Context);
    /// The RTT this estimator expects for the next sample (its SRTT or prediction), if any.
    fn prediction(&self) -> Option<Nanos>;
    /// The base retransmission timeout now, before back-off.
    fn rto(&self) -> Nanos;
    /// Upper bound for the backed-off RTO (RFC 6298 §2.5: at least 60 s).
    fn max_rto(&self) -> Nanos;
    /// Back-off doublings at most in a row (default: no cap of its own; the RTO is still capped
    /// at [`Self::max_rto`]). ns-2 caps the multiplier at 64.
    fn max_backoff(&self) -> u32 {
        u32::MAX
    }
    /// The floor this estimator applies to its RTO last (RFC 6298 §2.4's 1 s), 0 if it has none
    /// or keeps it inside its formula (Linux's `rto_min` sits in rttvar). An RTO policy that adds
    /// to the RTO ([`policy`]) re-applies it to the sum.
    fn min_rto(&self) -> Nanos {
        0
    }
    /// The RTO before that floor, cap and rounding, in ns: what an RTO policy adds to.
    fn unfloored_rto(&self) -> f64 {
        self.rto() as f64
    }
    /// The retransmission timer was (re)armed (RFC 6298 §5.1/5.3). CA-RTO draws its random
    /// extension here.
    fn on_timer_armed(&mut self, _ctx: &Context) {}
    /// The retransmission timer expired. Back-off itself is not the estimator's business.
    fn on_timeout(&mut self) {}
    /// RFC 6298's smoothed state, for a response that saves and later re-initialises it (the
    /// Eifel response, RFC 4015); None for estimators that keep no SRTT/RTTVAR pair (default).
    fn smoothed(&self) -> Option<Smoothed> {
        None
    }
    /// Set SRTT and RTTVAR (ns) and recompute the RTO from them (RFC 4015's RTO adaptation).
    /// Estimators without [`Self::smoothed`] ignore it.
    fn set_smoothed(&mut self, _srtt: f64, _rttvar: f64) {}
}

/// SRTT, RTTVAR and the clock granularity G of RFC 6298, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Smoothed {
    pub srtt: f64,
    pub rttvar: f64,
    pub granularity: f64,
}

macro_rules! estimators {
    ($( $variant:ident($ty:ty) ),* $(,)?) => {
        /// Enum dispatch over every estimator: one `match` per call, monomorphised loops in
        /// [`Estimator::with`].
        #[derive(Debug, Clone)]
        pub enum Estimator { $( $variant($ty), )* }

        impl RttEstimator for Estimator {
            fn on_sample(&mut self, rtt: Nanos, ctx: &Context) { match self { $( Self::$variant(e) => e.on_sample(rtt, ctx), )* } }
            fn prediction(&self) -> Option<Nanos> { match self { $( Self::$variant(e) => e.prediction(), )* } }
            fn rto(&self) -> Nanos { match self { $( Self::$variant(e) => e.rto(), )* } }
            fn max_rto(&self) -> Nanos { match self { $( Self::$variant(e) => e.max_rto(), )* } }
            fn max_backoff(&self) -> u32 { match self { $( Self::$variant(e) => e.max_backoff(), )* } }
            fn min_rto(&self) -> Nanos { match self { $( Self::$variant(e) => e.min_rto(), )* } }
            fn unfloored_rto(&self) -> f64 { match self { $( Self::$variant(e) => e.unfloored_rto(), )* } }
            fn on_timer_armed(&mut self, ctx: &Context) { match self { $( Self::$variant(e) => e.on_timer_armed(ctx), )* } }
            fn smoothed(&self) -> Option<Smoothed> { match self { $( Self::$variant(e) => e.smoothed(), )* } }
            fn set_smoothed(&mut self, srtt: f64, rttvar: f64) { match self { $( Self::$variant(e) => e.set_smoothed(srtt, rttvar), )* } }
            fn on_timeout(&mut self) { match self { $( Self::$variant(e) => e.on_timeout(), )* } }
        }

        /// A function generic over the concrete estimator type, for [`Estimator::with`].
        pub trait WithEstimator {
            type Output;
            fn call<E: RttEstimator + Clone>(self, estimator: &mut E) -> Self::Output;
        }

        impl Estimator {
            /// Run `f` on the concrete estimator so its loop is compiled per type.
            pub fn with<F: WithEstimator>(&mut self, f: F) -> F::Output {
                match self { $( Self::$variant(e) => f.call(e), )* }
            }
        }
    };
}

estimators! {
    Last(baseline::LastSample),
    Constant(baseline::Constant),
    Rfc6298(rfc6298::Rfc6298),
    Linux(linux::Linux),
    FreeBsd(freebsd::FreeBsd),
    Eifel(eifel::Eifel),
    PeakHopper(peak_hopper::PeakHopper),
    Quic(quic::Quic),
    FixedShare(fixed_share::FixedShare),
    CaRto(ca_rto::CaRto),
    Regression(regression::Regression),
    Conformal(conformal::Conformal),
    QuantileExperts(quantile_experts::QuantileExperts),
}

/// Every estimator, in the order `rttlab estimators` lists them: one line per algorithm, each
/// declared in its own file ([`crate::component::Component`]).
pub static FAMILY: Family<Estimator> = Family {
    key: "estimator",
    noun: "estimator",
    members: &[
        rfc6298::COMPONENT,
        linux::COMPONENT,
        freebsd::COMPONENT,
        eifel::COMPONENT,
        peak_hopper::COMPONENT,
        quic::COMPONENT,
        fixed_share::COMPONENT,
        ca_rto::COMPONENT,
        regression::COMPONENT,
        conformal::COMPONENT,
        quantile_experts::COMPONENT,
        baseline::LAST,
        baseline::CONSTANT,
    ],
};

/// Build an estimator by name from `key=value` parameters (unknown keys and bad values rejected).
pub fn build(name: &str, given: &[(String, String)]) -> Result<Estimator, ParamError> {
    FAMILY.build(name, given, &())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::timer::Backoff;
    use crate::time::{MS, SEC};
    use proptest::prelude::*;

    /// (estimator, the floor its RTO must never go below with default parameters)
    const FLOORS: &[(&str, Nanos)] = &[
        ("rfc6298", SEC),
        ("linux", 200 * MS),
        ("freebsd", 230 * MS),
        ("ca-rto", SEC),
        ("fixed-share", 200 * MS),
        ("eifel", 2 * MS),
        ("peak-hopper", 2 * MS),
        ("quic", MS),
        ("regression", 1),
        ("conformal", 1),
        ("quantile-experts", 1),
        ("last", 1),
        ("constant", SEC),
    ];

    #[test]
    fn every_estimator_has_a_floor_under_test() {
        for info in FAMILY.members {
            assert!(
                FLOORS.iter().any(|(n, _)| *n == info.name),
                "{} has no floor property",
                info.name
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// RTO ≥ floor, never above the cap, and back-off doubles monotonically up to the cap.
        #[test]
        fn rtos_respect_floor_and_cap_and_back_off_monotonically(
            samples in proptest::collection::vec(1u64..200_000_000_000, 1..400),
            cwnd in proptest::option::of(1.0f64..200.0),
        ) {
            for &(name, floor) in FLOORS {
                let mut e = build(name, &[]).unwrap();
                let mut now = 0;
                for &rtt in &samples {
                    now += rtt;
                    let ctx = Context { now, cwnd, max_cwnd: cwnd.map(|c| c * 2.0), ..Context::default() };
                    e.on_sample(rtt, &ctx);
                    e.on_timer_armed(&ctx);
                    let rto = e.rto();
                    prop_assert!(rto >= floor && rto <= e.max_rto(), "{name}: rto {rto} outside [{floor}, {}]", e.max_rto());
                }
                let mut backoff = Backoff::default();
                let mut last = backoff.rto(&e);
                for _ in 0..70 {
                    backoff.on_timeout(&mut e);
                    let next = backoff.rto(&e);
                    prop_assert!(next >= last && next <= e.max_rto(), "{name}: back-off {last} -> {next}");
                    prop_assert!(next == e.max_rto() || next == 2 * last, "{name}: back-off must double until the cap");
                    last = next;
                }
                prop_assert_eq!(last, e.max_rto());
            }
        }
    }

    #[test]
    fn every_registered_estimator_builds_from_its_defaults() {
        for info in FAMILY.members {
            let e = build(info.name, &[]).unwrap_or_else(|err| panic!("{}: {err}", info.name));
            assert!(e.rto() > 0, "{} has a zero initial RTO", info.name);
        }
    }

    #[test]
    fn every_default_lies_inside_its_own_range() {
        for info in FAMILY.members {
            for spec in info.params {
                let given = vec![(spec.name.to_string(), spec.default.to_string())];
                build(info.name, &given)
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", info.name, spec.name));
            }
        }
    }

    #[test]
    fn unknown_estimators_are_rejected_with_the_known_names() {
        let err = build("vegas-rto", &[]).unwrap_err().to_string();
        assert!(
            err.starts_with("unknown estimator 'vegas-rto' (known: rfc6298, linux"),
            "{err}"
        );
    }
}
