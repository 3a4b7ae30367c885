//! A channel: one direction of a link — a queue, a transmitter serialising at `bandwidth`, a wire
//! of constant propagation `delay`, an error model and scheduled losses. Packets leave the wire in
//! the order they entered it, `delay` after their last bit was sent — or, during a delay spike,
//! `delay` after the spike ends.

use super::agent::QueueAgent;
use super::error_model::{ErrorModel, ScheduledLosses};
use super::packet::{Kind, NodeId, Packet};
use super::queue::{DropCause, Queue, Verdict};
use super::units::tx_time;
use crate::rng::{Component, Stream};
use crate::time::Nanos;
use std::collections::VecDeque;

/// How to build one channel.
#[derive(Debug, Clone)]
pub struct ChannelSpec {
    pub bandwidth: u64,
    pub delay: Nanos,
    pub queue: Queue,
    pub errors: ErrorModel,
    pub losses: Vec<Nanos>,
    /// Delay spikes as [start, end): a packet whose serialisation ends inside one is held until
    /// its end (a stalled link: radio ARQ, handover), then propagates as usual.
    pub delay_spikes: Vec<(Nanos, Nanos)>,
    /// Random delay spikes and link-layer retransmissions (none by default).
    pub variation: DelayVariation,
    /// Outages as [start, end): a data packet whose serialisation ends inside one is lost.
    pub outages: Vec<(Nanos, Nanos)>,
    /// Name for reports, e.g. `bottleneck>`.
    pub name: String,
    /// Sample this channel's queue length periodically into the trace.
    pub monitored: bool,
    /// A node agent watching this channel's queue (e.g. a source-quench router).
    pub agent: Option<QueueAgent>,
}

/// A channel's random delay variation: both parts optional, both seeded from the scenario's seed
/// through the channel's own stream ([`Component::ChannelDelay`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DelayVariation {
    pub spikes: Option<SpikeProcess>,
    pub arq: Option<Arq>,
}

/// Delay spikes at random times: the gap from one spike's end to the next one's start is
/// exponential with mean `every` (so spike starts form a Poisson process in the time between
/// spikes), the first measured from time 0; each lasts a duration uniform in [`min`, `max`]. A
/// spike acts as a listed delay spike does ([`ChannelSpec::delay_spikes`]): a packet whose
/// serialisation ends inside it is held until it ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpikeProcess {
    pub every: Nanos,
    pub min: Nanos,
    pub max: Nanos,
}

/// Link-layer retransmission as IEEE 802.11's DCF does it (802.11-2007 §9.2.4–9.2.5): before
/// every attempt the station waits a backoff of a whole number of slots uniform in [0, CW]; an
/// attempt fails with probability `per` (independently); after a failure CW doubles (2·CW + 1)
/// up to `cw_max`, from `cw_min` for each new frame; after `retries` retransmissions fail the
/// frame is dropped (counted as corruption). The frame's service time — what keeps the
/// transmitter busy — is the sum of its attempts' backoffs and serialisations, so the delay
/// varies per frame and queues behind slow frames, while throughput falls as on a real lossy
/// radio. Interframe spaces and the MAC's own ACK frames are not modelled (a constant the link's
/// `delay` absorbs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arq {
    pub per: f64,
    pub retries: u32,
    pub slot: Nanos,
    pub cw_min: u32,
    pub cw_max: u32,
}

impl Arq {
    /// One frame's service time given its serialisation time `tx`, and whether every attempt failed.
    pub fn service(&self, tx: Nanos, rng: &mut Stream) -> (Nanos, bool) {
        let mut total: Nanos = 0;
        let mut cw = self.cw_min;
        for _ in 0..=self.retries {
            let backoff = (rng.uniform() * (cw as f64 + 1.0)) as u64;
            total = total
                .saturating_add(backoff.saturating_mul(self.slot))
                .saturating_add(tx);
            if !rng.bernoulli(self.per) {
                return (total, false);
            }
            cw = cw.saturating_mul(2).saturating_add(1).min(self.cw_max);
        }
        (total, true)
    }
}

/// Counters one channel keeps; drops are indexed by [`DropCause`] as `usize`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelStats {
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_sent: u64,
    pub busy_time: Nanos,
    pub drops: [u64; 4],
    pub marks: u64,
    /// Signals node agents raised about this queue (source quench).
    pub quench: u64,
}

impl ChannelStats {
    pub fn drops_by(&self, cause: DropCause) -> u64 {
        self.drops[cause as usize]
    }
}

