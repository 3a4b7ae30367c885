//! Node agents: code that lives at a node and sees the packets forwarded through it, queued on
//! its outgoing channels or delivered to it. An agent may send packets from its node and keep a
//! timer; the engine calls it only where it registered ([`Placement`]), so a node without agents
//! costs one empty-list check per packet.
//!
//! Adding an agent: one file here implementing [`NodeAgent`], one variant in [`Agent`] (the event
//! loop dispatches over the enum, no `dyn`). First user: [`source_quench::SourceQuench`], the
//! router that answers a full queue with a signal to the sender; [`snoop::Snoop`] at a gateway
//! before a lossy link caches data (`on_queued`), absorbs duplicate ACKs (`on_forward`) and
//! retransmits locally (also on its timer).

#[cfg(test)]
pub(crate) mod probe;
pub mod snoop;
pub mod source_quench;

use super::link::ChannelStats;
use super::packet::{NodeId, Packet};
use super::queue::Verdict;
use crate::time::Nanos;

/// Where the engine calls an agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Node hooks (`on_forward`, `on_deliver`) run at this node; its packets leave from here.
    pub node: NodeId,
    /// `on_queued` runs for arrivals at these channels' queues (channels leaving `node`).
    pub channels: Vec<u32>,
    /// Whether `on_forward` / `on_deliver` are wanted (an agent that only watches queues says no).
    pub node_hooks: bool,
}

/// What the engine does with a packet after a node hook saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Carry on: forward it, or hand it to the endpoint.
    Pass,
    /// The agent took it (e.g. Snoop absorbing a duplicate ACK): it goes no further.
    Consume,
}

/// Where an agent is called from: the time, its node, and the packets it sends from the node.
pub struct At<'a> {
    pub now: Nanos,
    pub node: NodeId,
    pub out: &'a mut Vec<Packet>,
}

/// An arrival at a watched queue, after the queue discipline decided.
pub struct Queued<'a> {
    pub channel: u32,
    pub verdict: Verdict,
    /// Packets waiting in the queue just after the discipline decided (the arrival included
    /// unless dropped), before an idle transmitter took the head.
    pub queue_len: u32,
    /// The channel's counters; an agent counts its signals in `quench`.
    pub stats: &'a mut ChannelStats,
}

/// The hooks an agent may implement; every default does nothing.
pub trait NodeAgent {
    /// A packet at this node on its way elsewhere (arrived from a channel or sent by a local
    /// endpoint), before it is queued. The agent may rewrite it.
    fn on_forward(&mut self, _at: &mut At, _pkt: &mut Packet) -> Fate {
        Fate::Pass
    }
    /// An arrival at a watched channel's queue, after the discipline's verdict.
    fn on_queued(&mut self, _at: &mut At, _pkt: &Packet, _q: &mut Queued) {}
    /// A packet addressed to this node, before its endpoint sees it.
    fn on_deliver(&mut self, _at: &mut At, _pkt: &Packet) -> Fate {
        Fate::Pass
    }
    /// When the agent's timer is due, if it keeps one.
    fn next_deadline(&self) -> Option<Nanos> {
        None
    }
    /// Called at (or after) `next_deadline`; the agent checks the deadline itself, since it may
    /// have moved later since the engine scheduled it.
    fn on_timer(&mut self, _at: &mut At) {}
}

/// An agent a scenario attaches to a channel's queue, built at the channel's sending node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueAgent {
    SourceQuench {
        tau: u64,
    },
    /// Snoop caching the data entering the channel (`topology.<link>.agent`).
    Snoop(snoop::SnoopParams),
}

impl QueueAgent {
    pub fn build(self, node: NodeId, channel: u32) -> Agent {
        match self {
            QueueAgent::SourceQuench { tau } => {
                Agent::SourceQuench(source_quench::SourceQuench::new(node, channel, tau))
            }
            QueueAgent::Snoop(p) => Agent::Snoop(snoop::Snoop::new(node, channel, p)),
        }
    }
}

/// Every agent kind, for enum dispatch in the event loop.
#[derive(Debug, Clone)]
pub enum Agent {
    SourceQuench(source_quench::SourceQuench),
    Snoop(snoop::Snoop),
    /// Test-only: records what the engine shows it (engine tests of the seam).
    #[cfg(test)]
    Probe(probe::Probe),
}

macro_rules! dispatch {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            Agent::SourceQuench($a) => $e,
            Agent::Snoop($a) => $e,
            #[cfg(test)]
            Agent::Probe($a) => $e,
        }
    };
}

/// Link agents as named in scenario files (`topology.<link>.agent = { kind = "snoop" }`).
pub static FAMILY: super::component::Family<snoop::SnoopParams> = super::component::Family {
    key: "agent",
    noun: "agent",
    members: &[snoop::COMPONENT],
};

impl Agent {
    pub fn placement(&self) -> Placement {
        dispatch!(self, a => a.placement())
    }
}

impl NodeAgent for Agent {
    #[inline]
    fn on_forward(&mut self, at: &mut At, pkt: &mut Packet) -> Fate {
        dispatch!(self, a => a.on_forward(at, pkt))
    }
    #[inline]
    fn on_queued(&mut self, at: &mut At, pkt: &Packet, q: &mut Queued) {
        dispatch!(self, a => a.on_queued(at, pkt, q))
    }
    #[inline]
    fn on_deliver(&mut self, at: &mut At, pkt: &Packet) -> Fate {
        dispatch!(self, a => a.on_deliver(at, pkt))
    }
    #[inline]
    fn next_deadline(&self) -> Option<Nanos> {
        dispatch!(self, a => a.next_deadline())
    }
    #[inline]
    fn on_timer(&mut self, at: &mut At) {
        dispatch!(self, a => a.on_timer(at))
    }
}
