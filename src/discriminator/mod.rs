//! Loss discriminators: given what an endpoint can see when it detects a loss, was the loss
//! congestion (a queue dropped it) or corruption (the link did)? docs/algorithms.md §8.
//!
//! One file per discriminator, each declared in [`SENDER`] or [`RECEIVER`] (one line each, as
//! every component family is: `crate::component`). Each answers with a [`LossClass`]; the simulator knows the truth
//! for every loss (the drop's cause: queue overflow or AQM vs corruption on the wire), which is
//! what they are scored against.

pub mod bernoulli;
pub mod biaz;
pub mod mbiaz;
pub mod ndg;
pub mod ntg;
pub mod score;
pub mod spike;
pub mod two_bit;
pub mod vegas;
pub mod veno;
pub mod zbs;
pub mod zigzag;

use crate::component::{Component, Declaration, Family};
use crate::params::ParamSpec;
use crate::rng::{self, Stream};
use crate::time::Nanos;

/// A discriminator's verdict on one loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossClass {
    /// A queue dropped it: reduce the sending rate.
    Congestion,
    /// The link corrupted it (docs/algorithms.md's WIRELESS): resend, keep the rate.
    Corruption,
}

impl LossClass {
    /// The class of a loss seen while the path looked congested (or not).
    pub fn congestion_if(congested: bool) -> Self {
        if congested {
            Self::Congestion
        } else {
            Self::Corruption
        }
    }
}

/// A sender-side discriminator: it sees every RTT sample with the window (segments) at that
/// moment, classifies each loss the sender notices, and — only the ones that learn, like a branch
/// predictor — is told the truth afterwards.
pub trait SenderDiscriminator {
    fn name(&self) -> &'static str;
    fn on_sample(&mut self, rtt: Nanos, cwnd: f64);
    fn classify(&mut self) -> LossClass;
    fn learn(&mut self, _truth: LossClass) {}
}

impl SenderDiscriminator for bernoulli::Bernoulli {
    fn name(&self) -> &'static str {
        "bernoulli"
    }

    fn on_sample(&mut self, _rtt: Nanos, _cwnd: f64) {}

    fn classify(&mut self) -> LossClass {
        self.predict()
    }
}

/// Every sender-side discriminator with its published parameters (the Bernoulli predictor with
/// p = 1), for scoring side by side.
/// Every sender-side discriminator, in the order reports list them. The build context is the
/// simulation's seed (the Bernoulli predictor draws from its own stream of it).
pub static SENDER: Family<Box<dyn SenderDiscriminator>, u64> = Family {
    key: "discriminator-sender",
    noun: "sender-side loss discriminator",
    members: &[
        Component {
            decl: Declaration {
                name: "bernoulli",
                aliases: &[],
                summary: "SpecTCP's conditional Bernoulli predictor: corruption with probability p",
                source: "Bai, Lilja & Atiquzzaman 2009 §4.1; docs/algorithms.md §8.9",
                params: &[ParamSpec::float("p", "1", 0.0, 1.0, "probability a loss is predicted corruption (1: the condition engine's setting on a dimensioned RED/ECN path)")],
                defaults: &[],
            },
            build: |a| Ok(Box::new(bernoulli::Bernoulli::new(a.float("p")?, Stream::new(*a.ctx, rng::Component::Predictor(0))))),
        },
        Component {
            decl: Declaration {
                name: "vegas",
                aliases: &[],
                summary: "Vegas' Diff = cwnd·(1 − BaseRTT/RTT): congested above beta segments queued, not below alpha",
                source: "Biaz & Vaidya 1998 after Brakmo & Peterson; docs/algorithms.md §8.1",
                params: &[
                    ParamSpec::float("alpha", "1", 0.0, 1000.0, "below this many segments queued: not congested"),
                    ParamSpec::float("beta", "3", 0.0, 1000.0, "above this many segments queued: congested"),
                ],
                defaults: &[],
            },
            build: |a| {
                let (alpha, beta) = (a.float("alpha")?, a.float("beta")?);
                if alpha > beta {
                    return Err(a.inconsistent(format!("alpha ({alpha}) must not exceed beta ({beta})")));
                }
                Ok(Box::new(vegas::VegasSender::new(alpha, beta)))
            },
        },
        Component { decl: Declaration { name: "ntg", aliases: &[], summary: "normalised throughput gradient (Tri-S): congested while NTG < 1/2", source: "Biaz & Vaidya 1998 (Wang & Crowcroft's Tri-S); docs/algorithms.md §8.1", params: &[], defaults: &[] }, build: |_| Ok(Box::new(ntg::Ntg::default())) },
        Component { decl: Declaration { name: "ndg", aliases: &[], summary: "normalised delay gradient (CARD): congested while NDG > 0", source: "Biaz & Vaidya 1998 (Jain's CARD); docs/algorithms.md §8.1", params: &[], defaults: &[] }, build: |_| Ok(Box::new(ndg::Ndg::default())) },
        Component { decl: Declaration { name: "veno", aliases: &[], summary: "Veno's rule: a loss with backlog N < beta = 3 segments is corruption", source: "Fu & Liew 2003; Linux tcp_veno.c; docs/algorithms.md §8.7", params: &[], defaults: &[] }, build: |_| Ok(Box::new(veno::VenoRule::default())) },
        Component { decl: Declaration { name: "two-bit", aliases: &[], summary: "4,096 two-bit saturating counters indexed by the last 12 outcomes (a branch predictor)", source: "Hennessy & Patterson's 2-bit predictor, as compared in Bai, Lilja & Atiquzzaman 2009 Fig. 8", params: &[], defaults: &[] }, build: |_| Ok(Box::new(two_bit::TwoBit::default())) },
    ],
};

