//! Reno (RFC 5681 §§3.1–3.2) — docs/algorithms.md §9.1: slow start, congestion avoidance, halving on
//! loss, and on leaving fast recovery cwnd = ssthresh. The loss-recovery mechanics (dupACK
//! counting, leaving recovery on the first ACK of new data) are the Reno recovery strategy
//! ([`crate::sim::tcp::recovery`]), this scheme's default; NewReno reuses this window arithmetic.

use super::Response;
use super::{
    standard_response, AckEvent, CongestionControl, CongestionEvent, CongestionOps, Window,
};
use crate::component::{Component, Declaration};

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "reno",
        aliases: &[],
        summary: "Reno: slow start, AIMD, cwnd = ssthresh on leaving recovery; classic Reno recovery by default",
        source: "RFC 5681 §§3.1–3.2; docs/algorithms.md §9.1",
        params: &[],
        defaults: &[("recovery", "reno")],
    },
    build: |_| Ok(CongestionControl::Reno(Reno)),
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reno;

impl Reno {
    /// RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS); RFC 3168 §6.1.2 uses the same
    /// reduction for ECN-Echo.
    pub fn halve(w: &Window, outstanding: u64) -> u64 {
        (outstanding / 2).max(2 * w.mss)
    }

    /// Slow start and congestion avoidance for `acked` new bytes.
    pub fn grow(w: &mut Window, acked: u64) {
        if w.cwnd < w.ssthresh {
            // RFC 5681 §3.1 eq. (2): slow start, cwnd += min(N, SMSS) per ACK.
            w.cwnd += acked.min(w.mss);
        } else {
            // RFC 5681 §3.1 eq. (3): congestion avoidance, cwnd += SMSS·SMSS/cwnd per ACK, at
            // least one byte so tiny increments still add up.
            w.cwnd += (w.mss * w.mss / w.cwnd.max(1)).max(1);
        }
    }
}

impl CongestionOps for Reno {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        Self::grow(w, ev.acked);
    }

    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response {
        standard_response(w, ev, |w| Self::halve(w, ev.outstanding));
        Response::CONGESTION
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _flight: u64) {
        // RFC 5681 §3.2 step 6: "set cwnd to ssthresh" — deflate the window inflated by dupACKs.
        w.cwnd = w.ssthresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tcp::cc::Congestion;

    const MSS: u64 = 1000;

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        Reno::grow(&mut w, 2 * MSS);
        assert_eq!(
            w.cwnd,
            11 * MSS,
            "a delayed ACK covering two segments still adds one MSS"
        );
        Reno::grow(&mut w, 300);
        assert_eq!(w.cwnd, 11 * MSS + 300);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_mss_per_window() {
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: 5 * MSS,
            mss: MSS,
        };
        for _ in 0..10 {
            Reno::grow(&mut w, MSS);
        }
        // Ten ACKs of 100, 99, 98, ... bytes: a little under one MSS.
        assert!(w.cwnd > 10 * MSS + 950 && w.cwnd < 11 * MSS, "{}", w.cwnd);
    }

    #[test]
    fn ssthresh_halves_the_flight_but_never_below_two_segments() {
        let w = Window {
            cwnd: 20 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        assert_eq!(Reno::halve(&w, 20 * MSS), 10 * MSS);
        assert_eq!(Reno::halve(&w, 3 * MSS), 2 * MSS);
    }

    #[test]
    fn leaving_recovery_deflates_to_ssthresh_whatever_is_in_flight() {
        // Unlike NewReno's burst guard, classic Reno sets cwnd = ssthresh even with little in flight.
        let mut w = Window {
            cwnd: 30 * MSS,
            ssthresh: 10 * MSS,
            mss: MSS,
        };
        Reno.on_recovery_exit(&mut w, 2 * MSS);
        assert_eq!(w.cwnd, 10 * MSS);
    }

    fn event(kind: Congestion, outstanding: u64) -> CongestionEvent {
        CongestionEvent {
            now: 0,
            kind,
            outstanding,
            in_recovery: false,
        }
    }

    #[test]
    fn a_loss_sets_cwnd_to_the_halved_flight_and_a_timeout_to_one_segment() {
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        Reno.on_congestion(&mut w, &event(Congestion::Loss, 20 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (10 * MSS, 10 * MSS));
        Reno.on_congestion(
            &mut w,
            &event(Congestion::Timeout { first: false }, 4 * MSS),
        );
        assert_eq!(
            (w.cwnd, w.ssthresh),
            (MSS, 10 * MSS),
            "a later back-off keeps ssthresh"
        );
        Reno.on_congestion(&mut w, &event(Congestion::Timeout { first: true }, 4 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 2 * MSS));
    }

    #[test]
    fn reno_asks_for_classic_recovery_by_default() {
        assert_eq!(COMPONENT.default_for("recovery"), Some("reno"));
    }
}
