//! Snoop (Balakrishnan, Seshan, Amir & Katz, "Improving TCP/IP performance over wireless
//! networks", MobiCom 1995, §3; Balakrishnan, Seshan & Katz, ACM Wireless Networks 1(4), 1995;
//! docs/algorithms.md §9.11): a TCP-aware agent on the gateway in front of a lossy link. It caches the
//! data segments it sends onto the link, retransmits a lost one locally — on the first duplicate
//! ACK for it, or when its local timer expires — and keeps the duplicate ACKs of a loss it is
//! repairing away from the sender, so the sender does not mistake corruption for congestion.
//! Neither endpoint changes. Scenario files ask for it per link:
//! `topology.bottleneck.agent = { kind = "snoop" }` (parameters: [`COMPONENT`]); it lives at the
//! link's sending node of the data direction (the dumbbell's left router) and caches what enters
//! that channel's queue.
//!
//! Choices where the papers leave room (also in docs/scenarios.md):
//! - A segment the gateway's own queue drops is *not* cached: that loss is congestion, and its
//!   duplicate ACKs must reach the sender (ns-2's `snoop_insert` caches only while the interface
//!   queue is not full, "since otherwise we want congestion control to kick in").
//! - Local retransmissions join the back of the channel's queue (the queue has no priority band;
//!   the paper sends them "at a higher priority"), and go through its discipline like any packet.
//! - The local timer is RFC 6298-style: srtt/rttvar with gains ⅛ and ¼ from the gateway's own
//!   samples (a cached segment's last transmission to the ACK that frees it, Karn: none from
//!   locally retransmitted or sender-retransmitted segments), timeout max(srtt + 4·rttvar,
//!   `min_timeout`), no back-off (each segment is resent locally at most `max_local` times —
//!   ns-2's SNOOP_MAX_RXMIT). Defaults are ns-2's (`ns-default.tcl`: snoopTick_ 0.1 s, srtt_ 0.1
//!   s, rttvar_ 0.25 s, maxbufs_ 0 → SNOOP_MAXWIND 100).
//! - Duplicate ACKs: the first one for a cached, not sender-retransmitted segment triggers the
//!   local retransmission and is suppressed; so are the next ones expected from the segments
//!   cached behind it (those already on their way: cache length − 2, as ns-2 counts after its
//!   first); later ones pass to the sender, as do duplicate ACKs for segments not cached or
//!   retransmitted by the sender itself (MobiCom §3, "snoop_ack").
//! - A duplicate copy in flight (a local resend, or the sender's resend of a cached segment) makes
//!   a duplicate ACK naming the next segment the receiver waits for, lost or not, which the rule
//!   above would resend — and that resend, if the segment was not lost, makes the next duplicate
//!   ACK, and so on (found on SpecTCP's link: 182 local resends for 3 corrupted packets). Ours, not
//!   the papers': after such a copy enters the queue, the first duplicate ACK for which no segment
//!   behind the head was queued before that copy is passed on unanswered; once a segment queued
//!   after the copy is acknowledged, the copy has arrived (FIFO) and the rule lapses.
//! - A data segment the receiver has already acknowledged (below the last ACK seen) is not sent
//!   over the lossy link again: the agent answers with a copy of that last ACK instead (MobiCom
//!   §3: the original ACK may have been lost on its way back). The copy echoes the old timestamp.
//!
//! Ground truth: a local retransmission is a copy of the cached packet, transmission number
//! included, and is no sender retransmission (the flow's counters and traces are the sender's).
//! When the sender retransmits a cached segment, the cache keeps the new copy, so every copy the
//! agent sends later carries the sender's latest transmission number: a copy numbered below c
//! entered the gateway's FIFO path before c did, the argument the spurious-retransmission oracle
//! (`sim::spurious`) rests on. Drops of local retransmissions are traced like any drop.

use super::{At, Fate, NodeAgent, Placement, Queued};
use crate::params::ParamError;
use crate::params::ParamSpec;
use crate::sim::component::{Args, Component, Declaration};
use crate::sim::packet::{FlowId, Kind, NodeId, Packet};
use crate::sim::queue::Verdict;
use crate::time::Nanos;
use std::collections::VecDeque;