/// One of each sender-side discriminator with its declared defaults, in [`SENDER`]'s order.
pub fn sender_side(seed: u64) -> Vec<Box<dyn SenderDiscriminator>> {
    SENDER
        .members
        .iter()
        .map(|c| c.build_from(&[], &seed).expect("declared defaults build"))
        .collect()
}

pub trait ReceiverDiscriminator {
    fn name(&self) -> &'static str;
    fn on_arrival(&mut self, now: Nanos, rott: Nanos, missing: u32) -> Option<LossClass>;
}

/// Every receiver-side discriminator with its published parameters, for scoring side by side.
/// Every receiver-side discriminator, in the order reports list them.
pub static RECEIVER: Family<Box<dyn ReceiverDiscriminator>> = Family {
    key: "discriminator-receiver",
    noun: "receiver-side loss discriminator",
    members: &[
        Component { decl: Declaration { name: "biaz", aliases: &[], summary: "inter-arrival test: a gap of n packets in (n + 1)·T_min..(n + 2)·T_min is corruption", source: "Biaz & Vaidya, IEEE ASSET 1999; docs/algorithms.md §8.2", params: &[], defaults: &[] }, build: |_| Ok(Box::new(biaz::Biaz::default())) },
        Component { decl: Declaration { name: "mbiaz", aliases: &[], summary: "Biaz with the tighter upper bound (n + 1.25)·T_min", source: "Cen, Cosman & Voelker, IEEE/ACM ToN 11(5) 2003; docs/algorithms.md §8.3", params: &[], defaults: &[] }, build: |_| Ok(Box::new(mbiaz::MBiaz::default())) },
        Component { decl: Declaration { name: "spike", aliases: &[], summary: "relative one-way trip time in a spike state: losses outside a spike are corruption", source: "Tobe et al. 2000 with Cen et al.'s parameters; docs/algorithms.md §8.4", params: &[], defaults: &[] }, build: |_| Ok(Box::new(spike::Spike::default())) },
        Component { decl: Declaration { name: "zigzag", aliases: &[], summary: "ROTT against an EWMA mean and deviation, threshold by the number missing", source: "Cen, Cosman & Voelker 2003; docs/algorithms.md §8.5", params: &[], defaults: &[] }, build: |_| Ok(Box::new(zigzag::ZigZag::default())) },
        Component { decl: Declaration { name: "zbs", aliases: &[], summary: "hybrid picking ZigZag, mBiaz or Spike per loss from the arrivals' topology hints", source: "Cen, Cosman & Voelker, IEEE/ACM ToN 11(5) 2003; docs/algorithms.md §8.6", params: &[], defaults: &[] }, build: |_| Ok(Box::new(zbs::Zbs::default())) },
    ],
};

/// One of each receiver-side discriminator with its declared defaults, in [`RECEIVER`]'s order.
pub fn receiver_side() -> Vec<Box<dyn ReceiverDiscriminator>> {
    RECEIVER
        .members
        .iter()
        .map(|c| c.build_from(&[], &()).expect("declared defaults build"))
        .collect()
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn every_declared_discriminator_builds_under_its_own_name() {
        let senders: Vec<_> = sender_side(7).iter().map(|d| d.name()).collect();
        assert_eq!(senders, SENDER.names());
        let receivers: Vec<_> = receiver_side().iter().map(|d| d.name()).collect();
        assert_eq!(receivers, RECEIVER.names());
    }

    #[test]
    fn a_vegas_predictor_with_alpha_above_beta_is_refused_naming_it() {
        let given = [("alpha".to_string(), "5".to_string())];
        let err = SENDER.build("vegas", &given, &1).err().unwrap().to_string();
        assert_eq!(err, "vegas: alpha (5) must not exceed beta (3)");
    }
}
