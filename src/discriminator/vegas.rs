//! Vegas-sender predictor (Biaz & Vaidya 1998, after Brakmo & Peterson's Vegas; docs/algorithms.md
//! §8.1): Diff = (Expected − Actual)·BaseRTT = cwnd·(1 − BaseRTT/RTT), the segments the flow
//! keeps queued. Diff > β → congested, Diff < α → not congested, in between the previous state.
//! A loss seen while congested is congestion. α = 1, β = 3 (Brakmo & Peterson). History: one
//! sample (seed Table 2).

use super::{LossClass, SenderDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone)]
pub struct VegasSender {
    alpha: f64,
    beta: f64,
    base_rtt: Nanos,
    congested: bool,
}

impl VegasSender {
    pub fn new(alpha: f64, beta: f64) -> Self {
        Self {
            alpha,
            beta,
            base_rtt: Nanos::MAX,
            congested: false,
        }
    }
}

impl Default for VegasSender {
    fn default() -> Self {
        Self::new(1.0, 3.0)
    }
}

impl SenderDiscriminator for VegasSender {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_sample(&mut self, rtt: Nanos, cwnd: f64) {
        let rtt = rtt.max(1);
        self.base_rtt = self.base_rtt.min(rtt);
        let diff = cwnd * (1.0 - self.base_rtt as f64 / rtt as f64);
        if diff > self.beta {
            self.congested = true;
        } else if diff < self.alpha {
            self.congested = false;
        }
    }

    fn classify(&mut self) -> LossClass {
        LossClass::congestion_if(self.congested)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn more_than_beta_segments_queued_is_congestion_and_the_band_between_keeps_the_state() {
        let mut v = VegasSender::default();
        v.on_sample(100 * MS, 10.0);
        assert_eq!(v.classify(), LossClass::Corruption);
        v.on_sample(150 * MS, 10.0); // diff = 10·(1 − 100/150) = 3.33 > 3
        assert_eq!(v.classify(), LossClass::Congestion);
        v.on_sample(120 * MS, 10.0); // diff = 1.67: between α and β, keep
        assert_eq!(v.classify(), LossClass::Congestion);
        v.on_sample(105 * MS, 10.0); // diff = 0.48 < 1
        assert_eq!(v.classify(), LossClass::Corruption);
    }
}