/// Snoop's parameters, each with ns-2's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnoopParams {
    /// Segments cached per connection (ns-2 SNOOP_MAXWIND); arrivals beyond it pass uncached.
    pub cache: u32,
    /// Floor of the local retransmission timeout (ns-2 `snoopTick_`).
    pub min_timeout: Nanos,
    /// Local srtt and rttvar before the first sample (ns-2 `srtt_`, `rttvar_`).
    pub initial_srtt: Nanos,
    pub initial_rttvar: Nanos,
    /// Local retransmissions of one segment at most (ns-2 SNOOP_MAX_RXMIT).
    pub max_local: u32,
}

impl Default for SnoopParams {
    fn default() -> Self {
        Self {
            cache: 100,
            min_timeout: 100_000_000,
            initial_srtt: 100_000_000,
            initial_rttvar: 250_000_000,
            max_local: 10,
        }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("cache", "100", 1.0, 100_000.0, "segments cached per connection (ns-2 SNOOP_MAXWIND); arrivals beyond it pass uncached"),
    ParamSpec::duration("min_timeout", "100ms", 0.001, 60.0, "floor of the local retransmission timeout max(srtt + 4·rttvar, min_timeout) (ns-2 snoopTick_)"),
    ParamSpec::duration("initial_srtt", "100ms", 0.0, 60.0, "local smoothed RTT before the first sample (ns-2 srtt_)"),
    ParamSpec::duration("initial_rttvar", "250ms", 0.0, 60.0, "local RTT variation before the first sample (ns-2 rttvar_)"),
    ParamSpec::int("max_local", "10", 1.0, 255.0, "local retransmissions of one segment at most (ns-2 SNOOP_MAX_RXMIT)"),
];

/// Node agents a link can carry (`topology.<link>.agent = { kind = ... }`).
pub const COMPONENT: Component<SnoopParams> = Component {
    decl: Declaration {
        name: "snoop",
        aliases: &[],
        summary: "TCP-aware gateway before a lossy link: caches data, retransmits locally on duplicate ACKs and a local timer, suppresses those duplicate ACKs",
        source: "Balakrishnan, Seshan, Amir, Katz, MobiCom 1995 §3; ns-2 tcp/snoop.cc defaults",
        params: PARAMS,
        defaults: &[],
    },
    build,
};

fn build(a: &Args<'_, ()>) -> Result<SnoopParams, ParamError> {
    Ok(SnoopParams {
        cache: a.int("cache")? as u32,
        min_timeout: a.duration("min_timeout")?,
        initial_srtt: a.duration("initial_srtt")?,
        initial_rttvar: a.duration("initial_rttvar")?,
        max_local: a.int("max_local")? as u32,
    })
}

/// What the agent did, for tests and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnoopStats {
    /// Local retransmissions on a duplicate ACK and on the local timer.
    pub local_on_dupack: u64,
    pub local_on_timeout: u64,
    /// Local retransmissions the gateway's own queue dropped.
    pub local_dropped: u64,
    /// Duplicate ACKs kept from the sender.
    pub dupacks_suppressed: u64,
    /// Already-acknowledged data answered with the last ACK instead of being forwarded.
    pub acks_regenerated: u64,
    /// Data segments that found the cache full.
    pub not_cached: u64,
    /// Duplicate ACKs passed on unanswered because a duplicate copy may have caused them.
    pub dupacks_stray: u64,
}

#[derive(Debug, Clone)]
struct Cached {
    pkt: Packet,
    /// When this copy last entered the lossy link's queue (a local RTT sample starts here).
    sent: Nanos,
    local: u32,
    sender_retransmitted: bool,
}

/// One connection's state (MobiCom §3: cache, last ACK, local RTT, expected duplicate ACKs).
#[derive(Debug, Clone)]
struct Conn {
    /// Cached segments, in sequence order.
    cache: VecDeque<Cached>,
    /// Highest sequence end seen from the sender.
    high: u64,
    last_ack: Option<Packet>,
    expected_dupacks: u32,
    /// A local retransmission on a duplicate ACK is under way for the segment at the last ACK.
    repairing: bool,
    srtt: Nanos,
    rttvar: Nanos,
    deadline: Option<Nanos>,
    /// When the latest copy that may reach the receiver as a duplicate (a local retransmission, or
    /// the sender's retransmission of a cached segment) entered the queue, until its duplicate
    /// ACK came or a segment queued after it was acknowledged.
    stray: Option<Nanos>,
}

