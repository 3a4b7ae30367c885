//! Scenario files: a struct tree deserialised from TOML (`deny_unknown_fields`), quantities in the
//! units users write (`10Mbps`, `20ms`, `1500B`, `100p`), `--set key.path=value` overrides applied
//! to the TOML table before deserialising, and errors that name the key.

pub use super::canonical::CanonicalForm;
use super::spelled::{named_table, param_text, AckTimer, ErrorDirection, SampleClock, Spelled};
use super::tcp::cc::CcSpec;
use super::tcp::recovery::RecoveryKind;
use super::tcp::{RecoveryTimeout, Sampling, SourceQuench, SpuriousDetection, SpuriousResponse};
use super::units::{Bandwidth, ByteSize, Duration};
use crate::rtt::policy::Policy;
use crate::rtt::Estimator;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConfigError {
    #[error("scenario is not valid TOML: {0}")]
    Syntax(String),
    #[error("{key}: {reason}")]
    Invalid { key: String, reason: String },
    #[error("--set {assignment}: {reason}")]
    BadOverride { assignment: String, reason: String },
    #[error("cannot read scenario {path}: {reason}")]
    Io { path: String, reason: String },
}

/// toml's error renders the offending line with a caret over several lines; users get one:
/// `line L, column C: message`.
fn syntax_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let message = e.message().lines().next().unwrap_or("").trim();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            ConfigError::Syntax(format!(
                "line {line}, column {column}: {}",
                name_duplicate(message, text, span)
            ))
        }
        None => ConfigError::Syntax(message.to_string()),
    }
}

/// toml says "duplicate key" without naming it: the key as written (its span) and the table it
/// was written in (the nearest `[header]` line above it), e.g. "duplicate key `seed` in [simulation]".
fn name_duplicate(message: &str, text: &str, span: std::ops::Range<usize>) -> String {
    let key = text.get(span.clone()).map(str::trim).unwrap_or("");
    if !message.starts_with("duplicate key") || key.is_empty() || key.contains('\n') {
        return message.to_string();
    }
    let before = &text[..span.start.min(text.len())];
    // Skip the key's own line: a repeated `[header]` is itself the duplicate.
    let table = before
        .lines()
        .rev()
        .skip(1)
        .map(str::trim)
        .find(|l| l.starts_with('['));
    let header = table.map(|t| t.split('#').next().unwrap_or(t).trim());
    match header {
        Some(h) if !before.ends_with('[') && !before.ends_with("[[") => {
            format!("duplicate key `{key}` in {h}")
        }
        _ => format!("duplicate key `{key}`"),
    }
}

pub(crate) fn invalid(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        reason: reason.into(),
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub simulation: SimulationCfg,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub tcp: TcpCfg,
    pub flows: Vec<FlowGroupCfg>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationCfg {
    #[serde(default)]
    pub name: Option<String>,
    /// Simulated time to run.
    pub duration: Duration,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Measurements (goodput, utilisation) count from here on. Default 0.
    #[serde(default = "zero")]
    pub warmup: Duration,
    /// Period of queue-length samples on monitored queues (the bottleneck); "0s" turns them off.
    #[serde(default = "ten_ms")]
    pub queue_sample_interval: Duration,
}

fn default_seed() -> u64 {
    1
}
fn zero() -> Duration {
    Duration(0)
}
fn ten_ms() -> Duration {
    Duration(10_000_000)
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    /// "dumbbell" (default) or "graph".
    #[serde(default)]
    pub kind: TopologyKind,
    /// Dumbbell: the shared link between the two routers.
    #[serde(default)]
    pub bottleneck: Option<LinkCfg>,
    /// Dumbbell: access links of senders and receivers (both sides alike unless
    /// `receiver_access` is given).
    #[serde(default)]
    pub access: Option<LinkCfg>,
    #[serde(default)]
    pub receiver_access: Option<LinkCfg>,
    /// Graph: number of nodes, numbered from 0.
    #[serde(default)]
    pub nodes: Option<u32>,
    /// Graph: duplex links between nodes `a` and `b` ("forward" is a→b). Packets follow the
    /// fewest hops; ties go to the link listed first.
    #[serde(default)]
    pub links: Vec<LinkCfg>,
}

/// One delay spike ([`LinkCfg::delay_spikes`]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DelaySpikeCfg {
    pub at: Duration,
    pub duration: Duration,
}

/// A random delay-spike process ([`LinkCfg::random_spikes`]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSpikesCfg {
    /// Mean gap from one spike's end to the next one's start (exponential).
    pub every: Duration,
    /// Shortest and longest spike: each lasts a duration uniform in [min, max].
    pub min: Duration,
    pub max: Duration,
}

/// Link-layer retransmission, 802.11 DCF style ([`LinkCfg::arq`]); the defaults are
/// 802.11b/g's (DSSS/ERP long slot 20 µs, CWmin 31, CWmax 1023, short retry limit 7).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArqCfg {
    /// Probability that one attempt fails (independently per attempt), in [0, 1).
    pub per: f64,
    /// Retransmissions before the frame is dropped (802.11's dot11ShortRetryLimit 7).
    #[serde(default = "arq_retries")]
    pub retries: u32,
    #[serde(default = "arq_slot")]
    pub slot: Duration,
    #[serde(default = "arq_cw_min")]
    pub cw_min: u32,
    #[serde(default = "arq_cw_max")]
    pub cw_max: u32,
}

fn arq_retries() -> u32 {
    7
}

fn arq_slot() -> Duration {
    Duration(20_000)
}

fn arq_cw_min() -> u32 {
    31
}

fn arq_cw_max() -> u32 {
    1023
}

/// `topology.kind`, read into this type (a word not listed: "'star' is not dumbbell or graph").
/// Written back as the word, so the canonical form is the text it always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyKind {
    /// Senders and receivers on access links around one bottleneck (docs/scenarios.md).
    #[default]
    Dumbbell,
    /// Numbered nodes and the links listed between them.
    Graph,
}

/// `[[flows]] stack`: which TCP sends a group's flows on the testbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// Linux's, in the sending host's namespace (the default).
    #[default]
    Kernel,
    /// rttlab's own sender on real packets, at the host's emulator port.
    Rttlab,
}

