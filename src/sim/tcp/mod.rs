//! TCP endpoints for the simulator: a sender built from three strategies — congestion control
//! ([`cc`], owns cwnd and ssthresh), loss recovery ([`recovery`]: Reno, NewReno, RFC 6675 SACK)
//! and the retransmission timer ([`crate::rtt::timer::RetransmitTimer`]: any estimator under any
//! RTO policy, Karn and back-off applied once) — and a cumulative-ACK receiver with optional
//! delayed ACKs, timestamps, SACK and ECN. docs/architecture.md describes the seams.
//!
//! Sans-IO: endpoints take `now`, return packets through an out-buffer and expose their timer
//! deadlines; the engine owns time.

pub mod cc;
pub mod detect;
pub mod eifel;
pub mod eifel_response;
pub mod frto;
pub mod meter;
pub mod pacing;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod scoreboard;
pub mod sender;

use crate::sim::component::{Component, Declaration, Family};
use crate::time::{Nanos, MS};
use serde::{Deserialize, Serialize};

/// How the sender takes RTT samples without timestamps (docs/algorithms.md §0);
/// `tcp.rtt_sampling = "timed" | "every-ack"`, read straight into this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sampling {
    /// One timed segment per RTT (classic BSD / ns-2): sample when the cumulative ACK covers it.
    #[default]
    Timed,
    /// Every ACK that advances snd_una, from the newest segment it covers if that segment was
    /// never retransmitted (Karn).
    #[serde(alias = "every_ack")]
    EveryAck,
}

/// What ssthresh becomes when the retransmission timer expires during fast recovery;
/// `tcp.recovery_timeout = "keep" | "halve-flight"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryTimeout {
    /// Keep the ssthresh the recovery set: one reduction per loss episode (Linux
    /// `tcp_enter_loss`). Default.
    #[default]
    Keep,
    /// RFC 5681 eq. (4) read literally: max(FlightSize/2, 2·SMSS), with the flight NewReno grew
    /// during recovery.
    HalveFlight,
}

/// What the sender does with a router's source quench; `tcp.source_quench = "react" | "ignore"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceQuench {
    /// The congestion control hears it. Default.
    #[default]
    React,
    /// Counted, not acted on (TCPs since RFC 6633; ns-2's TCP agents, which have no ICMP).
    Ignore,
}

/// Spurious-timeout detection and response (off by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpuriousDetection {
    #[default]
    Off,
    /// Eifel detection (RFC 3522, timestamps) with the Eifel response (RFC 4015), [`eifel`].
    Eifel,
    /// F-RTO (RFC 5682 §2, or the SACK-enhanced §3), [`frto`], with the same response.
    Frto(frto::Variant),
}

impl SpuriousDetection {
    /// The name `tcp.spurious_detection` gives it ("off" is not a detector: the default).
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Eifel => eifel::COMPONENT.name,
            Self::Frto(frto::Variant::Basic) => frto::COMPONENT.name,
            Self::Frto(frto::Variant::Sack) => frto::SACK_COMPONENT.name,
        }
    }

    /// The detection registered as `name` (or "off").
    pub fn named(name: &str) -> Option<Self> {
        [
            Self::Off,
            Self::Eifel,
            Self::Frto(frto::Variant::Basic),
            Self::Frto(frto::Variant::Sack),
        ]
        .into_iter()
        .find(|d| d.name() == name)
    }
}

/// What the sender does once a detector finds a timeout spurious.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpuriousResponse {
    /// Linux's undo (`tcp_undo_cwnd_reduction`): go forward, neither cwnd nor ssthresh below its
    /// value before the timeout (the congestion control's `on_undo`), no RTO adaptation. Default.
    #[default]
    Linux,
    /// The Eifel response in full (RFC 4015), [`eifel_response`].
    Rfc4015,
    /// Linux 2.6.28's default F-RTO response (a stock kernel of that era) (`tcp_frto_response` = 0,
    /// `tcp_ratehalving_spur_to_response`: `tcp_enter_cwr(sk, 0)` in net/ipv4/tcp_input.c): go
    /// forward, keep the ssthresh the timeout set, and bring cwnd to it ("halved cwnd and
    /// ssthresh after one RTT", Documentation/networking/ip-sysctl.txt). Ours reaches that state
    /// at once (cwnd = max(cwnd, ssthresh)) instead of by rate halving over the next RTT.
    RateHalving,
}

