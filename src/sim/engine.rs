//! The discrete-event loop: a binary heap of events ordered by (time, sequence number), integer
//! nanosecond time, enum dispatch for events. Same network + flows + seed → the same event sequence,
//! bit for bit (checked through [`Outcome::event_hash`]).

use super::app::OnOff;
use super::link::Departure;
use super::packet::{FlowId, Kind, NodeId, Packet};
use super::queue::Verdict;
use super::tcp::receiver::Receiver;
use super::tcp::sender::Sender;
use super::topology::Network;
use super::trace::Trace;
use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy)]
enum Event {
    /// A channel finished serialising its packet.
    TxDone(u32),
    /// The oldest packet on channel n's wire reaches the far end. Wires are FIFO (constant delay),
    /// so the packet itself waits in the channel, keeping heap entries small.
    Arrive(u32),
    FlowStart(FlowId),
    Rto(FlowId),
    DelAck(FlowId),
    QueueSample,
    /// Snapshot counters: measurements start here.
    Warmup,
    /// Flow f's on/off application wakes up (writes data, changes period).
    App(FlowId),
}

impl Event {
    /// A small fingerprint of the event for the run's event hash.
    fn fingerprint(&self) -> u64 {
        match self {
            Event::TxDone(c) => 1 | (*c as u64) << 8,
            Event::Arrive(c) => 2 | (*c as u64) << 8,
            Event::FlowStart(f) => 3 | (*f as u64) << 8,
            Event::Rto(f) => 4 | (*f as u64) << 8,
            Event::DelAck(f) => 5 | (*f as u64) << 8,
            Event::QueueSample => 6,
            Event::Warmup => 7,
            Event::App(f) => 8 | (*f as u64) << 8,
        }
    }
}

/// A heap entry. `key` = time · 2⁶⁴ + sequence number: one integer comparison orders by time, then
/// by scheduling order, so simultaneous events run first-scheduled-first.
struct Scheduled {
    key: u128,
    event: Event,
}

