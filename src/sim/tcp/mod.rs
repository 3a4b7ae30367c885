//! TCP endpoints for the simulator: a sender built from three strategies — congestion control
//! ([`cc`], owns cwnd and ssthresh), loss recovery ([`recovery`]: Reno, NewReno, RFC 6675 SACK)
//! and the retransmission timer ([`crate::rtt::timer::RetransmitTimer`]: any estimator under any
//! RTO policy, Karn and back-off applied once) — and a cumulative-ACK receiver with optional
//! delayed ACKs, timestamps, SACK and ECN. docs/architecture.md describes the seams.
//!
//! Sans-IO: endpoints take `now`, return packets through an out-buffer and expose their timer
//! deadlines; the engine owns time.

pub mod cc;
pub mod receiver;
pub mod recovery;
pub mod scoreboard;
pub mod sender;

use crate::time::{Nanos, MS};

/// How the sender takes RTT samples without timestamps (ALGORITHMS.md §0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// One timed segment per RTT (classic BSD / ns-2): sample when the cumulative ACK covers it.
    Timed,
    /// Every ACK that advances snd_una, from the newest segment it covers if that segment was
    /// never retransmitted (Karn).
    EveryAck,
}

/// What ssthresh becomes when the retransmission timer expires during fast recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryTimeout {
    /// Keep the ssthresh the recovery set: one reduction per loss episode (Linux
    /// `tcp_enter_loss`). Default.
    Keep,
    /// RFC 5681 eq. (4) read literally: max(FlightSize/2, 2·SMSS), with the flight NewReno grew
    /// during recovery.
    HalveFlight,
}

/// Delayed ACKs (RFC 5681 §4.2; RFC 1122 §4.2.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayedAck {
    /// ACK at the latest this long after an unacknowledged in-order segment (200 ms BSD, 40 ms Linux).
    pub timeout: Nanos,
    /// ACK immediately once this many full segments are unacknowledged (RFC 5681: 2).
    pub segments: u32,
}

impl Default for DelayedAck {
    fn default() -> Self {
        Self { timeout: 200 * MS, segments: 2 }
    }
}

/// Everything one connection's two endpoints need to know.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size in payload bytes (1448 = 1500-byte MTU with timestamps).
    pub mss: u32,
    /// TCP/IP header bytes on every packet (52 = 20 IP + 20 TCP + 12 timestamp option); data
    /// packets are mss + header on the wire, pure ACKs header only.
    pub header: u32,
    /// Initial window in segments (RFC 6928: 10; RFC 5681 §3.1: 2–4).
    pub init_cwnd: u32,
    /// Initial ssthresh in bytes ("arbitrarily high", RFC 5681 §3.1).
    pub init_ssthresh: u64,
    /// Receiver window advertised on every ACK, in bytes.
    pub rwnd: u64,
    pub delayed_ack: Option<DelayedAck>,
    /// RFC 7323 timestamps: RTT sample from every ACK that advances snd_una (RTTM), no Karn
    /// ambiguity.
    pub timestamps: bool,
    pub sampling: Sampling,
    /// ECN-capable endpoints (RFC 3168 §6); negotiation assumed successful.
    pub ecn: bool,
    /// SACK (RFC 2018) at both ends, with RFC 6675 loss recovery at the sender; negotiation
    /// assumed successful.
    pub sack: bool,
    pub recovery_timeout: RecoveryTimeout,
    /// RTO estimator name and parameters, as for [`crate::rtt::build`].
    pub estimator: String,
    pub estimator_params: Vec<(String, String)>,
    /// RTO policy over the estimator and its parameters, as for [`crate::rtt::policy::build`].
    pub rto_policy: String,
    pub rto_policy_params: Vec<(String, String)>,
    pub cc: cc::CcSpec,
    /// Loss recovery; None: SACK recovery with SACK, else the congestion control's default.
    pub recovery: Option<recovery::RecoveryKind>,
}

impl TcpConfig {
    /// The recovery strategy the sender runs: the one named, else RFC 6675 when SACK is on, else
    /// the congestion control's default (Reno's for Reno, NewReno's for the others).
    pub fn recovery_kind(&self) -> recovery::RecoveryKind {
        self.recovery.unwrap_or_else(|| {
            if self.sack {
                recovery::RecoveryKind::Sack
            } else {
                self.cc.info().map_or(recovery::RecoveryKind::NewReno, |i| i.recovery)
            }
        })
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            mss: 1448,
            header: 52,
            init_cwnd: 10,
            init_ssthresh: u64::MAX / 4,
            rwnd: 64 << 20,
            delayed_ack: None,
            timestamps: false,
            sampling: Sampling::Timed,
            ecn: false,
            sack: false,
            recovery_timeout: RecoveryTimeout::Keep,
            estimator: "rfc6298".into(),
            estimator_params: Vec::new(),
            rto_policy: "none".into(),
            rto_policy_params: Vec::new(),
            cc: cc::CcSpec::default(),
            recovery: None,
        }
    }
}
