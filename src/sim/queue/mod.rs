//! Queues in front of a channel's transmitter. One discipline per file; the channel dispatches
//! over the [`Queue`] enum. The packet being serialised is not in the queue (as in ns-2), so a
//! 100-packet queue holds 100 waiting packets plus the one on the wire.

pub mod codel;
pub mod droptail;
pub mod red;
pub mod threshold;

use super::agent::QueueAgent;
use super::component::{Args, Family};
use super::packet::Packet;
use super::units::{parse_limit, Limit};
use crate::params::ParamError;
use crate::params::ParamSpec;
use crate::rng::Stream;
use crate::time::Nanos;
use std::collections::VecDeque;

/// What a queue's builder needs to know about its link.
pub struct QueueCtx {
    /// The channel's rate in bit/s (RED's idle-time decay counts packet times).
    pub bandwidth: u64,
}

/// A built queue and the node agent that watches it, if its kind has one.
pub type Built = (Queue, Option<QueueAgent>);

/// Every queue kind, as named in scenario files (`queue = { kind = "red", ... }`).
/// A link without `queue.kind` gets DropTail.
pub const DEFAULT_KIND: &str = "droptail";

pub static FAMILY: Family<Built, QueueCtx> = Family {
    key: "queue",
    noun: "queue",
    members: &[
        droptail::COMPONENT,
        red::COMPONENT,
        threshold::COMPONENT,
        codel::COMPONENT,
    ],
};

/// Every queue's capacity parameter.
pub const LIMIT: ParamSpec = ParamSpec::quantity(
    "limit",
    "100p",
    "packets or bytes (100p, 150000B; a bare number is packets)",
    1.0,
    f64::INFINITY,
    "capacity: packets waiting (the one being sent not counted) or bytes",
)
.spelled_by(super::units::spell_limit);

pub(crate) fn limit<C>(a: &Args<'_, C>) -> Result<Limit, ParamError> {
    a.quantity(
        "limit",
        "a queue limit such as 100p or 150000B",
        parse_limit,
        |l| match *l {
            Limit::Packets(n) | Limit::Bytes(n) => n as f64,
        },
    )
}

/// Why a packet was lost. `Overflow` and `Aqm` are congestion, the other two are the link's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// Buffer full (tail drop, or RED's physical limit). The discriminants are the trace codes
    /// (`trace::DROP_CAUSE_NAMES`) and the indices of `ChannelStats::drops`.
    Overflow = 0,
    /// An active queue manager chose to drop (RED early or forced drop, CoDel head drop).
    Aqm = 1,
    /// Lost to the channel's error model (bit errors, random or bursty loss).
    Corruption = 2,
    /// A loss the scenario scheduled at a given time.
    Scheduled = 3,
}

impl DropCause {
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Overflow => "overflow",
            DropCause::Aqm => "aqm",
            DropCause::Corruption => "corruption",
            DropCause::Scheduled => "scheduled",
        }
    }
}

/// What became of an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Enqueued,
    /// Enqueued with its ECN field set to CE (RFC 3168 §5).
    Marked,
    Dropped(DropCause),
}

/// A FIFO with a packet or byte limit, shared by every discipline.
#[derive(Debug, Clone)]
pub struct Fifo {
    packets: VecDeque<Packet>,
    bytes: u64,
    limit: Limit,
}

impl Fifo {
    pub fn new(limit: Limit) -> Self {
        Self {
            packets: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    pub fn fits(&self, pkt: &Packet) -> bool {
        match self.limit {
            Limit::Packets(n) => (self.packets.len() as u64) < n,
            Limit::Bytes(n) => self.bytes + pkt.size as u64 <= n,
        }
    }

    /// Tail-drop enqueue.
    pub fn push(&mut self, pkt: Packet) -> Verdict {
        if self.fits(&pkt) {
            self.bytes += pkt.size as u64;
            self.packets.push_back(pkt);
            Verdict::Enqueued
        } else {
            Verdict::Dropped(DropCause::Overflow)
        }
    }

    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[derive(Debug, Clone)]
pub enum Queue {
    DropTail(droptail::DropTail),
    Red(red::Red),
    Codel(codel::Codel),
}

impl Queue {
    #[inline]
    pub fn enqueue(&mut self, pkt: Packet, now: Nanos, rng: &mut Stream) -> Verdict {
        match self {
            Queue::DropTail(q) => q.enqueue(pkt),
            Queue::Red(q) => q.enqueue(pkt, now, rng),
            Queue::Codel(q) => q.enqueue(pkt, now),
        }
    }

    /// The packet to transmit at `now`. A discipline that decides at dequeue (CoDel) pushes the
    /// packets it dropped or marked on the way to `acted`; the others never touch it.
    #[inline]
    pub fn dequeue(&mut self, now: Nanos, acted: &mut Vec<(Packet, Verdict)>) -> Option<Packet> {
        match self {
            Queue::Codel(q) => q.dequeue(now, acted),
            _ => self.fifo_mut().pop(),
        }
    }

    /// Whether this discipline drops or marks at dequeue, not only at arrival (the testbed,
    /// which pairs real bytes with accepted packets in arrival order, refuses such queues).
    pub fn acts_at_dequeue(&self) -> bool {
        matches!(self, Queue::Codel(_))
    }

    /// The transmitter found the queue empty and went idle at `now` (RED's idle-time correction).
    pub fn on_idle(&mut self, now: Nanos) {
        if let Queue::Red(q) = self {
            q.on_idle(now);
        }
    }

    pub fn fifo(&self) -> &Fifo {
        match self {
            Queue::DropTail(q) => &q.fifo,
            Queue::Red(q) => &q.fifo,
            Queue::Codel(q) => &q.fifo,
        }
    }

    fn fifo_mut(&mut self) -> &mut Fifo {
        match self {
            Queue::DropTail(q) => &mut q.fifo,
            Queue::Red(q) => &mut q.fifo,
            Queue::Codel(q) => &mut q.fifo,
        }
    }

    /// RED's average queue estimate, for traces; `None` for other disciplines.
    pub fn average(&self) -> Option<f64> {
        match self {
            Queue::Red(q) => Some(q.avg()),
            _ => None,
        }
    }
}

#[cfg(test)]
pub(crate) fn test_packet(size: u32) -> Packet {
    use super::packet::{Ecn, Kind};
    Packet {
        flow: 0,
        src: 0,
        dst: 1,
        kind: Kind::Data,
        size,
        seq: 0,
        len: size.saturating_sub(52),
        ack: 0,
        rwnd: 0,
        tx: 0,
        ecn: Ecn::NotEct,
        ece: false,
        cwr: false,
        ts_val: 0,
        ts_ecr: 0,
        sack: Default::default(),
    }
}

#[cfg(test)]
impl Fifo {
    pub(crate) fn iter_ce_count(&self) -> usize {
        self.packets
            .iter()
            .filter(|p| p.ecn == super::packet::Ecn::Ce)
            .count()
    }
}
