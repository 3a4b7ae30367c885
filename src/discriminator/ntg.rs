//! NTG-sender: normalised throughput gradient (Wang & Crowcroft's Tri-S, as a loss predictor in
//! Biaz & Vaidya 1998; docs/algorithms.md §8.1). T(W) = W/RTT(W); TG(W_n) = (T(W_n) − T(W_{n−1})) /
//! (W_n − W_{n−1}); NTG = TG(W_n)/TG(W_1). Congested while NTG < ½ (Tri-S's decrease threshold,
//! **[ambiguous]** in docs/algorithms.md). Choices: a gradient is taken only when the window changed
//! (W_n ≠ W_{n−1}, else it is undefined), with the latest RTT at each window; TG(W_1) is the first
//! such gradient of the connection (its slow start, where throughput still grows with the window).

use super::{LossClass, SenderDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone, Default)]
pub struct Ntg {
    /// (W, T) at the last window change.
    last: Option<(f64, f64)>,
    tg1: Option<f64>,
    congested: bool,
}

impl SenderDiscriminator for Ntg {
    fn name(&self) -> &'static str {
        "ntg"
    }

    fn on_sample(&mut self, rtt: Nanos, cwnd: f64) {
        let t = cwnd / (rtt.max(1) as f64 / 1e9);
        match self.last {
            Some((w0, t0)) if cwnd != w0 => {
                let tg = (t - t0) / (cwnd - w0);
                match self.tg1 {
                    None if tg != 0.0 => self.tg1 = Some(tg),
                    Some(tg1) => self.congested = tg / tg1 < 0.5,
                    None => {}
                }
                self.last = Some((cwnd, t));
            }
            Some(_) => {}
            None => self.last = Some((cwnd, t)),
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
    fn throughput_that_stops_growing_with_the_window_is_congestion() {
        let mut n = Ntg::default();
        n.on_sample(100 * MS, 2.0); // T = 20/s
        n.on_sample(100 * MS, 4.0); // T = 40: TG1 = 10 per segment
        n.on_sample(100 * MS, 8.0); // T = 80: TG = 10, NTG = 1
        assert_eq!(n.classify(), LossClass::Corruption);
        n.on_sample(180 * MS, 9.0); // T = 50: TG = −30, NTG = −3 < ½
        assert_eq!(n.classify(), LossClass::Congestion);
        n.on_sample(90 * MS, 9.0); // same window: no gradient, state kept
        assert_eq!(n.classify(), LossClass::Congestion);
    }
}
