//! The retransmission timer replayed over a stream of RTT samples as its sender would have run
//! it — the assessment of Allman & Paxson, "On estimating end-to-end network path properties",
//! SIGCOMM 1999, §2 (timer value checked against the ACK that really came; a timer that fires
//! first is a *bad timeout*; on a real loss the timer's value is the time the sender waits, W).
//!
//! Built on the shared [`RetransmitTimer`] (estimator + back-off + Karn, `rtt::timer`): once the
//! timer has expired in a stream, its own `RetransmitTimer` hears every expiry and only the
//! samples Karn's rule accepts. Deadlines are computed here from its RTO, because a replay adds
//! two things a sender does not have: a common floor (`--min-rto`) and a heartbeat.
//!
//! Model, per sample t with ACK time `now_t` and RTT `y_t` (docs/metrics.md restates it):
//! - the timed segment was sent at `s_t = now_t − y_t`;
//! - the timer covering it was armed at `a_t = max(now_{t−1}, s_t)`: restarted by the previous
//!   ACK if the segment was already outstanding (RFC 6298 §5.3), else started when it was sent
//!   (§5.1). ACKs that carried no sample are not in the stream, so a real sender restarted its
//!   timer at least as late: the replay can only over-count expiries, never miss one;
//! - it fires at `f(a_t + RTO)`, RTO = the estimator's base RTO (raised to `min_rto` if given)
//!   backed off `2^k` and capped (§5.5), f = the next heartbeat of the timer granularity (none by
//!   default: the estimators already round their RTO to their own clock);
//! - every expiry at or before `now_t` backs off and re-arms at the expiry (§5.5–5.6); the
//!   episode is one bad timeout however many expiries it holds. An ACK at the very instant of the
//!   deadline loses, as `RetransmitTimer::expired` has it (deadline ≤ now);
//! - Karn (RFC 6298 §3): a segment that timed out was retransmitted, so its sample is ambiguous
//!   and the timer's estimator does not see it, unless timestamps name the transmission; the
//!   back-off stays until a sample is accepted (§5.7 note, Linux clears icsk_backoff there);
//! - W_t = f(a_t + RTO) − a_t for the segment's first arming: had it been lost, the sender
//!   would have waited that long before retransmitting. Never negative.
//!
//! Until its first expiry a stream's timer estimator has seen exactly what the open-loop one has,
//! so the open-loop estimator stands in for it (one estimator, one pass). At the first expiry the
//! `RetransmitTimer` is built from a fresh estimator fed the stream's samples so far (the replay
//! loop is compiled per concrete estimator type and cannot hand its state to the `Estimator`
//! enum the timer holds); from then on it runs beside the open-loop estimator.

use super::metrics::TimerOutcome;
use crate::rtt::policy::Policy;
use crate::rtt::timer::{backed_off, RetransmitTimer};
use crate::rtt::{Context, Estimator, RttEstimator};
use crate::time::Nanos;
use std::borrow::Cow;

/// Expiries per episode that the estimator hears one by one; beyond this (a timer at its cap
/// facing a gap of hours) the rest are counted arithmetically, since the cap no longer moves.
const EXPIRIES_HEARD: u32 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimerConfig {
    /// Heartbeat of the sender's timer: a timer fires at the first multiple of it at or after
    /// its deadline. 0 = fires exactly at the deadline.
    pub granularity: Nanos,
    /// Every RTO in force is at least this (`--min-rto`; 0 = the estimator's own floor only).
    pub min_rto: Nanos,
    /// Samples are timestamp-echo samples: Karn's rule does not withhold them (RFC 7323 §4).
    pub timestamps: bool,
}

impl TimerConfig {
    fn fire_at(&self, deadline: Nanos) -> Nanos {
        match self.granularity {
            0 => deadline,
            g => deadline.div_ceil(g).saturating_mul(g),
        }
    }

    /// A base RTO with the common floor applied.
    pub fn floor(&self, base: Nanos) -> Nanos {
        base.max(self.min_rto).max(1)
    }

    /// The estimator's base RTO with the common floor applied.
    pub fn base<E: RttEstimator>(&self, est: &E) -> Nanos {
        self.floor(est.rto())
    }

    /// RTO in force: the floored base backed off `count` times, capped at `max` (§5.5).
    fn in_force(&self, base: Nanos, count: u32, max: Nanos) -> Nanos {
        let base = self.floor(base);
        backed_off(base, count, max.max(base))
    }
}