impl Stack {
    /// The word the scenario and the flows table's `stack` column write.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kernel => "kernel",
            Self::Rttlab => "rttlab",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub bandwidth: Bandwidth,
    pub delay: Duration,
    /// Tagged table: `{ kind = "droptail" | "red" | "threshold", limit, ... }` (default DropTail
    /// 100p); every key but `kind` is a parameter of that queue ([`super::queue::FAMILY`]).
    #[serde(default)]
    pub queue: toml::Table,
    /// Tagged table: `{ kind = "none" | "bernoulli" | "ber" | "gilbert-elliott", ... }`
    /// ([`super::error_model::FAMILY`]); default none.
    #[serde(default)]
    pub error: toml::Table,
    /// Which direction the error model and scheduled losses apply to: "forward" (data),
    /// "reverse" (ACKs) or "both". Default "forward".
    #[serde(default = "forward")]
    pub error_direction: Spelled<ErrorDirection>,
    /// Times at which a data packet is lost on the forward channel.
    #[serde(default)]
    pub losses: Vec<Duration>,
    /// Delay spikes on the forward channel, `[{ at = "5s", duration = "1s" }]`: a packet whose
    /// serialisation ends within [at, at + duration) is held until the spike ends, then
    /// propagates as usual — the link stalls without losing anything (the spurious-timeout
    /// scenario of RFC 3522 §1 and RFC 5682 §1). Left out of the canonical form when empty, so
    /// existing scenarios keep their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delay_spikes: Vec<DelaySpikeCfg>,
    /// Delay spikes at random times on the forward channel, `{ every = "20s", min = "100ms",
    /// max = "1s" }`: exponential gaps of mean `every` between spikes, durations uniform in
    /// [min, max], drawn from the channel's own stream of the scenario's seed; each acts as a
    /// listed delay spike. Left out of the canonical form when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_spikes: Option<RandomSpikesCfg>,
    /// Link-layer retransmission on both channels of the link (an 802.11 hop: data and ACK
    /// frames both cross the air), `{ per = 0.2 }`: random per-frame service times and a
    /// residual loss (docs/scenarios.md). Left out of the canonical form when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arq: Option<ArqCfg>,
    /// Outages on the forward channel, `[{ at = "2s", duration = "600ms" }]`: every data packet
    /// whose serialisation ends within [at, at + duration) is lost (a link that goes down while
    /// the sender keeps transmitting: the retransmission timeout no fast recovery can avoid).
    /// Left out of the canonical form when empty, so existing scenarios keep their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<DelaySpikeCfg>,
    /// Tagged table `{ kind = "snoop", ... }`: a node agent at the link's sending end of the
    /// forward (data) direction ([`super::agent::FAMILY`]). Absent: none, and absent from the
    /// canonical form, so existing scenarios keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<toml::Table>,
    /// Graph links only: the end nodes.
    #[serde(default)]
    pub a: Option<u32>,
    #[serde(default)]
    pub b: Option<u32>,
    /// Graph links only: sample this link's queues into the trace and report its forward
    /// direction as the bottleneck (the first monitored link). The dumbbell monitors its bottleneck.
    #[serde(default)]
    pub monitor: Option<bool>,
}

fn forward() -> Spelled<ErrorDirection> {
    Spelled::new(ErrorDirection::Forward, "forward")
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    /// `"vegas"` or `{ name = "vegas", alpha = 2, beta = 4 }`: the congestion control and its
    /// parameters, checked against the scheme's declared parameters as the scenario is read.
    #[serde(default = "newreno")]
    pub cc: Spelled<CcSpec>,
    /// Loss recovery: "reno", "newreno" or "sack" (RFC 6675, needs `sack = true`); default: "sack"
    /// with SACK, else the congestion control's own.
    #[serde(default)]
    pub recovery: Option<Spelled<RecoveryKind>>,
    #[serde(default = "mss_default")]
    pub mss: ByteSize,
    #[serde(default = "header_default")]
    pub header: ByteSize,
    #[serde(default = "ten")]
    pub init_cwnd: u32,
    pub init_ssthresh: Option<ByteSize>,
    #[serde(default = "rwnd_default")]
    pub rwnd: ByteSize,
    /// "off" (default) or the delayed-ACK timer, e.g. "200ms" (BSD) or "40ms" (Linux).
    #[serde(default = "off")]
    pub delayed_ack: Spelled<AckTimer>,
    /// ACK at once when this many segments are unacknowledged (default 2, RFC 5681 §4.2).
    #[serde(default = "two")]
    pub delayed_ack_segments: u32,
    #[serde(default)]
    pub timestamps: bool,
    #[serde(default)]
    pub ecn: bool,
    /// Whether the receiver accepts ECN at connection set-up (RFC 3168 §6.1.1); default true.
    /// With false the negotiation fails and neither end uses ECN, whatever `ecn` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_ecn: Option<bool>,
    /// SACK (RFC 2018) with RFC 6675 loss recovery.
    #[serde(default)]
    pub sack: bool,
    /// ssthresh when the timer expires during fast recovery: "keep" (default, Linux) or
    /// "halve-flight" (RFC 5681 eq. 4 read literally).
    #[serde(default)]
    pub recovery_timeout: RecoveryTimeout,
    /// "timed" (one segment per RTT, default) or "every-ack"; ignored with timestamps.
    #[serde(default)]
    pub rtt_sampling: Sampling,
    #[serde(default)]
    pub rto: RtoCfg,
    /// Spurious-timeout detection: absent/"off", "frto" (RFC 5682 §2), "frto-sack" (§3, needs
    /// sack), or "eifel" (RFC 3522 + RFC 4015, needs
    /// timestamps). Absent (or "off"): not used, and left out of the canonical form (version 2
    /// writes a group's "off" when its `[tcp]` names a detector, [`super::canonical`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spurious_detection: Option<Spelled<SpuriousDetection>>,
    /// The response to a timeout found spurious: absent/"linux" (Linux's undo: cwnd and
    /// ssthresh back to at least their values before the timeout) or "rfc4015" (the Eifel
    /// response: cwnd = FlightSize + min(bytes_acked, IW), ssthresh = pipe_prev, RTO adaptation).
    /// The canonical form (version 2) writes the default when absent; version 1 left it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spurious_response: Option<Spelled<SpuriousResponse>>,
    /// What the sender does with a router's source quench: "react" (default: the congestion
    /// control hears it) or "ignore" (counted, not acted on — TCPs since RFC 6633, and ns-2's
    /// TCP agents, which have no ICMP). The canonical form (version 2) writes the default when
    /// absent; version 1 left it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_quench: Option<SourceQuench>,
    /// The clock the RTT estimator's samples are read with: absent/"0s" exact; e.g. "4ms" counts
    /// each sample in whole ticks as Linux ≤ 3.14 did in jiffies (Nunes et al. 2011's 2.6.28 at HZ 250).
    /// Absent from the canonical form unless given (version 2: unless given other than exact, or
    /// in a group whose `[tcp]` counts in ticks, [`super::canonical`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_clock: Option<Spelled<SampleClock>>,
    /// Cap on the pacing rate, e.g. "5Mbps" of payload (Linux `SO_MAX_PACING_RATE`, fq's
    /// `maxrate`): bounds a pacing scheme's rate (BBR), and alone paces any scheme at it. Absent
    /// (default): only schemes that ask are paced. Absent from the canonical form unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pacing_rate: Option<Bandwidth>,
}

