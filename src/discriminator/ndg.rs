//! NDG-sender: normalised delay gradient (Jain's CARD, as a loss predictor in Biaz & Vaidya 1998;
//! docs/algorithms.md §8.1). NDG = ((RTT_n − RTT_{n−1})/(RTT_n + RTT_{n−1})) · ((W_n + W_{n−1}) /
//! (W_n − W_{n−1})); congested while NDG > 0. As for NTG, a gradient is taken only when the window
//! changed, with the latest RTT at each window.

use super::{LossClass, SenderDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone, Default)]
pub struct Ndg {
    /// (W, RTT) at the last window change.
    last: Option<(f64, f64)>,
    congested: bool,
}

impl SenderDiscriminator for Ndg {
    fn name(&self) -> &'static str {
        "ndg"
    }

    fn on_sample(&mut self, rtt: Nanos, cwnd: f64) {
        let r = rtt as f64;
        match self.last {
            Some((w0, r0)) if cwnd != w0 => {
                let ndg = (r - r0) / (r + r0).max(1.0) * (cwnd + w0) / (cwnd - w0);
                self.congested = ndg > 0.0;
                self.last = Some((cwnd, r));
            }
            Some(_) => {}
            None => self.last = Some((cwnd, r)),
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
    fn delay_rising_with_the_window_is_congestion_and_falling_delay_is_not() {
        let mut n = Ndg::default();
        n.on_sample(100 * MS, 10.0);
        n.on_sample(120 * MS, 11.0); // (20/220)·(21/1) > 0
        assert_eq!(n.classify(), LossClass::Congestion);
        n.on_sample(110 * MS, 12.0); // (−10/230)·(23/1) < 0
        assert_eq!(n.classify(), LossClass::Corruption);
        n.on_sample(150 * MS, 6.0); // delay up while the window halved: (40/260)·(18/−6) < 0
        assert_eq!(n.classify(), LossClass::Corruption);
    }
}
