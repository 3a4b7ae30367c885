//! Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1(4), 1993) with optional ECN marking
//! (RFC 3168 §7) and "gentle" mode — docs/algorithms.md §9.7.
//!
//! One rule comes from Floyd's reference implementation rather than the paper: no early or
//! forced drop while the queue holds at most one packet (ns-2 `red.cc`, `qlen > 1`; kept by
//! ns-3's `RedQueueDisc`, `nQueued > 1`). After a window reduction the queue drains while the
//! slow average is still above min_th; dropping then would halve a window that no longer
//! congests anything.

use super::{limit, Built, DropCause, Fifo, Queue, QueueCtx, Verdict, LIMIT};
use crate::params::ParamError;
use crate::params::ParamSpec;
use crate::rng::Stream;
use crate::sim::component::{Args, Component, Declaration};
use crate::sim::packet::{Ecn, Packet};
use crate::sim::units::{parse_bytes, spell_bytes, tx_time, Limit};
use crate::time::Nanos;

const FLAG: &[&str] = &["true", "false"];

pub const COMPONENT: Component<Built, QueueCtx> = Component {
    decl: Declaration {
        name: "red",
        aliases: &[],
        summary: "Random Early Detection with optional ECN marking and gentle mode",
        source: "Floyd & Jacobson, IEEE/ACM ToN 1(4), 1993; RFC 3168 §7; ns-2 red.cc defaults",
        params: &[
            LIMIT,
            ParamSpec::float(
                "min_th",
                "5",
                0.0,
                f64::INFINITY,
                "lower threshold of the average queue, packets (ns-2 thresh_)",
            ),
            ParamSpec::float(
                "max_th",
                "15",
                0.0,
                f64::INFINITY,
                "upper threshold, packets (ns-2 maxthresh_); above min_th",
            ),
            ParamSpec::float(
                "w_q",
                "0.002",
                0.0,
                1.0,
                "EWMA weight of the average queue, in (0, 1]",
            ),
            ParamSpec::float(
                "max_p",
                "0.1",
                0.0,
                1.0,
                "drop probability at max_th (ns-2 linterm_ 10)",
            ),
            ParamSpec::choice(
                "gentle",
                "false",
                FLAG,
                "ramp p from max_p to 1 between max_th and 2·max_th",
            ),
            ParamSpec::choice(
                "ecn",
                "false",
                FLAG,
                "CE-mark ECT packets instead of early drops (RFC 3168 §7)",
            ),
            ParamSpec::quantity(
                "mean_packet",
                "1500B",
                "B",
                1.0,
                f64::INFINITY,
                "typical packet size, the unit of the idle-time decay",
            )
            .spelled_by(spell_bytes),
            ParamSpec::quantity(
                "byte_mode_max",
                "off",
                "B",
                1.0,
                u32::MAX as f64,
                "byte mode: scale p_b by size / this maximum packet size",
            )
            .spelled_by(spell_bytes),
        ],
        defaults: &[],
    },
    build,
};

fn bytes<C>(a: &Args<'_, C>, key: &str) -> Result<u64, ParamError> {
    a.quantity(key, "a size such as 1500B", parse_bytes, |&b| b as f64)
}