/// The local retransmission timeout: max(srtt + 4·rttvar, min_timeout), no back-off.
fn local_rto(p: &SnoopParams, c: &Conn) -> Nanos {
    (c.srtt + 4 * c.rttvar).max(p.min_timeout)
}

#[derive(Debug, Clone)]
pub struct Snoop {
    node: NodeId,
    channel: u32,
    p: SnoopParams,
    conns: Vec<Option<Conn>>,
    /// Local retransmissions sent but not yet seen at the queue: (flow, seq).
    own: Vec<(FlowId, u64)>,
    pub stats: SnoopStats,
}

impl Snoop {
    /// Snoop at `node`, caching the data that enters `channel`'s queue (a channel leaving `node`).
    pub fn new(node: NodeId, channel: u32, p: SnoopParams) -> Self {
        Self {
            node,
            channel,
            p,
            conns: Vec::new(),
            own: Vec::new(),
            stats: SnoopStats::default(),
        }
    }

    /// The channel whose arrivals it caches (the lossy link's data direction).
    pub fn channel(&self) -> u32 {
        self.channel
    }

    pub fn placement(&self) -> Placement {
        Placement {
            node: self.node,
            channels: vec![self.channel],
            node_hooks: true,
        }
    }

    fn conn(&mut self, flow: FlowId) -> Option<&mut Conn> {
        self.conns.get_mut(flow as usize).and_then(Option::as_mut)
    }

    /// Resend the cached head of `flow`'s cache, if it may be resent once more.
    fn resend_head(&mut self, at: &mut At, flow: FlowId) -> bool {
        let max = self.p.max_local;
        let Some(c) = self.conn(flow) else {
            return false;
        };
        let Some(head) = c.cache.front_mut() else {
            return false;
        };
        if head.local >= max {
            return false;
        }
        head.local += 1;
        head.sent = at.now;
        let pkt = head.pkt;
        c.stray = Some(at.now);
        at.out.push(pkt);
        self.own.push((flow, pkt.seq));
        true
    }

    fn on_data(&mut self, at: &mut At, pkt: &Packet) -> Fate {
        let Some(c) = self.conn(pkt.flow) else {
            return Fate::Pass;
        };
        match c.last_ack {
            // Acknowledged already: answer with the last ACK, keep the lossy link free.
            Some(ack) if pkt.end() <= ack.ack => {
                at.out.push(ack);
                self.stats.acks_regenerated += 1;
                Fate::Consume
            }
            _ => Fate::Pass,
        }
    }