#[derive(Debug, Clone)]
pub struct Channel {
    pub from: NodeId,
    pub to: NodeId,
    pub bandwidth: u64,
    pub delay: Nanos,
    pub queue: Queue,
    pub errors: ErrorModel,
    pub losses: ScheduledLosses,
    /// Delay spikes, sorted, and the first that has not ended yet.
    spikes: Vec<(Nanos, Nanos)>,
    next_spike: usize,
    variation: DelayVariation,
    /// The random spike process's current or next spike as [start, end) (unused without one).
    random_spike: (Nanos, Nanos),
    delay_rng: Stream,
    /// The frame being serialised failed every link-layer attempt ([`Arq`]).
    on_wire_lost: bool,
    /// Outages, sorted, and the first that has not ended yet.
    outages: Vec<(Nanos, Nanos)>,
    next_outage: usize,
    pub name: String,
    pub monitored: bool,
    error_rng: Stream,
    queue_rng: Stream,
    /// The packet being serialised, if any.
    on_wire: Option<Packet>,
    /// Packets propagating along the wire, oldest first (the engine schedules their arrivals).
    pub wire: VecDeque<Packet>,
    pub stats: ChannelStats,
    /// Packets the queue dropped or marked at dequeue (CoDel), counted in `stats`, waiting for
    /// the engine to trace them ([`Self::take_acted`]). Always empty for disciplines that decide
    /// at arrival only.
    acted: Vec<(Packet, Verdict)>,
    /// The last (wire size, rate, serialisation time) computed: nearly every packet is one of two
    /// sizes (a full segment, a bare ACK), so this saves a 64-bit division per packet and hop on
    /// the channels that carry one kind only. Exact: the same function of the same arguments.
    last_tx: (u32, u64, Nanos),
}

/// What the channel asks of the engine after it accepted an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    pub verdict: Verdict,
    /// Packets in the queue right after the discipline decided, before an idle transmitter took
    /// the head (what a threshold watcher compares with τ).
    pub queue_len: u32,
    /// The transmitter was idle and started: a transmission-done event is due at this time.
    pub tx_done_at: Option<Nanos>,
}

/// What became of the packet whose serialisation just ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// It is on the wire and reaches `to` at this time.
    Arrives(Packet, Nanos),
    Lost(Packet, DropCause),
}

impl Channel {
    pub fn new(id: u32, from: NodeId, to: NodeId, spec: ChannelSpec, seed: u64) -> Self {
        Self {
            from,
            to,
            bandwidth: spec.bandwidth,
            delay: spec.delay,
            queue: spec.queue,
            errors: spec.errors,
            losses: ScheduledLosses::new(spec.losses),
            spikes: {
                let mut s = spec.delay_spikes;
                s.sort_unstable();
                s
            },
            next_spike: 0,
            random_spike: (0, 0),
            delay_rng: Stream::new(seed, Component::ChannelDelay(id)),
            on_wire_lost: false,
            variation: spec.variation,
            outages: {
                let mut s = spec.outages;
                s.sort_unstable();
                s
            },
            next_outage: 0,
            name: spec.name,
            monitored: spec.monitored,
            error_rng: Stream::new(seed, Component::ChannelErrors(id)),
            queue_rng: Stream::new(seed, Component::Queue(id)),
            on_wire: None,
            wire: VecDeque::new(),
            stats: ChannelStats::default(),
            acted: Vec::new(),
            last_tx: (0, 0, 0),
        }
        .with_first_random_spike()
    }

    /// Draw the random spike process's first spike (from time 0); nothing without a process.
    fn with_first_random_spike(mut self) -> Self {
        if self.variation.spikes.is_some() {
            self.random_spike = self.draw_spike_after(0);
        }
        self
    }

    /// The next random spike, its start an exponential gap after `from`.
    fn draw_spike_after(&mut self, from: Nanos) -> (Nanos, Nanos) {
        let Some(p) = self.variation.spikes else {
            return (Nanos::MAX, Nanos::MAX);
        };
        let start = from.saturating_add(self.delay_rng.exponential(p.every as f64) as Nanos);
        let span = p.max - p.min;
        let len = p.min
            + if span == 0 {
                0
            } else {
                (self.delay_rng.uniform() * (span as f64 + 1.0)) as Nanos
            }
            .min(span);
        (start, start.saturating_add(len))
    }

    /// A packet arrives at the queue. Every arrival passes the queue discipline, even onto an idle
    /// link, so an AQM sees the same arrival process as in ns-2.
    #[inline]
    pub fn arrive(&mut self, pkt: Packet, now: Nanos) -> Accepted {
        self.stats.arrivals += 1;
        // An idle transmitter behind an empty DropTail FIFO takes the arrival at once: what
        // enqueue-then-start_next does (Enqueued, one packet in the queue as the discipline
        // decided, then dequeued), without copying the packet through the FIFO. DropTail keeps no
        // other state and has no idle hook; RED and CoDel take the general path.
        if self.on_wire.is_none()
            && matches!(self.queue, Queue::DropTail(_))
            && self.queue.fifo().is_empty()
            && self.queue.fifo().fits(&pkt)
        {
            return Accepted {
                verdict: Verdict::Enqueued,
                queue_len: 1,
                tx_done_at: Some(self.transmit(pkt, now)),
            };
        }
        let verdict = self.queue.enqueue(pkt, now, &mut self.queue_rng);
        match verdict {
            Verdict::Dropped(cause) => self.stats.drops[cause as usize] += 1,
            Verdict::Marked => self.stats.marks += 1,
            Verdict::Enqueued => {}
        }
        let queue_len = self.queue.fifo().len() as u32;
        let tx_done_at = if self.on_wire.is_none() {
            self.start_next(now)
        } else {
            None
        };
        Accepted {
            verdict,
            queue_len,
            tx_done_at,
        }
    }