fn newreno() -> Spelled<CcSpec> {
    Spelled::new(CcSpec::default(), "newreno")
}
fn mss_default() -> ByteSize {
    ByteSize(1448)
}
fn header_default() -> ByteSize {
    ByteSize(52)
}
fn ten() -> u32 {
    10
}
fn two() -> u32 {
    2
}
fn rwnd_default() -> ByteSize {
    ByteSize(64 << 20)
}
fn off() -> Spelled<AckTimer> {
    Spelled::new(AckTimer(None), "off")
}

impl Default for TcpCfg {
    fn default() -> Self {
        Self {
            cc: newreno(),
            recovery: None,
            mss: mss_default(),
            header: header_default(),
            init_cwnd: 10,
            init_ssthresh: None,
            rwnd: rwnd_default(),
            delayed_ack: off(),
            delayed_ack_segments: 2,
            timestamps: false,
            ecn: false,
            receiver_ecn: None,
            sack: false,
            rtt_sampling: Sampling::default(),
            recovery_timeout: RecoveryTimeout::default(),
            rto: RtoCfg::default(),
            spurious_detection: None,
            spurious_response: None,
            source_quench: None,
            sample_clock: None,
            max_pacing_rate: None,
        }
    }
}

/// `rto = { estimator = "rfc6298", min_rto = "200ms" }`: every key but `estimator` and `policy` is
/// a parameter of that estimator. Read into the estimator it builds (its parameters checked, errors
/// naming `tcp.rto`) and the RTO policy (`tcp.rto.policy`); each flow's timer starts from copies of
/// these. The canonical form (version 2) writes the estimator and policy by their registered
/// names with their declared parameters filled in ([`super::canonical`]); version 1 wrote the keys
/// as given.
#[derive(Debug, Clone, Serialize)]
pub struct RtoCfg {
    pub estimator: String,
    /// RTO policy over the estimator: "none" (default) or `{ name = "ca-rto", scale = "100ms" }`.
    pub policy: Option<Spelled<Policy>>,
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
    /// The estimator the keys above build, fresh (no sample yet).
    #[serde(skip)]
    pub built: Estimator,
}

fn rfc6298() -> String {
    "rfc6298".into()
}

impl Default for RtoCfg {
    fn default() -> Self {
        let built =
            crate::rtt::build(&rfc6298(), &[]).expect("rfc6298 builds from its declared defaults");
        Self {
            estimator: rfc6298(),
            policy: None,
            params: BTreeMap::new(),
            built,
        }
    }
}

impl RtoCfg {
    /// Parameters as `key=value` strings, the form `rtt::build` takes.
    pub fn param_pairs(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .map(|(k, v)| (k.clone(), param_text(v)))
            .collect()
    }

    /// The RTO policy's name as written ("none" if not given), for the flow's label.
    pub fn policy_name(&self) -> String {
        self.policy
            .as_ref()
            .and_then(|p| named_table(p.spelling()).ok())
            .map_or_else(|| "none".into(), |(name, _)| name)
    }

    /// The RTO policy, fresh (`Policy::None` if not given).
    pub fn policy(&self) -> Policy {
        self.policy
            .as_ref()
            .map_or(Policy::None, |p| p.value.clone())
    }
}

/// Key by key, so an error in `policy` or `estimator` names that key; the estimator is built once
/// every key is read (its parameters are the table's other keys), an error naming `tcp.rto`.
impl<'de> Deserialize<'de> for RtoCfg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = RtoCfg;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table such as { estimator = \"rfc6298\", min_rto = \"200ms\" }")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RtoCfg, A::Error> {
                let (mut estimator, mut policy, mut params) = (None, None, BTreeMap::new());
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "estimator" => estimator = Some(map.next_value::<String>()?),
                        "policy" => policy = Some(map.next_value::<Spelled<Policy>>()?),
                        _ => {
                            params.insert(key, map.next_value::<toml::Value>()?);
                        }
                    }
                }
                let estimator = estimator.unwrap_or_else(rfc6298);
                let pairs: Vec<(String, String)> = params
                    .iter()
                    .map(|(k, v)| (k.clone(), param_text(v)))
                    .collect();
                let built =
                    crate::rtt::build(&estimator, &pairs).map_err(serde::de::Error::custom)?;
                Ok(RtoCfg {
                    estimator,
                    policy,
                    params,
                    built,
                })
            }
        }
        d.deserialize_map(Keys)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroupCfg {
    /// Number of identical flows in this group (default 1).
    #[serde(default = "one")]
    pub count: u32,
    /// Start of the group's first flow: a time, or `"uniform(a, b)"` for a draw per flow.
    #[serde(default)]
    pub start: Start,
    /// Flow i of the group starts at start + i·start_step.
    #[serde(default = "zero")]
    pub start_step: Duration,
    /// Each flow's start is delayed further by a uniform draw from [0, start_jitter), from the
    /// flow's own random stream (seeded by simulation.seed).
    #[serde(default = "zero")]
    pub start_jitter: Duration,
    /// Bytes to transfer; absent or "inf" for an unlimited bulk transfer.
    #[serde(default)]
    pub bytes: Option<AppBytes>,
    /// The application, a tagged table: bulk (default) or an on/off source
    /// ([`super::app::FAMILY`]).
    #[serde(default)]
    pub app: Option<toml::Table>,
    /// Per-group TCP settings; keys not given here come from the top-level [tcp].
    #[serde(default)]
    pub tcp: Option<TcpCfg>,
    /// When every flow of the group stops: from then on its application offers no new data, as
    /// ns-2's `$ftp stop` (`advance 0` then `close`: the send limit drops to the highest sequence
    /// already sent). Data already sent is still delivered — acknowledged, or retransmitted until
    /// it is — then the connection idles; the flow counts as completed when that last byte
    /// reaches the receiving application. Must be later than the group's last possible start.
    /// Absent: the flow runs to the end of the simulation, and the key is left out of the
    /// canonical form, so existing scenarios keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Which TCP sends the group's flows on the testbed (`rttlab testbed`): `"kernel"` (Linux's,
    /// the default) or `"rttlab"` (the simulator's own sender on real packets, docs/testbed.md).
    /// The simulator always runs rttlab's sender. Absent: the default, written by the canonical
    /// form's version 2 (version 1 left it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<Stack>,
    /// Graph topologies: the sending and receiving nodes (every flow of the group alike).
    #[serde(default)]
    pub src: Option<u32>,
    #[serde(default)]
    pub dst: Option<u32>,
}