    fn on_ack(&mut self, at: &mut At, pkt: &Packet) -> Fate {
        let (now, p) = (at.now, self.p);
        let flow = pkt.flow;
        let cache_len;
        {
            let Some(c) = self.conn(flow) else {
                return Fate::Pass;
            };
            let last = c.last_ack.map(|a| a.ack);
            match last {
                Some(l) if pkt.ack < l => return Fate::Consume, // older than one already seen (MobiCom §3: discard)
                Some(l) if pkt.ack == l => cache_len = c.cache.len(),
                _ => {
                    // A new ACK: free what it covers; a sample from the newest freed segment
                    // that neither end retransmitted.
                    let mut sample = None;
                    while c.cache.front().is_some_and(|s| s.pkt.end() <= pkt.ack) {
                        let s = c.cache.pop_front().expect("front exists");
                        sample = (s.local == 0 && !s.sender_retransmitted)
                            .then(|| now.saturating_sub(s.sent));
                        // FIFO: a copy queued before this one has reached the receiver already.
                        if c.stray.is_some_and(|t| s.sent > t) {
                            c.stray = None;
                        }
                    }
                    if let Some(r) = sample {
                        // RFC 6298 §2.3 gains on the gateway's own RTT (to the receiver and back).
                        let err = c.srtt.abs_diff(r);
                        c.rttvar = (3 * c.rttvar + err) / 4;
                        c.srtt = (7 * c.srtt + r) / 8;
                    }
                    c.last_ack = Some(*pkt);
                    c.expected_dupacks = 0;
                    c.repairing = false;
                    c.deadline = (!c.cache.is_empty()).then(|| now + local_rto(&p, c));
                    return Fate::Pass;
                }
            }
        }
        // A duplicate ACK. Only a loss of a segment we hold, which the sender has not resent
        // itself, is ours to repair.
        let c = self.conn(flow).expect("checked above");
        let Some(head) = c.cache.front() else {
            return Fate::Pass;
        };
        if head.pkt.seq != pkt.ack || head.sender_retransmitted {
            return Fate::Pass;
        }
        if c.expected_dupacks > 0 {
            c.expected_dupacks -= 1;
            self.stats.dupacks_suppressed += 1;
            return Fate::Consume;
        }
        if c.repairing {
            return Fate::Pass; // more than expected: let the sender's own recovery act
        }
        // A duplicate copy in flight (our local resend, or the sender's) makes a duplicate ACK
        // naming the next segment the receiver waits for, lost or not. Only a segment behind the
        // head queued before that copy can have made this one a sign of loss; otherwise pass it
        // on unanswered, once per copy (without this, a resend of a segment still in flight makes
        // another duplicate ACK, another resend, and so on to the end of the run).
        if let Some(t) = c.stray {
            if c.cache.get(1).is_none_or(|next| next.sent > t) {
                c.stray = None;
                self.stats.dupacks_stray += 1;
                return Fate::Pass;
            }
        }
        c.repairing = true;
        // Duplicates still to come from the segments already sent behind the lost one; this one
        // is the first of them.
        c.expected_dupacks = cache_len.saturating_sub(2) as u32;
        if !self.resend_head(at, flow) {
            return Fate::Pass;
        }
        self.stats.local_on_dupack += 1;
        self.stats.dupacks_suppressed += 1;
        self.rearm(flow, now);
        Fate::Consume
    }

    fn rearm(&mut self, flow: FlowId, now: Nanos) {
        let p = self.p;
        if let Some(c) = self.conn(flow) {
            c.deadline = Some(now + local_rto(&p, c));
        }
    }

    /// A data segment entered the lossy link's queue (or was dropped there).
    fn cache(&mut self, now: Nanos, pkt: &Packet, verdict: Verdict) {
        if let Some(i) = self
            .own
            .iter()
            .position(|&(f, s)| f == pkt.flow && s == pkt.seq)
        {
            self.own.swap_remove(i);
            if matches!(verdict, Verdict::Dropped(_)) {
                self.stats.local_dropped += 1;
            }
            return;
        }
        if matches!(verdict, Verdict::Dropped(_)) {
            return; // congestion at this gateway: the sender must hear of it
        }
        let f = pkt.flow as usize;
        if self.conns.len() <= f {
            self.conns.resize(f + 1, None);
        }
        let p = self.p;
        let c = self.conns[f].get_or_insert_with(|| Conn {
            cache: VecDeque::new(),
            high: 0,
            last_ack: None,
            expected_dupacks: 0,
            repairing: false,
            srtt: p.initial_srtt,
            rttvar: p.initial_rttvar,
            deadline: None,
            stray: None,
        });
        if c.last_ack.is_some_and(|a| pkt.end() <= a.ack) {
            return;
        }
        let was_empty = c.cache.is_empty();
        let entry = Cached {
            pkt: *pkt,
            sent: now,
            local: 0,
            sender_retransmitted: false,
        };
        let at = c.cache.partition_point(|s| s.pkt.seq < pkt.seq);
        if c.cache.get(at).is_some_and(|s| s.pkt.seq == pkt.seq) {
            // The sender's own retransmission of a cached segment: keep its copy (see the module
            // note on ground truth) and leave its duplicate ACKs to the sender.
            c.cache[at] = Cached {
                sender_retransmitted: true,
                ..entry
            };
            c.stray = Some(now);
        } else if c.cache.len() >= p.cache as usize {
            self.stats.not_cached += 1;
        } else if pkt.seq >= c.high {
            c.cache.push_back(entry); // in sequence
        } else {
            // Out of sequence and not cached: lost before this gateway, resent by the sender.
            c.cache.insert(
                at,
                Cached {
                    sender_retransmitted: true,
                    ..entry
                },
            );
        }
        c.high = c.high.max(pkt.end());
        if was_empty && !c.cache.is_empty() {
            c.deadline = Some(now + local_rto(&p, c));
        }
    }
}