    /// Start serialising the head of the queue; `None` when the queue is empty (link goes idle).
    fn start_next(&mut self, now: Nanos) -> Option<Nanos> {
        let before = self.acted.len();
        let next = self.queue.dequeue(now, &mut self.acted);
        for (_, verdict) in &self.acted[before..] {
            match verdict {
                Verdict::Dropped(cause) => self.stats.drops[*cause as usize] += 1,
                Verdict::Marked => self.stats.marks += 1,
                Verdict::Enqueued => {}
            }
        }
        match next {
            Some(p) => Some(self.transmit(p, now)),
            None => {
                self.queue.on_idle(now);
                None
            }
        }
    }

    /// Put `p` on the transmitter at `now`; returns when its serialisation (with link-layer
    /// retransmissions, if any) ends.
    #[inline]
    fn transmit(&mut self, p: Packet, now: Nanos) -> Nanos {
        let tx = if (p.size, self.bandwidth) == (self.last_tx.0, self.last_tx.1) {
            self.last_tx.2
        } else {
            let t = tx_time(p.size as u64, self.bandwidth);
            self.last_tx = (p.size, self.bandwidth, t);
            t
        };
        let t = match self.variation.arq {
            None => tx,
            Some(arq) => {
                let (t, lost) = arq.service(tx, &mut self.delay_rng);
                self.on_wire_lost = lost;
                t
            }
        };
        self.stats.busy_time += t;
        self.on_wire = Some(p);
        now.saturating_add(t)
    }

    /// Serialisation of the packet on the wire ended at `now`: decide its fate, start the next.
    #[inline]
    pub fn tx_done(&mut self, now: Nanos) -> (Option<Departure>, Option<Nanos>) {
        let departure = self.on_wire.take().map(|p| {
            self.stats.departures += 1;
            self.stats.bytes_sent += p.size as u64;
            // Scheduled losses hit data only, so "a loss at t" means a lost segment.
            if p.kind == Kind::Data && (self.losses.take_due(now) || self.in_outage(now)) {
                self.stats.drops[DropCause::Scheduled as usize] += 1;
                Departure::Lost(p, DropCause::Scheduled)
            } else if std::mem::take(&mut self.on_wire_lost) {
                // Every link-layer attempt failed: the radio's residual loss.
                self.stats.drops[DropCause::Corruption as usize] += 1;
                Departure::Lost(p, DropCause::Corruption)
            } else if self.errors.corrupts(p.size, &mut self.error_rng) {
                self.stats.drops[DropCause::Corruption as usize] += 1;
                Departure::Lost(p, DropCause::Corruption)
            } else {
                Departure::Arrives(p, self.held_until(now).saturating_add(self.delay))
            }
        });
        (departure, self.start_next(now))
    }

    /// Whether the queue dropped or marked packets at dequeue that are not yet traced.
    #[inline]
    pub fn has_acted(&self) -> bool {
        !self.acted.is_empty()
    }

    /// The packets dropped or marked at dequeue since the last call, oldest first.
    #[inline]
    pub fn take_acted(&mut self) -> std::vec::Drain<'_, (Packet, Verdict)> {
        self.acted.drain(..)
    }

    /// An outage covers `now` (its packets are lost; counted as scheduled losses).
    #[inline]
    fn in_outage(&mut self, now: Nanos) -> bool {
        while self
            .outages
            .get(self.next_outage)
            .is_some_and(|&(_, end)| end <= now)
        {
            self.next_outage += 1;
        }
        self.outages
            .get(self.next_outage)
            .is_some_and(|&(start, _)| start <= now)
    }

    /// When a packet whose serialisation ended at `now` enters the wire: at once, or when the
    /// delay spike covering `now` ends. Arrival times stay non-decreasing, so the wire stays FIFO
    /// (the spurious-retransmission oracle relies on it).
    #[inline]
    fn held_until(&mut self, now: Nanos) -> Nanos {
        while self
            .spikes
            .get(self.next_spike)
            .is_some_and(|&(_, end)| end <= now)
        {
            self.next_spike += 1;
        }
        let listed = match self.spikes.get(self.next_spike) {
            Some(&(start, end)) if start <= now => end,
            _ => now,
        };
        if self.variation.spikes.is_none() {
            return listed;
        }
        while self.random_spike.1 <= now {
            self.random_spike = self.draw_spike_after(self.random_spike.1);
        }
        let (start, end) = self.random_spike;
        if start <= now {
            listed.max(end)
        } else {
            listed
        }
    }
}
