//! Closed-loop packet-level simulator: the estimator's RTO changes what happens next.
//!
//! A scenario ([`config::Scenario`], from TOML) is built into a [`topology::Network`] of
//! [`link::Channel`]s with [`queue`]s and error models, plus TCP [`tcp`] flows; the
//! [`engine::Engine`] runs it and [`run`] returns a [`SimResult`] with per-flow and per-channel
//! summaries and columnar [`trace`]s. Deterministic: same scenario + seed → identical results.

pub mod agent;
pub mod app;
pub mod canonical;
pub mod component;
pub mod config;
pub mod deadline;
pub mod engine;
pub mod error_model;
mod event_heap;
pub mod link;
pub mod packet;
pub mod queue;
pub mod spelled;
pub mod spurious;
pub mod tables;
pub mod tcp;
pub mod topology;
pub mod trace;
pub mod units;

#[cfg(test)]
mod detector_tests;
#[cfg(test)]
mod rto_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod variation_tests;

use crate::rng::{Component, Stream};
use crate::time::Nanos;
use app::OnOff;
use config::{invalid, ConfigError, LinkCfg, Scenario, TcpCfg, TopologyKind};
use engine::{Engine, Flow, Progress};
use error_model::ErrorModel;
use link::ChannelSpec;
use queue::{DropCause, QueueCtx};
use tcp::{
    receiver::Receiver, sender::Sender, DelayedAck, SpuriousDetection, SpuriousResponse, TcpConfig,
    TcpOptions,
};
use topology::{dumbbell, LinkSpec, Network};
use trace::TraceSet;
use trace::{jain_index, Trace};

/// Version of the result layout ([`SimResult`] and its Python/JSON forms).
pub const RESULT_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowSummary {
    pub flow: u32,
    /// The flow group, congestion control, loss recovery, RTT estimator and RTO policy it ran.
    pub label: engine::FlowLabel,
    pub src: u32,
    pub dst: u32,
    pub start: Nanos,
    /// When the last byte of a finite transfer (or of a stopped flow, the last byte sent before
    /// its stop) reached the application.
    pub completed_at: Option<Nanos>,
    /// When the flow's application stopped offering data (`[[flows]] stop`).
    pub stop: Option<Nanos>,
    pub bytes_delivered: u64,
    /// Payload bytes that reached the receiver, duplicates included.
    pub bytes_received: u64,
    /// Payload bytes the sender put on the wire, retransmissions included.
    pub bytes_sent: u64,
    /// Bytes delivered to the receiving application per second of the measured interval
    /// (from max(start, warm-up) to completion or the end), in bit/s.
    pub goodput_bps: f64,
    /// Payload bytes sent per second of the same interval (retransmissions included), in bit/s.
    pub throughput_bps: f64,
    /// Bytes an on/off application wrote per second of the same interval, in bit/s: the load
    /// offered to TCP. None for bulk transfers (all their data is there at the start).
    pub offered_bps: Option<f64>,
    pub retx_timeout: u64,
    pub retx_fast: u64,
    /// Retransmissions whose segment had already reached the receiver in an earlier copy.
    pub retx_spurious: u64,
    pub retx_necessary: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub ecn_reductions: u64,
    pub quench_reductions: u64,
    /// Source quenches that reached the sender, acted on or ignored (`tcp.source_quench`).
    pub quench_received: u64,
    pub rtt_samples: u64,
    /// Timeouts found spurious and undone by the detector (`tcp.spurious_detection`).
    pub timeouts_undone: u64,
    /// The detector's judgements scored against the simulator's knowledge (all 0 when off).
    pub detector: spurious::DetectorScore,
    /// The running measurements (prediction errors, mean cwnd, RTT moments): [`tcp::meter`].
    pub meter: tcp::meter::MeterSummary,
    pub final_cwnd: u64,
    pub final_ssthresh: u64,
}

impl FlowSummary {
    /// What the flow's sender itself knows (its counters, its running measurements to `end`, its
    /// final window), the rest left at zero for the caller to fill: the part the simulator and
    /// the testbed's wire sender (`testbed::stack`) share.
    pub fn of_sender(sender: &tcp::sender::Sender, end: Nanos) -> Self {
        let st = &sender.stats;
        let w = sender.window();
        Self {
            retx_timeout: st.retx_timeout,
            retx_fast: st.retx_fast,
            timeouts: st.timeouts,
            fast_recoveries: st.fast_recoveries,
            ecn_reductions: st.ecn_reductions,
            quench_reductions: st.quench_reductions,
            rtt_samples: st.rtt_samples,
            timeouts_undone: st.timeouts_undone,
            meter: sender.meter_summary(end),
            final_cwnd: w.cwnd,
            final_ssthresh: w.ssthresh,
            ..Self::default()
        }
    }

