//! The emulator's core, sans-IO: the scenario's [`Network`] — the simulator's own channels
//! (serialisation, propagation, queue discipline, error model, scheduled losses, delay spikes)
//! and its source-quench agent — carrying real IPv4 packets. The real-time loop
//! ([`super::realtime`]) hands it each packet a host's kernel sent, with the time it was read,
//! and writes out what it returns; tests drive it with made-up times.
//!
//! The seam: a [`Channel`] decides with the simulator's [`Packet`] (size, kind, ECN, flow), and
//! the real bytes travel beside it in a FIFO of their own. That is exact because a channel is
//! FIFO end to end — a queue discipline only refuses arrivals (no head drop, no reordering), the
//! transmitter takes the head, and the wire keeps order — so the k-th packet leaving a channel is
//! the k-th it accepted. Each departure checks the pairing by size (`stats.mismatched`, always 0).

use super::wire::{self, Ipv4Facts};
use crate::sim::agent::{Agent, At, NodeAgent, Queued};
use crate::sim::config::{invalid, ConfigError, Scenario};
use crate::sim::link::Departure;
use crate::sim::packet::{Kind, NodeId, Packet, SackBlocks};
use crate::sim::queue::Verdict;
use crate::sim::topology::Network;
use crate::sim::trace::{Trace, TraceSet};
use crate::time::Nanos;
use std::collections::VecDeque;

/// Node k of the scenario is the IPv4 address 10.1.0.0 + k + 1 inside the namespaces
/// (hosts and routers alike: a router's address is where its source quenches come from).
pub const ADDR_BASE: u32 = 0x0a01_0000;
/// Flow f's receiver listens on this port + f; the emulator names a packet's flow by it.
pub const PORT_BASE: u16 = 5000;

pub fn node_addr(node: NodeId) -> u32 {
    ADDR_BASE + node + 1
}

/// One flow as the emulator sees it on the wire (sender side: what left the sender's kernel;
/// receiver side: what reached the receiver's kernel).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowWire {
    pub data_packets: u64,
    /// Payload bytes the sender put on the wire, retransmissions included.
    pub bytes_sent: u64,
    /// Data segments starting below the highest sequence sent before (retransmissions as a
    /// capture sees them: RTO, fast retransmit, TLP and RACK alike).
    pub retransmissions: u64,
    pub retransmitted_bytes: u64,
    /// Payload bytes that reached the receiver's kernel, duplicates included.
    pub bytes_received: u64,
    /// Data packets that reached the receiver carrying CE.
    pub ce_received: u64,
    /// ACKs with ECE that reached the sender; data packets the sender sent with CWR.
    pub ece_acks: u64,
    pub cwr_sent: u64,
    pub syns: u64,
    /// The sender's first data byte (its SYN's sequence number + 1), once seen.
    isn: Option<u32>,
    /// This flow's packets the channels lost, by drop cause (overflow, aqm, corruption, scheduled).
    pub drops: [u64; 4],
    highest_end: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmulatorStats {
    /// Packets read from the hosts, and of those not IPv4 or not to a node (IPv6 router
    /// solicitations, for one): counted and discarded.
    pub received: u64,
    pub ignored: u64,
    pub delivered: u64,
    /// Departures whose real bytes did not pair with the channel's packet: always 0 unless the
    /// FIFO pairing above is broken.
    pub mismatched: u64,
    pub quenches_sent: u64,
}

/// A packet for a host: the port (index into [`Emulator::hosts`]), when it is due, its bytes.
pub type Outgoing = (usize, Nanos, Vec<u8>);

/// When and what a flow's application sends, as the simulator would start it (the same draws).
#[derive(Debug, Clone, PartialEq)]
pub struct FlowPlan {
    pub start: Nanos,
    pub stop: Option<Nanos>,
    /// Bytes of a finite transfer; `None`: bulk to the end.
    pub bytes: Option<u64>,
    pub group: u32,
    /// The scenario's congestion control (its registry name).
    pub cc: String,
    /// An on/off application's writes as (scenario time, bytes), from the simulator's own source
    /// with its own random stream, up to the flow's stop or the run's end: the traffic generator
    /// writes the same bytes at the same times. Empty for a bulk transfer.
    pub writes: Vec<(Nanos, u64)>,
}

