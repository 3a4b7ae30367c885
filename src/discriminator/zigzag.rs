//! ZigZag (Cen, Cosman & Voelker 2003; docs/algorithms.md §8.5): an EWMA of the ROTT,
//! mean ← (1 − a)·mean + a·ROTT and dev ← (1 − 2a)·dev + 2a·|ROTT − mean|, a = 1/32. A packet arriving after n missing
//! ones with ROTT below mean − dev (n = 1), mean − dev/2 (n = 2), mean (n = 3), mean + dev/2 (n ≥ 4)
//! means corruption, else congestion. Choices: the arriving packet is compared with the averages
//! *before* it updates them; dev uses the mean after its update (the order of the formulas above);
//! the first ROTT initialises mean, dev = 0. (spebern's `zigzag.rs` forgets the (1 − 2a) factor on
//! dev; IHMC's C++ merges cases 1 and 3 — docs/algorithms.md's rule is followed.) Not scored here yet.

use super::{LossClass, ReceiverDiscriminator};
use crate::time::Nanos;

const A: f64 = 1.0 / 32.0;

#[derive(Debug, Clone, Default)]
pub struct ZigZag {
    mean: Option<f64>,
    dev: f64,
}

impl ReceiverDiscriminator for ZigZag {
    fn name(&self) -> &'static str {
        "zigzag"
    }

    fn on_arrival(&mut self, _now: Nanos, rott: Nanos, missing: u32) -> Option<LossClass> {
        let r = rott as f64;
        let verdict = match (missing, self.mean) {
            (0, _) | (_, None) => None,
            (n, Some(mean)) => {
                let bound = match n {
                    1 => mean - self.dev,
                    2 => mean - self.dev / 2.0,
                    3 => mean,
                    _ => mean + self.dev / 2.0,
                };
                Some(if r < bound {
                    LossClass::Corruption
                } else {
                    LossClass::Congestion
                })
            }
        };
        let mean = self.mean.map_or(r, |m| (1.0 - A) * m + A * r);
        self.dev = (1.0 - 2.0 * A) * self.dev + 2.0 * A * (r - mean).abs();
        self.mean = Some(mean);
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn the_bound_rises_with_the_number_of_packets_lost() {
        let mut z = ZigZag::default();
        for i in 0..200 {
            z.on_arrival(0, if i % 2 == 0 { 90 * MS } else { 110 * MS }, 0); // mean ≈ 100 ms, dev ≈ 10 ms
        }
        let (mean, dev) = (z.mean.unwrap(), z.dev);
        assert!(
            (mean / 1e6 - 100.0).abs() < 1.0 && (dev / 1e6 - 10.0).abs() < 1.0,
            "{mean} {dev}"
        );
        // ROTT 95 ms: above mean − dev (one loss: congestion), below mean (three: corruption).
        assert_eq!(
            z.clone().on_arrival(0, 95 * MS, 1),
            Some(LossClass::Congestion)
        );
        assert_eq!(
            z.clone().on_arrival(0, 95 * MS, 3),
            Some(LossClass::Corruption)
        );
        assert_eq!(
            z.clone().on_arrival(0, 103 * MS, 4),
            Some(LossClass::Corruption)
        );
        assert_eq!(z.on_arrival(0, 103 * MS, 2), Some(LossClass::Congestion));
    }
}
