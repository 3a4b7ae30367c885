//! The threshold queue of scenario files: a DropTail queue watched by a source-quench router
//! ([`crate::sim::agent::source_quench`]), which signals the data sender for every data arrival
//! while the occupancy is at least τ packets.

use super::{droptail::DropTail, limit, Built, Queue, QueueCtx, LIMIT};
use crate::params::ParamError;
use crate::params::ParamSpec;
use crate::sim::agent::QueueAgent;
use crate::sim::component::{Args, Component, Declaration};

pub const COMPONENT: Component<Built, QueueCtx> = Component {
    decl: Declaration {
        name: "threshold",
        aliases: &[],
        summary: "DropTail whose router sends a source quench to the sender at occupancy ≥ tau",
        source: "ICMP source quench, RFC 792 (deprecated by RFC 6633; kept as an explicit router signal)",
        params: &[LIMIT, ParamSpec::int("tau", "required", 1.0, f64::INFINITY, "occupancy in packets (after the arrival) from which each data arrival is signalled")],
        defaults: &[],
    },
    build,
};

fn build(a: &Args<'_, QueueCtx>) -> Result<Built, ParamError> {
    if !a.is_given("tau") {
        return Err(a.invalid("tau", "a threshold queue needs tau (packets)"));
    }
    Ok((
        Queue::DropTail(DropTail::new(limit(a)?)),
        Some(QueueAgent::SourceQuench { tau: a.int("tau")? }),
    ))
}

/// Vieira & Bauer 2006 §V's router: "Modified drop-tail queues of 20-packet size ... send ICMP-SQ messages
/// when the queue size reaches the threshold (τ) of 7 packets ... when the size of the queue is
/// below τ, no ICMP-SQ messages are sent. However, an ICMP-SQ message is sent for each packet
/// arriving in the router queue if the size is equal or above."
#[cfg(test)]
mod section_v {
    use crate::sim::agent::{source_quench::SourceQuench, At, NodeAgent, Queued};
    use crate::sim::error_model::ErrorModel;
    use crate::sim::link::{Channel, ChannelSpec};
    use crate::sim::queue::{droptail::DropTail, test_packet, DropCause, Queue, Verdict};
    use crate::sim::units::Limit;

    /// A burst of `n` back-to-back data packets into an idle 31.25 kb/s channel with a 20-packet
    /// DropTail queue watched with τ = 7: (queue length after each arrival, verdict, quench sent).
    fn burst(n: usize) -> Vec<(u32, Verdict, bool)> {
        let spec = ChannelSpec {
            bandwidth: 31_250,
            delay: 8_000_000,
            queue: Queue::DropTail(DropTail::new(Limit::Packets(20))),
            errors: ErrorModel::None,
            losses: vec![],
            delay_spikes: vec![],
            variation: Default::default(),
            outages: vec![],
            name: "b>".into(),
            monitored: false,
            agent: None,
        };
        let mut ch = Channel::new(0, 1, 2, spec, 1);
        let mut router = SourceQuench::new(1, 0, 7);
        (0..n)
            .map(|i| {
                let pkt = test_packet(586);
                let acc = ch.arrive(pkt, i as u64); // 1 ns apart: nothing leaves meanwhile
                let mut out = Vec::new();
                router.on_queued(
                    &mut At {
                        now: i as u64,
                        node: 1,
                        out: &mut out,
                    },
                    &pkt,
                    &mut Queued {
                        channel: 0,
                        verdict: acc.verdict,
                        queue_len: acc.queue_len,
                        stats: &mut ch.stats,
                    },
                );
                (acc.queue_len, acc.verdict, !out.is_empty())
            })
            .collect()
    }

    #[test]
    fn one_quench_per_arriving_packet_while_occupancy_is_at_least_seven_and_none_below() {
        let seen = burst(26);
        // The first arrival is counted (1) before the idle transmitter takes it; then the queue
        // holds k − 1 after arrival k, up to 20 waiting (+1 on the wire); arrivals 22.. are dropped.
        let lens: Vec<u32> = seen.iter().map(|s| s.0).collect();
        assert_eq!(&lens[..3], &[1, 1, 2]);
        assert!(seen[..21].iter().all(|s| s.1 == Verdict::Enqueued));
        assert!(seen[21..]
            .iter()
            .all(|s| s.1 == Verdict::Dropped(DropCause::Overflow) && s.0 == 20));
        for (k, &(len, verdict, quenched)) in seen.iter().enumerate() {
            assert_eq!(
                quenched,
                len >= 7,
                "arrival {}: occupancy {len}, {verdict:?}",
                k + 1
            );
        }
        // Arrivals 8..=21 find (and leave) 7..=20 packets waiting, 22..=26 are dropped at 20.
        assert_eq!(seen.iter().filter(|s| s.2).count(), 14 + 5);
    }
}
