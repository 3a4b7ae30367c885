//! The Eifel response algorithm (RFC 4015) to a spurious timeout, for any detector (Eifel
//! RFC 3522, F-RTO RFC 5682): `tcp.spurious_response = "rfc4015"`. docs/algorithms.md §9.8.
//!
//! RFC 4015 §3.1, cited by what each step does (the RFC text was read in excerpts only, so the
//! step numbers are not quoted):
//! - before the timeout changes cwnd and ssthresh, save pipe_prev ← max(FlightSize, ssthresh),
//!   SRTT_prev ← SRTT + 2·G and RTTVAR_prev ← RTTVAR ([`Saved::at_timeout`]);
//! - on SpuriousRecovery = SPUR_TO, resume with unsent data: SND.NXT ← SND.MAX (the sender's
//!   recovery strategy, [`super::recovery::LossRecovery::on_undo`]);
//! - reverse the congestion control state unless the acceptable ACK carries ECN-Echo:
//!   cwnd ← FlightSize + min(bytes_acked, IW), ssthresh ← pipe_prev ([`Saved::restore`]);
//! - adapt the retransmission timer: on the first RTT sample m for data sent after the timeout,
//!   SRTT ← max(SRTT_prev, m), RTTVAR ← max(RTTVAR_prev, m/2), RTO ← SRTT + max(G, 4·RTTVAR)
//!   ([`adapted`]; DragonFly BSD's `tcp_xmit_timer` waits for an ACK above the SND.MAX of the
//!   timeout, as here).
//!
//! The alternative `tcp.spurious_response = "linux"` (the default, kept so earlier results stand)
//! is Linux's `tcp_undo_cwnd_reduction`: neither cwnd nor ssthresh below its value before the
//! timeout, through the congestion control's [`super::cc::CongestionOps::on_undo`], and no RTO
//! adaptation. Choices: the RFC 4015 reversal sets cwnd and ssthresh directly (the congestion
//! control is not consulted: its own state, e.g. Westwood's bandwidth estimate, stays as the
//! timeout left it); the RTO adaptation needs an estimator with RFC 6298's SRTT/RTTVAR pair
//! (rfc6298); with any other estimator it is skipped and counted in `SenderStats::rto_not_adapted`.

use super::cc::Window;
use super::{SpuriousResponse, TcpOptions};
use crate::rtt::Smoothed;
use crate::sim::component::{Component, Declaration};
use crate::time::Nanos;

/// `tcp.spurious_response = "rfc4015"`.
pub const COMPONENT: Component<SpuriousResponse, TcpOptions> = Component {
    decl: Declaration {
        name: "rfc4015",
        aliases: &[],
        summary: "Eifel response: go forward, cwnd = FlightSize + min(bytes_acked, IW), ssthresh = pipe_prev, RTO re-initialised from max(SRTT_prev, m)",
        source: "RFC 4015 §3.1; src/sim/tcp/eifel_response.rs",
        params: &[],
        defaults: &[],
    },
    build: |_| Ok(SpuriousResponse::Rfc4015),
};

/// What the first timeout of an episode saves for the response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Saved {
    /// max(FlightSize, ssthresh) before the timeout, bytes.
    pub pipe_prev: u64,
    /// (SRTT + 2·G, RTTVAR) before the timeout, ns; None without an SRTT/RTTVAR estimator.
    pub smoothed_prev: Option<(f64, f64)>,
    /// SND.MAX at the timeout: the adaptation waits for a sample of data sent after it.
    pub snd_max_prev: u64,
}

impl Saved {
    /// Saved before the timeout changes cwnd and ssthresh (`flight` = FlightSize then).
    pub fn at_timeout(flight: u64, w: &Window, smoothed: Option<Smoothed>, snd_max: u64) -> Self {
        Self {
            pipe_prev: flight.max(w.ssthresh),
            smoothed_prev: smoothed.map(|s| (s.srtt + 2.0 * s.granularity, s.rttvar)),
            snd_max_prev: snd_max,
        }
    }

