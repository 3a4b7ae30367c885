//! Congestion control: how the window grows and how far it falls. Loss *detection* and recovery
//! (dupACK counting, NewReno partial ACKs, the RTO) stay in the sender; a scheme decides the numbers,
//! like Linux's `tcp_congestion_ops` (`cong_avoid`, `ssthresh`, `pkts_acked`, `cwnd_event`).
//!
//! Adding a scheme (Westwood+, Vegas, SpecTCP, SmoothTCP): one file here implementing
//! [`CongestionOps`], one variant in [`CongestionControl`] and [`CcKind`], one name in
//! [`CcKind::parse`]. The engine and the sender are untouched.

pub mod new_reno;

use crate::time::Nanos;

/// The window variables a scheme may change, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

/// What kind of congestion signal arrived (schemes that tell loss kinds apart need this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Three duplicate ACKs.
    FastRetransmit,
    /// The retransmission timer expired.
    Timeout,
    /// An ACK carried ECN-Echo (RFC 3168 §6.1.2).
    Ecn,
    /// A threshold queue's source-quench message.
    Quench,
}

pub trait CongestionOps {
    /// New data was acknowledged outside loss recovery: grow the window.
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Nanos);
    /// ssthresh after a congestion signal, given the flight size in bytes.
    fn ssthresh(&mut self, w: &Window, flight: u64, signal: Signal) -> u64;
    /// cwnd on leaving fast recovery on a full ACK.
    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64);
    /// cwnd after the retransmission timer expired (ssthresh already set).
    fn on_timeout(&mut self, w: &mut Window);
    /// Every accepted RTT sample (delay-based schemes: Vegas' BaseRTT, Westwood+'s RTT_min).
    fn on_rtt_sample(&mut self, _rtt: Nanos, _now: Nanos) {}
}

/// Which scheme a flow uses, as named in scenario files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcKind {
    NewReno,
}

impl CcKind {
    pub const NAMES: &'static [&'static str] = &["newreno"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "newreno" | "new_reno" | "reno" => Some(CcKind::NewReno),
            _ => None,
        }
    }

    pub fn build(self) -> CongestionControl {
        match self {
            CcKind::NewReno => CongestionControl::NewReno(new_reno::NewReno),
        }
    }
}

/// Enum dispatch: no virtual call per ACK.
#[derive(Debug, Clone)]
pub enum CongestionControl {
    NewReno(new_reno::NewReno),
}

impl CongestionOps for CongestionControl {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Nanos) {
        match self {
            CongestionControl::NewReno(c) => c.on_ack(w, acked, now),
        }
    }
    #[inline]
    fn ssthresh(&mut self, w: &Window, flight: u64, signal: Signal) -> u64 {
        match self {
            CongestionControl::NewReno(c) => c.ssthresh(w, flight, signal),
        }
    }
    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        match self {
            CongestionControl::NewReno(c) => c.on_recovery_exit(w, flight),
        }
    }
    fn on_timeout(&mut self, w: &mut Window) {
        match self {
            CongestionControl::NewReno(c) => c.on_timeout(w),
        }
    }
    #[inline]
    fn on_rtt_sample(&mut self, rtt: Nanos, now: Nanos) {
        match self {
            CongestionControl::NewReno(c) => c.on_rtt_sample(rtt, now),
        }
    }
}
