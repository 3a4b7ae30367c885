//! Reno window arithmetic (RFC 5681 §3.1) with the NewReno exit rule (RFC 6582 §3.2 step 3) —
//! ALGORITHMS.md §§9.1–9.2. The partial-ACK logic itself lives in the sender.

use super::{CongestionOps, Signal, Window};
use crate::time::Nanos;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewReno;

impl CongestionOps for NewReno {
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

    fn ssthresh(&mut self, _w: &Window, flight: u64, _signal: Signal) -> u64 {
        // RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS); RFC 3168 §6.1.2 uses the
        // same reduction for ECN-Echo.
        (flight / 2).max(2 * _w.mss)
    }

    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS),
        // which avoids a burst when little is in flight.
        w.cwnd = w.ssthresh.min(flight.max(w.mss) + w.mss);
    }

    fn on_timeout(&mut self, w: &mut Window) {
        // RFC 5681 §3.1: cwnd = loss window = 1 full-sized segment.
        w.cwnd = w.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        NewReno.on_ack(&mut w, 2 * MSS, 0);
        assert_eq!(w.cwnd, 11 * MSS, "a delayed ACK covering two segments still adds one MSS");
        NewReno.on_ack(&mut w, 300, 0);
        assert_eq!(w.cwnd, 11 * MSS + 300);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_mss_per_window() {
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        for _ in 0..10 {
            NewReno.on_ack(&mut w, MSS, 0);
        }
        // Ten ACKs of 100, 99, 98, ... bytes: a little under one MSS.
        assert!(w.cwnd > 10 * MSS + 950 && w.cwnd < 11 * MSS, "{}", w.cwnd);
    }

    #[test]
    fn ssthresh_halves_the_flight_but_never_below_two_segments() {
        let w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(NewReno.ssthresh(&w, 20 * MSS, Signal::FastRetransmit), 10 * MSS);
        assert_eq!(NewReno.ssthresh(&w, 3 * MSS, Signal::Timeout), 2 * MSS);
    }

    #[test]
    fn leaving_recovery_with_little_in_flight_avoids_a_burst() {
        let mut w = Window { cwnd: 30 * MSS, ssthresh: 10 * MSS, mss: MSS };
        NewReno.on_recovery_exit(&mut w, 2 * MSS);
        assert_eq!(w.cwnd, 3 * MSS);
        w.cwnd = 30 * MSS;
        NewReno.on_recovery_exit(&mut w, 20 * MSS);
        assert_eq!(w.cwnd, 10 * MSS);
    }
}
