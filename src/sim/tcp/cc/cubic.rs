//! CUBIC (RFC 9438) with Linux `net/ipv4/tcp_cubic.c`'s choices where the two differ —
//! docs/algorithms.md §15.1.
//!
//! In an epoch of congestion avoidance, which starts on the first ACK after a window reduction,
//! the window follows W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 eq. 1), with
//! K = ∛((W_max − cwnd_epoch)/C) (eq. 2), in segments and seconds. Each segment acknowledged
//! moves cwnd towards target = W_cubic(t + RTT) by (target − cwnd)/cwnd segments (§4.2), and never
//! more than half a segment per segment acknowledged (Linux `ca->cnt ≥ 2`: ≤ 1.5·cwnd per RTT).
//! While a Reno-friendly estimate W_est, grown by α = 3(1 − β)/(1 + β) segments per window
//! acknowledged, exceeds cwnd, cwnd grows at least as fast as W_est (§4.3, Linux
//! `tcp_friendliness`). On congestion: W_max = cwnd, or with fast convergence (§4.7)
//! cwnd·(1 + β)/2 when cwnd is below the previous W_max; ssthresh = max(β·cwnd, 2 segments).
//!
//! Choices (also in docs/algorithms.md §15.1), Linux's where RFC 9438 leaves room:
//! - RTT in W_cubic(t + RTT) is the minimum RTT seen (Linux `delay_min`), not the smoothed RTT.
//! - The reduction multiplies cwnd (Linux `cubictcp_recalc_ssthresh`), not RFC 9438's flight_size.
//! - α stays 3(1 − β)/(1 + β) all epoch (Linux; RFC 9438 §4.3 switches to 1 once W_est ≥ W_max).
//! - Before the first loss (W_max = 0, e.g. after HyStart left slow start), cwnd grows at least
//!   5 % per RTT (Linux: `ca->cnt` at most 20).
//! - A timeout forgets W_max, the minimum RTT and HyStart's verdict (Linux `cubictcp_state` on
//!   `TCP_CA_Loss` → `bictcp_reset`); a fast-retransmit loss keeps them.
//! - Time is exact (integer ns), not Linux's jiffies: no HZ/32 rate limit on updates.
//! - Slow start is this simulator's RFC 5681 growth (+min(acked, SMSS) per ACK), as `reno`; the
//!   recovery exit is NewReno's (RFC 6582 §3.2 step 3); undo is Linux's `tcp_reno_undo_cwnd`.
//! - An application-limited idle period does not shift the epoch (Linux `CA_EVENT_TX_START`):
//!   bulk flows never idle; on/off sources restart from the initial window (RFC 5681 §4.1).
//!
//! HyStart (`hystart`): "linux" (default) is Linux's: from cwnd ≥ 16 segments in slow start,
//! leave it (ssthresh = cwnd) when an ACK train (ACKs ≤ 2 ms apart) spans more than half the
//! minimum RTT since the round began, or when the round's minimum RTT over ≥ 8 samples exceeds
//! delay_min + clamp(delay_min/8, 4 ms, 16 ms). "hystart++" is RFC 9406: the delay test per
//! round, then Conservative Slow Start (growth ÷ 4) for 5 rounds before congestion avoidance,
//! back to slow start if the RTT falls again. "off": slow start until a loss.

use super::new_reno::NewReno;
use super::reno::Reno;
use super::Response;
use super::{
    standard_response, AckEvent, Congestion, CongestionControl, CongestionEvent, CongestionOps,
    Window,
};
use crate::component::{Component, Declaration};
use crate::time::{Nanos, MS, SEC};