    pub fn retransmissions(&self) -> u64 {
        self.retx_timeout + self.retx_fast
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChannelSummary {
    pub channel: u32,
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub bandwidth_bps: u64,
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_sent: u64,
    /// Fraction of the measured interval the transmitter was busy.
    pub utilisation: f64,
    pub drops_overflow: u64,
    pub drops_aqm: u64,
    pub drops_corruption: u64,
    pub drops_scheduled: u64,
    pub marks: u64,
    pub quench: u64,
    /// What a Snoop agent caching this channel's arrivals did; `None` without one.
    pub snoop: Option<agent::snoop::SnoopStats>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    pub name: Option<String>,
    pub seed: u64,
    pub duration: Nanos,
    pub warmup: Nanos,
    pub flows: Vec<FlowSummary>,
    pub channels: Vec<ChannelSummary>,
    /// Index into `channels` of the bottleneck's forward (data) direction: the dumbbell's
    /// bottleneck, or a graph's first monitored link (channel 0 if none is).
    pub bottleneck: usize,
    /// Bytes every flow delivered in order in the measurement window [warmup, end], × 8, over
    /// that window's length: the link's goodput, never the sum of per-flow rates (each over its
    /// own interval).
    pub aggregate_goodput_bps: f64,
    /// Jain's index over the flows' goodputs, each over its own measured interval.
    pub jain_index: Option<f64>,
    pub events: u64,
    /// Fingerprint of the whole event sequence (times and kinds): equal hashes ⇔ equal runs.
    pub event_hash: u64,
    pub trace: Trace,
}

/// Parse, build and run.
pub fn run_toml(text: &str, overrides: &[String]) -> Result<SimResult, ConfigError> {
    run(&Scenario::from_toml(text, overrides)?)
}

/// Build the scenario and run it to the end, keeping every trace.
pub fn run(scenario: &Scenario) -> Result<SimResult, ConfigError> {
    let mut engine = build(scenario)?;
    engine.run();
    Ok(summarise(scenario, engine))
}

/// Why a run did not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `partial` is what was simulated up to `at`, summarised as a run that ended there.
    #[error("cancelled at {} s of {} s simulated", *at as f64 / 1e9, *end as f64 / 1e9)]
    Cancelled {
        at: Nanos,
        end: Nanos,
        partial: Box<SimResult>,
    },
}

/// Build and run keeping only the traces in `traces`, calling `check` about every `every`
/// events with the simulated time reached; `Break` cancels the run.
pub fn run_with(
    scenario: &Scenario,
    traces: TraceSet,
    every: u64,
    check: impl FnMut(Progress) -> std::ops::ControlFlow<()>,
) -> Result<SimResult, RunError> {
    let mut engine = build_with(scenario, traces)?;
    if engine.run_with(every, check).is_break() {
        let (at, end) = (engine.now, engine.end);
        // Summarised as a run whose end was `at`: rates over what was measured by then. Stopped
        // inside the warm-up, nothing was measured yet; the partial result then measures from 0
        // (the warm-up snapshots are still zero), which its reader is told by `at < warmup`.
        engine.end = at;
        if at <= engine.warmup {
            engine.warmup = 0;
        }
        return Err(RunError::Cancelled {
            at,
            end,
            partial: Box::new(summarise(scenario, engine)),
        });
    }
    Ok(summarise(scenario, engine))
}

fn build_link(cfg: &LinkCfg, key: &str, monitored: bool) -> Result<LinkSpec, ConfigError> {
    let (queue, agent) = component::build(
        &queue::FAMILY,
        queue::DEFAULT_KIND,
        &cfg.queue,
        &format!("{key}.queue"),
        &QueueCtx {
            bandwidth: cfg.bandwidth.0,
        },
    )?;
    let errors = component::build(
        &error_model::FAMILY,
        error_model::DEFAULT_KIND,
        &cfg.error,
        &format!("{key}.error"),
        &(),
    )?;
    let (fwd_err, rev_err) = cfg.error_direction.value.channels();
    // A link agent (Snoop) watches the forward channel's queue; one agent per queue.
    let forward_agent = match &cfg.agent {
        None => agent,
        Some(_) if agent.is_some() => return Err(invalid(format!("{key}.agent"), "this link's queue already has its own agent (a threshold queue's source quench); one agent per link")),
        Some(t) => Some(agent::QueueAgent::Snoop(component::build(&agent::FAMILY, "snoop", t, &format!("{key}.agent"), &())?)),
    };
    let losses: Vec<Nanos> = cfg.losses.iter().map(|d| d.0).collect();
    let mut spikes = Vec::with_capacity(cfg.delay_spikes.len());
    for (i, d) in cfg.delay_spikes.iter().enumerate() {
        if d.duration.0 == 0 {
            return Err(invalid(
                format!("{key}.delay_spikes[{i}].duration"),
                "must be positive",
            ));
        }
        spikes.push((d.at.0, d.at.0.saturating_add(d.duration.0)));
    }
    let variation = delay_variation(cfg, key)?;
    let mut outages = Vec::with_capacity(cfg.outages.len());
    for (i, d) in cfg.outages.iter().enumerate() {
        if d.duration.0 == 0 {
            return Err(invalid(
                format!("{key}.outages[{i}].duration"),
                "must be positive",
            ));
        }
        outages.push((d.at.0, d.at.0.saturating_add(d.duration.0)));
    }
    let short = key.rsplit('.').next().unwrap_or(key);
    let channel = |name: &str, with_errors: bool, agent: Option<agent::QueueAgent>| ChannelSpec {
        bandwidth: cfg.bandwidth.0,
        delay: cfg.delay.0,
        queue: queue.clone(),
        errors: if with_errors {
            errors.clone()
        } else {
            ErrorModel::None
        },
        // Scheduled losses hit data, which travels forward whatever the error direction.
        losses: if name.ends_with('>') {
            losses.clone()
        } else {
            Vec::new()
        },
        // Delay spikes stall the data direction only, like scheduled losses.
        delay_spikes: if name.ends_with('>') {
            spikes.clone()
        } else {
            Vec::new()
        },
        // Random spikes stall the data direction like listed ones; ARQ acts on both directions
        // (every frame crosses the radio, ACKs too).
        variation: link::DelayVariation {
            spikes: if name.ends_with('>') {
                variation.spikes
            } else {
                None
            },
            arq: variation.arq,
        },
        // Outages lose the data direction's packets, like scheduled losses.
        outages: if name.ends_with('>') {
            outages.clone()
        } else {
            Vec::new()
        },
        name: name.into(),
        monitored,
        agent,
    };
    // Reports name a channel after its link and direction: `bottleneck>` carries data, `bottleneck<` ACKs.
    Ok(LinkSpec {
        a: 0,
        b: 0,
        forward: channel(&format!("{short}>"), fwd_err, forward_agent),
        reverse: channel(&format!("{short}<"), rev_err, agent),
    })
}

/// A link's `random_spikes` and `arq`, checked (errors name the key).
fn delay_variation(cfg: &LinkCfg, key: &str) -> Result<link::DelayVariation, ConfigError> {
    let spikes = match &cfg.random_spikes {
        None => None,
        Some(r) => {
            if r.every.0 == 0 {
                return Err(invalid(
                    format!("{key}.random_spikes.every"),
                    "must be positive",
                ));
            }
            if r.max.0 == 0 {
                return Err(invalid(
                    format!("{key}.random_spikes.max"),
                    "must be positive",
                ));
            }
            if r.min.0 > r.max.0 {
                return Err(invalid(
                    format!("{key}.random_spikes.min"),
                    "must not exceed max",
                ));
            }
            Some(link::SpikeProcess {
                every: r.every.0,
                min: r.min.0,
                max: r.max.0,
            })
        }
    };
    let arq = match &cfg.arq {
        None => None,
        Some(a) => {
            if !(0.0..1.0).contains(&a.per) {
                return Err(invalid(
                    format!("{key}.arq.per"),
                    format!("{} is outside [0, 1)", a.per),
                ));
            }
            if a.retries > 255 {
                return Err(invalid(format!("{key}.arq.retries"), "at most 255"));
            }
            if a.cw_min > a.cw_max {
                return Err(invalid(
                    format!("{key}.arq.cw_min"),
                    "must not exceed cw_max",
                ));
            }
            Some(link::Arq {
                per: a.per,
                retries: a.retries,
                slot: a.slot.0,
                cw_min: a.cw_min,
                cw_max: a.cw_max,
            })
        }
    };
    Ok(link::DelayVariation { spikes, arq })
}

/// A component chosen by name is checked against the TCP options its prerequisites involve
/// (`"sack"` recovery needs `sack = true`); the name itself was checked as the scenario was read.
fn with_options<T>(
    family: &component::Family<T, TcpOptions>,
    name: &str,
    path: &str,
    options: &TcpOptions,
) -> Result<T, ConfigError> {
    component::build_named(family, name, path, options)
        .unwrap_or_else(|| Err(invalid(path, format!("unknown {} '{name}'", family.noun))))
}

/// The connection's settings from the scenario's `[tcp]` (or a group's): the choices are typed
/// already ([`spelled`]); here they are checked against each other and the ranges.
pub(crate) fn build_tcp(cfg: &TcpCfg, key: &str) -> Result<TcpConfig, ConfigError> {
    let cc = cfg.cc.value.clone();
    let options = TcpOptions {
        sack: cfg.sack,
        timestamps: cfg.timestamps,
    };
    let recovery = match &cfg.recovery {
        None => None,
        Some(r) => Some(with_options(
            &tcp::recovery::FAMILY,
            r.value.name(),
            &format!("{key}.recovery"),
            &options,
        )?),
    };
    let mss = cfg.mss.0;
    if !(1..=65_000).contains(&mss) {
        return Err(invalid(
            format!("{key}.mss"),
            format!("{mss} B is outside 1..65000 B"),
        ));
    }
    if cfg.header.0 > 1000 {
        return Err(invalid(
            format!("{key}.header"),
            "more than 1000 B of headers",
        ));
    }
    if !(1..=1000).contains(&cfg.init_cwnd) {
        return Err(invalid(
            format!("{key}.init_cwnd"),
            format!("{} segments is outside 1..1000", cfg.init_cwnd),
        ));
    }
    if cfg.rwnd.0 < mss {
        return Err(invalid(format!("{key}.rwnd"), "smaller than one segment"));
    }
    let delayed_ack = match cfg.delayed_ack.value.0 {
        None => None,
        Some(_) if cfg.delayed_ack_segments == 0 => {
            return Err(invalid(
                format!("{key}.delayed_ack_segments"),
                "must be at least 1",
            ))
        }
        Some(timeout) => Some(DelayedAck {
            timeout,
            segments: cfg.delayed_ack_segments,
        }),
    };
    let spurious_detection = match &cfg.spurious_detection {
        None => SpuriousDetection::Off,
        Some(d) if d.value == SpuriousDetection::Off => SpuriousDetection::Off,
        Some(d) => with_options(
            &tcp::SPURIOUS_DETECTION,
            d.value.name(),
            &format!("{key}.spurious_detection"),
            &options,
        )?,
    };
    let spurious_response = match &cfg.spurious_response {
        None => SpuriousResponse::default(),
        Some(r) => with_options(
            &tcp::SPURIOUS_RESPONSE,
            r.value.name(),
            &format!("{key}.spurious_response"),
            &options,
        )?,
    };
    let ignore_quench = cfg.source_quench == Some(tcp::SourceQuench::Ignore);
    let sample_clock = cfg.sample_clock.as_ref().map_or(0, |c| c.value.0);
    let max_pacing_rate = match cfg.max_pacing_rate {
        None => None,
        Some(r) if r.0 < 8 => {
            return Err(invalid(
                format!("{key}.max_pacing_rate"),
                "must be at least 8 bps (one byte per second)",
            ))
        }
        Some(r) => Some(r.0 / 8),
    };
    Ok(TcpConfig {
        mss: mss as u32,
        header: cfg.header.0 as u32,
        init_cwnd: cfg.init_cwnd,
        init_ssthresh: cfg.init_ssthresh.map_or(u64::MAX / 4, |b| b.0.max(2 * mss)),
        rwnd: cfg.rwnd.0,
        delayed_ack,
        timestamps: cfg.timestamps,
        sampling: cfg.rtt_sampling,
        ecn: cfg.ecn,
        receiver_ecn: cfg.receiver_ecn.unwrap_or(true),
        sack: cfg.sack,
        recovery_timeout: cfg.recovery_timeout,
        estimator: cfg.rto.estimator.clone(),
        rto_policy: cfg.rto.policy_name(),
        cc,
        recovery,
        spurious_detection,
        spurious_response,
        ignore_quench,
        sample_clock,
        max_pacing_rate,
    })
}

fn build_dumbbell(s: &Scenario, n: usize) -> Result<(Network, Vec<(u32, u32)>), ConfigError> {
    let t = &s.topology;
    if t.nodes.is_some() || !t.links.is_empty() {
        return Err(invalid(
            if t.nodes.is_some() {
                "topology.nodes"
            } else {
                "topology.links"
            },
            "only for kind = \"graph\"",
        ));
    }
    let need = |l: &Option<LinkCfg>, key: &str| {
        l.clone()
            .ok_or_else(|| invalid(key, "a dumbbell needs this link"))
    };
    let (bottleneck, access) = (
        need(&t.bottleneck, "topology.bottleneck")?,
        need(&t.access, "topology.access")?,
    );
    for (key, link) in [
        ("topology.bottleneck", Some(&bottleneck)),
        ("topology.access", Some(&access)),
        ("topology.receiver_access", t.receiver_access.as_ref()),
    ] {
        if let Some(l) = link {
            reject_graph_keys(l, key)?;
        }
    }
    for (g, group) in s.flows.iter().enumerate() {
        if group.src.is_some() || group.dst.is_some() {
            return Err(invalid(
                format!(
                    "flows[{g}].{}",
                    if group.src.is_some() { "src" } else { "dst" }
                ),
                "a dumbbell places flows itself; src/dst are for kind = \"graph\"",
            ));
        }
    }
    let bottleneck = build_link(&bottleneck, "topology.bottleneck", true)?;
    let access = build_link(&access, "topology.access", false)?;
    let receiver_access = match &t.receiver_access {
        Some(l) => build_link(l, "topology.receiver_access", false)?,
        None => access.clone(),
    };
    let d = dumbbell(n, &access, bottleneck, &receiver_access);
    let endpoints = d
        .senders
        .iter()
        .copied()
        .zip(d.receivers.iter().copied())
        .collect();
    Ok((
        Network::build(d.n_nodes, d.links, s.simulation.seed),
        endpoints,
    ))
}

fn reject_graph_keys(l: &LinkCfg, key: &str) -> Result<(), ConfigError> {
    for (name, set) in [
        ("a", l.a.is_some()),
        ("b", l.b.is_some()),
        ("monitor", l.monitor.is_some()),
    ] {
        if set {
            return Err(invalid(
                format!("{key}.{name}"),
                "only for links of kind = \"graph\"",
            ));
        }
    }
    Ok(())
}

fn build_graph(s: &Scenario) -> Result<(Network, Vec<(u32, u32)>), ConfigError> {
    let t = &s.topology;
    for (key, set) in [
        ("topology.bottleneck", t.bottleneck.is_some()),
        ("topology.access", t.access.is_some()),
        ("topology.receiver_access", t.receiver_access.is_some()),
    ] {
        if set {
            return Err(invalid(
                key,
                "only for kind = \"dumbbell\"; a graph lists its links",
            ));
        }
    }
    let nodes = t
        .nodes
        .ok_or_else(|| invalid("topology.nodes", "a graph needs its number of nodes"))?;
    if !(2..=2000).contains(&nodes) {
        return Err(invalid(
            "topology.nodes",
            format!("{nodes} nodes; 2..2000 are supported"),
        ));
    }
    if t.links.is_empty() {
        return Err(invalid("topology.links", "a graph needs at least one link"));
    }
    let mut links = Vec::with_capacity(t.links.len());
    for (i, l) in t.links.iter().enumerate() {
        let key = format!("topology.links[{i}]");
        let end = |v: Option<u32>, name: &str| -> Result<u32, ConfigError> {
            let v = v.ok_or_else(|| {
                invalid(
                    format!("{key}.{name}"),
                    "a graph link needs both end nodes a and b",
                )
            })?;
            if v >= nodes {
                return Err(invalid(
                    format!("{key}.{name}"),
                    format!("node {v} does not exist (nodes are 0..{})", nodes - 1),
                ));
            }
            Ok(v)
        };
        let (a, b) = (end(l.a, "a")?, end(l.b, "b")?);
        if a == b {
            return Err(invalid(
                format!("{key}.b"),
                "a link needs two different nodes",
            ));
        }
        let spec = build_link(l, &key, l.monitor.unwrap_or(false))?;
        let rename = |c: ChannelSpec, dir: &str| ChannelSpec {
            name: format!("links[{i}]{dir}"),
            ..c
        };
        links.push(LinkSpec {
            a,
            b,
            forward: rename(spec.forward, ">"),
            reverse: rename(spec.reverse, "<"),
        });
    }
    let network = Network::build(nodes as usize, links, s.simulation.seed);
    let mut endpoints = Vec::new();
    for (g, group) in s.flows.iter().enumerate() {
        let node = |v: Option<u32>, name: &str| -> Result<u32, ConfigError> {
            let v = v.ok_or_else(|| {
                invalid(
                    format!("flows[{g}].{name}"),
                    "flows in a graph need src and dst nodes",
                )
            })?;
            if v >= nodes {
                return Err(invalid(
                    format!("flows[{g}].{name}"),
                    format!("node {v} does not exist (nodes are 0..{})", nodes - 1),
                ));
            }
            Ok(v)
        };
        let (src, dst) = (node(group.src, "src")?, node(group.dst, "dst")?);
        if src == dst {
            return Err(invalid(
                format!("flows[{g}].dst"),
                "a flow needs two different nodes",
            ));
        }
        if network.next_hop(src, dst).is_none() || network.next_hop(dst, src).is_none() {
            return Err(invalid(
                format!("flows[{g}].dst"),
                format!("node {dst} cannot be reached from node {src}"),
            ));
        }
        endpoints.extend(std::iter::repeat_n((src, dst), group.count as usize));
    }
    Ok((network, endpoints))
}

/// The scenario's network (channels with their queues, error models and agents, and routes) and
/// each flow's (sender node, receiver node), in flow order: what the engine runs, and what the
/// testbed's real-time emulator runs on real packets (`crate::testbed`).
pub fn build_network(s: &Scenario) -> Result<(Network, Vec<(u32, u32)>), ConfigError> {
    let n: u64 = s.flows.iter().map(|g| g.count as u64).sum();
    match s.topology.kind {
        TopologyKind::Dumbbell => build_dumbbell(s, n as usize),
        TopologyKind::Graph => build_graph(s),
    }
}

/// Build the engine for a scenario, validating everything a parse could not; every trace kept.
pub fn build(s: &Scenario) -> Result<Engine, ConfigError> {
    build_with(s, TraceSet::ALL)
}

/// Build the engine keeping only the traces in `traces`.
pub fn build_with(s: &Scenario, traces: TraceSet) -> Result<Engine, ConfigError> {
    let sim = &s.simulation;
    if sim.duration.0 == 0 {
        return Err(invalid("simulation.duration", "must be positive"));
    }
    if sim.warmup.0 >= sim.duration.0 {
        return Err(invalid(
            "simulation.warmup",
            "must be shorter than the duration",
        ));
    }
    if s.flows.is_empty() {
        return Err(invalid("flows", "at least one flow group is needed"));
    }
    let n: u64 = s.flows.iter().map(|g| g.count as u64).sum();
    // Routing keeps a next-hop table of nodes², so flows (two hosts each) and nodes are bounded.
    if n == 0 || n > 1000 {
        return Err(invalid(
            "flows",
            format!("{n} flows in total; 1..1000 are supported"),
        ));
    }
    let interval = sim.queue_sample_interval.0;
    if interval > 0 && sim.duration.0 / interval > 10_000_000 {
        return Err(invalid(
            "simulation.queue_sample_interval",
            "more than 10 million samples: use a longer interval or \"0s\" for none",
        ));
    }
    // Where each flow runs: (sender node, receiver node), in flow order.
    let (network, endpoints) = build_network(s)?;

    let base_tcp = build_tcp(&s.tcp, "tcp")?;
    let mut flows = Vec::with_capacity(n as usize);
    for (g, group) in s.flows.iter().enumerate() {
        let tcp = match &group.tcp {
            Some(t) => build_tcp(t, &format!("flows[{g}].tcp"))?,
            None => base_tcp.clone(),
        };
        // The estimator and policy as read (parameters checked then); each flow starts from a copy.
        let rto = &group.tcp.as_ref().unwrap_or(&s.tcp).rto;
        let app_bytes = match group.bytes.and_then(|b| b.0) {
            Some(0) => {
                return Err(invalid(
                    format!("flows[{g}].bytes"),
                    "a transfer needs at least one byte",
                ))
            }
            Some(b) => b,
            None => u64::MAX,
        };
        let app = match &group.app {
            Some(t) => component::build(
                &app::FAMILY,
                app::DEFAULT_KIND,
                t,
                &format!("flows[{g}].app"),
                &(),
            )?,
            None => None,
        };
        if app.is_some() && group.bytes.is_some() {
            return Err(invalid(
                format!("flows[{g}].bytes"),
                "an on/off source runs to the end of the simulation; bytes is for kind = \"bulk\"",
            ));
        }
        let app_bytes = if app.is_some() { 0 } else { app_bytes };
        // A stop before a flow has started would leave nothing to stop: the stop must come after
        // the group's last possible start (its draws included).
        let stop = group.stop.map(|d| d.0);
        if let Some(stop) = stop {
            let last = group
                .start
                .to
                .saturating_add(
                    group
                        .start_step
                        .0
                        .saturating_mul(group.count.saturating_sub(1) as u64),
                )
                .saturating_add(group.start_jitter.0);
            if stop <= last {
                return Err(invalid(
                    format!("flows[{g}].stop"),
                    format!(
                        "{} must be later than the group's last possible start ({})",
                        units::exact_duration(stop),
                        units::exact_duration(last)
                    ),
                ));
            }
        }
        for i in 0..group.count as u64 {
            let f = flows.len();
            let mut start = group
                .start
                .from
                .saturating_add(group.start_step.0.saturating_mul(i));
            // Each flow draws from its own stream: adding a flow never moves another's start.
            let mut rng = Stream::new(sim.seed, Component::FlowStart(f as u32));
            for spread in [group.start.to - group.start.from, group.start_jitter.0] {
                if spread > 0 {
                    start = start.saturating_add((rng.uniform() * spread as f64) as Nanos);
                }
            }
            let estimator = rto.built.clone();
            let (src, dst) = endpoints[f];
            let mut policy = rto.policy();
            // CA-RTO's draws come from the flow's own stream (Psaras, Tsaoussidis & Mamatas 2005 §IV-A: randomness is what
            // breaks synchronisation, so two flows must not draw the same sequence).
            let stream = Stream::new(sim.seed, Component::RtoPolicy(f as u32)).next_u64();
            policy.seed_stream(stream);
            let mut estimator = estimator;
            if let crate::rtt::Estimator::CaRto(ca) = &mut estimator {
                ca.seed_stream(stream); // the registered `ca-rto` estimator: the same per-flow stream
            }
            let timer = crate::rtt::timer::RetransmitTimer::new(estimator, policy);
            let mut sender = Sender::with_timer(f as u32, src, dst, &tcp, app_bytes, timer);
            sender.connect(sim.seed);
            let receiver = Receiver::new(f as u32, dst, src, &tcp);
            let label = engine::FlowLabel {
                group: g as u32,
                cc: tcp
                    .cc
                    .component()
                    .map_or_else(|_| tcp.cc.name.clone(), |i| i.name.to_string()),
                recovery: tcp.recovery_kind().name().to_string(),
                estimator: tcp.estimator.clone(),
                rto_policy: tcp.rto_policy.clone(),
            };
            let flow = Flow::new(sender, receiver, src, dst, start, app_bytes, tcp.mss)
                .with_label(label)
                .with_stop(stop);
            flows.push(match app {
                Some(cfg) => flow.with_app(OnOff::new(
                    cfg,
                    tcp.mss,
                    Stream::new(sim.seed, Component::App(f as u32)),
                    start,
                )),
                None => flow,
            });
        }
    }
    Ok(Engine::new(
        network,
        flows,
        sim.duration.0,
        sim.warmup.0,
        sim.queue_sample_interval.0,
        traces,
    ))
}

pub(crate) fn summarise(s: &Scenario, mut e: Engine) -> SimResult {
    let end = e.end;
    let warmup = e.warmup;
    // Resolve the spurious retransmissions of segments still unacknowledged, with the copies
    // that landed by the end (the rest were resolved as the ACKs passed them).
    for f in &mut e.flows {
        f.spurious.finish(&mut e.trace.retx);
    }
    let spurious: Vec<u64> = e.flows.iter().map(|f| f.spurious.spurious).collect();
    let scores: Vec<spurious::DetectorScore> =
        e.flows.iter().map(|f| f.spurious.detector).collect();
    let flows: Vec<FlowSummary> = e
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let from = f.start.max(warmup);
            let until = f.completed_at.unwrap_or(end).max(from);
            let secs = (until - from) as f64 / 1e9;
            let delivered = f.receiver.stats.bytes_delivered
                - f.delivered_at_warmup.min(f.receiver.stats.bytes_delivered);
            let rate = |bytes: u64| {
                if secs > 0.0 {
                    bytes as f64 * 8.0 / secs
                } else {
                    0.0
                }
            };
            let st = f.sender.stats;
            let retx = st.retx_timeout + st.retx_fast;
            FlowSummary {
                flow: i as u32,
                label: f.label.clone(),
                src: f.src,
                dst: f.dst,
                start: f.start,
                completed_at: f.completed_at,
                stop: f.stop.filter(|&t| t <= end),
                bytes_delivered: f.receiver.stats.bytes_delivered,
                bytes_received: f.receiver.stats.bytes_received,
                bytes_sent: st.bytes_sent,
                goodput_bps: rate(delivered),
                throughput_bps: rate(st.bytes_sent - f.sent_at_warmup.min(st.bytes_sent)),
                offered_bps: f
                    .app
                    .is_some()
                    .then(|| rate(f.sender.app_bytes() - f.offered_at_warmup)),
                retx_spurious: spurious[i],
                retx_necessary: retx - spurious[i],
                quench_received: st.quench_reductions + st.quench_ignored,
                detector: scores[i],
                ..FlowSummary::of_sender(&f.sender, f.completed_at.unwrap_or(end))
            }
        })
        .collect();
    let measured = (end - warmup) as f64;
    let channels = e
        .network
        .channels
        .iter()
        .enumerate()
        .map(|(i, c)| ChannelSummary {
            channel: i as u32,
            name: c.name.clone(),
            from: c.from,
            to: c.to,
            bandwidth_bps: c.bandwidth,
            arrivals: c.stats.arrivals,
            departures: c.stats.departures,
            bytes_sent: c.stats.bytes_sent,
            // Busy time is booked when a transmission starts; one still running at the end is cut.
            utilisation: ((c.stats.busy_time - e.busy_at_warmup[i]) as f64 / measured).min(1.0),
            drops_overflow: c.stats.drops_by(DropCause::Overflow),
            drops_aqm: c.stats.drops_by(DropCause::Aqm),
            drops_corruption: c.stats.drops_by(DropCause::Corruption),
            drops_scheduled: c.stats.drops_by(DropCause::Scheduled),
            marks: c.stats.marks,
            quench: c.stats.quench,
            snoop: e.agents.iter().find_map(|a| match a {
                agent::Agent::Snoop(s) if s.channel() as usize == i => Some(s.stats),
                _ => None,
            }),
        })
        .collect();
    let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
    // The aggregate is every flow's bytes delivered in the common window [warmup, end] over that
    // window — not the sum of the flows' goodputs, each over its own interval from
    // max(start, warmup), which with staggered starts or finite transfers adds rates over
    // different intervals and can exceed the link (issue 43). Delivered bytes all crossed the
    // bottleneck, so this stays at or below its payload rate, up to the bytes that crossed it
    // before the warm-up and reached the application after it (in flight or held for reassembly
    // at that instant; none with warmup = 0). docs/schema.md, `aggregate_goodput_bps`.
    let delivered_in_window: u64 = e
        .flows
        .iter()
        .map(|f| {
            f.receiver.stats.bytes_delivered
                - f.delivered_at_warmup.min(f.receiver.stats.bytes_delivered)
        })
        .sum();
    let window = (end.saturating_sub(warmup)) as f64 / 1e9;
    let aggregate_goodput_bps = if window > 0.0 {
        delivered_in_window as f64 * 8.0 / window
    } else {
        0.0
    };
    SimResult {
        name: s.simulation.name.clone(),
        seed: s.simulation.seed,
        duration: end,
        warmup,
        aggregate_goodput_bps,
        jain_index: jain_index(&goodputs),
        flows,
        channels,
        bottleneck: e
            .network
            .channels
            .iter()
            .position(|c| c.monitored)
            .unwrap_or(0),
        events: e.events,
        event_hash: e.event_hash,
        trace: e.trace,
    }
}