fn one() -> u32 {
    1
}

/// A flow's start: fixed (`"1s"`, `from == to`) or uniform over [from, to) (`"uniform(0s, 1s)"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Start {
    pub from: crate::time::Nanos,
    pub to: crate::time::Nanos,
}

impl Start {
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        if let Some(args) = t.strip_prefix("uniform(").and_then(|r| r.strip_suffix(')')) {
            let (a, b) = args.split_once(',')?;
            let (from, to) = (
                crate::time::parse_duration(a)?,
                crate::time::parse_duration(b)?,
            );
            return (from <= to).then_some(Start { from, to });
        }
        crate::time::parse_duration(t).map(|at| Start { from: at, to: at })
    }
}

impl<'de> Deserialize<'de> for Start {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Float(f64),
            Text(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Int(n) => n.to_string(),
            Raw::Float(x) => x.to_string(),
            Raw::Text(t) => t,
        };
        Start::parse(&text).ok_or_else(|| serde::de::Error::custom(format!("cannot read '{text}' as a start time such as \"1s\" or \"uniform(0s, 1s)\" (from ≤ to)")))
    }
}

/// The canonical spelling: `"1s"` for a fixed start, `"uniform(0ns, 1s)"` for a draw, in the
/// largest unit that is exact (what [`Start::parse`] reads back to the same value).
impl Serialize for Start {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use super::units::exact_duration;
        if self.from == self.to {
            s.serialize_str(&exact_duration(self.from))
        } else {
            s.serialize_str(&format!(
                "uniform({}, {})",
                exact_duration(self.from),
                exact_duration(self.to)
            ))
        }
    }
}

/// "inf" or a byte size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppBytes(pub Option<u64>);

impl<'de> Deserialize<'de> for AppBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(AppBytes(Some(n))),
            Raw::Text(t) if matches!(t.trim(), "inf" | "infinite" | "unlimited") => {
                Ok(AppBytes(None))
            }
            Raw::Text(t) => super::units::parse_bytes(&t)
                .map(|n| AppBytes(Some(n)))
                .ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "cannot read '{t}' as a byte count such as \"1MB\" or \"inf\""
                    ))
                }),
        }
    }
}

impl Serialize for AppBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => s.serialize_str(&format!("{n}B")),
            None => s.serialize_str("inf"),
        }
    }
}

/// Apply one `key.path=value` override to the raw TOML table. The value is read as TOML
/// (`20`, `true`, `"x"`, `[1, 2]`) and, failing that, taken as a bare string (`20Mbps`).
/// Numeric path segments index arrays (`flows.0.count=5`).
pub fn apply_override(root: &mut toml::Table, assignment: &str) -> Result<(), ConfigError> {
    let bad = |reason: String| ConfigError::BadOverride {
        assignment: assignment.into(),
        reason,
    };
    let (path, raw) = assignment
        .split_once('=')
        .ok_or_else(|| bad("expected key.path=value".into()))?;
    let keys: Vec<&str> = path.trim().split('.').collect();
    if keys.iter().any(|k| k.is_empty()) {
        return Err(bad("empty key in path".into()));
    }
    let value = match format!("v = {}", raw.trim()).parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.trim().into())),
        Err(_) => toml::Value::String(raw.trim().into()),
    };
    let mut holder = toml::Value::Table(std::mem::take(root));
    let result = set_path(&mut holder, &keys, value).map_err(bad);
    if let toml::Value::Table(t) = holder {
        *root = t;
    }
    result
}

fn set_path(root: &mut toml::Value, keys: &[&str], value: toml::Value) -> Result<(), String> {
    let mut node = root;
    for (depth, key) in keys.iter().enumerate() {
        let walked = keys[..=depth].join(".");
        let last = depth + 1 == keys.len();
        node = match node {
            toml::Value::Table(t) if last => {
                t.insert(key.to_string(), value);
                return Ok(());
            }
            toml::Value::Table(t) => t
                .entry(key.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new())),
            toml::Value::Array(a) => {
                let i: usize = key
                    .parse()
                    .map_err(|_| format!("{walked} indexes a list: use a number"))?;
                let len = a.len();
                let slot = a
                    .get_mut(i)
                    .ok_or_else(|| format!("{walked}: index {i} out of range (list has {len})"))?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => return Err(format!("{} is not a table", keys[..depth].join("."))),
        };
    }
    Ok(())
}

