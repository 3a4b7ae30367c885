//! A DropTail queue that signals congestion back to the sender once its occupancy reaches a
//! threshold τ — the ICMP source-quench idea (RFC 792; deprecated for the Internet by RFC 6633, kept
//! here as an explicit, early congestion signal to compare with ECN).

use super::{Fifo, Outcome, Verdict};
use crate::sim::packet::{Kind, Packet};
use crate::sim::units::Limit;

#[derive(Debug, Clone)]
pub struct Threshold {
    pub(super) fifo: Fifo,
    /// Occupancy in packets (after the arrival is queued) at which a signal is sent.
    tau: u64,
}

impl Threshold {
    pub fn new(limit: Limit, tau: u64) -> Self {
        Self { fifo: Fifo::new(limit), tau }
    }

    pub fn enqueue(&mut self, pkt: Packet) -> Outcome {
        let verdict = self.fifo.push(pkt);
        // Only data packets have a sender that can slow down; a dropped arrival also signals,
        // since the queue is certainly above τ then.
        let quench = pkt.kind == Kind::Data && self.fifo.len() as u64 >= self.tau;
        Outcome { verdict, quench: quench || (pkt.kind == Kind::Data && verdict != Verdict::Enqueued) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::queue::test_packet;

    #[test]
    fn the_signal_starts_when_occupancy_reaches_tau() {
        let mut q = Threshold::new(Limit::Packets(10), 3);
        let signals: Vec<bool> = (0..4).map(|_| q.enqueue(test_packet(1500)).quench).collect();
        assert_eq!(signals, [false, false, true, true]);
    }
}
