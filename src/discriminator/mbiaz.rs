//! mBiaz (Cen, Cosman & Voelker, IEEE/ACM ToN 11(5) 2003; docs/algorithms.md §8.3): Biaz's test with
//! the tighter upper bound (n + 1.25)·T_min, which Cen et al. found cuts Biaz's congestion
//! losses taken for corruption.

use super::biaz::Biaz;
use super::{LossClass, ReceiverDiscriminator};
use crate::time::Nanos;

#[derive(Debug, Clone)]
pub struct MBiaz(Biaz);

impl Default for MBiaz {
    fn default() -> Self {
        Self(Biaz::with_upper(1.25))
    }
}

impl ReceiverDiscriminator for MBiaz {
    fn name(&self) -> &'static str {
        "mbiaz"
    }

    fn on_arrival(&mut self, now: Nanos, rott: Nanos, missing: u32) -> Option<LossClass> {
        self.0.on_arrival(now, rott, missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn a_gap_between_one_and_a_quarter_and_two_slots_late_is_congestion_for_mbiaz_not_for_biaz() {
        let (mut m, mut b) = (MBiaz::default(), Biaz::default());
        for d in [&mut m as &mut dyn ReceiverDiscriminator, &mut b] {
            d.on_arrival(0, 0, 0);
            d.on_arrival(10 * MS, 0, 0);
        }
        // One missing, T_g = 25 ms: Biaz [20, 30) → corruption; mBiaz [20, 22.5) → congestion.
        assert_eq!(b.on_arrival(35 * MS, 0, 1), Some(LossClass::Corruption));
        assert_eq!(m.on_arrival(35 * MS, 0, 1), Some(LossClass::Congestion));
    }
}
