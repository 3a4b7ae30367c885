//! NewReno (RFC 6582) — docs/algorithms.md §9.2: Reno's window arithmetic (RFC 5681 §3.1, see
//! [`super::reno`]) with NewReno's exit rule (RFC 6582 §3.2 step 3). The partial-ACK logic itself
//! is the NewReno recovery strategy, this scheme's default.

use super::reno::Reno;
use super::Response;
use super::{AckEvent, CongestionControl, CongestionEvent, CongestionOps, Window};
use crate::component::{Component, Declaration};

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "newreno",
        aliases: &["new_reno"],
        summary: "NewReno: Reno's window with RFC 6582's burst-avoiding exit; NewReno partial-ACK recovery by default",
        source: "RFC 6582 §3.2; docs/algorithms.md §9.2",
        params: &[],
        defaults: &[("recovery", "newreno")],
    },
    build: |_| Ok(CongestionControl::NewReno(NewReno)),
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewReno;

impl CongestionOps for NewReno {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        Reno.on_ack(w, ev) // RFC 6582 changes recovery only, not growth
    }

    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response {
        Reno.on_congestion(w, ev)
    }

    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS),
        // which avoids a burst when little is in flight.
        w.cwnd = w.ssthresh.min(flight.max(w.mss) + w.mss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tcp::cc::Congestion;

    const MSS: u64 = 1000;

    #[test]
    fn newreno_grows_and_halves_exactly_as_reno() {
        let mut a = Window {
            cwnd: 10 * MSS,
            ssthresh: 12 * MSS,
            mss: MSS,
        };
        let mut b = a;
        for acked in [MSS, 2 * MSS, 300, MSS, MSS, MSS] {
            let ev = AckEvent {
                acked,
                ..AckEvent::default()
            };
            NewReno.on_ack(&mut a, &ev);
            Reno.on_ack(&mut b, &ev);
        }
        assert_eq!(a, b);
        let loss = CongestionEvent {
            now: 0,
            kind: Congestion::Loss,
            outstanding: 20 * MSS,
            in_recovery: false,
        };
        NewReno.on_congestion(&mut a, &loss);
        Reno.on_congestion(&mut b, &loss);
        assert_eq!((a, a.ssthresh), (b, 10 * MSS));
    }

    #[test]
    fn newreno_asks_for_partial_ack_recovery_by_default() {
        assert_eq!(COMPONENT.default_for("recovery"), Some("newreno"));
    }

    #[test]
    fn leaving_recovery_with_little_in_flight_avoids_a_burst() {
        let mut w = Window {
            cwnd: 30 * MSS,
            ssthresh: 10 * MSS,
            mss: MSS,
        };
        NewReno.on_recovery_exit(&mut w, 2 * MSS);
        assert_eq!(w.cwnd, 3 * MSS);
        w.cwnd = 30 * MSS;
        NewReno.on_recovery_exit(&mut w, 20 * MSS);
        assert_eq!(w.cwnd, 10 * MSS);
    }
}
