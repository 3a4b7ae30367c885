//! ZBS (Cen, Cosman & Voelker, IEEE/ACM ToN 11(5) 2003; docs/algorithms.md §8.6): a hybrid that picks
//! one of ZigZag, mBiaz and Spike per loss from what the arrivals say about the topology. With
//! T_narr = (average inter-arrival per packet slot) / T_min: a ROTT within 0.05·T_min of the
//! smallest seen (the slowest link is not queueing) → Spike; else T_narr < 0.875 → ZigZag,
//! < 1.5 → mBiaz (the flow alone on a wireless bottleneck: arrivals T_min apart), < 2 → ZigZag,
//! else Spike (the bottleneck shared: arrivals spread out).
//!
//! Choices (also in docs/reproductions/spectcp.md): the three parts see every arrival, so their
//! state is current whichever is asked; the average is an EWMA with gain ⅛ of the inter-arrival
//! time per packet slot, T/(n + 1) for an arrival after n missing packets — spebern's `zbs.rs`
//! averages T²/n, which is not a time and so cannot be normalised by T_min; T_min is the smallest
//! inter-arrival of consecutive in-order packets (Biaz's), ROTT_min the smallest ROTT. Before T_min
//! exists, ZigZag answers (the paper's choice when the topology is still unknown).

use super::mbiaz::MBiaz;
use super::spike::Spike;
use super::zigzag::ZigZag;
use super::{LossClass, ReceiverDiscriminator};
use crate::time::Nanos;

/// EWMA gain of the average inter-arrival time (spebern: 0.125).
const GAIN: f64 = 0.125;

#[derive(Debug, Clone, Default)]
pub struct Zbs {
    zigzag: ZigZag,
    mbiaz: MBiaz,
    spike: Spike,
    last: Option<Nanos>,
    t_min: Option<Nanos>,
    t_avg: Option<f64>,
    rott_min: Option<Nanos>,
}

impl ReceiverDiscriminator for Zbs {
    fn name(&self) -> &'static str {
        "zbs"
    }

    fn on_arrival(&mut self, now: Nanos, rott: Nanos, missing: u32) -> Option<LossClass> {
        let z = self.zigzag.on_arrival(now, rott, missing);
        let m = self.mbiaz.on_arrival(now, rott, missing);
        let s = self.spike.on_arrival(now, rott, missing);
        let gap = self.last.map(|l| now.saturating_sub(l));
        self.last = Some(now);
        self.rott_min = Some(self.rott_min.map_or(rott, |r| r.min(rott)));
        if let Some(g) = gap {
            if missing == 0 {
                self.t_min = Some(self.t_min.map_or(g, |t| t.min(g)));
            }
            let per_slot = g as f64 / (missing as f64 + 1.0);
            self.t_avg = Some(
                self.t_avg
                    .map_or(per_slot, |a| (1.0 - GAIN) * a + GAIN * per_slot),
            );
        }
        if missing == 0 {
            return None;
        }
        let (Some(t_min), Some(t_avg)) = (self.t_min.filter(|&t| t > 0), self.t_avg) else {
            return z;
        };
        let t = t_min as f64;
        if (rott as f64) < self.rott_min.unwrap_or(rott) as f64 + 0.05 * t {
            return s;
        }
        let narr = t_avg / t;
        if narr < 0.875 || (1.5..2.0).contains(&narr) {
            z
        } else if narr < 1.5 {
            m
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    /// Arrivals 10 ms apart (T_min 10 ms) with a steady 100 ms ROTT, then one loss.
    fn steady(z: &mut Zbs, n: u64, rott: Nanos) -> Nanos {
        for i in 0..n {
            assert_eq!(
                z.on_arrival(i * 10 * MS, rott, 0),
                None,
                "no loss, no verdict"
            );
        }
        (n - 1) * 10 * MS
    }

    #[test]
    fn a_lone_flow_on_its_bottleneck_is_judged_by_mbiaz() {
        // T_narr ≈ 1 and the ROTT is above its minimum: mBiaz's slot test decides. One packet
        // missing and a 20 ms gap (two slots): corruption.
        let mut z = Zbs::default();
        let t = steady(&mut z, 20, 100 * MS);
        z.on_arrival(t + 10 * MS, 90 * MS, 0); // ROTT_min 90 ms
        let mut mb = MBiaz::default();
        steady_mbiaz(&mut mb, 20);
        mb.on_arrival(t + 10 * MS, 90 * MS, 0);
        assert_eq!(
            z.on_arrival(t + 30 * MS, 100 * MS, 1),
            mb.on_arrival(t + 30 * MS, 100 * MS, 1)
        );
        let mut z2 = z.clone();
        assert_eq!(
            z.on_arrival(t + 50 * MS, 100 * MS, 1),
            Some(LossClass::Corruption)
        );
        assert_eq!(
            z2.on_arrival(t + 80 * MS, 100 * MS, 1),
            Some(LossClass::Congestion),
            "a 50 ms gap for one slot: queued behind others"
        );
    }

    fn steady_mbiaz(m: &mut MBiaz, n: u64) {
        for i in 0..n {
            m.on_arrival(i * 10 * MS, 100 * MS, 0);
        }
    }

    #[test]
    fn a_rott_at_its_minimum_hands_the_loss_to_spike() {
        let mut z = Zbs::default();
        let t = steady(&mut z, 20, 100 * MS);
        // ROTT at the minimum (within 0.05·T_min): Spike, which is NORMAL → corruption, even for a
        // gap mBiaz would call congestion.
        assert_eq!(
            z.on_arrival(t + 100 * MS, 100 * MS, 1),
            Some(LossClass::Corruption)
        );
    }

    #[test]
    fn spread_out_arrivals_of_a_shared_bottleneck_hand_the_loss_to_spike() {
        let mut z = Zbs::default();
        // Two back-to-back arrivals set T_min = 1 ms, then arrivals every 10 ms: T_narr ≈ 10.
        z.on_arrival(0, 100 * MS, 0);
        z.on_arrival(MS, 100 * MS, 0);
        for i in 1..40 {
            z.on_arrival(MS + i * 10 * MS, 100 * MS + (i % 2) * 5 * MS, 0);
        }
        // A ROTT far above the minimum: Spike goes to SPIKE → congestion.
        assert_eq!(
            z.on_arrival(MS + 40 * 10 * MS, 200 * MS, 1),
            Some(LossClass::Congestion)
        );
    }
}