impl SpuriousResponse {
    /// The name `tcp.spurious_response` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linux => LINUX_RESPONSE.name,
            Self::Rfc4015 => eifel_response::COMPONENT.name,
            Self::RateHalving => RATE_HALVING_RESPONSE.name,
        }
    }

    /// The response registered as `name`.
    pub fn named(name: &str) -> Option<Self> {
        [Self::Linux, Self::Rfc4015, Self::RateHalving]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// What the connection negotiated, for strategies that need a TCP option (RFC 6675 recovery and
/// SACK-enhanced F-RTO need SACK, Eifel detection needs timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpOptions {
    pub sack: bool,
    pub timestamps: bool,
}

/// The values of `tcp.spurious_detection` besides "off" (the default, not a detector).
pub static SPURIOUS_DETECTION: Family<SpuriousDetection, TcpOptions> = Family {
    key: "spurious-detection",
    noun: "spurious-timeout detection",
    members: &[eifel::COMPONENT, frto::COMPONENT, frto::SACK_COMPONENT],
};

/// The values of `tcp.spurious_response`; the first is the default.
pub static SPURIOUS_RESPONSE: Family<SpuriousResponse, TcpOptions> = Family {
    key: "spurious-response",
    noun: "spurious-timeout response",
    members: &[
        LINUX_RESPONSE,
        eifel_response::COMPONENT,
        RATE_HALVING_RESPONSE,
    ],
};

const RATE_HALVING_RESPONSE: Component<SpuriousResponse, TcpOptions> = Component {
    decl: Declaration {
        name: "rate-halving",
        aliases: &[],
        summary: "Linux 2.6.2x's default F-RTO response (tcp_frto_response = 0): go forward, keep the timeout's ssthresh, cwnd = max(cwnd, ssthresh) (rate halving's end state, at once)",
        source: "Linux 2.6.28 net/ipv4/tcp_input.c tcp_ratehalving_spur_to_response; Documentation/networking/ip-sysctl.txt tcp_frto_response",
        params: &[],
        defaults: &[],
    },
    build: |_| Ok(SpuriousResponse::RateHalving),
};

const LINUX_RESPONSE: Component<SpuriousResponse, TcpOptions> = Component {
    decl: Declaration {
        name: "linux",
        aliases: &[],
        summary: "default: go forward, cwnd and ssthresh back to at least their values before the timeout, RTO untouched",
        source: "Linux tcp_undo_cwnd_reduction",
        params: &[],
        defaults: &[],
    },
    build: |_| Ok(SpuriousResponse::Linux),
};

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
        Self {
            timeout: 200 * MS,
            segments: 2,
        }
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
    /// The sender asks for ECN (RFC 3168 §6.1.1).
    pub ecn: bool,
    /// The receiver agrees to ECN at set-up (SYN-ACK with ECE); ECN is used only if both do.
    pub receiver_ecn: bool,
    /// SACK (RFC 2018) at both ends, with RFC 6675 loss recovery at the sender; negotiation
    /// assumed successful.
    pub sack: bool,
    pub recovery_timeout: RecoveryTimeout,
    /// The RTO estimator's and policy's names as the scenario wrote them (the flow's label); the
    /// timer itself is built from the scenario's typed `tcp.rto` (`config::RtoCfg`).
    pub estimator: String,
    pub rto_policy: String,
    pub cc: cc::CcSpec,
    /// Loss recovery; None: SACK recovery with SACK, else the congestion control's default.
    pub recovery: Option<recovery::RecoveryKind>,
    pub spurious_detection: SpuriousDetection,
    pub spurious_response: SpuriousResponse,
    /// Source quench is counted ([`sender::SenderStats::quench_ignored`]) but not acted on.
    pub ignore_quench: bool,
    /// Tick of the clock the estimator's RTT samples are read with (0: exact).
    pub sample_clock: Nanos,
    /// Cap on any pacing rate, bytes of payload per second (`tcp.max_pacing_rate`); alone it
    /// paces a scheme that asks for none ([`pacing`]).
    pub max_pacing_rate: Option<u64>,
}

impl TcpConfig {
    /// The recovery strategy the sender runs: the one named, else RFC 6675 when SACK is on, else
    /// the congestion control's default (Reno's for Reno, NewReno's for the others).
    pub fn recovery_kind(&self) -> recovery::RecoveryKind {
        self.recovery
            .unwrap_or_else(|| default_recovery(self.sack, &self.cc))
    }
}