fn build(a: &Args<'_, QueueCtx>) -> Result<Built, ParamError> {
    let (min_th, max_th) = (a.float("min_th")?, a.float("max_th")?);
    if max_th <= min_th {
        return Err(a.invalid(
            "max_th",
            format!("need 0 ≤ min_th < max_th, got min_th {min_th}, max_th {max_th}"),
        ));
    }
    let w_q = a.float("w_q")?;
    if w_q <= 0.0 {
        return Err(a.invalid("w_q", format!("{w_q} is not in (0, 1]")));
    }
    let cfg = RedConfig {
        min_th,
        max_th,
        w_q,
        max_p: a.float("max_p")?,
        gentle: a.flag("gentle")?,
        ecn: a.flag("ecn")?,
        mean_tx_time: tx_time(bytes(a, "mean_packet")?, a.ctx.bandwidth),
        byte_mode_max_size: if a.is_given("byte_mode_max") {
            Some(bytes(a, "byte_mode_max")? as u32)
        } else {
            None
        },
    };
    Ok((Queue::Red(Red::new(limit(a)?, cfg)), None))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedConfig {
    /// min_th in packets (ns-2 `thresh_`, default 5).
    pub min_th: f64,
    /// max_th in packets (ns-2 `maxthresh_`, default 15); must exceed min_th.
    pub max_th: f64,
    /// EWMA weight w_q (paper and ns-2: 0.002), in (0, 1].
    pub w_q: f64,
    /// Drop probability at max_th (ns-2 `linterm_ 10` → 0.1; the paper uses 1/50), in (0, 1].
    pub max_p: f64,
    /// Gentle RED: p ramps from max_p to 1 between max_th and 2·max_th instead of jumping to 1.
    pub gentle: bool,
    /// Mark ECT packets with CE instead of dropping them early (RFC 3168 §7).
    pub ecn: bool,
    /// Transmission time of a typical packet, the unit of idle time in the decay (paper: `s`).
    pub mean_tx_time: Nanos,
    /// Byte mode (paper §4 / ns-2 `bytes_`): p_b ← p_b·size/max_size, so small packets (ACKs)
    /// are marked less often. `None`: packet mode.
    pub byte_mode_max_size: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Red {
    pub(super) fifo: Fifo,
    cfg: RedConfig,
    avg: f64,
    /// Packets since the last mark/drop; −1 while avg is below min_th (paper's initialisation).
    count: i64,
    /// Start of the current idle period (paper's `q_time`), if the link is idle.
    idle_since: Option<Nanos>,
}

/// What the early-detection stage decided before the buffer limit is consulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Pass,
    /// Probabilistic: ECT packets are marked instead when ECN is on.
    Early,
    /// avg above the (gentle) ceiling: every packet is dropped, ECT or not.
    Forced,
}

impl Red {
    pub fn new(limit: Limit, cfg: RedConfig) -> Self {
        // The link starts idle at time 0.
        Self {
            fifo: Fifo::new(limit),
            cfg,
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    pub fn on_idle(&mut self, now: Nanos) {
        self.idle_since = Some(now);
    }

    fn update_average(&mut self, now: Nanos) {
        let w = self.cfg.w_q;
        match self.idle_since.take() {
            // Idle-time correction: as if m = idle/s packets of size zero had arrived, each
            // decaying avg by (1 − w_q) (paper §4, "m ← f(time − q_time)").
            Some(since) if self.fifo.is_empty() => {
                let m = now.saturating_sub(since) as f64 / self.cfg.mean_tx_time.max(1) as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * self.fifo.len() as f64,
        }
    }

    fn decide(&mut self, size: u32, rng: &mut Stream) -> Decision {
        let RedConfig {
            min_th,
            max_th,
            max_p,
            gentle,
            ..
        } = self.cfg;
        let avg = self.avg;
        // A queue of at most one packet counts as below min_th (ns-2's `qlen > 1`, see above),
        // and the next packet above starts a new run of `count` as a crossing of min_th does.
        let p_b = if avg < min_th || self.fifo.len() <= 1 {
            self.count = -1;
            return Decision::Pass;
        } else if avg < max_th {
            max_p * (avg - min_th) / (max_th - min_th)
        } else if gentle && avg < 2.0 * max_th {
            max_p + (1.0 - max_p) * (avg - max_th) / max_th
        } else {
            self.count = 0;
            return Decision::Forced;
        };
        let p_b = match self.cfg.byte_mode_max_size {
            Some(max) => p_b * size as f64 / max.max(1) as f64,
            None => p_b,
        };
        self.count += 1;
        // p_a = p_b / (1 − count·p_b): spreads marks evenly between drops (paper §4).
        let denom = 1.0 - self.count as f64 * p_b;
        let p_a = if denom <= 0.0 {
            1.0
        } else {
            (p_b / denom).min(1.0)
        };
        if rng.bernoulli(p_a) {
            self.count = 0;
            Decision::Early
        } else {
            Decision::Pass
        }
    }

    pub fn enqueue(&mut self, mut pkt: Packet, now: Nanos, rng: &mut Stream) -> Verdict {
        self.update_average(now);
        let marked = match self.decide(pkt.size, rng) {
            Decision::Pass => false,
            Decision::Early if self.cfg.ecn && pkt.ecn != Ecn::NotEct => {
                pkt.ecn = Ecn::Ce;
                true
            }
            Decision::Early | Decision::Forced => return Verdict::Dropped(DropCause::Aqm),
        };
        match self.fifo.push(pkt) {
            Verdict::Enqueued if marked => Verdict::Marked,
            v => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Component;
    use crate::sim::queue::test_packet;

    fn cfg(ecn: bool, gentle: bool) -> RedConfig {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            gentle,
            ecn,
            mean_tx_time: 1_200_000,
            byte_mode_max_size: None,
        }
    }

    /// RED with the given average and two packets queued (RED leaves a queue of one alone).
    fn red_with_avg(avg: f64, c: RedConfig) -> Red {
        let mut r = Red::new(Limit::Packets(1000), c);
        r.avg = avg;
        r.idle_since = None;
        r.fifo = busy_fifo();
        r
    }

    fn busy_fifo() -> Fifo {
        let mut f = Fifo::new(Limit::Packets(1000));
        f.push(test_packet(1500));
        f.push(test_packet(1500));
        f
    }

    #[test]
    fn a_queue_of_one_packet_is_never_dropped_from_whatever_the_average() {
        // ns-2/ns-3 `qlen > 1`: after a window cut the queue drains while avg lags above max_th.
        let mut rng = Stream::new(1, Component::Queue(0));
        let mut r = red_with_avg(
            40.0,
            RedConfig {
                w_q: 1e-12,
                ..cfg(false, false)
            },
        );
        r.fifo = Fifo::new(Limit::Packets(1000));
        assert_eq!(r.enqueue(test_packet(1500), 0, &mut rng), Verdict::Enqueued);
        assert_eq!(r.enqueue(test_packet(1500), 0, &mut rng), Verdict::Enqueued);
        assert_eq!(
            r.enqueue(test_packet(1500), 0, &mut rng),
            Verdict::Dropped(DropCause::Aqm),
            "two queued: forced drop"
        );
    }

    #[test]
    fn the_average_follows_the_ewma_of_the_instantaneous_queue() {
        let mut r = red_with_avg(0.0, cfg(false, false));
        r.fifo = Fifo::new(Limit::Packets(1000));
        let mut rng = Stream::new(1, Component::Queue(0));
        for _ in 0..3 {
            r.enqueue(test_packet(1500), 0, &mut rng);
        }
        // q was 0, 1, 2 at the three arrivals.
        let w = 0.002;
        let expected = ((0.0 * (1.0 - w) + w * 1.0) * (1.0 - w)) + w * 2.0;
        assert!((r.avg - expected).abs() < 1e-15);
    }

    #[test]
    fn idle_time_decays_the_average_by_one_minus_wq_per_packet_time() {
        let mut r = red_with_avg(10.0, cfg(false, false));
        r.fifo = Fifo::new(Limit::Packets(1000));
        r.on_idle(0);
        let mut rng = Stream::new(1, Component::Queue(0));
        r.enqueue(test_packet(1500), 1000 * 1_200_000, &mut rng);
        assert!(
            (r.avg - 10.0 * 0.998f64.powi(1000)).abs() < 1e-9,
            "{}",
            r.avg
        );
    }

    #[test]
    fn below_min_th_nothing_is_dropped_and_above_max_th_everything_is() {
        let mut rng = Stream::new(1, Component::Queue(0));
        let mut low = red_with_avg(2.0, cfg(true, false));
        assert_eq!(
            low.enqueue(test_packet(1500), 0, &mut rng),
            Verdict::Enqueued
        );
        let mut high = red_with_avg(40.0, cfg(true, false));
        let mut ect = test_packet(1500);
        ect.ecn = Ecn::Ect0;
        assert_eq!(
            high.enqueue(ect, 0, &mut rng),
            Verdict::Dropped(DropCause::Aqm),
            "forced drops ignore ECN"
        );
    }

    #[test]
    fn count_based_spacing_makes_the_mark_probability_grow_between_marks() {
        // avg fixed halfway: p_b = 0.05, so p_a = 0.05/(1 − 0.05·count) reaches 1 by count 20:
        // no gap between early drops can exceed 20 packets.
        let mut r = red_with_avg(
            10.0,
            RedConfig {
                w_q: 1e-12,
                ..cfg(false, false)
            },
        );
        let mut rng = Stream::new(3, Component::Queue(0));
        let mut gap = 0;
        let mut max_gap = 0;
        let mut drops = 0;
        for _ in 0..20_000 {
            r.fifo = busy_fifo();
            match r.enqueue(test_packet(1500), 0, &mut rng) {
                Verdict::Dropped(_) => {
                    drops += 1;
                    max_gap = max_gap.max(gap);
                    gap = 0;
                }
                _ => gap += 1,
            }
        }
        assert!(max_gap < 20, "{max_gap}");
        // With uniform spacing the mean gap is about 1/(2·p_b) = 10 packets.
        let rate = drops as f64 / 20_000.0;
        assert!(rate > 0.07 && rate < 0.13, "{rate}");
    }

    #[test]
    fn ect_packets_are_marked_where_others_would_be_dropped_early() {
        let mut rng = Stream::new(5, Component::Queue(0));
        let mut r = red_with_avg(
            14.9,
            RedConfig {
                w_q: 1e-12,
                ..cfg(true, false)
            },
        );
        let mut ect = test_packet(1500);
        ect.ecn = Ecn::Ect0;
        let verdicts: Vec<Verdict> = (0..200).map(|_| r.enqueue(ect, 0, &mut rng)).collect();
        assert!(verdicts.contains(&Verdict::Marked));
        assert!(!verdicts.iter().any(|v| matches!(v, Verdict::Dropped(_))));
        assert!(r.fifo.iter_ce_count() > 0);
    }

    #[test]
    fn gentle_red_ramps_instead_of_forcing_drops_just_above_max_th() {
        let mut rng = Stream::new(9, Component::Queue(0));
        let mut r = red_with_avg(
            16.0,
            RedConfig {
                w_q: 1e-12,
                ..cfg(false, true)
            },
        );
        let passed = (0..1000)
            .filter(|_| {
                r.fifo = busy_fifo();
                r.enqueue(test_packet(1500), 0, &mut rng) == Verdict::Enqueued
            })
            .count();
        assert!(
            passed > 0,
            "gentle RED lets some packets through at 1.07·max_th"
        );
    }

    #[test]
    fn byte_mode_drops_small_packets_less_often() {
        let drop_rate = |size: u32| {
            let mut r = red_with_avg(
                10.0,
                RedConfig {
                    w_q: 1e-12,
                    byte_mode_max_size: Some(1500),
                    ..cfg(false, false)
                },
            );
            let mut rng = Stream::new(11, Component::Queue(0));
            let drops = (0..20_000)
                .filter(|_| {
                    r.fifo = busy_fifo();
                    matches!(
                        r.enqueue(test_packet(size), 0, &mut rng),
                        Verdict::Dropped(_)
                    )
                })
                .count();
            drops as f64 / 20_000.0
        };
        let (big, small) = (drop_rate(1500), drop_rate(150));
        assert!(small * 3.0 < big, "1500 B: {big}, 150 B: {small}");
    }
}
