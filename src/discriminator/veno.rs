//! Veno's loss rule as a classifier (Fu & Liew 2003; Linux `tcp_veno.c`; docs/algorithms.md §8.7):
//! backlog N = cwnd·(1 − BaseRTT/RTT); a loss with N < β = 3 segments is random (corruption),
//! else congestion. RTT is the latest sample (Linux: the smallest since the last ACK — the same
//! thing with one sample per ACK); BaseRTT the smallest ever. The congestion control `veno` acts
//! on the same rule ([`crate::sim::tcp::cc::veno`]); this is the open-loop classifier.

use super::{LossClass, SenderDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone)]
pub struct VenoRule {
    beta: f64,
    base_rtt: Nanos,
    backlog: f64,
}

impl Default for VenoRule {
    fn default() -> Self {
        Self {
            beta: 3.0,
            base_rtt: Nanos::MAX,
            backlog: 0.0,
        }
    }
}

impl SenderDiscriminator for VenoRule {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn on_sample(&mut self, rtt: Nanos, cwnd: f64) {
        let rtt = rtt.max(1);
        self.base_rtt = self.base_rtt.min(rtt);
        self.backlog = cwnd * (1.0 - self.base_rtt as f64 / rtt as f64);
    }

    fn classify(&mut self) -> LossClass {
        if self.backlog < self.beta {
            LossClass::Corruption
        } else {
            LossClass::Congestion
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn a_backlog_of_three_segments_or_more_is_congestion() {
        let mut v = VenoRule::default();
        v.on_sample(100 * MS, 20.0);
        v.on_sample(110 * MS, 20.0); // N = 20·(1 − 100/110) = 1.8
        assert_eq!(v.classify(), LossClass::Corruption);
        v.on_sample(120 * MS, 20.0); // N = 3.33
        assert_eq!(v.classify(), LossClass::Congestion);
    }
}