    /// Reverse the congestion control state on the acceptable ACK that showed the timeout
    /// spurious: `flight` is FlightSize after it, `bytes_acked` what it acknowledged, `iw` the
    /// initial window. Nothing changes if the ACK carries ECN-Echo (the network signalled
    /// congestion meanwhile); returns whether the state was reversed.
    pub fn restore(
        &self,
        w: &mut Window,
        flight: u64,
        bytes_acked: u64,
        iw: u64,
        ece: bool,
    ) -> bool {
        if ece {
            return false;
        }
        w.cwnd = (flight + bytes_acked.min(iw)).max(w.mss);
        w.ssthresh = self.pipe_prev;
        true
    }
}

/// The RTO adaptation: the (SRTT, RTTVAR) to continue with after the first sample `m` of data
/// sent after a spurious timeout, from the saved (SRTT_prev, RTTVAR_prev).
pub fn adapted(prev: (f64, f64), m: Nanos) -> (f64, f64) {
    let m = m as f64;
    (prev.0.max(m), prev.1.max(m / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const MSS: u64 = 1000;

    #[test]
    fn the_saved_pipe_is_the_larger_of_flight_and_ssthresh_and_srtt_gets_two_ticks() {
        let w = Window {
            cwnd: 20 * MSS,
            ssthresh: 8 * MSS,
            mss: MSS,
        };
        let s = Saved::at_timeout(
            15 * MSS,
            &w,
            Some(Smoothed {
                srtt: 100e6,
                rttvar: 20e6,
                granularity: 1e6,
            }),
            40 * MSS,
        );
        assert_eq!(s.pipe_prev, 15 * MSS);
        assert_eq!(s.smoothed_prev, Some((102e6, 20e6)));
        let s = Saved::at_timeout(5 * MSS, &w, None, 40 * MSS);
        assert_eq!((s.pipe_prev, s.smoothed_prev), (8 * MSS, None));
    }

    #[test]
    fn the_window_comes_back_as_flight_plus_what_the_ack_acknowledged_up_to_one_initial_window() {
        let s = Saved {
            pipe_prev: 15 * MSS,
            smoothed_prev: None,
            snd_max_prev: 0,
        };
        let mut w = Window {
            cwnd: MSS,
            ssthresh: 7 * MSS,
            mss: MSS,
        };
        assert!(s.restore(&mut w, 12 * MSS, 3 * MSS, 10 * MSS, false));
        assert_eq!((w.cwnd, w.ssthresh), (15 * MSS, 15 * MSS));
        // A stretch ACK of 14 segments adds at most IW: no burst beyond it.
        let mut w = Window {
            cwnd: MSS,
            ssthresh: 7 * MSS,
            mss: MSS,
        };
        s.restore(&mut w, 2 * MSS, 14 * MSS, 10 * MSS, false);
        assert_eq!(w.cwnd, 12 * MSS);
    }

    #[test]
    fn an_ack_with_ecn_echo_keeps_the_timeouts_reduction() {
        let s = Saved {
            pipe_prev: 15 * MSS,
            smoothed_prev: None,
            snd_max_prev: 0,
        };
        let mut w = Window {
            cwnd: MSS,
            ssthresh: 7 * MSS,
            mss: MSS,
        };
        assert!(!s.restore(&mut w, 12 * MSS, 3 * MSS, 10 * MSS, true));
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 7 * MSS));
    }

    #[test]
    fn the_rto_adapts_to_a_sample_above_the_saved_srtt_and_keeps_it_otherwise() {
        // A 600 ms sample after a spike on a 100 ms path: SRTT 600, RTTVAR 300 (→ RTO 1.8 s).
        assert_eq!(adapted((102e6, 20e6), 600 * MS), (600e6, 300e6));
        // A sample back at the path's RTT: the saved state stands.
        assert_eq!(adapted((102e6, 20e6), 90 * MS), (102e6, 45e6));
    }
}