impl NodeAgent for Snoop {
    fn on_forward(&mut self, at: &mut At, pkt: &mut Packet) -> Fate {
        match pkt.kind {
            Kind::Data if !self.own.contains(&(pkt.flow, pkt.seq)) => self.on_data(at, pkt),
            Kind::Ack => self.on_ack(at, pkt),
            _ => Fate::Pass,
        }
    }

    fn on_queued(&mut self, at: &mut At, pkt: &Packet, q: &mut Queued) {
        if pkt.kind == Kind::Data {
            self.cache(at.now, pkt, q.verdict);
        }
    }

    fn next_deadline(&self) -> Option<Nanos> {
        self.conns.iter().flatten().filter_map(|c| c.deadline).min()
    }

    /// Local timeout (MobiCom §3): resend the oldest cached segment if it is the one the receiver
    /// waits for; re-arm while anything is cached.
    fn on_timer(&mut self, at: &mut At) {
        for f in 0..self.conns.len() {
            let flow = f as FlowId;
            let Some(c) = self.conn(flow) else { continue };
            if c.deadline.is_none_or(|d| d > at.now) {
                continue;
            }
            c.deadline = None;
            let waited_for = match (c.cache.front(), c.last_ack) {
                (Some(h), Some(a)) => h.pkt.seq == a.ack,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if waited_for && self.resend_head(at, flow) {
                self.stats.local_on_timeout += 1;
                self.rearm(flow, at.now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::link::ChannelStats;
    use crate::sim::queue::{test_packet, DropCause};
    use crate::time::MS;

    const MSS: u64 = 1000;

    fn data(seq_no: u64) -> Packet {
        Packet {
            seq: seq_no * MSS,
            len: MSS as u32,
            size: 1040,
            dst: 3,
            ..test_packet(1040)
        }
    }

    fn ack(next: u64) -> Packet {
        Packet {
            kind: Kind::Ack,
            src: 3,
            dst: 0,
            ack: next * MSS,
            len: 0,
            size: 40,
            ..test_packet(40)
        }
    }

    /// A gateway (node 1) with Snoop on channel 0, driven by hand.
    struct Gateway {
        snoop: Snoop,
        out: Vec<Packet>,
    }

    impl Gateway {
        fn new() -> Self {
            Self {
                snoop: Snoop::new(1, 0, SnoopParams::default()),
                out: Vec::new(),
            }
        }

        /// The sender's segment reaches the gateway and its queue: forwarded, then queued with
        /// `verdict`. Returns whether it went on.
        fn send(&mut self, now: Nanos, mut pkt: Packet, verdict: Verdict) -> bool {
            let mut at = At {
                now,
                node: 1,
                out: &mut self.out,
            };
            if self.snoop.on_forward(&mut at, &mut pkt) == Fate::Consume {
                return false;
            }
            let mut stats = ChannelStats::default();
            self.snoop.on_queued(
                &mut At {
                    now,
                    node: 1,
                    out: &mut self.out,
                },
                &pkt,
                &mut Queued {
                    channel: 0,
                    verdict,
                    queue_len: 1,
                    stats: &mut stats,
                },
            );
            true
        }

        /// An ACK from the receiver reaches the gateway; whether it goes on to the sender.
        fn ack(&mut self, now: Nanos, next: u64) -> bool {
            let mut pkt = ack(next);
            self.snoop.on_forward(
                &mut At {
                    now,
                    node: 1,
                    out: &mut self.out,
                },
                &mut pkt,
            ) == Fate::Pass
        }

        /// What the agent sent since last asked; its local retransmissions then reach the
        /// queue as the engine would pass them (accepted).
        fn sent(&mut self, now: Nanos) -> Vec<Packet> {
            let out = std::mem::take(&mut self.out);
            for p in out.iter().filter(|p| p.kind == Kind::Data) {
                assert!(
                    self.send(now, *p, Verdict::Enqueued),
                    "the agent's own copies pass"
                );
            }
            out
        }
    }

    /// Segments 0..n sent and queued.
    fn with_window(n: u64) -> Gateway {
        let mut g = Gateway::new();
        for i in 0..n {
            assert!(g.send(i * MS, data(i), Verdict::Enqueued));
        }
        g
    }

    #[test]
    fn the_first_duplicate_ack_for_a_cached_segment_is_answered_locally_and_kept_from_the_sender() {
        let mut g = with_window(5);
        assert!(g.ack(600 * MS, 1), "a new ACK passes");
        // Segment 1 was corrupted on the link: segments 2, 3, 4 each bring a duplicate ACK.
        assert!(!g.ack(610 * MS, 1), "the first duplicate ACK is suppressed");
        let resent = g.sent(610 * MS);
        assert_eq!(
            resent.iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>(),
            vec![(Kind::Data, MSS)]
        );
        assert!(!g.ack(620 * MS, 1), "expected: segment 3's duplicate");
        assert!(!g.ack(630 * MS, 1), "expected: segment 4's duplicate");
        assert!(
            g.ack(640 * MS, 1),
            "one more than the segments in flight could cause passes"
        );
        assert_eq!(
            (
                g.snoop.stats.local_on_dupack,
                g.snoop.stats.dupacks_suppressed
            ),
            (1, 3)
        );
        assert!(
            g.sent(640 * MS).is_empty(),
            "one local retransmission per loss"
        );
    }

    #[test]
    fn a_segment_the_gateways_own_queue_dropped_is_congestion_and_its_duplicate_acks_reach_the_sender(
    ) {
        let mut g = Gateway::new();
        assert!(g.send(0, data(0), Verdict::Enqueued));
        assert!(g.send(MS, data(1), Verdict::Dropped(DropCause::Overflow)));
        assert!(g.send(2 * MS, data(2), Verdict::Enqueued));
        assert!(g.ack(600 * MS, 1));
        assert!(
            g.ack(610 * MS, 1),
            "segment 1 is not cached: the sender must slow down"
        );
        assert!(g.sent(610 * MS).is_empty());
    }

    #[test]
    fn duplicate_acks_for_a_segment_the_sender_retransmitted_itself_pass_to_the_sender() {
        let mut g = with_window(3);
        assert!(g.ack(600 * MS, 1));
        assert!(
            g.send(700 * MS, Packet { tx: 1, ..data(1) }, Verdict::Enqueued),
            "the sender's retransmission goes on"
        );
        assert!(g.ack(710 * MS, 1));
        assert!(g.sent(710 * MS).is_empty());
    }

    #[test]
    fn the_cache_keeps_the_senders_latest_copy_so_local_copies_carry_its_transmission_number() {
        let mut g = with_window(3);
        assert!(g.ack(600 * MS, 1));
        assert!(g.send(700 * MS, Packet { tx: 2, ..data(1) }, Verdict::Enqueued));
        g.snoop.on_timer(&mut At {
            now: 5000 * MS,
            node: 1,
            out: &mut g.out,
        });
        let resent = g.sent(5000 * MS);
        assert_eq!(
            resent.iter().map(|p| (p.seq, p.tx)).collect::<Vec<_>>(),
            vec![(MSS, 2)]
        );
    }

    #[test]
    fn the_local_timer_resends_the_segment_the_receiver_waits_for_and_rearms() {
        let mut g = with_window(3);
        assert!(g.ack(600 * MS, 1));
        // Initial srtt 100 ms, rttvar 250 ms, one sample of ~600 ms: the timer is due later.
        let due = g.snoop.next_deadline().expect("data is cached");
        assert!(due > 600 * MS, "{due}");
        g.snoop.on_timer(&mut At {
            now: due - 1,
            node: 1,
            out: &mut g.out,
        });
        assert!(g.sent(due - 1).is_empty(), "not before its deadline");
        g.snoop.on_timer(&mut At {
            now: due,
            node: 1,
            out: &mut g.out,
        });
        assert_eq!(
            g.sent(due).iter().map(|p| p.seq).collect::<Vec<_>>(),
            vec![MSS]
        );
        assert_eq!(g.snoop.stats.local_on_timeout, 1);
        assert!(
            g.snoop.next_deadline().is_some_and(|d| d > due),
            "re-armed while data is cached"
        );
        assert!(g.ack(due + 600 * MS, 3), "everything acknowledged");
        assert_eq!(g.snoop.next_deadline(), None, "nothing cached, no timer");
    }

    #[test]
    fn a_new_ack_frees_the_cache_and_its_round_trip_updates_the_local_timer() {
        let mut g = with_window(2);
        assert!(g.ack(500 * MS, 1));
        // srtt 100 → 100 + (500 − 100)/8 = 150 ms; rttvar 250 → (3·250 + 400)/4 = 287.5 ms.
        let c = g.snoop.conn(0).unwrap();
        assert_eq!(
            (c.srtt, c.rttvar, c.cache.len()),
            (150 * MS, 287_500_000, 1)
        );
        assert_eq!(
            g.snoop.next_deadline(),
            Some(500 * MS + 150 * MS + 4 * 287_500_000)
        );
    }

    #[test]
    fn already_acknowledged_data_is_answered_with_the_last_ack_instead_of_crossing_the_link() {
        let mut g = with_window(3);
        assert!(g.ack(600 * MS, 3));
        assert!(
            !g.send(700 * MS, Packet { tx: 1, ..data(1) }, Verdict::Enqueued),
            "a go-back-N resend stops here"
        );
        let out = g.sent(700 * MS);
        assert_eq!(
            out.iter()
                .map(|p| (p.kind, p.ack, p.dst))
                .collect::<Vec<_>>(),
            vec![(Kind::Ack, 3 * MSS, 0)]
        );
        assert_eq!(g.snoop.stats.acks_regenerated, 1);
    }

    #[test]
    fn a_full_cache_lets_new_segments_pass_uncached() {
        let mut g = Gateway {
            snoop: Snoop::new(
                1,
                0,
                SnoopParams {
                    cache: 2,
                    ..SnoopParams::default()
                },
            ),
            out: Vec::new(),
        };
        for i in 0..4 {
            assert!(g.send(i * MS, data(i), Verdict::Enqueued));
        }
        assert_eq!(
            (
                g.snoop.conn(0).unwrap().cache.len(),
                g.snoop.stats.not_cached
            ),
            (2, 2)
        );
    }
}

/// Snoop on the SpecTCP paper's lossy link (examples/spectcp/lossy-link.toml), in the engine.
#[cfg(test)]
mod on_a_run {
    use crate::sim::agent::Agent;
    use crate::sim::config::Scenario;
    use crate::sim::{build, summarise};

    fn lossy(extra: &[&str]) -> (crate::sim::SimResult, Option<super::SnoopStats>) {
        let path = format!(
            "{}/examples/spectcp/lossy-link.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut sets = vec![
            "tcp.cc=reno".to_string(),
            "topology.bottleneck.error.ber=1e-5".into(),
            "simulation.duration=\"600s\"".into(),
        ];
        sets.extend(extra.iter().map(|s| s.to_string()));
        let s = Scenario::from_file(path.as_ref(), &sets).unwrap();
        let mut e = build(&s).unwrap();
        e.run();
        let stats = e.agents.iter().find_map(|a| match a {
            Agent::Snoop(s) => Some(s.stats),
            _ => None,
        });
        (summarise(&s, e), stats)
    }

    #[test]
    fn snoop_repairs_corruption_at_the_gateway_so_reno_halves_less_and_delivers_more() {
        let (plain, none) = lossy(&[]);
        let (snooped, stats) = lossy(&["topology.bottleneck.agent={kind=\"snoop\"}"]);
        assert!(none.is_none());
        let stats = stats.expect("a Snoop agent on the bottleneck");
        assert!(
            stats.local_on_dupack > 20 && stats.dupacks_suppressed > stats.local_on_dupack,
            "{stats:?}"
        );
        let (p, s) = (&plain.flows[0], &snooped.flows[0]);
        assert!(
            s.fast_recoveries * 2 < p.fast_recoveries,
            "fast recoveries {} with Snoop, {} without",
            s.fast_recoveries,
            p.fast_recoveries
        );
        assert!(
            s.goodput_bps > p.goodput_bps,
            "goodput {} with Snoop, {} without",
            s.goodput_bps,
            p.goodput_bps
        );
        // The sender's counters stay the sender's: local copies are not its retransmissions.
        assert_eq!(s.retx_spurious + s.retx_necessary, s.retransmissions());
    }

    #[test]
    fn a_duplicate_copy_in_flight_does_not_start_a_chain_of_local_resends() {
        // Seed 2 at BER 1e-7: three packets corrupted; a sender timeout resends a segment Snoop
        // is still repairing. Its duplicate made a duplicate ACK for the next segment in flight,
        // which Snoop resent, whose duplicate made the next: 182 local resends to the end of the
        // run before duplicate ACKs a duplicate copy may have caused passed on unanswered.
        let (r, stats) = lossy(&[
            "topology.bottleneck.error.ber=1e-7",
            "simulation.seed=2",
            "topology.bottleneck.agent={kind=\"snoop\"}",
        ]);
        let stats = stats.unwrap();
        let corrupted = r.channels[r.bottleneck].drops_corruption;
        assert_eq!(corrupted, 3);
        assert!(
            stats.local_on_dupack + stats.local_on_timeout <= 2 * corrupted,
            "{stats:?}"
        );
        assert!(stats.dupacks_stray > 0, "{stats:?}");
    }

    #[test]
    fn the_channels_table_reports_snoops_counters_on_its_channel_and_null_elsewhere() {
        let (plain, _) = lossy(&["simulation.duration=\"120s\""]);
        let (snooped, stats) = lossy(&[
            "simulation.duration=\"120s\"",
            "topology.bottleneck.agent={kind=\"snoop\"}",
        ]);
        assert!(plain.channels.iter().all(|c| c.snoop.is_none()));
        let with: Vec<_> = snooped
            .channels
            .iter()
            .filter(|c| c.snoop.is_some())
            .collect();
        assert_eq!(with.len(), 1);
        assert_eq!(
            with[0].channel as usize, snooped.bottleneck,
            "Snoop caches the lossy link's data direction"
        );
        assert_eq!(with[0].snoop, stats);
        assert!(stats.unwrap().local_on_dupack > 0);
        // In the Arrow table: the counters on Snoop's channel, null on the others.
        use arrow_array::Array;
        let batch = crate::sim::tables::CHANNELS.batch(&snooped.channels);
        let col = batch.column_by_name("snoop_local_dupack").unwrap();
        assert_eq!(col.null_count(), snooped.channels.len() - 1);
    }

    #[test]
    fn a_scenario_without_an_agent_keeps_its_canonical_form() {
        let path = format!(
            "{}/examples/spectcp/lossy-link.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let plain = Scenario::from_file(path.as_ref(), &[])
            .unwrap()
            .to_canonical_toml()
            .unwrap();
        assert!(!plain.contains("agent"));
        let with = Scenario::from_file(
            path.as_ref(),
            &["topology.bottleneck.agent={kind=\"snoop\"}".into()],
        )
        .unwrap()
        .to_canonical_toml()
        .unwrap();
        assert!(
            with.contains("max_local = 10"),
            "every parameter spelled out: {with}"
        );
    }

    #[test]
    fn a_bad_parameter_names_its_key() {
        let path = format!(
            "{}/examples/spectcp/lossy-link.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let s = Scenario::from_file(
            path.as_ref(),
            &["topology.bottleneck.agent={kind=\"snoop\", cache=0}".into()],
        )
        .unwrap();
        let err = build(&s).err().unwrap().to_string();
        assert_eq!(
            err,
            "topology.bottleneck.agent.cache: 0 is outside the accepted range 1..100000"
        );
    }
}