/// Linux `hystart_low_window`: HyStart acts from 16 segments.
const HYSTART_LOW_WINDOW: u64 = 16;
/// Linux `hystart_ack_delta_us`: ACKs at most 2 ms apart form a train.
const HYSTART_ACK_DELTA: Nanos = 2 * MS;
/// Linux `HYSTART_MIN_SAMPLES`; RFC 9406 §4.2 N_RTT_SAMPLE: 8 samples per round.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Linux `HYSTART_DELAY_MIN`/`MAX`; RFC 9406 MIN_RTT_THRESH / MAX_RTT_THRESH: 4 and 16 ms.
const DELAY_THRESH_MIN: Nanos = 4 * MS;
const DELAY_THRESH_MAX: Nanos = 16 * MS;
/// RFC 9406 §4.2: CSS_GROWTH_DIVISOR = 4, CSS_ROUNDS = 5.
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "cubic",
        aliases: &[],
        summary: "CUBIC: window grows as C·(t − K)³ + W_max after a loss, beta 0.7, Reno-friendly region, HyStart",
        source: "RFC 9438; Linux tcp_cubic.c; RFC 9406 (HyStart++); docs/algorithms.md §15.1",
        params: PARAMS,
        defaults: &[("recovery", "newreno")],
    },
    build: |p| Ok(CongestionControl::Cubic(Box::new(Cubic::new(Config::from_params(p)?)))),
};

crate::choices! {
    /// How slow start ends besides a loss.
    pub enum Hystart { Linux = "linux", PlusPlus = "hystart++", Off = "off" }
}

crate::params! {
    pub struct Config {
        beta: f64 = float("0.7001953125", 0.01, 0.99, "multiplicative decrease: ssthresh = beta·cwnd (RFC 9438 §4.6: 0.7; Linux 717/1024, the default)"),
        c: f64 = float("0.400390625", 0.01, 100.0, "aggressiveness C of W = C·(t − K)³ + W_max, segments/s³ (RFC 9438 §5: 0.4; Linux bic_scale 41 → 0.4004, the default)"),
        fast_convergence: bool = choice("true", "release bandwidth to newer flows: W_max = cwnd·(1 + beta)/2 when cwnd fell below the previous W_max (RFC 9438 §4.7, Linux fast_convergence = 1)"),
        tcp_friendliness: bool = choice("true", "Reno-friendly region: grow at least as Reno's estimate W_est (RFC 9438 §4.3, Linux tcp_friendliness = 1)"),
        hystart: Hystart = choice("linux", "slow-start exit: Linux HyStart (ACK train + delay increase, tcp_cubic.c), HyStart++ (RFC 9406), or none"),
    }
}

/// The current congestion-avoidance epoch (RFC 9438 §4.2).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Epoch {
    start: Nanos,
    /// K, seconds.
    k: f64,
    /// The plateau the curve reaches at K (W_max, or cwnd_epoch when above it), segments.
    origin: f64,
    /// Reno-friendly estimate W_est (RFC 9438 §4.3), segments.
    w_est: f64,
}

/// HyStart++ phase (RFC 9406 §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Css {
    SlowStart,
    /// Conservative slow start: rounds done in it and the RTT that started it.
    Conservative {
        rounds: u32,
        baseline: Nanos,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    cfg: Config,
    /// W_max before the last reduction, segments (0: no loss yet). Linux `last_max_cwnd`.
    w_max: f64,
    epoch: Option<Epoch>,
    /// Smallest RTT sample (Linux `delay_min`; None: none yet).
    delay_min: Option<Nanos>,
    /// HyStart found the exit (Linux `found`); for HyStart++ slow start is over.
    found: bool,
    /// Round bookkeeping (Linux `round_start`, `last_ack`, `curr_rtt`, `sample_cnt`).
    round_start: Nanos,
    last_ack: Nanos,
    curr_rtt: Nanos,
    samples: u32,
    /// HyStart++: the previous round's minimum RTT and the phase.
    last_round_rtt: Nanos,
    css: Css,
    /// The newest RTT sample of the ACK being processed (from `on_ack_event`).
    sample: Option<Nanos>,
    /// Fractional segments owed to cwnd (bytes are integers; growth is in fractions of a segment).
    carry: f64,
}