pub struct Emulator {
    pub net: Network,
    pub plans: Vec<FlowPlan>,
    /// The host node behind each port (one TUN device each).
    pub hosts: Vec<NodeId>,
    port_of_node: Vec<Option<usize>>,
    /// Each flow's (sender node, receiver node).
    pub endpoints: Vec<(NodeId, NodeId)>,
    carried: Vec<VecDeque<Vec<u8>>>,
    tx_done_at: Vec<Option<Nanos>>,
    wire: Vec<VecDeque<(Nanos, Packet, Vec<u8>)>>,
    pub flows: Vec<FlowWire>,
    pub stats: EmulatorStats,
    out: Vec<Outgoing>,
    /// The simulator's own trace sinks: drops, marks, per-packet arrivals at monitored queues and
    /// queue samples every `simulation.queue_sample_interval` — the same tables a simulated run
    /// has (`sim::tables::trace_batches`). Sequence numbers of data are offsets from the
    /// sender's first data byte (the simulator's convention), raw TCP numbers for ACKs.
    pub trace: Trace,
    sample_interval: Nanos,
    next_sample: Nanos,
}

fn seq_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl Emulator {
    /// Build the scenario's network as the simulator does. Refuses what has no real-time form.
    pub fn new(scenario: &Scenario) -> Result<Self, ConfigError> {
        // Everything the simulator validates (TCP settings, applications, starts) is checked
        // once by building its engine; the emulator then takes the network alone.
        let engine = crate::sim::build_with(scenario, crate::sim::trace::TraceSet::NONE)?;
        let mut plans = Vec::with_capacity(engine.flows.len());
        for f in &engine.flows {
            let mut writes = Vec::new();
            if let Some(app) = &f.app {
                // The engine wakes the source at each next_wake() before the stop (engine.rs,
                // Owner::App); the same source, cloned, is woken here the same way.
                let mut app = app.clone();
                let end = f
                    .stop
                    .unwrap_or(Nanos::MAX)
                    .min(scenario.simulation.duration.0);
                while app.next_wake() < end {
                    let t = app.next_wake();
                    let bytes = app.wake(t);
                    if bytes > 0 {
                        writes.push((t, bytes));
                    }
                }
            }
            let bytes = (f.app.is_none() && f.app_bytes != u64::MAX).then_some(f.app_bytes);
            plans.push(FlowPlan {
                start: f.start,
                stop: f.stop,
                bytes,
                group: f.label.group,
                cc: f.label.cc.clone(),
                writes,
            });
        }
        let (net, endpoints) = crate::sim::build_network(scenario)?;
        for a in &net.agents {
            if let Agent::Snoop(_) = a {
                return Err(invalid("topology.bottleneck.agent", "Snoop has no real-time form in the testbed yet (it rewrites TCP streams); run it in the simulator"));
            }
        }
        for c in &net.channels {
            if c.queue.acts_at_dequeue() {
                return Err(invalid("queue.kind", format!("channel {}: a queue that drops or marks at dequeue (codel) has no real-time form in the testbed yet (real bytes are paired with packets in arrival order); run it in the simulator", c.name)));
            }
        }
        let mut hosts: Vec<NodeId> = Vec::new();
        for &(s, d) in &endpoints {
            for n in [s, d] {
                if !hosts.contains(&n) {
                    hosts.push(n);
                }
            }
        }
        let mut port_of_node = vec![None; net.n_nodes];
        for (i, &h) in hosts.iter().enumerate() {
            port_of_node[h as usize] = Some(i);
        }
        let n_ch = net.channels.len();
        Ok(Self {
            net,
            plans,
            hosts,
            port_of_node,
            flows: vec![FlowWire::default(); endpoints.len()],
            endpoints,
            carried: vec![VecDeque::new(); n_ch],
            tx_done_at: vec![None; n_ch],
            wire: vec![VecDeque::new(); n_ch],
            stats: EmulatorStats::default(),
            out: Vec::new(),
            trace: Trace::new(TraceSet {
                drops: true,
                marks: true,
                queue: true,
                arrival: true,
                ..TraceSet::NONE
            }),
            sample_interval: scenario.simulation.queue_sample_interval.0,
            next_sample: 0,
        })
    }

    fn node_of(&self, addr: u32) -> Option<NodeId> {
        let k = addr.checked_sub(ADDR_BASE + 1)?;
        ((k as usize) < self.net.n_nodes).then_some(k)
    }

    /// The flow a TCP packet belongs to, by the receiver's port and the endpoints.
    fn flow_of(&self, f: &Ipv4Facts, src: NodeId, dst: NodeId) -> Option<(usize, bool)> {
        for (port, forward) in [(f.dport, true), (f.sport, false)] {
            let i = port.checked_sub(PORT_BASE)? as usize;
            if let Some(&(s, d)) = self.endpoints.get(i) {
                if (forward && (s, d) == (src, dst)) || (!forward && (d, s) == (src, dst)) {
                    return Some((i, forward));
                }
            }
        }
        None
    }

    /// A packet the kernel of host `port` sent, read at `now`.
    pub fn receive(&mut self, port: usize, bytes: Vec<u8>, now: Nanos) {
        // What fell due before this arrival happens first (queue samples included).
        self.advance(now);
        self.stats.received += 1;
        let host = self.hosts[port];
        let Some(f) = wire::parse(&bytes) else {
            self.stats.ignored += 1;
            return;
        };
        let (Some(src), Some(dst)) = (self.node_of(f.src), self.node_of(f.dst)) else {
            self.stats.ignored += 1;
            return;
        };
        if src != host || dst == host {
            self.stats.ignored += 1;
            return;
        }
        let flow = self.flow_of(&f, src, dst);
        if let Some((i, true)) = flow {
            let w = &mut self.flows[i];
            if f.flags & wire::SYN != 0 {
                w.syns += 1;
                w.isn = Some(f.seq.wrapping_add(1));
            }
            if f.payload > 0 {
                w.data_packets += 1;
                w.bytes_sent += f.payload as u64;
                if f.flags & wire::CWR != 0 {
                    w.cwr_sent += 1;
                }
                let end = f.seq.wrapping_add(f.payload);
                match w.highest_end {
                    Some(h) if seq_before(f.seq, h) => {
                        w.retransmissions += 1;
                        w.retransmitted_bytes += f.payload as u64;
                        if seq_before(h, end) {
                            w.highest_end = Some(end);
                        }
                    }
                    _ => w.highest_end = Some(end),
                }
            }
        }
        let seq = match flow {
            Some((i, true)) => self.flows[i]
                .isn
                .map_or(f.seq as u64, |isn| f.seq.wrapping_sub(isn) as u64),
            _ => f.seq as u64,
        };
        let pkt = Packet {
            flow: flow.map_or(u32::MAX, |(i, _)| i as u32),
            src,
            dst,
            kind: if f.payload > 0 { Kind::Data } else { Kind::Ack },
            size: f.total_len as u32,
            seq,
            len: f.payload,
            ack: f.ack as u64,
            rwnd: 0,
            tx: 0,
            ecn: f.ecn(),
            ece: f.flags & wire::ECE != 0,
            cwr: f.flags & wire::CWR != 0,
            ts_val: 0,
            ts_ecr: 0,
            sack: SackBlocks::default(),
        };
        self.forward(src, pkt, bytes, now);
    }

    /// A packet at `node` on its way to `pkt.dst`: onto the next channel's queue.
    fn forward(&mut self, node: NodeId, pkt: Packet, mut bytes: Vec<u8>, now: Nanos) {
        let Some(c) = self.net.next_hop(node, pkt.dst) else {
            self.stats.ignored += 1;
            return;
        };
        let c = c as usize;
        let acc = self.net.channels[c].arrive(pkt, now);
        if self.net.channels[c].monitored {
            self.trace.arrival(
                now,
                c as u32,
                pkt.flow,
                pkt.kind,
                pkt.seq,
                acc.queue_len,
                acc.verdict,
            );
        }
        match acc.verdict {
            Verdict::Dropped(cause) => {
                self.trace
                    .drop(now, c as u32, pkt.flow, pkt.kind, pkt.seq, cause);
                self.count_drop(&pkt, cause as usize)
            }
            Verdict::Marked => {
                self.trace.mark(now, c as u32, pkt.flow, pkt.seq);
                wire::mark_ce(&mut bytes)
            }
            Verdict::Enqueued => {}
        }
        // Agents watching this queue (the threshold router's source quench).
        let mut signals = Vec::new();
        for a in &mut self.net.agents {
            let p = a.placement();
            if p.channels.contains(&(c as u32)) {
                let mut at = At {
                    now,
                    node: p.node,
                    out: &mut signals,
                };
                a.on_queued(
                    &mut at,
                    &pkt,
                    &mut Queued {
                        channel: c as u32,
                        verdict: acc.verdict,
                        queue_len: acc.queue_len,
                        stats: &mut self.net.channels[c].stats,
                    },
                );
            }
        }
        let quenches: Vec<(Packet, Vec<u8>)> = signals
            .into_iter()
            .map(|s| (s, wire::source_quench(node_addr(s.src), &bytes)))
            .collect();
        if !matches!(acc.verdict, Verdict::Dropped(_)) {
            self.carried[c].push_back(bytes);
        }
        if let Some(t) = acc.tx_done_at {
            self.tx_done_at[c] = Some(t);
        }
        for (mut s, q) in quenches {
            self.stats.quenches_sent += 1;
            s.size = q.len() as u32;
            let from = s.src;
            self.forward(from, s, q, now);
        }
    }

    fn count_drop(&mut self, pkt: &Packet, cause: usize) {
        if let Some(w) = self.flows.get_mut(pkt.flow as usize) {
            w.drops[cause] += 1;
        }
    }

    /// The earliest time something happens inside the network (a serialisation ends, a packet
    /// leaves a wire), if anything is in flight.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let tx = self.tx_done_at.iter().flatten().copied();
        let wire = self.wire.iter().filter_map(|w| w.front().map(|e| e.0));
        tx.chain(wire).min()
    }

    /// Run every event due by `now`, in time order (ties: transmissions first, then channel order).
    pub fn advance(&mut self, now: Nanos) {
        loop {
            let mut best: Option<(Nanos, bool, usize)> = None;
            for c in 0..self.tx_done_at.len() {
                if let Some(t) = self.tx_done_at[c] {
                    if t <= now && best.is_none_or(|b| t < b.0) {
                        best = Some((t, true, c));
                    }
                }
                if let Some(&(t, _, _)) = self.wire[c].front() {
                    if t <= now && best.is_none_or(|b| t < b.0) {
                        best = Some((t, false, c));
                    }
                }
            }
            // Queue samples of monitored channels, as the engine takes them (`Event::QueueSample`),
            // in time order with the other events.
            if self.sample_interval > 0
                && self.next_sample <= now
                && best.is_none_or(|b| self.next_sample < b.0)
            {
                self.sample_queues();
                continue;
            }
            let Some((t, is_tx, c)) = best else { return };
            if is_tx {
                self.tx_done(c, t);
            } else {
                let (_, pkt, bytes) = self.wire[c].pop_front().expect("front checked");
                self.arrive_at_node(self.net.channels[c].to, pkt, bytes, t);
            }
        }
    }

    fn sample_queues(&mut self) {
        for (i, c) in self
            .net
            .channels
            .iter()
            .enumerate()
            .filter(|(_, c)| c.monitored)
        {
            let q = c.queue.fifo();
            self.trace.queue(
                self.next_sample,
                i as u32,
                q.len() as u32,
                q.bytes(),
                c.queue.average(),
            );
        }
        self.next_sample += self.sample_interval;
    }

    fn tx_done(&mut self, c: usize, t: Nanos) {
        let (departure, next) = self.net.channels[c].tx_done(t);
        self.tx_done_at[c] = next;
        let Some(departure) = departure else { return };
        let bytes = self.carried[c].pop_front().unwrap_or_default();
        let pkt = match departure {
            Departure::Arrives(p, _) | Departure::Lost(p, _) => p,
        };
        if bytes.len() != pkt.size as usize {
            self.stats.mismatched += 1;
        }
        match departure {
            Departure::Arrives(p, at) => self.wire[c].push_back((at, p, bytes)),
            Departure::Lost(p, cause) => {
                self.trace.drop(t, c as u32, p.flow, p.kind, p.seq, cause);
                self.count_drop(&p, cause as usize)
            }
        }
    }

    fn arrive_at_node(&mut self, node: NodeId, pkt: Packet, bytes: Vec<u8>, t: Nanos) {
        if node != pkt.dst {
            return self.forward(node, pkt, bytes, t);
        }
        let Some(port) = self.port_of_node.get(node as usize).copied().flatten() else {
            self.stats.ignored += 1;
            return;
        };
        if let Some(w) = self.flows.get_mut(pkt.flow as usize) {
            if pkt.kind == Kind::Data && self.endpoints[pkt.flow as usize].1 == node {
                w.bytes_received += pkt.len as u64;
                if pkt.ecn == crate::sim::packet::Ecn::Ce || bytes[1] & 3 == 3 {
                    w.ce_received += 1;
                }
            } else if pkt.ece && self.endpoints[pkt.flow as usize].0 == node {
                w.ece_acks += 1;
            }
        }
        self.stats.delivered += 1;
        self.out.push((port, t, bytes));
    }

    /// Packets due to hosts since the last call, in the order they became due.
    pub fn take_output(&mut self) -> std::vec::Drain<'_, Outgoing> {
        self.out.drain(..)
    }

    /// Packets waiting or in flight inside the network.
    pub fn in_flight(&self) -> usize {
        self.carried.iter().map(VecDeque::len).sum::<usize>()
            + self.wire.iter().map(VecDeque::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed::wire::{tcp_packet, CWR};

    fn scenario(bottleneck: &str) -> Scenario {
        scenario_set(bottleneck, &[])
    }

    fn scenario_set(bottleneck: &str, overrides: &[String]) -> Scenario {
        let text = format!(
            r#"
[simulation]
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck = {{ {bottleneck} }}
access = {{ bandwidth = "1Gbps", delay = "0ms", queue = {{ kind = "droptail", limit = "1000p" }} }}
[[flows]]
count = 1
"#
        );
        Scenario::from_toml(&text, overrides).unwrap()
    }

    const MS: Nanos = 1_000_000;

    /// Sender node 0, receiver node 3 in a one-flow dumbbell.
    fn data(seq: u32, len: usize, ecn: u8) -> Vec<u8> {
        tcp_packet(
            node_addr(0),
            node_addr(3),
            40000,
            PORT_BASE,
            seq,
            0,
            len,
            ecn,
        )
    }

    fn run_to(e: &mut Emulator, until: Nanos) -> Vec<Outgoing> {
        e.advance(until);
        e.take_output().collect()
    }

    #[test]
    fn a_codel_queue_is_refused_with_an_error_that_names_it_and_the_channel() {
        let Err(err) = Emulator::new(&scenario(
            r#"bandwidth = "10Mbps", delay = "1ms", queue = { kind = "codel" }"#,
        )) else {
            panic!("a codel bottleneck must be refused");
        };
        let err = err.to_string();
        assert!(
            err.contains("queue.kind")
                && err.contains("codel")
                && err.contains("bottleneck>")
                && err.contains("simulator"),
            "{err}"
        );
    }

    #[test]
    fn a_packet_crosses_the_dumbbell_after_serialisation_and_propagation() {
        let mut e = Emulator::new(&scenario(r#"bandwidth = "10Mbps", delay = "20ms""#)).unwrap();
        assert_eq!(e.hosts, vec![0, 3]);
        e.receive(0, data(1, 1460, 0), 0);
        let out = run_to(&mut e, 100 * MS);
        assert_eq!(out.len(), 1);
        let (port, t, bytes) = &out[0];
        assert_eq!(*port, 1);
        // 1500 B at 1 Gb/s twice (12 µs) + at 10 Mb/s (1.2 ms) + 20 ms.
        assert_eq!(*t, 12_000 + 1_200_000 + 20 * MS + 12_000);
        assert_eq!(bytes, &data(1, 1460, 0));
        assert_eq!(e.stats.mismatched, 0);
        assert_eq!(e.flows[0].bytes_received, 1460);
    }

    #[test]
    fn a_full_droptail_queue_drops_real_packets_and_keeps_the_rest_in_order() {
        let mut e = Emulator::new(&scenario_set(
            r#"bandwidth = "10Mbps", delay = "1ms", queue = { kind = "droptail", limit = "5p" }"#,
            &["simulation.queue_sample_interval=1ms".into()],
        ))
        .unwrap();
        for i in 0..20u32 {
            e.receive(0, data(1 + 1460 * i, 1460, 0), 0);
        }
        let out = run_to(&mut e, 1000 * MS);
        let seqs: Vec<u32> = out.iter().map(|o| wire::parse(&o.2).unwrap().seq).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "FIFO order: {seqs:?}");
        let bott = &e.net.channels[0].stats;
        assert_eq!(out.len() as u64 + bott.drops[0], 20);
        assert_eq!(
            e.trace.drops.time.len() as u64,
            bott.drops[0],
            "every drop is in the simulator's drops trace"
        );
        assert_eq!(
            e.trace.arrival.time.len(),
            20,
            "the bottleneck is monitored: every arrival traced"
        );
        // 1 ms samples of both bottleneck directions over the second: the data direction's
        // queue holds the 5 waiting at 1 ms (one leaves every 1.2 ms), then drains to empty.
        let data: Vec<u32> = (0..e.trace.queue.time.len())
            .filter(|&i| e.trace.queue.channel[i] == 0)
            .map(|i| e.trace.queue.packets[i])
            .collect();
        assert_eq!(data.len(), 1001);
        assert_eq!((data[0], data[1], data[10]), (0, 5, 0));
        assert_eq!(e.flows[0].drops[0], bott.drops[0]);
        assert_eq!(e.stats.mismatched, 0);
        assert_eq!(e.in_flight(), 0);
    }

    #[test]
    fn red_with_ecn_marks_ect_packets_ce_on_the_wire() {
        let red = r#"bandwidth = "10Mbps", delay = "1ms", queue = { kind = "red", limit = "1000p", min_th = 2, max_th = 100, max_p = 0.5, w_q = 1.0, ecn = true }"#;
        let mut e = Emulator::new(&scenario(red)).unwrap();
        for i in 0..50u32 {
            e.receive(0, data(1 + 1460 * i, 1460, 2), 0);
        }
        let out = run_to(&mut e, 1000 * MS);
        let ce = out.iter().filter(|o| o.2[1] & 3 == 3).count() as u64;
        assert!(ce > 0);
        assert_eq!(ce, e.net.channels[0].stats.marks);
        assert_eq!(e.flows[0].ce_received, ce);
        assert!(out.iter().all(|o| wire::parse(&o.2).is_some()));
    }

    #[test]
    fn retransmissions_are_counted_where_the_sequence_goes_back() {
        let mut e = Emulator::new(&scenario(r#"bandwidth = "10Mbps", delay = "1ms""#)).unwrap();
        e.receive(0, data(1, 100, 0), 0);
        e.receive(0, data(101, 100, 0), 0);
        e.receive(0, data(1, 100, 0), 0);
        let mut cwr = data(201, 100, 0);
        cwr[33] |= CWR;
        crate::testbed::wire::fix_ip_checksum(&mut cwr);
        e.receive(0, cwr, 0);
        let w = &e.flows[0];
        assert_eq!(
            (w.data_packets, w.retransmissions, w.bytes_sent, w.cwr_sent),
            (4, 1, 400, 1)
        );
    }

    #[test]
    fn a_threshold_router_sends_real_icmp_source_quenches_back_to_the_sender() {
        let mut e = Emulator::new(&scenario(r#"bandwidth = "10Mbps", delay = "1ms", queue = { kind = "threshold", limit = "20p", tau = 3 }"#)).unwrap();
        for i in 0..10u32 {
            e.receive(0, data(1 + 1460 * i, 1460, 0), 0);
        }
        let out = run_to(&mut e, 1000 * MS);
        let quench: Vec<_> = out.iter().filter(|o| o.0 == 0).collect();
        assert!(!quench.is_empty());
        assert_eq!(quench.len() as u64, e.net.channels[0].stats.quench);
        let f = wire::parse(&quench[0].2).unwrap();
        assert_eq!(
            (f.proto, f.src, f.dst),
            (wire::IPPROTO_ICMP, node_addr(1), node_addr(0))
        );
    }

    #[test]
    fn packets_from_strangers_or_not_ipv4_are_ignored() {
        let mut e = Emulator::new(&scenario(r#"bandwidth = "10Mbps", delay = "1ms""#)).unwrap();
        e.receive(0, vec![0x60; 48], 0);
        e.receive(0, tcp_packet(0x0b000001, node_addr(3), 1, 2, 3, 0, 0, 0), 0);
        e.receive(1, data(1, 10, 0), 0); // sender's address from the receiver's port
        assert_eq!(
            (e.stats.received, e.stats.ignored, e.in_flight()),
            (3, 3, 0)
        );
    }

    #[test]
    fn an_on_off_flow_writes_what_the_simulators_source_writes_until_its_stop() {
        let o = |k: &str, v: &str| format!("flows.0.{k}={v}");
        let over = [
            o(
                "app",
                r#"{ kind = "onoff", on = "200ms", off = "300ms", rate = "1Mbps" }"#,
            ),
            o("stop", "4s"),
            o("start", "1s"),
        ];
        let s = scenario_set(r#"bandwidth = "10Mbps", delay = "1ms""#, &over);
        let e = Emulator::new(&s).unwrap();
        let p = &e.plans[0];
        assert_eq!(
            p.bytes, None,
            "no byte limit: the schedule says what is written"
        );
        // The simulator's own source, with the flow's stream: the same writes, none after the stop.
        let cfg = crate::sim::app::OnOffConfig {
            on: 200 * MS,
            off: 300 * MS,
            dist: crate::sim::app::Dist::Exponential,
            load: crate::sim::app::Load::Rate(1_000_000),
        };
        let mut src = crate::sim::app::OnOff::new(
            cfg,
            1448,
            crate::rng::Stream::new(s.simulation.seed, crate::rng::Component::App(0)),
            1000 * MS,
        );
        let mut want = Vec::new();
        while src.next_wake() < 4000 * MS {
            let t = src.next_wake();
            let b = src.wake(t);
            if b > 0 {
                want.push((t, b));
            }
        }
        assert!(want.len() > 50 && p.writes == want);
        assert!(p.writes.first().unwrap().0 >= 1000 * MS && p.writes.last().unwrap().0 < 4000 * MS);
        // Each write is whole segments, about 1 Mb/s while on (on 40 % of the time).
        let total: u64 = p.writes.iter().map(|w| w.1).sum();
        assert!(p.writes.iter().all(|w| w.1 % 1448 == 0));
        assert!((total as f64 * 8.0 / 3.0 - 0.4e6).abs() < 0.25e6, "{total}");
    }

    #[test]
    fn snoop_has_no_real_time_form_and_says_so() {
        let err = Emulator::new(&scenario(
            r#"bandwidth = "10Mbps", delay = "1ms", agent = { kind = "snoop" }"#,
        ))
        .err()
        .unwrap();
        assert!(err.to_string().contains("Snoop"), "{err}");
    }
}