impl Scheduled {
    fn time(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    /// Reversed, so the max-heap pops the earliest (time, seq) first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// One TCP connection and the engine's bookkeeping for it.
#[derive(Debug, Clone)]
pub struct Flow {
    pub sender: Sender,
    pub receiver: Receiver,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: Nanos,
    /// When the last byte of a finite transfer reached the application.
    pub completed_at: Option<Nanos>,
    pub app_bytes: u64,
    /// Bytes delivered and sent when measurement began (warm-up).
    pub delivered_at_warmup: u64,
    pub sent_at_warmup: u64,
    pub offered_at_warmup: u64,
    /// An on/off source feeding the sender over time; None: bulk, all data there at the start.
    pub app: Option<OnOff>,
    rto_event_at: Option<Nanos>,
    delack_event_at: Option<Nanos>,
}

impl Flow {
    pub fn new(sender: Sender, receiver: Receiver, src: NodeId, dst: NodeId, start: Nanos, app_bytes: u64) -> Self {
        Self { sender, receiver, src, dst, start, completed_at: None, app_bytes, delivered_at_warmup: 0, sent_at_warmup: 0, offered_at_warmup: 0, app: None, rto_event_at: None, delack_event_at: None }
    }

    /// Feed the sender from an on/off source instead of a bulk transfer (no completion time).
    pub fn with_app(mut self, app: OnOff) -> Self {
        self.app = Some(app);
        self.app_bytes = u64::MAX;
        self
    }
}

pub struct Engine {
    pub now: Nanos,
    heap: BinaryHeap<Scheduled>,
    next_seq: u64,
    pub network: Network,
    pub flows: Vec<Flow>,
    pub trace: Trace,
    pub end: Nanos,
    pub warmup: Nanos,
    sample_interval: Nanos,
    /// Channel busy time when measurement began.
    pub busy_at_warmup: Vec<Nanos>,
    pub events: u64,
    pub event_hash: u64,
    out: Vec<Packet>,
}

impl Engine {
    pub fn new(network: Network, flows: Vec<Flow>, end: Nanos, warmup: Nanos, sample_interval: Nanos) -> Self {
        let n_channels = network.channels.len();
        let mut e = Self {
            now: 0,
            heap: BinaryHeap::new(),
            next_seq: 0,
            network,
            flows,
            trace: Trace::default(),
            end,
            warmup,
            sample_interval,
            busy_at_warmup: vec![0; n_channels],
            events: 0,
            event_hash: 0xCBF2_9CE4_8422_2325,
            out: Vec::new(),
        };
        for f in 0..e.flows.len() {
            let start = e.flows[f].start;
            e.schedule(start, Event::FlowStart(f as FlowId));
            if let Some(app) = &e.flows[f].app {
                // Scheduled after FlowStart, so at equal times the sender starts first.
                let wake = app.next_wake();
                e.schedule(wake, Event::App(f as FlowId));
            }
        }
        if warmup > 0 {
            e.schedule(warmup, Event::Warmup);
        }
        if sample_interval > 0 && e.network.channels.iter().any(|c| c.monitored) {
            e.schedule(0, Event::QueueSample);
        }
        e
    }

    #[inline]
    fn schedule(&mut self, time: Nanos, event: Event) {
        self.heap.push(Scheduled { key: (time as u128) << 64 | self.next_seq as u128, event });
        self.next_seq += 1;
    }

    /// Run until no event is left at or before `end`.
    pub fn run(&mut self) {
        while let Some(top) = self.heap.peek() {
            if top.time() > self.end {
                break;
            }
            let top = self.heap.pop().expect("peeked");
            let (time, event) = (top.time(), top.event);
            self.now = time;
            self.events += 1;
            // FNV-1a style fold of (time, event): any change in order or timing changes the hash.
            self.event_hash = (self.event_hash ^ time).wrapping_mul(0x0000_0100_0000_01B3);
            self.event_hash = (self.event_hash ^ event.fingerprint()).wrapping_mul(0x0000_0100_0000_01B3);
            self.dispatch(event);
        }
        self.now = self.now.max(self.end);
    }

    fn dispatch(&mut self, event: Event) {
        let now = self.now;
        match event {
            Event::TxDone(ch) => self.tx_done(ch),
            Event::Arrive(ch) => {
                let channel = &mut self.network.channels[ch as usize];
                let node = channel.to;
                let pkt = channel.wire.pop_front().expect("one packet on the wire per Arrive event");
                // Fold what arrived into the hash too, so equal hashes mean equal packet histories.
                self.event_hash = (self.event_hash ^ (pkt.seq ^ pkt.ack.rotate_left(17) ^ (pkt.flow as u64) << 48))
                    .wrapping_mul(0x0000_0100_0000_01B3);
                if node == pkt.dst {
                    self.deliver(pkt);
                } else {
                    self.forward(node, pkt);
                }
            }
            Event::FlowStart(f) => {
                let flow = &mut self.flows[f as usize];
                flow.sender.start(now, &mut self.out, &mut self.trace);
                self.flush(f);
            }
            Event::Rto(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.rto_event_at == Some(now) {
                    flow.rto_event_at = None;
                }
                // Lazy timer: the deadline may have moved since this event was scheduled.
                if flow.sender.rto_deadline().is_some_and(|d| d <= now) {
                    flow.sender.on_rto(now, &mut self.out, &mut self.trace);
                }
                self.flush(f);
            }
            Event::DelAck(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.delack_event_at == Some(now) {
                    flow.delack_event_at = None;
                }
                flow.receiver.on_delack_timer(now, &mut self.out);
                self.flush(f);
            }
            Event::QueueSample => {
                for (i, c) in self.network.channels.iter().enumerate().filter(|(_, c)| c.monitored) {
                    let q = c.queue.fifo();
                    self.trace.queue(now, i as u32, q.len() as u32, q.bytes(), c.queue.average());
                }
                self.schedule(now.saturating_add(self.sample_interval), Event::QueueSample);
            }
            Event::App(f) => {
                let flow = &mut self.flows[f as usize];
                if let Some(app) = &mut flow.app {
                    let bytes = app.wake(now);
                    let next = app.next_wake();
                    if bytes > 0 {
                        flow.sender.write(bytes, now, &mut self.out, &mut self.trace);
                    }
                    if next <= self.end {
                        self.schedule(next, Event::App(f));
                    }
                }
                self.flush(f);
            }
            Event::Warmup => {
                for f in &mut self.flows {
                    f.delivered_at_warmup = f.receiver.stats.bytes_delivered;
                    f.sent_at_warmup = f.sender.stats.bytes_sent;
                    f.offered_at_warmup = f.sender.app_bytes();
                }
                for (b, c) in self.busy_at_warmup.iter_mut().zip(&self.network.channels) {
                    *b = c.stats.busy_time;
                }
            }
        }
    }

    /// A packet reached its destination host.
    fn deliver(&mut self, pkt: Packet) {
        let now = self.now;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        match pkt.kind {
            Kind::Data => {
                flow.receiver.on_data(&pkt, now, &mut self.out);
                if flow.completed_at.is_none() && flow.receiver.stats.bytes_delivered >= flow.app_bytes {
                    flow.completed_at = Some(now);
                }
            }
            Kind::Ack => flow.sender.on_ack(&pkt, now, &mut self.out, &mut self.trace),
            Kind::Quench => flow.sender.on_quench(now, &mut self.trace),
        }
        self.flush(f);
    }

    /// Inject the packets an endpoint of flow `f` produced, and (re)schedule its timers.
    fn flush(&mut self, f: FlowId) {
        let mut out = std::mem::take(&mut self.out);
        for pkt in out.drain(..) {
            self.forward(pkt.src, pkt);
        }
        self.out = out;
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        // Only schedule an event when the deadline moved earlier than the pending one; a later
        // deadline is picked up when the pending event fires (lazy cancellation).
        let mut rto = None;
        if let Some(d) = flow.sender.rto_deadline() {
            if flow.rto_event_at.is_none_or(|e| e > d) {
                flow.rto_event_at = Some(d.max(now));
                rto = flow.rto_event_at;
            }
        }
        let mut delack = None;
        if let Some(d) = flow.receiver.delack_deadline() {
            if flow.delack_event_at.is_none_or(|e| e > d) {
                flow.delack_event_at = Some(d.max(now));
                delack = flow.delack_event_at;
            }
        }
        if let Some(t) = rto {
            self.schedule(t, Event::Rto(f));
        }
        if let Some(t) = delack {
            self.schedule(t, Event::DelAck(f));
        }
    }

    /// Hand a packet at `node` to the channel towards its destination.
    fn forward(&mut self, node: NodeId, pkt: Packet) {
        if node == pkt.dst {
            // A signal generated at the destination's own node (a quench from its access queue).
            self.deliver(pkt);
            return;
        }
        let now = self.now;
        let Some(ch) = self.network.next_hop(node, pkt.dst) else {
            return; // unreachable: validation rejects such scenarios, so this is never hit
        };
        let channel = &mut self.network.channels[ch as usize];
        let from = channel.from;
        let accepted = channel.arrive(pkt, now);
        match accepted.outcome.verdict {
            Verdict::Dropped(cause) => self.trace.drop(now, ch, pkt.flow, pkt.kind, pkt.seq, cause),
            Verdict::Marked => self.trace.mark(now, ch, pkt.flow, pkt.seq),
            Verdict::Enqueued => {}
        }
        if let Some(t) = accepted.tx_done_at {
            self.schedule(t, Event::TxDone(ch));
        }
        if accepted.outcome.quench {
            let quench = Packet { kind: Kind::Quench, src: from, dst: pkt.src, size: 56, len: 0, ..pkt };
            self.forward(from, quench);
        }
    }

    fn tx_done(&mut self, ch: u32) {
        let now = self.now;
        let channel = &mut self.network.channels[ch as usize];
        let (departure, next) = channel.tx_done(now);
        if let Some(t) = next {
            self.schedule(t, Event::TxDone(ch));
        }
        match departure {
            Some(Departure::Arrives(pkt, at)) => {
                self.network.channels[ch as usize].wire.push_back(pkt);
                self.schedule(at, Event::Arrive(ch));
            }
            Some(Departure::Lost(pkt, cause)) => self.trace.drop(now, ch, pkt.flow, pkt.kind, pkt.seq, cause),
            None => {}
        }
    }
}