impl Cubic {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            w_max: 0.0,
            epoch: None,
            delay_min: None,
            found: cfg.hystart == Hystart::Off,
            round_start: 0,
            last_ack: 0,
            curr_rtt: Nanos::MAX,
            samples: 0,
            last_round_rtt: Nanos::MAX,
            css: Css::SlowStart,
            sample: None,
            carry: 0.0,
        }
    }

    /// W_max, segments (0 before the first loss).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch, seconds.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// HyStart (or HyStart++) has ended slow start.
    pub fn hystart_found(&self) -> bool {
        self.found && self.cfg.hystart != Hystart::Off
    }

    /// W_cubic(t) of RFC 9438 eq. 1 for an epoch, segments.
    fn w_cubic(&self, e: &Epoch, t: f64) -> f64 {
        self.cfg.c * (t - e.k).powi(3) + e.origin
    }

    /// Start a round (Linux `bictcp_hystart_reset`).
    fn new_round(&mut self, now: Nanos) {
        self.round_start = now;
        self.last_ack = now;
        if self.samples >= HYSTART_MIN_SAMPLES {
            self.last_round_rtt = self.curr_rtt;
        }
        self.curr_rtt = Nanos::MAX;
        self.samples = 0;
    }

    /// RFC 9406 §4.2 / Linux: clamp(delay/8, 4 ms, 16 ms).
    fn delay_thresh(rtt: Nanos) -> Nanos {
        (rtt / 8).clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX)
    }

    /// Linux `hystart_update` for one delay sample; true if slow start ends.
    fn linux_hystart(&mut self, now: Nanos, delay: Nanos) -> bool {
        let delay_min = self.delay_min.unwrap_or(delay);
        // ACK train: threshold delay_min/2 (unpaced; Linux adds an allowance for paced flows).
        if now.saturating_sub(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            if now - self.round_start > delay_min / 2 {
                return true;
            }
        }
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.samples < HYSTART_MIN_SAMPLES {
            self.samples += 1;
            false
        } else {
            self.curr_rtt > delay_min + Self::delay_thresh(delay_min)
        }
    }

    /// RFC 9406 §4.2 for one sample in slow start or CSS; true if slow start ends for good.
    fn hystart_plus_plus(&mut self, delay: Nanos, round_ended: bool) -> bool {
        self.curr_rtt = self.curr_rtt.min(delay);
        self.samples = self.samples.saturating_add(1);
        match self.css {
            Css::SlowStart => {
                let last = self.last_round_rtt;
                if self.samples >= HYSTART_MIN_SAMPLES
                    && last != Nanos::MAX
                    && self.curr_rtt != Nanos::MAX
                    && self.curr_rtt >= last + Self::delay_thresh(last)
                {
                    self.css = Css::Conservative {
                        rounds: 0,
                        baseline: self.curr_rtt,
                    };
                }
                false
            }
            Css::Conservative { rounds, baseline } => {
                if self.samples >= HYSTART_MIN_SAMPLES && self.curr_rtt < baseline {
                    self.css = Css::SlowStart; // the RTT rise was spurious: back to slow start
                    return false;
                }
                if round_ended {
                    let rounds = rounds + 1;
                    self.css = Css::Conservative { rounds, baseline };
                    return rounds >= CSS_ROUNDS;
                }
                false
            }
        }
    }

    /// Congestion avoidance for `acked` bytes (RFC 9438 §§4.2–4.3, Linux `bictcp_update`).
    fn avoid(&mut self, w: &mut Window, now: Nanos, acked: u64) {
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // RFC 9438 eq. 2 with cwnd_epoch = cwnd; above W_max the curve starts at its plateau.
                let (k, origin) = if self.w_max <= cwnd {
                    (0.0, cwnd)
                } else {
                    (((self.w_max - cwnd) / self.cfg.c).cbrt(), self.w_max)
                };
                let e = Epoch {
                    start: now,
                    k,
                    origin,
                    w_est: cwnd,
                };
                self.epoch = Some(e);
                e
            }
        };
        let segs = acked as f64 / mss;
        // t + RTT (RFC 9438 §4.2), RTT = delay_min (Linux `t += usecs_to_jiffies(ca->delay_min)`).
        let t = (now - epoch.start + self.delay_min.unwrap_or(0)) as f64 / SEC as f64;
        let target = self.w_cubic(&epoch, t);
        // Growth per segment acknowledged: (target − cwnd)/cwnd (§4.2); Linux's "very small
        // increment" below the target (cnt = 100·cwnd).
        let mut per_seg = if target > cwnd {
            (target - cwnd) / cwnd
        } else {
            1.0 / (100.0 * cwnd)
        };
        if self.w_max == 0.0 {
            per_seg = per_seg.max(1.0 / 20.0); // Linux: cnt ≤ 20, at least 5 % per RTT
        }
        if self.cfg.tcp_friendliness {
            // RFC 9438 §4.3 eq. 4: W_est += α·segments_acked/cwnd.
            let alpha = 3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta);
            let w_est = epoch.w_est + alpha * segs / cwnd;
            self.epoch = Some(Epoch { w_est, ..epoch });
            if w_est > cwnd {
                per_seg = per_seg.max((w_est - cwnd) / cwnd);
            }
        }
        // Linux `ca->cnt = max(ca->cnt, 2)`: at most 1.5·cwnd per RTT (RFC 9438 §4.2's bound).
        per_seg = per_seg.min(0.5);
        self.carry += segs * per_seg * mss;
        let whole = self.carry.floor();
        self.carry -= whole;
        w.cwnd += whole as u64;
    }

    /// Forget everything but the configuration (Linux `bictcp_reset` + `bictcp_hystart_reset`).
    fn reset(&mut self, now: Nanos) {
        *self = Self {
            round_start: now,
            last_ack: now,
            ..Self::new(self.cfg)
        };
    }
}

