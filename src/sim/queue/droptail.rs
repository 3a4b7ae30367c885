//! DropTail: a FIFO that drops arrivals when full, counted in packets or bytes.

use super::{limit, Built, Fifo, Queue, QueueCtx, Verdict, LIMIT};
use crate::params::ParamError;
use crate::sim::component::{Args, Component, Declaration};
use crate::sim::packet::Packet;
use crate::sim::units::Limit;

pub const COMPONENT: Component<Built, QueueCtx> = Component {
    decl: Declaration {
        name: "droptail",
        aliases: &[],
        summary: "FIFO that drops arrivals when full",
        source: "tail drop (ns-2 DropTail)",
        params: &[LIMIT],
        defaults: &[],
    },
    build,
};

fn build(a: &Args<'_, QueueCtx>) -> Result<Built, ParamError> {
    Ok((Queue::DropTail(DropTail::new(limit(a)?)), None))
}

#[derive(Debug, Clone)]
pub struct DropTail {
    pub(super) fifo: Fifo,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        Self {
            fifo: Fifo::new(limit),
        }
    }

    #[inline]
    pub fn enqueue(&mut self, pkt: Packet) -> Verdict {
        self.fifo.push(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::queue::{test_packet, DropCause};

    #[test]
    fn a_packet_limited_queue_drops_the_arrival_that_would_exceed_it() {
        let mut q = DropTail::new(Limit::Packets(2));
        assert_eq!(q.enqueue(test_packet(1500)), Verdict::Enqueued);
        assert_eq!(q.enqueue(test_packet(40)), Verdict::Enqueued);
        assert_eq!(
            q.enqueue(test_packet(40)),
            Verdict::Dropped(DropCause::Overflow)
        );
        q.fifo.pop();
        assert_eq!(q.enqueue(test_packet(40)), Verdict::Enqueued);
    }

    #[test]
    fn a_byte_limited_queue_admits_small_packets_a_big_one_would_not_fit() {
        let mut q = DropTail::new(Limit::Bytes(3000));
        assert_eq!(q.enqueue(test_packet(1500)), Verdict::Enqueued);
        assert_eq!(q.enqueue(test_packet(1400)), Verdict::Enqueued);
        assert_eq!(
            q.enqueue(test_packet(1500)),
            Verdict::Dropped(DropCause::Overflow)
        );
        assert_eq!(
            q.enqueue(test_packet(100)),
            Verdict::Enqueued,
            "exactly full is allowed"
        );
        assert_eq!(q.fifo.bytes(), 3000);
    }
}
