//! Loss discriminators: given what an endpoint can see when it detects a loss, was the loss
//! congestion (a queue dropped it) or corruption (the link did)? docs/algorithms.md §8.
//!
//! One file per discriminator. Each answers with a [`LossClass`]; the simulator knows the truth
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
pub fn sender_side(seed: u64) -> Vec<Box<dyn SenderDiscriminator>> {
    use crate::rng::{Component, Stream};
    vec![
        Box::new(bernoulli::Bernoulli::new(1.0, Stream::new(seed, Component::Predictor(0)))),
        Box::new(vegas::VegasSender::default()),
        Box::new(ntg::Ntg::default()),
        Box::new(ndg::Ndg::default()),
        Box::new(veno::VenoRule::default()),
        Box::new(two_bit::TwoBit::default()),
    ]
}

/// A receiver-side discriminator: every data packet's arrival time and relative one-way trip time
/// (ROTT: its arrival minus its send time; only differences matter, so clocks need not agree) and
/// how many packets are missing just before it (0: in order). A packet after a gap returns the
/// verdict on that loss. Scored on simulated runs from the `receive` trace
/// ([`score::score_receiver`]); on any arrival sequence, a capture's included, classification
/// only ([`score::classify_arrivals`]).
pub trait ReceiverDiscriminator {
    fn name(&self) -> &'static str;
    fn on_arrival(&mut self, now: Nanos, rott: Nanos, missing: u32) -> Option<LossClass>;
}

/// Every receiver-side discriminator with its published parameters, for scoring side by side.
pub fn receiver_side() -> Vec<Box<dyn ReceiverDiscriminator>> {
    vec![Box::new(biaz::Biaz::default()), Box::new(mbiaz::MBiaz::default()), Box::new(spike::Spike::default()), Box::new(zigzag::ZigZag::default()), Box::new(zbs::Zbs::default())]
}