impl CongestionOps for Cubic {
    fn on_ack_event(&mut self, _w: &Window, ev: &AckEvent) {
        if ev.round_ended {
            self.new_round(ev.now);
        }
        self.sample = None;
        let Some(rtt) = ev.newest_rtt else { return };
        // Linux `cubictcp_acked`: "discard delay samples right after fast recovery" — in the
        // first second of an epoch.
        if self
            .epoch
            .is_some_and(|e| ev.now.saturating_sub(e.start) < SEC)
        {
            return;
        }
        let rtt = rtt.max(1);
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
        self.sample = Some(rtt);
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if w.in_slow_start() {
            let mut acked = ev.acked;
            if let (false, Some(delay)) = (self.found, self.sample) {
                let exit = match self.cfg.hystart {
                    Hystart::Linux => {
                        w.cwnd >= HYSTART_LOW_WINDOW * w.mss && self.linux_hystart(ev.now, delay)
                    }
                    Hystart::PlusPlus => {
                        w.cwnd >= HYSTART_LOW_WINDOW * w.mss
                            && self.hystart_plus_plus(delay, ev.round_ended)
                    }
                    Hystart::Off => false,
                };
                if exit {
                    self.found = true;
                    w.ssthresh = w.cwnd; // Linux: tp->snd_ssthresh = tcp_snd_cwnd(tp)
                    return;
                }
            }
            if let Css::Conservative { .. } = self.css {
                acked /= CSS_GROWTH_DIVISOR; // RFC 9406 §4.3: cwnd += acked / CSS_GROWTH_DIVISOR
            }
            Reno::grow(w, acked);
            return;
        }
        self.avoid(w, ev.now, ev.acked);
    }

    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response {
        let beta = self.cfg.beta;
        let fast_convergence = self.cfg.fast_convergence;
        let timeout = matches!(ev.kind, Congestion::Timeout { .. });
        let first = !matches!(ev.kind, Congestion::Timeout { first: false });
        if first {
            // Linux `cubictcp_recalc_ssthresh`: the epoch ends; W_max with fast convergence (§4.7).
            let cwnd = w.cwnd as f64 / w.mss as f64;
            self.w_max = if fast_convergence && cwnd < self.w_max {
                cwnd * (1.0 + beta) / 2.0
            } else {
                cwnd
            };
            self.epoch = None;
            self.carry = 0.0;
        }
        // RFC 9438 §4.6: ssthresh = max(β·cwnd, 2 segments); Linux multiplies cwnd (not flight).
        standard_response(w, ev, |w| ((w.cwnd as f64 * beta) as u64).max(2 * w.mss));
        if timeout {
            // Linux `cubictcp_state(TCP_CA_Loss)`: bictcp_reset forgets W_max, delay_min, HyStart.
            self.reset(ev.now);
        } else if self.css != Css::SlowStart || !self.found {
            self.found = true; // RFC 9406 §4.2: a loss in slow start or CSS ends HyStart++
            self.css = Css::SlowStart;
        }
        Response::CONGESTION
    }

    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        NewReno.on_recovery_exit(w, flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9438 §4.6 β_cubic = 0.7; Linux `beta` = 717/1024 (`BICTCP_BETA_SCALE`).
    const BETA: f64 = 717.0 / 1024.0;
    /// RFC 9438 §5 C = 0.4 segments/s³; Linux `bic_scale` = 41 → C = 41·10/1024.
    const C: f64 = 41.0 * 10.0 / 1024.0;

    #[test]
    fn the_declared_defaults_are_linuxs_beta_and_c() {
        assert_eq!((Config::default().beta, Config::default().c), (BETA, C));
    }

    const MSS: u64 = 1000;
    const RTT: Nanos = 100 * MS;

    fn loss(now: Nanos) -> CongestionEvent {
        CongestionEvent {
            now,
            kind: Congestion::Loss,
            outstanding: 0,
            in_recovery: false,
        }
    }

    /// Acknowledge one segment per ACK, one window per RTT (a fluid sender whose every ACK
    /// carries the base RTT), from `from` until `until`; returns the time reached.
    fn run(c: &mut Cubic, w: &mut Window, from: Nanos, until: Nanos) -> Nanos {
        let mut now = from;
        while now < until {
            let ev = AckEvent {
                now,
                acked: MSS,
                newest_rtt: Some(RTT),
                ..AckEvent::default()
            };
            c.on_ack_event(w, &ev);
            c.on_ack(w, &ev);
            now += RTT * MSS / w.cwnd; // the next ACK: one segment's share of the RTT
        }
        now
    }

    #[test]
    fn the_window_follows_the_cubic_curve_in_a_loss_free_epoch() {
        // Hand-derived: loss at cwnd = 100 segments → W_max = 100, cwnd = ssthresh = 70 (β = 0.7),
        // K = ∛((100 − 70)/0.4) = ∛75 = 4.2172 s (Linux's C = 0.4004, β = 0.7002: K = 4.2153 s).
        // Each ACK aims at W(t + RTT), so cwnd(t) ≈ W(t) = 0.4·(t − K)³ + 100:
        // W(1) = 86.68, W(2) = 95.64, W(3) = 99.28, W(4) = 100.00, W(5) = 100.19, W(6) = 102.27,
        // W(8) = 121.66 (with C = 0.4, β = 0.7 exactly).
        let cfg = Config {
            beta: 0.7,
            c: 0.4,
            hystart: Hystart::Off,
            ..Config::default()
        };
        let mut c = Cubic::new(cfg);
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        // Let delay_min be learnt from an earlier ACK, as in a flow that has run a while.
        c.on_ack_event(
            &w,
            &AckEvent {
                now: 0,
                acked: MSS,
                newest_rtt: Some(RTT),
                ..AckEvent::default()
            },
        );
        let t0 = 2 * SEC;
        c.on_congestion(&mut w, &loss(t0));
        w.cwnd = w.ssthresh; // recovery ends at once
        assert_eq!((w.cwnd, w.ssthresh), (70 * MSS, 70 * MSS));
        assert_eq!(c.w_max(), 100.0);
        let mut now = t0 + SEC; // the epoch starts at the first ACK after recovery
        let epoch_start = now;
        let expected = [
            (1, 86.68),
            (2, 95.64),
            (3, 99.28),
            (4, 100.00),
            (5, 100.19),
            (6, 102.27),
            (8, 121.66),
        ];
        let mut got = vec![];
        for (t, want) in expected {
            now = run(&mut c, &mut w, now, epoch_start + t * SEC);
            let cwnd = w.cwnd as f64 / MSS as f64;
            got.push((t, want, cwnd));
        }
        assert!((c.k().unwrap() - 75f64.cbrt()).abs() < 1e-9);
        for (t, want, cwnd) in &got {
            println!("t = {t} s: W(t) = {want:.2}, cwnd = {cwnd:.2}");
            assert!(
                (cwnd - want).abs() <= 0.1,
                "t = {t} s: cwnd {cwnd:.2} segments, W(t) = {want:.2}"
            );
        }
    }

    #[test]
    fn at_a_short_rtt_the_reno_friendly_estimate_sets_the_pace() {
        // RTT 100 ms → 1 ms: the cubic curve barely moves in a few RTTs (t³ is tiny), while
        // W_est = 70 + α·rounds, α = 3·0.3/1.7 = 0.5294 segments per RTT.
        let cfg = Config {
            beta: 0.7,
            c: 0.4,
            hystart: Hystart::Off,
            ..Config::default()
        };
        let mut c = Cubic::new(cfg);
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        c.on_congestion(&mut w, &loss(0));
        w.cwnd = w.ssthresh;
        let mut now = 2 * SEC;
        for _ in 0..100 * 70 {
            let ev = AckEvent {
                now,
                acked: MSS,
                newest_rtt: Some(MS),
                ..AckEvent::default()
            };
            c.on_ack_event(&w, &ev);
            c.on_ack(&mut w, &ev);
            now += MS * MSS / w.cwnd;
        }
        // ≈ 100 rounds (the window grows, so a little under): W_est ≈ 70 + 0.5294·~93 ≈ 119;
        // W_cubic after ~0.1 s is still ≈ 70 + 0.4·(4.2³ − 4.1³) ≈ 72.
        let cwnd = w.cwnd as f64 / MSS as f64;
        assert!(cwnd > 110.0 && cwnd < 125.0, "{cwnd}");
        let mut plain = Cubic::new(Config {
            tcp_friendliness: false,
            ..cfg
        });
        let mut w2 = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        plain.on_congestion(&mut w2, &loss(0));
        w2.cwnd = w2.ssthresh;
        let mut now = 2 * SEC;
        for _ in 0..100 * 70 {
            let ev = AckEvent {
                now,
                acked: MSS,
                newest_rtt: Some(MS),
                ..AckEvent::default()
            };
            plain.on_ack_event(&w2, &ev);
            plain.on_ack(&mut w2, &ev);
            now += MS * MSS / w2.cwnd;
        }
        assert!(
            (w2.cwnd as f64 / MSS as f64) < 80.0,
            "without the Reno-friendly region: {}",
            w2.cwnd
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_shrank_since_the_last_loss() {
        let mut c = Cubic::new(Config::default());
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        c.on_congestion(&mut w, &loss(0));
        assert_eq!(c.w_max(), 100.0);
        assert_eq!(w.ssthresh, 70_019, "β = 717/1024 of 100 000 B");
        w.cwnd = 80 * MSS;
        c.on_congestion(&mut w, &loss(SEC));
        assert!(
            (c.w_max() - 80.0 * (1.0 + BETA) / 2.0).abs() < 1e-9,
            "{}",
            c.w_max()
        );
        let mut slow = Cubic::new(Config {
            fast_convergence: false,
            ..Config::default()
        });
        w.cwnd = 100 * MSS;
        slow.on_congestion(&mut w, &loss(0));
        w.cwnd = 80 * MSS;
        slow.on_congestion(&mut w, &loss(SEC));
        assert_eq!(slow.w_max(), 80.0);
    }

    #[test]
    fn a_timeout_forgets_w_max_and_sets_one_segment() {
        let mut c = Cubic::new(Config::default());
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        c.on_congestion(
            &mut w,
            &CongestionEvent {
                now: 0,
                kind: Congestion::Timeout { first: true },
                outstanding: 0,
                in_recovery: false,
            },
        );
        assert_eq!((w.cwnd, w.ssthresh, c.w_max()), (MSS, 70_019, 0.0));
    }

    /// Slow start with one ACK per segment and the RTT rising by `rise` per round.
    fn slow_start(hystart: Hystart, rise: Nanos) -> (Cubic, Window, u32) {
        let mut c = Cubic::new(Config {
            hystart,
            ..Config::default()
        });
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        let mut now = 0;
        for round in 0..12u32 {
            let rtt = 50 * MS + rise * round as u64;
            let n = w.cwnd / MSS;
            for i in 0..n {
                // ACKs spread over the whole RTT (no ACK train), the round's first one ending it.
                let ev = AckEvent {
                    now,
                    acked: MSS,
                    newest_rtt: Some(rtt),
                    round_ended: i == 0,
                    ..AckEvent::default()
                };
                c.on_ack_event(&w, &ev);
                c.on_ack(&mut w, &ev);
                if !w.in_slow_start() {
                    return (c, w, round);
                }
                now += rtt / n;
            }
        }
        (c, w, 12)
    }

    #[test]
    fn linux_hystart_leaves_slow_start_when_the_rtt_rises_past_its_threshold_and_not_before() {
        // RTT 50 ms rising 10 ms per round: the threshold is 50 + clamp(50/8, 4, 16) = 56.25 ms,
        // so the round at 60 ms (round 1) is the first past it — but HyStart waits for cwnd ≥ 16,
        // reached in round 1 (10 → 20 segments), after 8 samples of that round.
        let (c, w, round) = slow_start(Hystart::Linux, 10 * MS);
        assert!(c.hystart_found());
        assert_eq!(round, 1);
        assert_eq!(w.ssthresh, w.cwnd);
        // With a flat RTT the delay test never fires, and ACKs more than 2 ms apart form no
        // train: rounds 0 (10 segments, 5 ms apart) and 1 (20, 2.5 ms) pass. In round 2 (40
        // segments, 1.25 ms apart) the train passes delay_min/2 = 25 ms at the ACK i with
        // 1.25·i > 25, i = 21, when cwnd = 40 + 21 segments.
        let (c, w, round) = slow_start(Hystart::Linux, 0);
        assert!(c.hystart_found());
        assert_eq!((round, w.ssthresh / MSS), (2, 61));
        let (c, _, round) = slow_start(Hystart::Off, 10 * MS);
        assert!(
            !c.hystart_found() && round == 12,
            "off: slow start to the end"
        );
    }

    #[test]
    fn hystart_plus_plus_goes_through_five_conservative_rounds_before_avoidance() {
        // RFC 9406: the RTT rises 10 ms a round; the rise is seen in round 2 (round 1 sets the
        // baseline), CSS runs 5 rounds (growth ÷ 4), then ssthresh = cwnd.
        let (c, w, round) = slow_start(Hystart::PlusPlus, 10 * MS);
        assert!(c.hystart_found());
        assert_eq!(w.ssthresh, w.cwnd);
        assert!(
            (2 + CSS_ROUNDS - 1..=2 + CSS_ROUNDS).contains(&round),
            "left in round {round}"
        );
    }

    #[test]
    fn cubic_is_registered_with_its_parameters() {
        let info = super::super::FAMILY.find("cubic").expect("registered");
        let names: Vec<_> = info.params.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "beta",
                "c",
                "fast_convergence",
                "tcp_friendliness",
                "hystart"
            ]
        );
        assert!(
            super::super::CcSpec::new("cubic", vec![("hystart".into(), "bogus".into())]).is_err()
        );
    }
}