/// The timer of one stream (connection).
#[derive(Debug, Clone)]
pub struct SenderTimer<'a> {
    cfg: TimerConfig,
    /// A fresh estimator of the kind replayed, to build the timer from at the first expiry
    /// (borrowed by a replay's many streams; owned by a live stream, `eval::live`).
    template: Cow<'a, Estimator>,
    /// The timer once it diverged from the open-loop estimator.
    own: Option<RetransmitTimer>,
    last_ack: Option<Nanos>,
}

impl<'a> SenderTimer<'a> {
    pub fn new(cfg: TimerConfig, template: &'a Estimator) -> Self {
        Self {
            cfg,
            template: Cow::Borrowed(template),
            own: None,
            last_ack: None,
        }
    }

    /// A timer that owns its template (a live stream outlives any borrow).
    pub fn owned(cfg: TimerConfig, template: Estimator) -> SenderTimer<'static> {
        SenderTimer {
            cfg,
            template: Cow::Owned(template),
            own: None,
            last_ack: None,
        }
    }

    /// The timer has expired once in this stream and runs its own estimator since: the
    /// samples before it (`on_ack`'s `earlier`) are no longer read.
    pub fn diverged(&self) -> bool {
        self.own.is_some()
    }

    /// The first sample of a stream only starts the clock (it is not scored).
    pub fn warm_up(&mut self, now: Nanos) {
        self.last_ack = Some(now);
    }

    /// Replay the timer for the segment whose ACK arrives at `now` with RTT `rtt`. `shared` is
    /// the open-loop estimator *before* it absorbs the sample; `earlier` the stream's samples
    /// before this one (ACK times, RTTs), from which the timer is built at its first expiry.
    /// Call [`Self::absorb`] after.
    pub fn on_ack<E: RttEstimator>(
        &mut self,
        now: Nanos,
        rtt: Nanos,
        shared: &E,
        earlier: (&[Nanos], &[Nanos]),
    ) -> TimerOutcome {
        let send = now.saturating_sub(rtt);
        let mut armed = self.last_ack.map_or(send, |a| a.max(send));
        let first = match &self.own {
            Some(t) => self
                .cfg
                .in_force(t.base_rto(), t.backoff_count(), t.estimator().max_rto()),
            None => self.cfg.in_force(shared.rto(), 0, shared.max_rto()),
        };
        let mut deadline = self.cfg.fire_at(armed.saturating_add(first));
        let wait = deadline - armed;
        let mut expiries = 0u32;
        let cfg = self.cfg;
        while deadline <= now {
            let timer = self.diverge(earlier);
            expiries = expiries.saturating_add(1);
            timer.on_timeout();
            let rto = cfg.in_force(
                timer.base_rto(),
                timer.backoff_count(),
                timer.estimator().max_rto(),
            );
            armed = deadline;
            let next = cfg.fire_at(armed.saturating_add(rto));
            if expiries >= EXPIRIES_HEARD && next <= now {
                // At the cap every further step is the same length: count them.
                let step = (next - armed).max(1);
                let more = (now - next) / step + 1;
                expiries = expiries.saturating_add(u32::try_from(more).unwrap_or(u32::MAX));
                break;
            }
            deadline = next;
        }
        TimerOutcome {
            wait,
            expiries,
            withheld: expiries > 0 && !self.cfg.timestamps,
        }
    }

    /// W of a segment that was really lost (a capture's evidence, `capture::loss`), whose timer
    /// was started at `armed` (its send, or the last ACK that advanced the cumulative ACK before
    /// its resend): `f(armed + RTO in force) − armed`, the RTO in force being the one this timer
    /// holds at that moment (back-off included). `shared`: the open-loop estimator having
    /// absorbed the stream's samples up to `armed`. A probe: it changes nothing, since the
    /// replay cannot know whether this estimator's sender would have repaired the loss by a
    /// timeout or by fast retransmit (docs/metrics.md).
    pub fn wait_if_lost<E: RttEstimator>(&self, armed: Nanos, shared: &E) -> Nanos {
        let rto = match &self.own {
            Some(t) => self
                .cfg
                .in_force(t.base_rto(), t.backoff_count(), t.estimator().max_rto()),
            None => self.cfg.in_force(shared.rto(), 0, shared.max_rto()),
        };
        self.cfg.fire_at(armed.saturating_add(rto)) - armed
    }

    /// After the open-loop estimator absorbed the sample: the timer's own estimator (if it has
    /// diverged) takes it unless Karn withheld it, which also ends the back-off; the ACK restarts
    /// the timer (§5.3).
    pub fn absorb(&mut self, now: Nanos, rtt: Nanos, outcome: &TimerOutcome, ctx: &Context) {
        if let Some(timer) = self.own.as_mut() {
            if !outcome.withheld {
                timer.on_sample(rtt, ctx);
            }
            timer.arm(now, ctx);
        }
        self.last_ack = Some(now);
    }

    /// The stream's own timer, built at the first expiry from the samples seen so far (each
    /// absorbed then followed by a re-arm, the calls the open-loop estimator received).
    fn diverge(&mut self, (times, rtts): (&[Nanos], &[Nanos])) -> &mut RetransmitTimer {
        let template = &self.template;
        self.own.get_or_insert_with(|| {
            let mut timer = RetransmitTimer::new(template.as_ref().clone(), Policy::None);
            for (&now, &rtt) in times.iter().zip(rtts) {
                let ctx = Context {
                    now,
                    ..Context::default()
                };
                timer.on_sample(rtt, &ctx);
                timer.arm(now, &ctx);
            }
            timer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::{build, Estimator};
    use crate::time::{MS, SEC};

    /// Feeds (ack time, rtt) pairs in ms through a timer and the open-loop estimator.
    fn run(
        cfg: TimerConfig,
        est: &str,
        params: &[(&str, &str)],
        acks: &[(u64, u64)],
    ) -> Vec<TimerOutcome> {
        let given: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut open: Estimator = build(est, &given).unwrap();
        let template = open.clone();
        let mut timer = SenderTimer::new(cfg, &template);
        let mut out = vec![];
        let times: Vec<Nanos> = acks.iter().map(|a| a.0 * MS).collect();
        let rtts: Vec<Nanos> = acks.iter().map(|a| a.1 * MS).collect();
        for i in 0..acks.len() {
            let (now, rtt) = (times[i], rtts[i]);
            let ctx = Context {
                now,
                ..Context::default()
            };
            if i == 0 {
                timer.warm_up(now);
            } else {
                let o = timer.on_ack(now, rtt, &open, (&times[..i], &rtts[..i]));
                timer.absorb(now, rtt, &o, &ctx);
                out.push(o);
            }
            open.on_sample(rtt, &ctx);
            open.on_timer_armed(&ctx);
        }
        out
    }

    #[test]
    fn a_stall_longer_than_the_rto_is_exactly_one_bad_timeout() {
        // Constant RTO 300 ms. ACKs every 100 ms, then one segment's ACK comes 400 ms after the
        // previous ACK: the timer restarted at 300 ms fires at 600 ms < 700 ms, once.
        let acks = [(100, 100), (200, 100), (300, 100), (700, 450), (800, 100)];
        let got = run(
            TimerConfig::default(),
            "constant",
            &[("rto", "300ms")],
            &acks,
        );
        let expiries: Vec<u32> = got.iter().map(|o| o.expiries).collect();
        assert_eq!(expiries, [0, 0, 1, 0]);
        assert!(got[2].withheld);
        // W is the RTO in force at arming; after the episode Karn keeps the back-off (2 × 300).
        let waits: Vec<Nanos> = got.iter().map(|o| o.wait).collect();
        assert_eq!(waits, [300 * MS, 300 * MS, 300 * MS, 600 * MS]);
    }

    #[test]
    fn a_long_stall_backs_off_within_one_episode_and_the_next_arming_keeps_the_back_off() {
        // RTO 300 ms armed at 100: fires 400 (back-off → 600 ms), 1000 (→ 1.2 s), ACK at 1500.
        // Karn withholds that sample, so the next arming still runs at 4 × 300 ms = 1.2 s; the
        // following ACK is accepted and ends the back-off.
        let acks = [(100, 100), (1500, 1450), (1600, 100), (1700, 100)];
        let got = run(
            TimerConfig::default(),
            "constant",
            &[("rto", "300ms")],
            &acks,
        );
        assert_eq!(got[0].expiries, 2);
        assert_eq!(
            got[1],
            TimerOutcome {
                wait: 1200 * MS,
                expiries: 0,
                withheld: false
            }
        );
        assert_eq!(got[2].wait, 300 * MS);
    }

    #[test]
    fn timestamps_let_a_timed_out_segment_still_give_its_sample() {
        // rfc6298 without a floor: after 100 ms samples its RTO is ~ 100 + 4·RTTVAR. A 1 s
        // stall times out; with timestamps the 1 s sample is accepted and ends the back-off.
        let acks = [
            (100, 100),
            (200, 100),
            (300, 100),
            (1300, 1000),
            (1400, 100),
        ];
        let p = [("min_rto", "0")];
        let karn = run(TimerConfig::default(), "rfc6298", &p, &acks);
        let ts = run(
            TimerConfig {
                timestamps: true,
                ..TimerConfig::default()
            },
            "rfc6298",
            &p,
            &acks,
        );
        // Before the stall SRTT = 100 ms, RTTVAR = 28.125 ms: RTO 212.5 ms, armed at 300 ms,
        // fires at 512.5 and 937.5 ms (425 ms backed off); the ACK at 1300 ms beats 1787.5 ms.
        assert_eq!(
            karn[2],
            TimerOutcome {
                wait: 212_500_000,
                expiries: 2,
                withheld: true
            }
        );
        assert_eq!(
            ts[2],
            TimerOutcome {
                wait: 212_500_000,
                expiries: 2,
                withheld: false
            }
        );
        // Karn: the estimator never saw 1 s and the back-off stays: 4 × 212.5 ms.
        assert_eq!(karn[3].wait, 850 * MS);
        // Timestamps: 1 s absorbed (SRTT 212.5, RTTVAR 246.09375 ms), back-off ended.
        assert_eq!(ts[3].wait, 1_196_875_000);
    }

    #[test]
    fn a_segment_sent_after_the_last_ack_starts_its_own_timer() {
        // Idle 5 s between ACKs, then a 100 ms RTT: the timer starts at the send (§5.1), so a
        // 1 s RTO does not fire during the idle time.
        let acks = [(100, 100), (5100, 100)];
        let got = run(TimerConfig::default(), "rfc6298", &[], &acks);
        assert_eq!(
            got[0],
            TimerOutcome {
                wait: SEC,
                expiries: 0,
                withheld: false
            }
        );
    }

    #[test]
    fn the_heartbeat_rounds_the_deadline_up_and_min_rto_raises_every_rto() {
        let acks = [(130, 100), (260, 100)];
        let cfg = TimerConfig {
            granularity: 500 * MS,
            ..TimerConfig::default()
        };
        // Sent at 160 ms, after the ACK at 130 ms: armed at the send (§5.1), deadline 460 ms →
        // fires at the 500 ms heartbeat: W = 340 ms.
        assert_eq!(
            run(cfg, "constant", &[("rto", "300ms")], &acks)[0].wait,
            340 * MS
        );
        let cfg = TimerConfig {
            min_rto: SEC,
            ..TimerConfig::default()
        };
        assert_eq!(
            run(cfg, "constant", &[("rto", "300ms")], &acks)[0].wait,
            SEC
        );
    }

    #[test]
    fn an_ack_at_the_very_instant_of_the_deadline_loses_as_in_the_shared_timer() {
        let acks = [(100, 100), (399, 299)];
        assert_eq!(
            run(
                TimerConfig::default(),
                "constant",
                &[("rto", "300ms")],
                &acks
            )[0]
            .expiries,
            0
        );
        let acks = [(100, 100), (400, 300)];
        assert_eq!(
            run(
                TimerConfig::default(),
                "constant",
                &[("rto", "300ms")],
                &acks
            )[0]
            .expiries,
            1
        );
    }

    #[test]
    fn the_timer_built_at_the_first_expiry_has_seen_what_the_open_loop_estimator_saw() {
        // rfc6298 without a floor, samples 100, 120, 80 ms, then a stall. The diverged timer
        // must hold the same RTO the open-loop estimator held: W of the stalled segment and the
        // backed-off value after it agree with an rfc6298 fed the same three samples.
        let acks = [(100, 100), (220, 120), (300, 80), (2300, 2000), (2400, 100)];
        let p = [("min_rto", "0")];
        let got = run(TimerConfig::default(), "rfc6298", &p, &acks);
        let mut reference = build("rfc6298", &[("min_rto".into(), "0".into())]).unwrap();
        for ms in [100, 120, 80] {
            reference.on_sample(ms * MS, &Context::default());
        }
        let base = reference.rto();
        assert_eq!(got[2].wait, base);
        assert!(got[2].expiries >= 2);
        assert_eq!(got[3].wait, backed_off(base, got[2].expiries, 60 * SEC));
    }

    #[test]
    fn an_hours_long_gap_at_the_cap_is_counted_without_looping_per_expiry() {
        // `last` after a 100 ms sample: RTO 200 ms, capped at 1 s. Armed at 100 ms it fires at
        // 300, 700 (400 ms), 1500 (800 ms), 2500 (1 s cap), then every second to 3 599 500 ms.
        let acks = [(100, 100), (3_600_100, 3_600_000)];
        let got = run(TimerConfig::default(), "last", &[("max_rto", "1s")], &acks);
        assert_eq!(got[0].expiries, 3 + (3_599_500 - 2_500) / 1000 + 1);
    }
}
