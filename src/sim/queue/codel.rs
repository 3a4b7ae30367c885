//! CoDel, Controlled Delay (Nichols & Jacobson; RFC 8289, 2018) — docs/algorithms.md §9.12.
//!
//! CoDel watches how long each packet waited (its sojourn time), not how many wait. Once the
//! sojourn time has stayed at or above `target` for a whole `interval`, it enters the dropping
//! state and drops at the head, spacing the drops by interval/√count so the drop rate rises until
//! the standing queue goes (RFC 8289 §3, §4). Decisions are taken at dequeue, so the channel asks
//! the queue with the time ([`super::Queue::dequeue`]) and reports the packets dropped or marked
//! there ([`super::Queue::acts_at_dequeue`]).
//!
//! The state machine follows RFC 8289 §5's pseudo-code line by line (§5.5 the dequeue routine
//! with the dropping state and the count reuse, §5.6 `dodequeue` and `control_law`; these
//! sub-section numbers are from memory of the RFC's contents, the text could not be fetched
//! here). Choices where the pseudo-code leaves room:
//! - Arrival times live beside the FIFO (the pseudo-code stamps the packet, §5.4); the simulated
//!   packet carries no timestamp.
//! - "Above target since" is an `Option` rather than the pseudo-code's 0-means-unset, because 0
//!   is a valid simulated time.
//! - `maxpacket` (§5.3: "should use interface MTU") is the largest packet this queue has seen, as
//!   Linux's `codel_stats.maxpacket`; a queue holding at most that many bytes never counts as
//!   above target (§5.6), so one full-size packet waiting on a slow link is never punished.
//! - ECN (RFC 8289 allows marking instead of dropping; its pseudo-code only drops): with `ecn = true` an ECN-capable
//!   packet is marked CE and sent where it would have been dropped; `count` and the next drop
//!   time advance exactly as for a drop (Linux `codel_impl.h`, `codel_dequeue`). A not-ECT packet
//!   is still dropped.
//! - The control law uses f64 √count and rounds the spacing down to whole nanoseconds (the
//!   pseudo-code divides in floating point; Linux uses a Newton step on 1/√count).
//! - Overflow of the `limit` is a tail drop at enqueue, as in Linux `codel_qdisc_enqueue`.

use super::{limit, Built, DropCause, Fifo, Queue, QueueCtx, Verdict, LIMIT};
use crate::params::{ParamError, ParamSpec};
use crate::sim::component::{Args, Component, Declaration};
use crate::sim::packet::{Ecn, Packet};
use crate::sim::units::Limit;
use crate::time::Nanos;
use std::collections::VecDeque;

const FLAG: &[&str] = &["true", "false"];

pub const COMPONENT: Component<Built, QueueCtx> = Component {
    decl: Declaration {
        name: "codel",
        aliases: &[],
        summary: "Controlled Delay: drops (or ECN-marks) at the head once sojourn time stays above target for an interval",
        source: "Nichols & Jacobson, RFC 8289 (2018) §5 pseudo-code; docs/algorithms.md §9.12",
        params: &[
            LIMIT,
            ParamSpec::duration("target", "5ms", 0.000001, 60.0, "acceptable standing sojourn time (RFC 8289 §4.3)"),
            ParamSpec::duration("interval", "100ms", 0.000001, 3600.0, "window the sojourn time must stay above target before dropping, and the control law's base spacing (§4.2)"),
            ParamSpec::choice("ecn", "false", FLAG, "CE-mark ECN-capable packets instead of dropping them"),
        ],
        defaults: &[],
    },
    build,
};