/// An invalid value an override put there is the override's fault, not the file's: the error
/// names the `--set` argument (`--set tcp.init_cwnd=abc: expected a whole number ≥ 0, got "abc"`).
/// The key is matched after `[N]` indices are written as `.N` (as overrides write them) and, for
/// a `tcp` key, also without the flow group it was merged into (`flows.0.tcp.mss` ← `tcp.mss`).
fn blame_override(e: ConfigError, overrides: &[String]) -> ConfigError {
    let ConfigError::Invalid { key, reason } = &e else {
        return e;
    };
    let dotted = key.replace('[', ".").replace(']', "");
    let mut keys = vec![dotted.clone()];
    if let Some(rest) = dotted
        .strip_prefix("flows.")
        .and_then(|r| r.split_once('.'))
        .map(|(_, r)| r)
        .filter(|r| r.starts_with("tcp.") || *r == "tcp")
    {
        keys.push(rest.to_string());
    }
    let hit = overrides.iter().rev().find(|o| {
        let path = o.split_once('=').map_or(o.as_str(), |(p, _)| p).trim();
        keys.iter().any(|k| {
            k == path || k.starts_with(&format!("{path}.")) || path.starts_with(&format!("{k}."))
        })
    });
    match hit {
        Some(o) => {
            let path = o.split_once('=').map_or(o.as_str(), |(p, _)| p).trim();
            let reason = if keys.iter().any(|k| k == path) {
                reason.clone()
            } else {
                format!("{dotted}: {reason}")
            };
            ConfigError::BadOverride {
                assignment: o.trim().to_string(),
                reason,
            }
        }
        None => e,
    }
}

/// serde's message in the scenario's words: "invalid type: string \"abc\", expected u32" →
/// "expected a whole number ≥ 0, got \"abc\"" (no Rust type names reach the user).
fn plain_reason(message: &str) -> String {
    // A choice read into an enum: "unknown variant `x`, expected `a` or `b`" → "'x' is not a or b".
    if let Some((got, expected)) = message
        .strip_prefix("unknown variant `")
        .and_then(|r| r.split_once("`, expected "))
    {
        return format!("'{got}' is not {}", expected.replace('`', ""));
    }
    let Some(rest) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
    else {
        return message.to_string();
    };
    let Some((got, expected)) = rest.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let got = match got.split_once(' ') {
        Some(("string", v)) => v.to_string(),
        Some(("integer" | "floating" | "boolean" | "character", v)) => {
            v.trim_start_matches("point ").trim_matches('`').to_string()
        }
        Some(("unit", _)) | None if got == "unit value" => "nothing".to_string(),
        _ => got.to_string(),
    };
    let expected = match expected {
        "u8" => "a whole number from 0 to 255".to_string(),
        "u16" => "a whole number from 0 to 65535".to_string(),
        "u32" | "u64" | "usize" => "a whole number ≥ 0".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a string" => "text in quotes".to_string(),
        other => other.to_string(),
    };
    format!("expected {expected}, got {got}")
}

/// Whether the estimator of `rto` (a group's table) builds with its own keys but not with `key`
/// added as [tcp] gives it.
fn refuses(rto: &toml::Table, key: &str, value: &toml::Value) -> bool {
    if key == "estimator" || key == "policy" {
        return false;
    }
    let estimator = rto
        .get("estimator")
        .and_then(|e| e.as_str())
        .unwrap_or("rfc6298");
    let pairs = |t: &toml::Table| {
        t.iter()
            .filter(|(k, _)| *k != "estimator" && *k != "policy")
            .map(|(k, v)| (k.clone(), param_text(v)))
            .collect::<Vec<_>>()
    };
    let mut with = rto.clone();
    with.insert(key.to_string(), value.clone());
    crate::rtt::build(estimator, &pairs(rto)).is_ok()
        && crate::rtt::build(estimator, &pairs(&with)).is_err()
}

/// Merge the top-level [tcp] table into each flow group's `tcp` table (group keys win), so a
/// group only lists what differs. Inner tables merge key by key too — except an `rto` table that
/// names another estimator than [tcp]'s (absent: `rfc6298`), or a `cc` table that names another
/// scheme: it replaces [tcp]'s whole (an `rto` table its policy included), because one
/// component's parameters (`min_rto`, `hz`, `alpha`…) mean nothing to another.
///
/// A [tcp] `rto` parameter the group's estimator refuses beside the group's own keys is not
/// inherited (regression's `k` in a group with `form = "paper"`): inheriting it could only make
/// the group an error, and the canonical form (version 2, which writes [tcp]'s parameters out)
/// must read back.
fn merge_group_tcp(root: &mut toml::Table) {
    let Some(toml::Value::Table(base)) = root.get("tcp").cloned() else {
        return;
    };
    let estimator = |t: &toml::Table| {
        t.get("rto")
            .and_then(|r| r.get("estimator"))
            .and_then(|e| e.as_str())
            .map(str::to_string)
    };
    let base_estimator = if base.get("rto").is_some_and(|r| r.is_table()) {
        estimator(&base).unwrap_or_else(rfc6298)
    } else {
        rfc6298()
    };
    // By registered name: an alias names the same scheme, whose parameters still merge.
    let scheme = |t: &toml::Table| {
        t.get("cc")
            .and_then(|c| c.get("name"))
            .and_then(|n| n.as_str())
            .map(|n| {
                super::tcp::cc::FAMILY
                    .find(n)
                    .map_or(n, |c| c.name)
                    .to_string()
            })
    };
    let base_scheme = scheme(&base);
    if let Some(toml::Value::Array(groups)) = root.get_mut("flows") {
        for g in groups {
            if let Some(toml::Value::Table(own)) = g.get_mut("tcp").filter(|v| v.is_table()) {
                let switches = estimator(own).is_some_and(|e| e != base_estimator);
                let switches_cc = scheme(own).is_some_and(|c| Some(&c) != base_scheme.as_ref());
                for (k, v) in &base {
                    if !own.contains_key(k) {
                        own.insert(k.clone(), v.clone());
                    } else if (k == "rto" && switches) || (k == "cc" && switches_cc) {
                        continue;
                    } else if let (
                        Some(toml::Value::Table(inner)),
                        toml::Value::Table(base_inner),
                    ) = (own.get_mut(k), v)
                    {
                        for (ik, iv) in base_inner {
                            let own_wins =
                                inner.contains_key(ik) || (k == "rto" && refuses(inner, ik, iv));
                            if !own_wins {
                                inner.insert(ik.clone(), iv.clone());
                            }
                        }
                    }
                }
            }
        }
    }
}

