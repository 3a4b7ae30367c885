//! A test agent that records every hook the engine calls, keeps a periodic timer and can absorb
//! a flow's data: the engine tests use it to check the node-agent and timer seams.

use super::{At, Fate, NodeAgent, Placement, Queued};
use crate::sim::packet::{FlowId, Kind, NodeId, Packet};
use crate::time::Nanos;

#[derive(Debug, Clone, Default)]
pub struct Probe {
    pub node: NodeId,
    pub channels: Vec<u32>,
    /// Timer period (0: no timer) and the times it fired.
    pub period: Nanos,
    pub next: Option<Nanos>,
    pub fired: Vec<Nanos>,
    pub forwarded: u64,
    pub queued: u64,
    pub delivered: u64,
    /// Data of this flow is absorbed from this time on.
    pub absorb: Option<(FlowId, Nanos)>,
    pub absorbed: u64,
}

impl Probe {
    pub fn placement(&self) -> Placement {
        Placement {
            node: self.node,
            channels: self.channels.clone(),
            node_hooks: true,
        }
    }
}

impl NodeAgent for Probe {
    fn on_forward(&mut self, at: &mut At, pkt: &mut Packet) -> Fate {
        self.forwarded += 1;
        match self.absorb {
            Some((f, from)) if pkt.flow == f && pkt.kind == Kind::Data && at.now >= from => {
                self.absorbed += 1;
                Fate::Consume
            }
            _ => Fate::Pass,
        }
    }
    fn on_queued(&mut self, _at: &mut At, _pkt: &Packet, _q: &mut Queued) {
        self.queued += 1;
    }
    fn on_deliver(&mut self, _at: &mut At, _pkt: &Packet) -> Fate {
        self.delivered += 1;
        Fate::Pass
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.next
    }
    fn on_timer(&mut self, at: &mut At) {
        if self.next.is_some_and(|d| d <= at.now) {
            self.fired.push(at.now);
            self.next = Some(at.now + self.period);
        }
    }
}
