//! Biaz & Vaidya's receiver inter-arrival predictor (IEEE ASSET 1999; docs/algorithms.md §8.2) and
//! its tighter variant mBiaz is in [`super::mbiaz`]. The receiver keeps T_min, the smallest
//! inter-arrival time of consecutive in-order packets. When a packet arrives after a gap of n
//! missing packets, T_g after the previous arrival: corruption if (n + 1)·T_min ≤ T_g <
//! (n + upper)·T_min (upper = 2), else congestion — the missing packets took their slots on the
//! (bottleneck, last-hop) wireless link, so they were lost on it. Assumes the lossy link is the last
//! hop, the bottleneck, and carries this flow alone.
//!
//! Usable on any arrival sequence; not scored here yet (the simulator does not trace arrivals at
//! the receiver — future work).

use super::{LossClass, ReceiverDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone)]
pub struct Biaz {
    upper: f64,
    t_min: Option<Nanos>,
    last: Option<Nanos>,
}

impl Biaz {
    /// `upper`: 2 for Biaz, 1.25 for mBiaz.
    pub fn with_upper(upper: f64) -> Self {
        Self {
            upper,
            t_min: None,
            last: None,
        }
    }
}

impl Default for Biaz {
    fn default() -> Self {
        Self::with_upper(2.0)
    }
}

impl ReceiverDiscriminator for Biaz {
    fn name(&self) -> &'static str {
        "biaz"
    }

    fn on_arrival(&mut self, now: Nanos, _rott: Nanos, missing: u32) -> Option<LossClass> {
        let gap = self.last.map(|l| now.saturating_sub(l));
        self.last = Some(now);
        let g = gap?;
        if missing == 0 {
            self.t_min = Some(self.t_min.map_or(g, |t| t.min(g)));
            return None;
        }
        let t = self.t_min? as f64;
        let n = missing as f64;
        let g = g as f64;
        Some(if (n + 1.0) * t <= g && g < (n + self.upper) * t {
            LossClass::Corruption
        } else {
            LossClass::Congestion
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn a_gap_as_long_as_the_missing_slots_is_corruption_and_a_longer_or_shorter_one_congestion() {
        let mut b = Biaz::default();
        assert_eq!(b.on_arrival(0, 0, 0), None);
        assert_eq!(b.on_arrival(10 * MS, 0, 0), None); // T_min = 10 ms
                                                       // Two missing: corruption if 30 ms ≤ T_g < 40 ms.
        assert_eq!(b.on_arrival(45 * MS, 0, 2), Some(LossClass::Corruption));
        assert_eq!(b.on_arrival(95 * MS, 0, 2), Some(LossClass::Congestion)); // 50 ms: queued behind others
        assert_eq!(b.on_arrival(110 * MS, 0, 2), Some(LossClass::Congestion)); // 15 ms: too soon
    }
}
