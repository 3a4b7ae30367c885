//! Jacobson/Karels as 4.4BSD-Lite computes it (`tcp_xmit_timer` in netinet/tcp_input.c,
//! `TCP_REXMTVAL` in tcp_var.h; the same code in FreeBSD 2.x): whole slow-timer ticks, SRTT ×8
//! and RTTVAR ×4 in integers, SRTT kept as an estimate of `rtt − 1` tick ("adjust rtt to origin
//! 0"), RTO = (t_srtt >> 3) + t_rttvar ticks bounded by `TCPT_RANGESET` to [t_rttmin, max]
//! (t_rttmin = TCPTV_MIN = 2 ticks in BSD; here min_rto rounded up to whole ticks).
//! QualNet's TCP, which Nunes et al. 2011 simulated in, derives from this code (docs/algorithms.md §1).

use crate::time::Nanos;

/// BSD's fixed-point state in ticks: `t_srtt` (×8, origin 0) and `t_rttvar` (×4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bsd {
    tick: Nanos,
    t_srtt: i64,
    t_rttvar: i64,
}

impl Bsd {
    pub fn new(tick: Nanos) -> Self {
        Self {
            tick,
            t_srtt: 0,
            t_rttvar: 0,
        }
    }

    /// BSD's `t_rtt` for a sample: a tick-counted sample ((1 + ticks crossed) · tick, what BSD's
    /// slow timer measures) maps to itself; another is rounded to whole ticks, at least 1.
    pub fn ticks(&self, rtt: Nanos) -> i64 {
        (((rtt + self.tick / 2) / self.tick) as i64).max(1)
    }

    /// `tcp_xmit_timer(tp, rtt)`, line for line.
    pub fn on_sample(&mut self, rtt: Nanos) {
        let rtt = self.ticks(rtt);
        if self.t_srtt != 0 {
            let mut delta = rtt - 1 - (self.t_srtt >> 3);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> 2);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            // The first sample is not moved to origin 0 in BSD either: t_srtt = rtt << 3.
            self.t_srtt = rtt << 3;
            self.t_rttvar = rtt << 1;
        }
    }

    /// `TCP_REXMTVAL(tp)` in ns before `TCPT_RANGESET`'s bounds.
    pub fn rexmtval(&self) -> Nanos {
        (((self.t_srtt >> 3) + self.t_rttvar) as Nanos) * self.tick
    }

    /// TCPT_RANGESET's lower bound: `min_rto` rounded up to whole ticks (1 s = BSD's 2 ticks at 500 ms).
    pub fn floor(&self, min_rto: Nanos) -> Nanos {
        min_rto.div_ceil(self.tick) * self.tick
    }

    /// The RTT this SRTT predicts: BSD's SRTT (t_srtt / 8 ticks, its fraction kept) estimates
    /// `rtt − 1` tick, so the RTT it stands for is one tick more. Scored against the sample,
    /// |prediction − rtt| = |SRTT − (rtt − 1)|: the error against the sample BSD's SRTT uses.
    pub fn prediction(&self) -> Nanos {
        (self.t_srtt as Nanos * self.tick) / 8 + self.tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const TICK: Nanos = 500 * MS;

    #[test]
    fn one_tick_samples_leave_srtt_at_seven_eighths_of_a_tick_from_origin_zero() {
        // First sample 1 tick: t_srtt = 8 (origin not adjusted), t_rttvar = 2. Then every
        // sample's origin-0 value is 0: delta = 0 − 1 = −1 → t_srtt 7, after which 7 >> 3 = 0
        // and delta = 0 forever: BSD's truncation keeps SRTT at 7/8 tick (its "+1/2 tick bias").
        let mut b = Bsd::new(TICK);
        b.on_sample(TICK);
        assert_eq!((b.t_srtt, b.t_rttvar), (8, 2));
        assert_eq!(b.prediction(), 2 * TICK);
        for _ in 0..50 {
            b.on_sample(TICK);
        }
        assert_eq!(b.t_srtt, 7);
        assert_eq!(b.prediction(), TICK + 7 * TICK / 8);
        // t_rttvar: |delta| = 0 each time, delta − (t_rttvar >> 2) shrinks it to 3 (3 >> 2 = 0).
        assert_eq!(b.t_rttvar, 3);
        assert_eq!(b.rexmtval(), 3 * TICK);
    }

    #[test]
    fn the_rto_is_srtt_plus_four_rttvar_in_whole_ticks() {
        let mut b = Bsd::new(TICK);
        b.on_sample(4 * TICK); // t_srtt 32, t_rttvar 8: RTO = 4 + 8 = 12 ticks (3·rtt, BSD's comment)
        assert_eq!(b.rexmtval(), 12 * TICK);
        b.on_sample(2 * TICK); // delta = 2 − 1 − 4 = −3: t_srtt 29; |−3| − 2 = 1: t_rttvar 9
        assert_eq!((b.t_srtt, b.t_rttvar), (29, 9));
        assert_eq!(b.rexmtval(), (3 + 9) * TICK);
    }

    #[test]
    fn samples_round_to_whole_ticks_and_never_below_one() {
        let b = Bsd::new(TICK);
        assert_eq!(b.ticks(100 * MS), 1);
        assert_eq!(b.ticks(TICK), 1);
        assert_eq!(b.ticks(1000 * MS), 2);
        assert_eq!(b.floor(1_000 * MS), 2 * TICK);
        assert_eq!(b.floor(1_100 * MS), 3 * TICK);
    }
}
