//! CA-RTO, a contention-adaptive retransmission timeout (Psaras, Tsaoussidis, Mamatas; Psaras, Tsaoussidis & Mamatas 2005
//! §§III–IV) — docs/algorithms.md §7 [exact formulas, several ambiguities].
//!
//! Base: RFC 2988 (A, D, RTO = A + 4D, g = 1/8, d = 1/4). Extension (§IV-A): c = 1/cwnd,
//! cont_diff = max_cwnd − cwnd, p = Uniform(0, cont_diff), RTO = A + 4D + c·p.
//!
//! Choices where the paper is ambiguous, each a named parameter (docs/algorithms.md §7 defaults,
//! documented in docs/estimators.md and docs/reproductions/ca-rto.md):
//! 1. `scale` — "cont_diff × 100 %" read as 100 ms of timer per segment of contention (default
//!    "100ms", reading (a)). `scale = "1s"` is the literal reading ×1 in seconds and also reading
//!    (b), ×100 in ns-2 ticks of 10 ms; `scale = "10ms"` the literal ×1 in ticks.
//! 2. `max_cwnd` — the window at the last congestion event, supplied by the sender in
//!    [`Context::max_cwnd`] (`last-congestion`: fast retransmit, first timeout of an episode,
//!    ECN or router signal), or the running maximum of the cwnd seen (`running-max`).
//!    cont_diff is clamped at 0 (a window above max_cwnd means no contention).
//! 3. `draw` — p is drawn each time the timer is armed and kept through back-off (`arm`), or at
//!    every RTT sample, when RFC 2988 recomputes the RTO (`sample`).
//! 4. p is uniform on [0, cont_diff) (the paper's Random(0, cont_diff)); the stream is seeded by
//!    `seed` — in the simulator mixed with the simulation seed and the flow's index, so every
//!    flow draws from its own stream ([`super::policy::Policy::seed_stream`]).
//! 5. `backoff` (policy only) — c·p is part of the base RTO and doubled by back-off, the floor
//!    applying to the sum as ns-2 clamps its computed timeout as a whole (`before`); or added
//!    after back-off to the backed-off estimator RTO, not doubled (`after`).
//!
//! Without a cwnd in the context (open-loop trace replay) there is no contention signal, and
//! CA-RTO is exactly its RFC 2988 base.
//!
//! The extension itself is an RTO *policy* ([`ContentionExtension`], listed in
//! [`super::policy`]) and wraps any estimator: CA-RTO over Linux's estimator is
//! `RetransmitTimer::new(linux, Policy::CaRto(..))`, adding c·p to Linux's RTO (whose floor sits
//! inside rttvar, so only the cap is re-applied). The registered estimator `ca-rto` is that policy
//! over [`Rfc6298`] with K = 4, kept for trace replay and `rttlab estimators`.

use super::rfc6298::{self, Rfc6298};
use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::params::{Choice, ParamSpec};
use crate::time::{round_ns, Nanos};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

crate::choices! {
    /// Choice 2: where max_cwnd comes from.
    pub enum MaxCwnd { LastCongestion = "last-congestion", RunningMax = "running-max" }
}

crate::choices! {
    /// Choice 3: when p is drawn.
    pub enum Draw { Arm = "arm", Sample = "sample" }
}

crate::choices! {
    /// Choice 5: whether c·p is added before back-off (and doubled with the base) or after it.
    pub enum Backoff { Before = "before", After = "after" }
}

// The extension's parameters, shared by the estimator's table and the policy's.
const SCALE: ParamSpec = ParamSpec::duration("scale", "100ms", 0.0, 10.0, "timer value of one segment of contention (the paper's \"× 100 %\"; 1s = literal seconds or ×100 ns-2 ticks) [ambiguous]");
const MAX_CWND: ParamSpec = ParamSpec::choice("max_cwnd", "last-congestion", <MaxCwnd as Choice>::OPTIONS, "max_cwnd: cwnd before the last congestion event (from the sender) or the running maximum [ambiguous]");
const SEED: ParamSpec = ParamSpec::int(
    "seed",
    "1",
    0.0,
    18446744073709551615.0,
    "seed of the random extension (the simulator mixes in its seed and the flow's index)",
);
const DRAW: ParamSpec = ParamSpec::choice("draw", "arm", <Draw as Choice>::OPTIONS, "when p is drawn: at every timer arm (kept through back-off) or at every RTT sample [ambiguous]");