/// The recovery strategy a connection runs when the scenario names none: RFC 6675 when SACK is
/// on, else the congestion control's default (Reno's for Reno, NewReno's for the others). The
/// canonical form (version 2) writes this value for an absent `tcp.recovery`.
pub fn default_recovery(sack: bool, cc: &cc::CcSpec) -> recovery::RecoveryKind {
    if sack {
        recovery::RecoveryKind::Sack
    } else {
        cc.component()
            .ok()
            .and_then(|c| c.default_for("recovery"))
            .and_then(recovery::RecoveryKind::named)
            .unwrap_or(recovery::RecoveryKind::NewReno)
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
            receiver_ecn: true,
            sack: false,
            recovery_timeout: RecoveryTimeout::Keep,
            estimator: "rfc6298".into(),
            rto_policy: "none".into(),
            cc: cc::CcSpec::default(),
            recovery: None,
            spurious_detection: SpuriousDetection::Off,
            spurious_response: SpuriousResponse::Linux,
            ignore_quench: false,
            sample_clock: 0,
            max_pacing_rate: None,
        }
    }
}

/// Scenario keys reaching the sender's three strategies.
#[cfg(test)]
mod wiring_tests {
    use crate::sim::{build, config::Scenario, run};

    fn scenario(sets: &[&str]) -> Result<Scenario, String> {
        let path = format!(
            "{}/examples/scenarios/dumbbell-n1-droptail.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut all = vec!["simulation.duration=\"5s\"".to_string()];
        all.extend(sets.iter().map(|s| s.to_string()));
        Scenario::from_file(path.as_ref(), &all).map_err(|e| e.to_string())
    }

    fn error(sets: &[&str]) -> String {
        match scenario(sets) {
            Err(e) => e,
            Ok(s) => build(&s).err().expect("rejected").to_string(),
        }
    }

    #[test]
    fn recovery_names_and_their_prerequisites_are_checked_with_the_key() {
        assert!(error(&["tcp.recovery=\"sack\""])
            .starts_with("tcp.recovery: \"sack\" recovery needs sack = true"));
        // An unknown name is refused as the scenario is read, blamed on the --set that wrote it.
        assert!(error(&["tcp.recovery=\"fack\""])
            .starts_with("--set tcp.recovery=\"fack\": 'fack' is not one of reno, newreno, sack"));
        let e =
            build(&scenario(&["tcp.cc=\"reno\"", "tcp.recovery=\"newreno\""]).unwrap()).unwrap();
        assert_eq!(
            e.flows[0].sender.recovery().kind(),
            super::recovery::RecoveryKind::NewReno
        );
    }

    #[test]
    fn an_rto_policy_over_linux_reaches_the_timer_and_bad_ones_are_named() {
        let e = build(
            &scenario(&[
                "tcp.rto.estimator=\"linux\"",
                "tcp.rto.policy={ name = \"ca-rto\", scale = \"50ms\" }",
            ])
            .unwrap(),
        )
        .unwrap();
        assert_eq!(e.flows[0].sender.timer().policy().name(), "ca-rto");
        assert!(error(&["tcp.rto.policy=\"karn\""])
            .starts_with("--set tcp.rto.policy=\"karn\": unknown RTO policy 'karn'"));
        assert!(
            error(&["tcp.rto.policy={ name = \"ca-rto\", scale = \"1h\" }"]).starts_with(
                "--set tcp.rto.policy={ name = \"ca-rto\", scale = \"1h\" }: ca-rto.scale:"
            )
        );
        assert!(
            error(&["tcp.rto.estimator=\"linux\"", "tcp.rto.min_rto=\"1s\""]).starts_with(
                "--set tcp.rto.min_rto=\"1s\": tcp.rto: linux: unknown parameter 'min_rto'"
            )
        );
    }

    #[test]
    fn a_cc_table_without_a_name_is_an_error_naming_tcp_cc() {
        assert!(error(&["tcp.cc={ alpha = 2 }"])
            .starts_with("--set tcp.cc={ alpha = 2 }: a table needs name"));
        let text = std::fs::read_to_string(format!(
            "{}/examples/scenarios/dumbbell-n1-droptail.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let err = Scenario::from_toml(&text.replace("cc = \"newreno\"", "cc = { alpha = 2 }"), &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("tcp.cc: a table needs name"), "{err}");
        assert!(run(&scenario(&["tcp.cc={ name = \"veno\", beta = 2 }"]).unwrap()).is_ok());
    }
}
