//! Congestion control: how the window grows and how far it falls. Loss *detection* and recovery
//! (dupACK counting, NewReno partial ACKs, the RTO) stay in the sender; a scheme decides the numbers
//! and names the recovery variant the sender runs for it ([`Recovery`]),
//! like Linux's `tcp_congestion_ops` (`cong_avoid`, `ssthresh`, `pkts_acked`, `cwnd_event`).
//!
//! Adding a scheme: one file here implementing [`CongestionOps`], one variant in
//! [`CongestionControl`] and [`CcKind`], one name in [`CcKind::parse`]. The engine and the sender
//! are untouched. What each planned scheme would use (ALGORITHMS.md §§8–11):
//! - Westwood+ (§9.4): count bytes per ACK in `on_ack_event` (a dupACK counts one MSS), RTT_min
//!   from `on_rtt_sample`, answer `ssthresh` with bw_est·RTT_min and set cwnd = ssthresh in
//!   `on_recovery_exit`.
//! - Vegas (§9.5): per-RTT Expected/Actual from `on_rtt_sample` (best with timestamps or
//!   every-ACK sampling), window change in `on_ack`.
//! - SpecTCP / loss discriminators (§8, §9.10): classify in `ssthresh` by [`Signal`] and the ECE
//!   and RTT history seen in `on_ack_event`; a loss judged non-congestive keeps ssthresh.
//! - SmoothTCP (§11): its response in `ssthresh` / `on_recovery_exit` / `on_timeout`.
//! - CA-RTO (§7) is an RTO policy, not a window rule: it plugs into `tcp.rto`, and the sender
//!   already passes cwnd, ssthresh and the pre-loss window in [`crate::rtt::Context`].

pub mod new_reno;
pub mod reno;
pub mod westwood;

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

/// Every ACK as it arrives, before the sender's loss recovery acts on it (Linux `in_ack_event`
/// + `pkts_acked`): what bandwidth estimators (Westwood+) and loss discriminators count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckEvent {
    pub now: Nanos,
    /// Bytes newly acknowledged (0 for a duplicate ACK).
    pub acked: u64,
    pub dupack: bool,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    pub in_recovery: bool,
}

pub trait CongestionOps {
    /// Every ACK, first (default: nothing).
    fn on_ack_event(&mut self, _w: &Window, _ev: &AckEvent) {}
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
    /// The loss-recovery variant the sender runs for this scheme (no default: each scheme says).
    fn recovery(&self) -> Recovery;
}

/// Which fast-recovery mechanics the sender runs (the sender implements both; the scheme picks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 §3.2: leave fast recovery on the first ACK of new data, partial or not; further
    /// losses of the window wait for three more dupACKs or the timer.
    Reno,
    /// RFC 6582 §3.2: stay in recovery until `recover` is acknowledged, resending on partial ACKs.
    NewReno,
}

/// Which scheme a flow uses, as named in scenario files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcKind {
    Reno,
    NewReno,
    Westwood,
}

impl CcKind {
    pub const NAMES: &'static [&'static str] = &["reno", "newreno", "westwood+"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "reno" => Some(CcKind::Reno),
            "newreno" | "new_reno" => Some(CcKind::NewReno),
            "westwood+" | "westwood" => Some(CcKind::Westwood),
            _ => None,
        }
    }

    pub fn build(self) -> CongestionControl {
        match self {
            CcKind::Reno => CongestionControl::Reno(reno::Reno),
            CcKind::NewReno => CongestionControl::NewReno(new_reno::NewReno),
            CcKind::Westwood => CongestionControl::Westwood(Box::default()),
        }
    }
}

/// Enum dispatch: no virtual call per ACK.
#[derive(Debug, Clone)]
pub enum CongestionControl {
    Reno(reno::Reno),
    NewReno(new_reno::NewReno),
    /// Boxed so NewReno flows do not carry Westwood+'s estimator state.
    Westwood(Box<westwood::Westwood>),
}

impl CongestionOps for CongestionControl {
    #[inline]
    fn on_ack_event(&mut self, w: &Window, ev: &AckEvent) {
        match self {
            CongestionControl::Reno(c) => c.on_ack_event(w, ev),
            CongestionControl::NewReno(c) => c.on_ack_event(w, ev),
            CongestionControl::Westwood(c) => c.on_ack_event(w, ev),
        }
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Nanos) {
        match self {
            CongestionControl::Reno(c) => c.on_ack(w, acked, now),
            CongestionControl::NewReno(c) => c.on_ack(w, acked, now),
            CongestionControl::Westwood(c) => c.on_ack(w, acked, now),
        }
    }
    #[inline]
    fn ssthresh(&mut self, w: &Window, flight: u64, signal: Signal) -> u64 {
        match self {
            CongestionControl::Reno(c) => c.ssthresh(w, flight, signal),
            CongestionControl::NewReno(c) => c.ssthresh(w, flight, signal),
            CongestionControl::Westwood(c) => c.ssthresh(w, flight, signal),
        }
    }
    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        match self {
            CongestionControl::Reno(c) => c.on_recovery_exit(w, flight),
            CongestionControl::NewReno(c) => c.on_recovery_exit(w, flight),
            CongestionControl::Westwood(c) => c.on_recovery_exit(w, flight),
        }
    }
    fn on_timeout(&mut self, w: &mut Window) {
        match self {
            CongestionControl::Reno(c) => c.on_timeout(w),
            CongestionControl::NewReno(c) => c.on_timeout(w),
            CongestionControl::Westwood(c) => c.on_timeout(w),
        }
    }
    fn recovery(&self) -> Recovery {
        match self {
            CongestionControl::Reno(c) => c.recovery(),
            CongestionControl::NewReno(c) => c.recovery(),
            CongestionControl::Westwood(c) => c.recovery(),
        }
    }
    #[inline]
    fn on_rtt_sample(&mut self, rtt: Nanos, now: Nanos) {
        match self {
            CongestionControl::Reno(c) => c.on_rtt_sample(rtt, now),
            CongestionControl::NewReno(c) => c.on_rtt_sample(rtt, now),
            CongestionControl::Westwood(c) => c.on_rtt_sample(rtt, now),
        }
    }
}
