//! Reno (RFC 5681 §§3.1–3.2) — ALGORITHMS.md §9.1: slow start, congestion avoidance, halving on
//! loss, and on leaving fast recovery cwnd = ssthresh. The loss-recovery mechanics (dupACK
//! counting, leaving recovery on the first ACK of new data) live in the sender, selected by
//! [`super::CongestionOps::recovery`]; NewReno reuses this window arithmetic.

use super::{CongestionOps, Recovery, Signal, Window};
use crate::time::Nanos;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reno;

impl CongestionOps for Reno {
    fn on_ack(&mut self, w: &mut Window, acked: u64, _now: Nanos) {
        if w.cwnd < w.ssthresh {
            // RFC 5681 §3.1 eq. (2): slow start, cwnd += min(N, SMSS) per ACK.
            w.cwnd += acked.min(w.mss);
        } else {
            // RFC 5681 §3.1 eq. (3): congestion avoidance, cwnd += SMSS·SMSS/cwnd per ACK, at
            // least one byte so tiny increments still add up.
            w.cwnd += (w.mss * w.mss / w.cwnd.max(1)).max(1);
        }
    }

    fn ssthresh(&mut self, w: &Window, flight: u64, _signal: Signal) -> u64 {
        // RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS); RFC 3168 §6.1.2 uses the
        // same reduction for ECN-Echo.
        (flight / 2).max(2 * w.mss)
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _flight: u64) {
        // RFC 5681 §3.2 step 6: "set cwnd to ssthresh" — deflate the window inflated by dupACKs.
        w.cwnd = w.ssthresh;
    }

    fn on_timeout(&mut self, w: &mut Window) {
        // RFC 5681 §3.1: cwnd = loss window = 1 full-sized segment.
        w.cwnd = w.mss;
    }

    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        Reno.on_ack(&mut w, 2 * MSS, 0);
        assert_eq!(w.cwnd, 11 * MSS, "a delayed ACK covering two segments still adds one MSS");
        Reno.on_ack(&mut w, 300, 0);
        assert_eq!(w.cwnd, 11 * MSS + 300);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_mss_per_window() {
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        for _ in 0..10 {
            Reno.on_ack(&mut w, MSS, 0);
        }
        // Ten ACKs of 100, 99, 98, ... bytes: a little under one MSS.
        assert!(w.cwnd > 10 * MSS + 950 && w.cwnd < 11 * MSS, "{}", w.cwnd);
    }

    #[test]
    fn ssthresh_halves_the_flight_but_never_below_two_segments() {
        let w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(Reno.ssthresh(&w, 20 * MSS, Signal::FastRetransmit), 10 * MSS);
        assert_eq!(Reno.ssthresh(&w, 3 * MSS, Signal::Timeout), 2 * MSS);
    }

    #[test]
    fn leaving_recovery_deflates_to_ssthresh_whatever_is_in_flight() {
        // Unlike NewReno's burst guard, classic Reno sets cwnd = ssthresh even with little in flight.
        let mut w = Window { cwnd: 30 * MSS, ssthresh: 10 * MSS, mss: MSS };
        Reno.on_recovery_exit(&mut w, 2 * MSS);
        assert_eq!(w.cwnd, 10 * MSS);
    }

    #[test]
    fn reno_asks_the_sender_for_classic_recovery() {
        assert_eq!(Reno.recovery(), Recovery::Reno);
    }
}