impl Scenario {
    /// Parse a scenario from TOML text, applying `key.path=value` overrides first.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<Self, ConfigError> {
        let mut table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| syntax_error(text, &e))?;
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        Self::from_table(table).map_err(|e| blame_override(e, overrides))
    }

    /// The scenario with every default filled in, as TOML: the canonical form a run's content
    /// hash is computed from, in its current version ([`CanonicalForm::CURRENT`]). Quantities are
    /// spelled exactly (`"20ms"`, `"10Mbps"`, `"1448B"`), so parsing this text gives the same
    /// scenario, and two files meaning the same run give the same text.
    pub fn to_canonical_toml(&self) -> Result<String, ConfigError> {
        self.to_canonical_toml_as(CanonicalForm::CURRENT)
    }

    /// The canonical form in version `form`: version 1 is what stores written before version 2
    /// are keyed by, byte for byte; version 2 rewrites its `[tcp]` choices ([`super::canonical`]).
    pub fn to_canonical_toml_as(&self, form: CanonicalForm) -> Result<String, ConfigError> {
        use super::{app, component::canonical, error_model, queue};
        let mut s = self.clone();
        let links = s
            .topology
            .bottleneck
            .iter_mut()
            .chain(s.topology.access.iter_mut())
            .chain(s.topology.receiver_access.iter_mut())
            .chain(s.topology.links.iter_mut());
        for link in links {
            link.queue = canonical(&queue::FAMILY, queue::DEFAULT_KIND, &link.queue);
            link.error = canonical(&error_model::FAMILY, error_model::DEFAULT_KIND, &link.error);
            if let Some(t) = &link.agent {
                link.agent = Some(canonical(&super::agent::FAMILY, "snoop", t));
            }
        }
        for group in &mut s.flows {
            if let Some(t) = &group.app {
                group.app = Some(canonical(&app::FAMILY, app::DEFAULT_KIND, t));
            }
        }
        if form == CanonicalForm::V2 {
            super::canonical::respell(&mut s);
        }
        toml::to_string(&s)
            .map_err(|e| invalid("scenario", format!("cannot be written as TOML: {e}")))
    }

    pub fn from_file(path: &std::path::Path, overrides: &[String]) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::from_toml(&text, overrides)
    }

    pub fn from_table(mut table: toml::Table) -> Result<Self, ConfigError> {
        merge_group_tcp(&mut table);
        let scenario: Scenario = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| {
                let key = e.path().to_string();
                // toml repeats the key on a second line ("in `a.b`"); the path already says it.
                let message = e.inner().to_string();
                let first = plain_reason(message.lines().next().unwrap_or("").trim());
                invalid(
                    if key == "." {
                        "scenario".to_string()
                    } else {
                        key
                    },
                    first,
                )
            })?;
        Ok(scenario)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_duplicate_key_is_named_with_its_table_and_line() {
        let err = Scenario::from_toml("[simulation]\nseed = 1\nduration = \"1s\"\nseed = 2\n", &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "scenario is not valid TOML: line 4, column 1: duplicate key `seed` in [simulation]"
        );
        let err = Scenario::from_toml("[simulation]\nseed = 1\n[simulation]\nseed = 2\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("scenario is not valid TOML: line 3, column "),
            "{err}"
        );
        assert!(err.contains("`simulation`"), "{err}");
    }

    #[test]
    fn toml_syntax_errors_are_one_line_with_line_and_column() {
        let err = Scenario::from_toml("[simulation]\nduration = \"1s\"\nroot:x:0\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("scenario is not valid TOML: line 3, column "),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }

    #[test]
    fn a_group_switching_estimator_takes_its_own_rto_table_not_the_other_estimators_parameters() {
        let text = r#"
            [simulation]
            duration = "1s"
            [topology.bottleneck]
            bandwidth = "10Mbps"
            delay = "10ms"
            [topology.access]
            bandwidth = "100Mbps"
            delay = "1ms"
            [tcp]
            rto = { estimator = "rfc6298", min_rto = "200ms", granularity = "10ms", policy = "ca-rto" }
            [[flows]]
            tcp = { rto = { estimator = "linux", hz = 250 } }
            [[flows]]
            tcp = { rto = { policy = "none" } }
            [[flows]]
            tcp = { rto = { estimator = "rfc6298" } }
        "#;
        let s = Scenario::from_toml(text, &[]).unwrap();
        let rto = |g: usize| s.flows[g].tcp.as_ref().unwrap().rto.clone();
        // Switching estimator: only what the group wrote, no rfc6298 parameters, no policy.
        assert_eq!(rto(0).estimator, "linux");
        assert_eq!(rto(0).params.keys().collect::<Vec<_>>(), vec!["hz"]);
        assert!(rto(0).policy.is_none());
        // The same estimator (named or not): [tcp]'s parameters and policy carry over.
        for g in [1, 2] {
            assert_eq!(
                rto(g).params.keys().collect::<Vec<_>>(),
                vec!["granularity", "min_rto"],
                "group {g}"
            );
        }
        assert_eq!(
            rto(1).policy.map(|p| p.spelling().clone()),
            Some(toml::Value::String("none".into()))
        );
        assert_eq!(
            rto(2).policy.map(|p| p.spelling().clone()),
            Some(toml::Value::String("ca-rto".into()))
        );
        // And it builds: linux would refuse rfc6298's min_rto/granularity.
        crate::sim::build(&s).unwrap_or_else(|e| panic!("{e}"));
    }

    /// The smallest valid scenario: a dumbbell with two bulk flows (other modules' tests build on it).
    pub(crate) const MINIMAL: &str = r#"
        [simulation]
        duration = "1s"
        [topology.bottleneck]
        bandwidth = "10Mbps"
        delay = "20ms"
        [topology.access]
        bandwidth = "100Mbps"
        delay = "1ms"
        [[flows]]
        count = 2
    "#;

    #[test]
    fn a_minimal_scenario_fills_in_the_defaults() {
        let s = Scenario::from_toml(MINIMAL, &[]).unwrap();
        assert_eq!(s.simulation.seed, 1);
        assert_eq!(
            s.topology.bottleneck.as_ref().unwrap().bandwidth.0,
            10_000_000
        );
        assert_eq!(s.topology.access.as_ref().unwrap().delay.0, 1_000_000);
        assert_eq!(s.tcp.mss.0, 1448);
        assert_eq!(s.flows[0].count, 2);
        assert_eq!(s.flows[0].bytes, None);
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_path() {
        let text = MINIMAL.replace("delay = \"20ms\"", "delay = \"20ms\"\nbandwith = \"1Mbps\"");
        let err = Scenario::from_toml(&text, &[]).unwrap_err().to_string();
        assert!(err.starts_with("topology.bottleneck"), "{err}");
        assert!(err.contains("bandwith"), "{err}");
    }

    #[test]
    fn malformed_units_name_the_key() {
        let err = Scenario::from_toml(&MINIMAL.replace("\"10Mbps\"", "\"10 furlongs\""), &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("topology.bottleneck.bandwidth: "), "{err}");
        assert!(err.contains("10 furlongs"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }

    #[test]
    fn overrides_change_nested_keys_and_list_entries_before_parsing() {
        let s = Scenario::from_toml(
            MINIMAL,
            &[
                "topology.bottleneck.bandwidth=20Mbps".into(),
                "flows.0.count=5".into(),
                "simulation.seed=9".into(),
                "tcp.ecn=true".into(),
            ],
        )
        .unwrap();
        assert_eq!(s.topology.bottleneck.unwrap().bandwidth.0, 20_000_000);
        assert_eq!(s.flows[0].count, 5);
        assert_eq!(s.simulation.seed, 9);
        assert!(s.tcp.ecn);
    }

    #[test]
    fn bad_overrides_explain_themselves() {
        for (o, needle) in [
            ("no-equals", "key.path=value"),
            ("flows.x.count=1", "use a number"),
            ("flows.7.count=1", "out of range"),
        ] {
            let err = Scenario::from_toml(MINIMAL, &[o.into()])
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{o}: {err}");
        }
    }

    #[test]
    fn an_invalid_override_value_is_blamed_on_the_set_argument_in_the_scenarios_words() {
        for (o, want) in [
            (
                "tcp.init_cwnd=abc",
                "--set tcp.init_cwnd=abc: expected a whole number ≥ 0, got \"abc\"",
            ),
            (
                "tcp.init_cwnd=-1",
                "--set tcp.init_cwnd=-1: expected a whole number ≥ 0, got -1",
            ),
            (
                "tcp.ecn=maybe",
                "--set tcp.ecn=maybe: expected true or false, got \"maybe\"",
            ),
            (
                "simulation.duration=3 parsecs",
                "--set simulation.duration=3 parsecs: expected a duration such as",
            ),
            (
                "flows.0.count=x",
                "--set flows.0.count=x: expected a whole number",
            ),
        ] {
            let err = Scenario::from_toml(MINIMAL, &[o.into()])
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(want), "{o}: {err}");
            assert!(!err.contains("u32") && !err.contains("u64"), "{o}: {err}");
        }
    }

    #[test]
    fn an_hour_long_run_can_be_asked_for_with_set() {
        let s = Scenario::from_toml(MINIMAL, &["simulation.duration=1h".into()]).unwrap();
        assert_eq!(s.simulation.duration.0, 3600 * crate::time::SEC);
    }

    #[test]
    fn an_invalid_value_in_the_file_itself_is_not_blamed_on_an_override() {
        let text = MINIMAL.replace("[simulation]", "[simulation]\nseed = \"x\"");
        let err = Scenario::from_toml(&text, &["tcp.ecn=true".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("simulation.seed: expected a whole number ≥ 0, got \"x\""),
            "{err}"
        );
    }

    #[test]
    fn flow_groups_inherit_the_top_level_tcp_settings() {
        let text =
            format!("{MINIMAL}\n[tcp]\nmss = \"1000B\"\necn = true\n[flows.tcp]\necn = false\n");
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let g = s.flows[0].tcp.as_ref().unwrap();
        assert_eq!(g.mss.0, 1000, "inherited");
        assert!(!g.ecn, "overridden");
    }

    #[test]
    fn the_canonical_form_fills_defaults_and_reads_back_to_itself() {
        let text = format!("{MINIMAL}\n[[flows]]\nstart = \"uniform(0s, 1.5s)\"\nbytes = \"1MB\"\n[tcp.rto]\nmin_rto = \"200ms\"\n");
        let canon = Scenario::from_toml(&text, &[])
            .unwrap()
            .to_canonical_toml()
            .unwrap();
        for needle in [
            "seed = 1",
            "mss = \"1448B\"",
            "bandwidth = \"10Mbps\"",
            "limit = \"100p\"",
            "start = \"uniform(0ns, 1500ms)\"",
            "bytes = \"1000000B\"",
            "estimator = \"rfc6298\"",
            "min_rto = \"200ms\"",
        ] {
            assert!(canon.contains(needle), "{needle} missing from\n{canon}");
        }
        let again = Scenario::from_toml(&canon, &[])
            .unwrap()
            .to_canonical_toml()
            .unwrap();
        assert_eq!(canon, again);
    }

    #[test]
    fn tcp_choices_are_read_into_their_types_and_the_canonical_form_writes_one_name() {
        let s = Scenario::from_toml(
            MINIMAL,
            &[
                "tcp.rtt_sampling=every_ack".into(),
                "tcp.recovery_timeout=halve-flight".into(),
                "tcp.source_quench=ignore".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            (
                s.tcp.rtt_sampling,
                s.tcp.recovery_timeout,
                s.tcp.source_quench
            ),
            (
                Sampling::EveryAck,
                RecoveryTimeout::HalveFlight,
                Some(SourceQuench::Ignore)
            )
        );
        let canon = s.to_canonical_toml().unwrap();
        for needle in [
            "rtt_sampling = \"every-ack\"",
            "recovery_timeout = \"halve-flight\"",
            "source_quench = \"ignore\"",
        ] {
            assert!(canon.contains(needle), "{needle} missing from\n{canon}");
        }
        let defaults = Scenario::from_toml(MINIMAL, &[])
            .unwrap()
            .to_canonical_toml()
            .unwrap();
        assert!(
            defaults.contains("rtt_sampling = \"timed\"")
                && defaults.contains("recovery_timeout = \"keep\""),
            "{defaults}"
        );
        assert!(
            defaults.contains("source_quench = \"react\""),
            "version 2 writes a default when absent: {defaults}"
        );
        let v1 = Scenario::from_toml(MINIMAL, &[])
            .unwrap()
            .to_canonical_toml_as(CanonicalForm::V1)
            .unwrap();
        assert!(
            !v1.contains("source_quench"),
            "version 1 left it absent unless given: {v1}"
        );
    }

    #[test]
    fn a_choice_that_is_not_one_names_its_key_and_the_accepted_words() {
        let err = Scenario::from_toml(MINIMAL, &["tcp.rtt_sampling=sometimes".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tcp.rtt_sampling")
                && err.contains("'sometimes' is not one of timed, every-ack"),
            "{err}"
        );
        let err = Scenario::from_toml(MINIMAL, &["tcp.source_quench=obey".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tcp.source_quench") && err.contains("'obey' is not react or ignore"),
            "{err}"
        );
    }

    #[test]
    fn a_topology_kind_or_stack_that_is_not_one_names_its_key_and_the_accepted_words() {
        let err = Scenario::from_toml(MINIMAL, &["topology.kind=star".into()])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--set topology.kind=star: 'star' is not dumbbell or graph"
        );
        let err = Scenario::from_toml(
            &MINIMAL.replace("[[flows]]", "[topology]\nkind = \"ring\"\n[[flows]]"),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(err, "topology.kind: 'ring' is not dumbbell or graph");
        let err = Scenario::from_toml(&format!("{MINIMAL}\nstack = \"bsd\"\n"), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(err, "flows[0].stack: 'bsd' is not kernel or rttlab");
        let err = Scenario::from_toml(&format!("{MINIMAL}\nstack = 1\n"), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("flows[0].stack: ") && !err.contains("Stack"),
            "no Rust type name: {err}"
        );
    }

    #[test]
    fn every_topology_kind_and_stack_reads_into_its_type_and_is_written_back_as_spelled() {
        for (word, kind) in [
            ("dumbbell", TopologyKind::Dumbbell),
            ("graph", TopologyKind::Graph),
        ] {
            let v: toml::Table = format!("kind = \"{word}\"").parse().unwrap();
            let t: TopologyCfg = v.try_into().unwrap();
            assert_eq!(t.kind, kind);
            assert_eq!(
                toml::to_string(&t).unwrap().lines().next(),
                Some(format!("kind = \"{word}\"").as_str())
            );
        }
        let defaults = Scenario::from_toml(MINIMAL, &[]).unwrap();
        assert_eq!(
            (defaults.topology.kind, defaults.flows[0].stack),
            (TopologyKind::Dumbbell, None)
        );
        let canon = defaults.to_canonical_toml().unwrap();
        assert!(
            canon.contains("kind = \"dumbbell\"") && canon.contains("stack = \"kernel\""),
            "the default kind and stack are written: {canon}"
        );
        let v1 = defaults.to_canonical_toml_as(CanonicalForm::V1).unwrap();
        assert!(
            !v1.contains("stack"),
            "version 1 left an absent stack out: {v1}"
        );
        for (word, stack) in [("kernel", Stack::Kernel), ("rttlab", Stack::Rttlab)] {
            let s = Scenario::from_toml(&format!("{MINIMAL}\nstack = \"{word}\"\n"), &[]).unwrap();
            assert_eq!((s.flows[0].stack, stack.name()), (Some(stack), word));
            let canon = s.to_canonical_toml().unwrap();
            assert!(canon.contains(&format!("stack = \"{word}\"")), "{canon}");
            assert_eq!(
                Scenario::from_toml(&canon, &[])
                    .unwrap()
                    .to_canonical_toml()
                    .unwrap(),
                canon
            );
        }
    }

    #[test]
    fn rto_parameters_are_passed_through_as_text() {
        let text =
            format!("{MINIMAL}\n[tcp.rto]\nestimator = \"rfc6298\"\nmin_rto = \"200ms\"\nk = 4\n");
        let s = Scenario::from_toml(&text, &[]).unwrap();
        assert_eq!(
            s.tcp.rto.param_pairs(),
            vec![
                ("k".to_string(), "4".to_string()),
                ("min_rto".to_string(), "200ms".to_string())
            ]
        );
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[&str] = &[
        "simulation.duration",
        "simulation.seed",
        "simulation.warmup",
        "topology.kind",
        "topology.bottleneck.bandwidth",
        "topology.bottleneck.delay",
        "topology.bottleneck.queue.kind",
        "topology.bottleneck.queue.limit",
        "topology.bottleneck.queue.min_th",
        "topology.bottleneck.queue.max_p",
        "topology.bottleneck.error.kind",
        "topology.bottleneck.error.per",
        "topology.bottleneck.losses",
        "tcp.mss",
        "tcp.init_cwnd",
        "tcp.delayed_ack",
        "tcp.rto.estimator",
        "tcp.rto.min_rto",
        "flows.0.count",
        "flows.0.bytes",
        "flows.0.start_jitter",
        "flows.0.app.kind",
        "flows.0.app.off",
        "flows.0.app.rate",
        "flows.1.count",
        "nonsense.deep.key",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| v.to_string()),
            "[a-zA-Z0-9 .\"\\[\\]{}=,-]{0,12}",
            Just("\"red\"".to_string()),
            Just("\"1e400\"".to_string()),
            Just("[\"1s\", \"x\"]".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Whatever a user types after --set, parsing and building answer with a result, never
        /// a panic (the run itself is not started: a valid scenario may legitimately be long).
        #[test]
        fn overrides_never_panic_the_parser_or_the_builder(k in 0..KEYS.len(), v in value(), k2 in 0..KEYS.len(), v2 in value()) {
            let base = include_str!("../../examples/scenarios/dumbbell-n10-red-ecn.toml");
            let overrides = vec![format!("{}={v}", KEYS[k]), format!("{}={v2}", KEYS[k2])];
            if let Ok(s) = Scenario::from_toml(base, &overrides) {
                let _ = crate::sim::build(&s);
            }
        }

        #[test]
        fn arbitrary_text_never_panics_the_parser(text in "\\PC{0,200}") {
            let _ = Scenario::from_toml(&text, &[]);
        }
    }
}
