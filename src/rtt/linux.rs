//! Linux's estimator: `tcp_rtt_estimator`, `tcp_set_rto`/`__tcp_set_rto`, `tcp_bound_rto`
//! (net/ipv4/tcp_input.c, include/net/tcp.h, kernel ≥ 3.15 µs version) — docs/algorithms.md §2 [exact].
//!
//! State is kept exactly as the kernel keeps it: integer microseconds, `srtt_us` = 8·SRTT,
//! `mdev_us`/`mdev_max_us`/`rttvar_us` = 4·deviation, with the same shifts, so truncation matches.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{Nanos, SEC, US};

crate::params! {
    pub struct Config {
        rto_min: Nanos = duration("200ms", 0.0, 60.0, "TCP_RTO_MIN / net.ipv4.tcp_rto_min_us; floors rttvar_us, so RTO ≥ SRTT + rto_min"),
        rto_max: Nanos = duration("120s", 1.0, 86400.0, "TCP_RTO_MAX (120 s; tcp_rto_max_ms since v6.15)"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "TCP_TIMEOUT_INIT"),
        hz: u64 = int("1000", 1.0, 100000.0, "kernel tick rate: the RTO is rounded up to whole jiffies (usecs_to_jiffies)"),
        window: Window = choice("auto", "when an RTT window ends (mdev_max reset and rttvar decay): auto = the context's snd_una/rtt_seq signal if given, else time; time = one SRTT elapsed since the window began (trace-replay approximation, §2.6); every-sample"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "linux",
        aliases: &[],
        summary:
            "Linux tcp_rtt_estimator: asymmetric mdev, per-RTT rttvar decay, rto_min inside rttvar",
        source: "Linux tcp_input.c tcp_rtt_estimator, tcp.h __tcp_set_rto; docs/algorithms.md §2",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::Linux(Linux::new(Config::from_params(p)?))),
};

crate::choices! {
    pub enum Window {
        Auto = "auto",
        Time = "time",
        EverySample = "every-sample",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Linux {
    cfg: Config,
    rto_min_us: i64,
    srtt_us: i64,
    mdev_us: i64,
    mdev_max_us: i64,
    rttvar_us: i64,
    /// Start of the current RTT window, for the time-based approximation of `rtt_seq`.
    window_start: Nanos,
    rto: Nanos,
}

impl Linux {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            rto_min_us: (cfg.rto_min / US) as i64,
            srtt_us: 0,
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            window_start: 0,
            rto: cfg.initial_rto.min(cfg.rto_max),
        }
    }

    /// 8·SRTT in µs, as `tp->srtt_us`.
    pub fn srtt_us(&self) -> i64 {
        self.srtt_us
    }

    /// `tp->rttvar_us` (≈ 4·RTTVAR, never below rto_min).
    pub fn rttvar_us(&self) -> i64 {
        self.rttvar_us
    }

    fn window_ended(&self, ctx: &Context) -> bool {
        let by_time =
            || ctx.now.saturating_sub(self.window_start) >= (self.srtt_us as u64 >> 3) * US;
        match self.cfg.window {
            Window::EverySample => true,
            Window::Time => by_time(),
            Window::Auto => ctx.new_window.unwrap_or_else(by_time),
        }
    }

    /// `__tcp_set_rto` + `tcp_bound_rto`: usecs_to_jiffies(srtt/8 + rttvar), rounded up, capped.
    fn compute_rto(&self) -> Nanos {
        let us = ((self.srtt_us >> 3) + self.rttvar_us).max(0) as u64;
        let jiffies = (us * self.cfg.hz).div_ceil(1_000_000);
        (jiffies * SEC / self.cfg.hz).min(self.cfg.rto_max)
    }
}

impl RttEstimator for Linux {
    fn on_sample(&mut self, rtt: Nanos, ctx: &Context) {
        let mut m = (rtt / US) as i64;
        let mut srtt = self.srtt_us;
        if srtt != 0 {
            m -= srtt >> 3; // m is now the error in the estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            if m < 0 {
                m = -m;
                m -= self.mdev_us >> 2;
                // An RTT *below* srtt−mdev moves mdev with gain 1/32, not 1/4: "Eifel-like".
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev_us >> 2;
            }
            self.mdev_us += m; // mdev = 3/4 mdev + 1/4 new
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if self.window_ended(ctx) {
                // Once per RTT: rttvar decays by 1/4 toward the largest mdev of the window.
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.window_start = ctx.now;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            srtt = m << 3;
            self.mdev_us = m << 1; // so that the first RTO is 3·RTT
            self.rttvar_us = self.mdev_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.window_start = ctx.now;
        }
        self.srtt_us = srtt.max(1);
        self.rto = self.compute_rto();
    }

    fn prediction(&self) -> Option<Nanos> {
        (self.srtt_us > 0).then(|| (self.srtt_us as u64 * US) >> 3)
    }

    fn rto(&self) -> Nanos {
        self.rto
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.rto_max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn every_sample() -> Linux {
        Linux::new(Config {
            window: Window::EverySample,
            ..Config::default()
        })
    }

    /// docs/algorithms.md §14, columns "Linux RTO" (ms, HZ = 1000) and "Linux rttvar_us".
    #[test]
    fn matches_the_derived_vectors_when_every_sample_ends_a_window() {
        let trace = crate::rtt::vectors::TRACE_MS;
        let rto_ms = [300, 300, 300, 300, 389, 520, 502, 478, 454, 435, 417, 400];
        let rttvar = [
            200000, 200000, 200000, 200000, 263282, 372462, 360902, 342097, 328446, 318310, 309154,
            299066,
        ];
        let mut est = every_sample();
        for i in 0..trace.len() {
            est.on_sample(trace[i] * MS, &Context::default());
            assert_eq!(est.rto(), rto_ms[i] * MS, "sample {i}");
            assert_eq!(est.rttvar_us(), rttvar[i], "sample {i}");
        }
    }

    /// Hand-computed: after 100 ms (srtt_us 800000, mdev_us 200000), a 20 ms sample gives
    /// err = −80000, |err| − mdev/4 = 30000 > 0 → shifted to 3750 (gain 1/32 overall), so
    /// mdev_us = 203750; a 120 ms sample instead: srtt 800000 → err +20000, 20000 − 50000 = −30000,
    /// mdev_us = 170000 (ordinary 1/4 decay).
    #[test]
    fn an_rtt_drop_moves_mdev_with_gain_one_thirty_second() {
        let mut down = every_sample();
        down.on_sample(100 * MS, &Context::default());
        down.on_sample(20 * MS, &Context::default());
        assert_eq!(down.mdev_us, 203_750);
        assert_eq!(down.srtt_us, 800_000 - 80_000);

        let mut up = every_sample();
        up.on_sample(100 * MS, &Context::default());
        up.on_sample(120 * MS, &Context::default());
        assert_eq!(up.mdev_us, 170_000);
    }

    /// Without a window boundary, rttvar keeps the window's maximum; the boundary lets it decay
    /// by a quarter of the gap to mdev_max (which was reset to rto_min).
    #[test]
    fn rttvar_decays_only_at_window_boundaries() {
        let ctx = |w| Context {
            new_window: Some(w),
            ..Context::default()
        };
        let mut est = Linux::new(Config::default());
        est.on_sample(100 * MS, &ctx(false));
        est.on_sample(300 * MS, &ctx(false)); // mdev 350000 → rttvar 350000
        assert_eq!(est.rttvar_us(), 350_000);
        est.on_sample(125 * MS, &ctx(false)); // smaller mdev, no window end: rttvar stays
        assert_eq!(est.rttvar_us(), 350_000);
        est.on_sample(125 * MS, &ctx(true));
        // mdev_max (350000 from this window) equals rttvar: no decay yet, max resets to 200000.
        assert_eq!(est.rttvar_us(), 350_000);
        est.on_sample(125 * MS, &ctx(true));
        // mdev_max = rto_min = 200000 < rttvar: rttvar −= (350000 − 200000) >> 2 = 37500
        assert_eq!(est.rttvar_us(), 312_500);
    }

    #[test]
    fn the_rto_never_falls_below_srtt_plus_rto_min() {
        let mut est = every_sample();
        for _ in 0..1000 {
            est.on_sample(10 * MS, &Context::default());
        }
        assert_eq!(est.rto(), 210 * MS);
    }

    #[test]
    fn the_time_window_ends_after_one_srtt() {
        let mut est = Linux::new(Config {
            window: Window::Time,
            ..Config::default()
        });
        let at = |t| Context {
            now: t,
            ..Context::default()
        };
        est.on_sample(100 * MS, &at(0));
        assert!(!est.window_ended(&at(50 * MS)));
        assert!(est.window_ended(&at(100 * MS)));
    }
}
