//! Spike (Tobe et al. 2000, with Cen et al.'s parameters; docs/algorithms.md §8.4): the receiver keeps
//! the smallest and largest relative one-way trip time (ROTT) seen; B_start = min + α(max − min),
//! B_end = min + β(max − min), α = ½, β = ⅓. NORMAL → SPIKE when a ROTT exceeds B_start, back when
//! one falls below B_end; a loss noticed in SPIKE is congestion, else corruption. Choice: the packet
//! that reveals the gap updates the state before the loss is classified (its ROTT is the freshest
//! evidence of the queue the lost packets met). Not scored here yet (no receiver trace).

use super::{LossClass, ReceiverDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone)]
pub struct Spike {
    alpha: f64,
    beta: f64,
    min: Nanos,
    max: Nanos,
    spike: bool,
}

impl Default for Spike {
    fn default() -> Self {
        Self {
            alpha: 0.5,
            beta: 1.0 / 3.0,
            min: Nanos::MAX,
            max: 0,
            spike: false,
        }
    }
}

impl ReceiverDiscriminator for Spike {
    fn name(&self) -> &'static str {
        "spike"
    }

    fn on_arrival(&mut self, _now: Nanos, rott: Nanos, missing: u32) -> Option<LossClass> {
        self.min = self.min.min(rott);
        self.max = self.max.max(rott);
        let span = (self.max - self.min) as f64;
        let (start, end) = (
            self.min as f64 + self.alpha * span,
            self.min as f64 + self.beta * span,
        );
        let r = rott as f64;
        if !self.spike && r > start {
            self.spike = true;
        } else if self.spike && r < end {
            self.spike = false;
        }
        (missing > 0).then_some(if self.spike {
            LossClass::Congestion
        } else {
            LossClass::Corruption
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn a_loss_during_a_delay_spike_is_congestion_and_after_it_ends_corruption() {
        let mut s = Spike::default();
        s.on_arrival(0, 100 * MS, 0);
        s.on_arrival(0, 200 * MS, 0); // enters SPIKE (> 100 + ½·0): max now 200
        assert_eq!(s.on_arrival(0, 160 * MS, 1), Some(LossClass::Congestion)); // 160 ≥ B_end 133: still SPIKE
        assert_eq!(s.on_arrival(0, 120 * MS, 1), Some(LossClass::Corruption)); // < 133: NORMAL
        assert_eq!(s.on_arrival(0, 140 * MS, 0), None); // ≤ B_start 150: stays NORMAL
    }
}