crate::params! {
    /// The registered estimator `ca-rto`: the extension over the RFC 2988 base timer.
    pub struct Config {
        scale: Nanos = duration(SCALE),
        max_cwnd: MaxCwnd = choice(MAX_CWND),
        seed: u64 = int(SEED),
        draw: Draw = choice(DRAW),
        granularity: Nanos = duration("1ms", 0.0, 1.0, "clock granularity G of the base RFC 2988 timer"),
        min_rto: Nanos = duration("1s", 0.0, 60.0, "RTO floor (RFC 2988 §2.4; ns-2's minrto_ was 0.2 s from 2004)"),
        max_rto: Nanos = duration("60s", 1.0, 86400.0, "RTO cap after back-off"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
    }
}

crate::params! {
    const POLICY_PARAMS;
    /// The contention extension's parameters (choices 1–5 above): the RTO policy `ca-rto`.
    pub struct ExtensionConfig {
        scale: Nanos = duration(SCALE),
        max_cwnd: MaxCwnd = choice(MAX_CWND),
        seed: u64 = int(SEED),
        draw: Draw = choice(DRAW),
        backoff: Backoff = choice("before", "c·p added before back-off (doubled with the base) or after it (not doubled) [ambiguous]"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "ca-rto",
        aliases: &[],
        summary: "CA-RTO: RFC 2988 plus a random extension growing with contention (needs cwnd from the sender)",
        source: "Psaras, Tsaoussidis, Mamatas, CA-RTO §IV-A; docs/algorithms.md §7",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::CaRto(CaRto::new(Config::from_params(p)?))),
};

impl Config {
    /// The registered estimator has no back-off of its own, so it always adds c·p before back-off.
    fn extension(&self) -> ExtensionConfig {
        ExtensionConfig {
            scale: self.scale,
            max_cwnd: self.max_cwnd,
            seed: self.seed,
            draw: self.draw,
            backoff: Backoff::Before,
        }
    }
}

/// CA-RTO's §IV-A extension as an RTO policy: RTO = base + c·p, with p drawn at every arm.
#[derive(Debug, Clone)]
pub struct ContentionExtension {
    cfg: ExtensionConfig,
    seen_max_cwnd: f64,
    /// c·p of the current timer arm, in ns.
    extension: f64,
    rng: Pcg64Mcg,
}

impl ContentionExtension {
    pub fn new(cfg: ExtensionConfig) -> Self {
        Self {
            cfg,
            seen_max_cwnd: 0.0,
            extension: 0.0,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
        }
    }

    /// The current random extension c·p.
    pub fn extension(&self) -> Nanos {
        round_ns(self.extension)
    }

    fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// base + c·p, the estimator's floor applied to the sum (choice 5) and its cap; before the
    /// first sample, the estimator's initial RTO unchanged.
    pub fn rto<E: RttEstimator + ?Sized>(&self, base: &E) -> Nanos {
        if base.prediction().is_none() {
            return base.rto();
        }
        round_ns(base.unfloored_rto() + self.extension)
            .max(base.min_rto())
            .min(base.max_rto())
    }

    /// The backed-off RTO with c·p added after back-off (choice 5, `backoff = after`): the
    /// estimator's own RTO (its floor applying to it alone) doubled `count` times, plus c·p, capped.
    pub fn rto_after_backoff<E: RttEstimator + ?Sized>(&self, base: &E, count: u32) -> Nanos {
        let backed = super::timer::backed_off(base.rto(), count, base.max_rto());
        if base.prediction().is_none() {
            return backed;
        }
        backed.saturating_add(self.extension()).min(base.max_rto())
    }

    pub fn config(&self) -> &ExtensionConfig {
        &self.cfg
    }

    /// Restart the random stream from the owner's `stream` (the simulator gives each flow its
    /// own) mixed with the `seed` parameter, so that flows never draw the same sequence.
    pub fn seed_stream(&mut self, stream: u64) {
        self.rng =
            Pcg64Mcg::seed_from_u64(stream ^ self.cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }

    /// The timer was armed: draw p for this arm (kept through back-off) unless p is drawn per sample.
    pub fn on_timer_armed(&mut self, ctx: &Context) {
        if self.cfg.draw != Draw::Sample {
            self.draw(ctx);
        }
    }

    /// An RTT sample arrived (RFC 2988 recomputes the RTO): with `draw = sample`, draw p now.
    pub fn on_sample(&mut self, ctx: &Context) {
        if self.cfg.draw == Draw::Sample {
            self.draw(ctx);
        }
    }

    /// §IV-A: c = 1/cwnd, cont_diff = max_cwnd − cwnd (≥ 0), p = Random(0, cont_diff), extension c·p
    /// in units of `scale`.
    fn draw(&mut self, ctx: &Context) {
        let Some(cwnd) = ctx.cwnd.filter(|c| *c > 0.0) else {
            self.extension = 0.0;
            return;
        };
        self.seen_max_cwnd = self.seen_max_cwnd.max(cwnd);
        let max_cwnd = if self.cfg.max_cwnd == MaxCwnd::RunningMax {
            self.seen_max_cwnd
        } else {
            ctx.max_cwnd.unwrap_or(cwnd)
        };
        let cont_diff = (max_cwnd - cwnd).max(0.0);
        let p = self.uniform() * cont_diff;
        self.extension = p / cwnd * self.cfg.scale as f64;
    }
}

/// The registered estimator `ca-rto`: the contention extension over RFC 6298 with RFC 2988's K = 4.
#[derive(Debug, Clone)]
pub struct CaRto {
    /// The base timer: §III's A and D are RFC 6298's SRTT and RTTVAR (RFC 2988 gains).
    base: Rfc6298,
    ext: ContentionExtension,
}

impl CaRto {
    pub fn new(cfg: Config) -> Self {
        let base = Rfc6298::new(rfc6298::Config {
            granularity: cfg.granularity,
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            initial_rto: cfg.initial_rto,
            k: 4.0,
            bsd_tick: 0,
            max_backoff: 64,
        });
        Self {
            base,
            ext: ContentionExtension::new(cfg.extension()),
        }
    }

    /// The current random extension c·p.
    pub fn extension(&self) -> Nanos {
        self.ext.extension()
    }

    /// Draw from the owner's stream (the simulator's per-flow stream) mixed with `seed`, as the
    /// policy form does ([`super::policy::Policy::seed_stream`]).
    pub fn seed_stream(&mut self, stream: u64) {
        self.ext.seed_stream(stream);
    }
}

impl RttEstimator for CaRto {
    /// §III: Diff = M − A; A += g·Diff; D += d(|Diff| − D) — RFC 6298's update with g = 1/8, d = 1/4.
    fn on_sample(&mut self, rtt: Nanos, ctx: &Context) {
        self.base.on_sample(rtt, ctx);
        self.ext.on_sample(ctx);
    }

    fn prediction(&self) -> Option<Nanos> {
        self.base.prediction()
    }

    fn rto(&self) -> Nanos {
        self.ext.rto(&self.base)
    }

    fn max_rto(&self) -> Nanos {
        self.base.max_rto()
    }

    fn on_timer_armed(&mut self, ctx: &Context) {
        self.ext.on_timer_armed(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn contended(cwnd: f64, max_cwnd: f64) -> Context {
        Context {
            cwnd: Some(cwnd),
            max_cwnd: Some(max_cwnd),
            ..Context::default()
        }
    }

    #[test]
    fn without_contention_it_is_the_rfc2988_timer() {
        let mut ca = CaRto::new(Config {
            min_rto: 0,
            ..Config::default()
        });
        let mut rfc = crate::rtt::build("rfc6298", &[("min_rto".into(), "0".into())]).unwrap();
        for ms in [100, 120, 300, 80] {
            ca.on_sample(ms * MS, &Context::default());
            ca.on_timer_armed(&Context::default());
            rfc.on_sample(ms * MS, &Context::default());
            assert_eq!(ca.rto(), rfc.rto());
        }
        ca.on_timer_armed(&contended(20.0, 20.0));
        assert_eq!(ca.extension(), 0, "cwnd at its maximum: no contention");
    }

    #[test]
    fn the_extension_is_bounded_by_scale_times_contention_over_cwnd() {
        let mut ca = CaRto::new(Config::default());
        ca.on_sample(100 * MS, &Context::default());
        // max 50, cwnd 2 → c·cont_diff·100 ms = 48/2 · 100 ms = 2.4 s (docs/algorithms.md §7 example).
        let mut largest = 0;
        for _ in 0..2000 {
            ca.on_timer_armed(&contended(2.0, 50.0));
            assert!(ca.extension() < 2400 * MS);
            largest = largest.max(ca.extension());
        }
        assert!(
            largest > 2300 * MS,
            "uniform draws should come near the bound, got {largest}"
        );
    }

    #[test]
    fn the_same_seed_draws_the_same_extensions() {
        let draws = |seed| {
            let mut ca = CaRto::new(Config {
                seed,
                ..Config::default()
            });
            ca.on_sample(100 * MS, &Context::default());
            (0..50)
                .map(|_| {
                    ca.on_timer_armed(&contended(4.0, 40.0));
                    ca.extension()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
    }

    #[test]
    fn running_max_tracks_the_largest_window_seen() {
        let mut ca = CaRto::new(Config {
            max_cwnd: MaxCwnd::RunningMax,
            ..Config::default()
        });
        ca.on_sample(100 * MS, &Context::default());
        ca.on_timer_armed(&Context {
            cwnd: Some(30.0),
            ..Context::default()
        });
        let mut any = false;
        for _ in 0..10 {
            ca.on_timer_armed(&Context {
                cwnd: Some(10.0),
                ..Context::default()
            });
            assert!(ca.extension() <= 200 * MS);
            any |= ca.extension() > 0;
        }
        assert!(any);
    }
}
