//! A router that signals congestion back to the sender once a queue's occupancy reaches a
//! threshold τ — the ICMP source-quench idea (RFC 792; deprecated for the Internet by RFC 6633,
//! kept here as an explicit, early congestion signal to compare with ECN, and as the router
//! signal SmoothTCP counts). Scenario files ask for it with `queue = { kind = "threshold",
//! tau = N }`: a DropTail queue watched by this agent at the channel's sending node.

use super::{At, NodeAgent, Placement, Queued};
use crate::sim::packet::{Kind, NodeId, Packet, Signal};
use crate::sim::queue::Verdict;

/// Bytes of an ICMP source quench on the wire: IP header (20) + ICMP header (8) + the offending
/// datagram's IP header and first 8 bytes (28), RFC 792.
pub const QUENCH_SIZE: u32 = 56;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceQuench {
    node: NodeId,
    channel: u32,
    /// Occupancy in packets (after the arrival is queued) at which a signal is sent.
    tau: u64,
}

impl SourceQuench {
    /// Watch the queue of `channel`, which leaves `node`.
    pub fn new(node: NodeId, channel: u32, tau: u64) -> Self {
        Self { node, channel, tau }
    }

    pub fn placement(&self) -> Placement {
        Placement {
            node: self.node,
            channels: vec![self.channel],
            node_hooks: false,
        }
    }
}

impl NodeAgent for SourceQuench {
    fn on_queued(&mut self, at: &mut At, pkt: &Packet, q: &mut Queued) {
        // Only data packets have a sender that can slow down; a dropped arrival also signals,
        // since the queue is certainly above τ then.
        if pkt.kind != Kind::Data
            || (q.queue_len as u64) < self.tau && q.verdict == Verdict::Enqueued
        {
            return;
        }
        q.stats.quench += 1;
        let signal = Signal::Quench {
            router: at.node,
            queue: q.queue_len,
        };
        at.out.push(Packet {
            kind: Kind::Signal(signal),
            src: at.node,
            dst: pkt.src,
            size: QUENCH_SIZE,
            len: 0,
            ..*pkt
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::link::ChannelStats;
    use crate::sim::queue::{test_packet, DropCause};

    fn offer(
        agent: &mut SourceQuench,
        pkt: Packet,
        queue_len: u32,
        verdict: Verdict,
    ) -> Vec<Packet> {
        let mut out = Vec::new();
        let mut stats = ChannelStats::default();
        agent.on_queued(
            &mut At {
                now: 7,
                node: 4,
                out: &mut out,
            },
            &pkt,
            &mut Queued {
                channel: 0,
                verdict,
                queue_len,
                stats: &mut stats,
            },
        );
        assert_eq!(
            stats.quench,
            out.len() as u64,
            "every signal is counted on the channel"
        );
        out
    }

    #[test]
    fn the_signal_starts_when_occupancy_reaches_tau() {
        let mut q = SourceQuench::new(4, 0, 3);
        let signals: Vec<usize> = (1..=4)
            .map(|len| offer(&mut q, test_packet(1500), len, Verdict::Enqueued).len())
            .collect();
        assert_eq!(signals, [0, 0, 1, 1]);
    }

    #[test]
    fn the_signal_names_the_router_and_the_queue_and_goes_back_to_the_sender() {
        let mut q = SourceQuench::new(4, 0, 3);
        let mut data = test_packet(1500);
        data.seq = 2896;
        let out = offer(&mut q, data, 5, Verdict::Enqueued);
        let s = out[0];
        assert_eq!(
            s.kind,
            Kind::Signal(Signal::Quench {
                router: 4,
                queue: 5
            })
        );
        assert_eq!(
            (s.src, s.dst, s.size, s.len, s.flow, s.seq),
            (4, data.src, QUENCH_SIZE, 0, data.flow, 2896)
        );
    }

    #[test]
    fn a_dropped_arrival_signals_and_acks_never_do() {
        let mut q = SourceQuench::new(4, 0, 50);
        assert_eq!(
            offer(
                &mut q,
                test_packet(1500),
                2,
                Verdict::Dropped(DropCause::Overflow)
            )
            .len(),
            1
        );
        let mut ack = test_packet(52);
        ack.kind = Kind::Ack;
        assert!(offer(&mut q, ack, 60, Verdict::Enqueued).is_empty());
    }
}