fn build(a: &Args<'_, QueueCtx>) -> Result<Built, ParamError> {
    let cfg = CodelConfig {
        target: a.duration("target")?,
        interval: a.duration("interval")?,
        ecn: a.flag("ecn")?,
    };
    if cfg.interval == 0 || cfg.target == 0 {
        return Err(a.inconsistent("target and interval must be positive"));
    }
    Ok((Queue::Codel(Codel::new(limit(a)?, cfg)), None))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodelConfig {
    /// TARGET (§5.3: 5 ms).
    pub target: Nanos,
    /// INTERVAL (§5.3: 100 ms).
    pub interval: Nanos,
    /// Mark ECT packets CE instead of dropping them.
    pub ecn: bool,
}

#[derive(Debug, Clone)]
pub struct Codel {
    pub(super) fifo: Fifo,
    /// Arrival time of each packet in `fifo`, in the same order.
    arrived: VecDeque<Nanos>,
    cfg: CodelConfig,
    /// Largest packet seen, bytes (§5.3 `maxpacket`).
    maxpacket: u64,
    /// When the sojourn time will have been above target for an interval (§5.2
    /// `first_above_time`); `None` while below.
    first_above_time: Option<Nanos>,
    /// When the next drop is due while dropping (§5.2 `drop_next`).
    drop_next: Nanos,
    /// Drops (and marks) since entering the dropping state (§5.2 `count`).
    count: u32,
    /// `count` when the dropping state was last entered (§5.2 `lastcount`).
    lastcount: u32,
    /// In the dropping state (§5.2 `dropping`).
    dropping: bool,
}

/// What `dodequeue` (§5.6) hands back: the head packet, and whether it may be dropped.
struct Head {
    pkt: Option<Packet>,
    ok_to_drop: bool,
}

impl Codel {
    pub fn new(limit: Limit, cfg: CodelConfig) -> Self {
        Self {
            fifo: Fifo::new(limit),
            arrived: VecDeque::new(),
            cfg,
            maxpacket: 0,
            first_above_time: None,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    /// §5.4: stamp the arrival time and enqueue; a full queue drops the arrival (tail drop).
    pub fn enqueue(&mut self, pkt: Packet, now: Nanos) -> Verdict {
        self.maxpacket = self.maxpacket.max(pkt.size as u64);
        let v = self.fifo.push(pkt);
        if v == Verdict::Enqueued {
            self.arrived.push_back(now);
        }
        v
    }

    /// §5.6 `control_law`: the next drop comes interval/√count after `t`.
    fn control_law(&self, t: Nanos) -> Nanos {
        t + (self.cfg.interval as f64 / (self.count as f64).sqrt()) as Nanos
    }

    /// §5.6 `dodequeue`: take the head and track how long the sojourn time has been above target.
    fn dodequeue(&mut self, now: Nanos) -> Head {
        let Some(pkt) = self.fifo.pop() else {
            // Queue empty: below target by definition.
            self.first_above_time = None;
            return Head {
                pkt: None,
                ok_to_drop: false,
            };
        };
        let sojourn = now
            - self
                .arrived
                .pop_front()
                .expect("one arrival time per queued packet");
        let mut ok_to_drop = false;
        if sojourn < self.cfg.target || self.fifo.bytes() <= self.maxpacket {
            // Went (or stayed) below: we stay below for at least an interval.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above: drop only if we are still above an interval from now.
                None => self.first_above_time = Some(now + self.cfg.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Head {
            pkt: Some(pkt),
            ok_to_drop,
        }
    }

    /// Mark `pkt` if ECN allows, else drop it into `acted`. Returns the packet when it was marked
    /// (it is then sent), `None` when dropped.
    fn drop_or_mark(&self, mut pkt: Packet, acted: &mut Vec<(Packet, Verdict)>) -> Option<Packet> {
        if self.cfg.ecn && pkt.ecn != Ecn::NotEct {
            pkt.ecn = Ecn::Ce;
            acted.push((pkt, Verdict::Marked));
            Some(pkt)
        } else {
            acted.push((pkt, Verdict::Dropped(DropCause::Aqm)));
            None
        }
    }

    /// §5.5: the packet to send at `now`; packets dropped or marked on the way are pushed to
    /// `acted` (a marked packet is also the one returned).
    pub fn dequeue(&mut self, now: Nanos, acted: &mut Vec<(Packet, Verdict)>) -> Option<Packet> {
        let mut r = self.dodequeue(now);
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn time went below target: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop. Drop the head and take the next, which may end the
            // dropping state; if not, schedule the next drop. A large backlog can make the next
            // drop due at once, hence the loop (§5.5).
            while self.dropping && now >= self.drop_next {
                let pkt = r.pkt.expect("ok_to_drop implies a packet");
                self.count += 1;
                if let Some(marked) = self.drop_or_mark(pkt, acted) {
                    // Marked, not dropped: send it and space the next signal as a drop's.
                    self.drop_next = self.control_law(self.drop_next);
                    return Some(marked);
                }
                r = self.dodequeue(now);
                if !r.ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if r.ok_to_drop {
            // Enter the dropping state with one drop (or mark).
            let pkt = r.pkt.expect("ok_to_drop implies a packet");
            let sent = match self.drop_or_mark(pkt, acted) {
                Some(marked) => Some(marked),
                None => self.dodequeue(now).pkt,
            };
            self.dropping = true;
            // Count reuse (§5.5): if the dropping state is re-entered soon (within 16 intervals
            // of the last scheduled drop), start from the drop rate that controlled the queue
            // last time rather than from 1. `now < drop_next` counts as soon.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * self.cfg.interval
            {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
            return sent;
        }
        r.pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::queue::test_packet;
    use crate::time::MS;

    fn codel(ecn: bool) -> Codel {
        Codel::new(
            Limit::Packets(10_000),
            CodelConfig {
                target: 5 * MS,
                interval: 100 * MS,
                ecn,
            },
        )
    }

    /// A link that sends one packet every `gap`, fed two packets per `gap`: the queue, and with
    /// it the sojourn time, grows without bound until CoDel drops. Returns the drop times.
    fn overloaded(q: &mut Codel, gap: Nanos, until: Nanos, ect: bool) -> (Vec<Nanos>, usize) {
        let mut pkt = test_packet(1500);
        if ect {
            pkt.ecn = Ecn::Ect0;
        }
        let (mut drops, mut marks) = (Vec::new(), 0);
        let mut acted = Vec::new();
        let mut t = 0;
        while t < until {
            q.enqueue(pkt, t);
            q.enqueue(pkt, t);
            acted.clear();
            q.dequeue(t, &mut acted);
            for (_, v) in &acted {
                match v {
                    Verdict::Dropped(DropCause::Aqm) => drops.push(t),
                    Verdict::Marked => marks += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
            t += gap;
        }
        (drops, marks)
    }

    #[test]
    fn a_standing_queue_above_target_for_longer_than_an_interval_starts_dropping() {
        // 1 ms per departure, two arrivals per ms: packet j (0-based) is served at j ms, having
        // arrived at ⌊j/2⌋ ms, so its sojourn time is ⌈j/2⌉ ms — first at target (5 ms) for
        // j = 9. first_above_time = 9 + 100 = 109 ms; the first dequeue at or after it drops.
        let mut q = codel(false);
        let (drops, _) = overloaded(&mut q, MS, 400 * MS, false);
        assert_eq!(drops[0], 109 * MS, "{drops:?}");
        assert!(q.dropping);
        // Nothing before: 108 ms of sojourn time above target was not yet a whole interval.
        assert!(drops.iter().all(|&t| t >= 109 * MS));
    }

    #[test]
    fn drop_times_follow_interval_over_the_square_root_of_count() {
        // Serve every 0.1 ms so drops fall close to the control law's times. Sojourn time first
        // reaches 5 ms at dequeue j = 99 (t = 9.9 ms): first drop at 109.9 ms, count = 1,
        // drop_next = 109.9 + 100/√1 = 209.9 ms; then drop_next += 100 ms/√count, count = 2, 3:
        // 209.9 + 70.710678 = 280.610678 ms, + 57.735026 = 338.345704 ms, + 50 = 388.345704 ms,
        // + 44.72136 = 433.07 ms (after the run). Each drop happens at the first dequeue at or
        // after drop_next (a multiple of 0.1 ms).
        let mut q = codel(false);
        let (drops, _) = overloaded(&mut q, MS / 10, 400 * MS, false);
        assert_eq!(
            drops,
            [
                109_900_000,
                209_900_000,
                280_700_000,
                338_400_000,
                388_400_000
            ]
        );
        assert_eq!(
            q.drop_next,
            388_345_704 + 44_721_359,
            "drop_next += 100 ms/√5"
        );
    }

    #[test]
    fn a_queue_below_target_never_drops() {
        // One arrival per departure: every packet is served 4 ms after it arrived, below 5 ms.
        let mut q = codel(false);
        let mut acted = Vec::new();
        for k in 0..10_000u64 {
            q.enqueue(test_packet(1500), k * MS);
            if k >= 4 {
                assert!(q.dequeue(k * MS, &mut acted).is_some());
            }
        }
        assert!(acted.is_empty(), "{acted:?}");
        assert!(!q.dropping && q.first_above_time.is_none());
    }

    #[test]
    fn one_packet_waiting_is_never_above_target_however_long_it_waited() {
        // §5.6: a queue holding at most maxpacket bytes counts as below target.
        let mut q = codel(false);
        let mut acted = Vec::new();
        for k in 0..100u64 {
            q.enqueue(test_packet(1500), k * 1000 * MS);
            q.enqueue(test_packet(1500), k * 1000 * MS);
            q.dequeue(k * 1000 * MS + 500 * MS, &mut acted);
            q.dequeue(k * 1000 * MS + 600 * MS, &mut acted);
        }
        assert!(acted.is_empty(), "{acted:?}");
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped_when_ecn_is_on() {
        let mut q = codel(true);
        let (drops, marks) = overloaded(&mut q, MS, 400 * MS, true);
        assert!(drops.is_empty(), "{drops:?}");
        assert!(marks >= 3, "{marks}");
        // A not-ECT packet in the same state is still dropped.
        let mut q = codel(true);
        let (drops, marks) = overloaded(&mut q, MS, 400 * MS, false);
        assert_eq!((drops[0], marks), (109 * MS, 0));
    }

    #[test]
    fn re_entering_the_dropping_state_soon_reuses_the_last_count() {
        // §5.5: after dropping with count c, a re-entry within 16 intervals starts at
        // count − lastcount (when > 1) instead of 1.
        let mut q = codel(false);
        let _ = overloaded(&mut q, MS / 10, 400 * MS, false);
        let reached = q.count;
        assert!(reached > 2, "{reached}");
        // Drain: the queue empties, CoDel leaves the dropping state.
        let mut acted = Vec::new();
        let t = 400 * MS;
        while q.dequeue(t, &mut acted).is_some() {}
        q.dequeue(t, &mut acted);
        assert!(!q.dropping);
        // Overload again straight away: the first drop of the new episode re-enters with
        // count = reached − lastcount(1).
        let mut pkt = test_packet(1500);
        pkt.ecn = Ecn::NotEct;
        let mut now = t;
        while !q.dropping {
            now += MS;
            q.enqueue(pkt, now);
            q.enqueue(pkt, now);
            q.dequeue(now, &mut acted);
        }
        assert_eq!(q.count, reached - 1);
    }
}
