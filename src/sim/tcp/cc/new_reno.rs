//! NewReno (RFC 6582) — ALGORITHMS.md §9.2: Reno's window arithmetic (RFC 5681 §3.1, see
//! [`super::reno`]) with NewReno's exit rule (RFC 6582 §3.2 step 3). The partial-ACK logic itself
//! lives in the sender, selected by [`Recovery::NewReno`].

use super::reno::Reno;
use super::{CongestionOps, Recovery, Signal, Window};
use crate::time::Nanos;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewReno;

impl CongestionOps for NewReno {
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Nanos) {
        Reno.on_ack(w, acked, now) // RFC 6582 changes recovery only, not growth
    }

    fn ssthresh(&mut self, w: &Window, flight: u64, signal: Signal) -> u64 {
        Reno.ssthresh(w, flight, signal)
    }

    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS),
        // which avoids a burst when little is in flight.
        w.cwnd = w.ssthresh.min(flight.max(w.mss) + w.mss);
    }

    fn on_timeout(&mut self, w: &mut Window) {
        Reno.on_timeout(w)
    }

    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn newreno_grows_and_halves_exactly_as_reno() {
        let mut a = Window { cwnd: 10 * MSS, ssthresh: 12 * MSS, mss: MSS };
        let mut b = a;
        for acked in [MSS, 2 * MSS, 300, MSS, MSS, MSS] {
            NewReno.on_ack(&mut a, acked, 0);
            Reno.on_ack(&mut b, acked, 0);
        }
        assert_eq!(a, b);
        assert_eq!(NewReno.ssthresh(&a, 20 * MSS, Signal::FastRetransmit), 10 * MSS);
    }

    #[test]
    fn newreno_asks_the_sender_for_partial_ack_recovery() {
        assert_eq!(NewReno.recovery(), Recovery::NewReno);
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
