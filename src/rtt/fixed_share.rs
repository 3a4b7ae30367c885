//! Fixed-Share experts RTT predictor (Nunes, Veenstra, Ballenthin, Lukin, Obraczka, ICCCN 2011,
//! Table I; Herbster & Warmuth 1998) — docs/algorithms.md §6.
//!
//! Choices where the paper is silent (all documented in docs/estimators.md):
//! - **Tick unit**: parameter `tick`, default 4 ms. The paper's live results (Table II, "error in
//!   ticks") come from Linux 2.6.28.3, whose default `CONFIG_HZ` is 250: one jiffy = 4 ms, and
//!   `tcp_rtt_estimator()`, which the authors replaced, works in jiffies. (Its simulations ran in
//!   QualNet, whose BSD-derived TCP ticks at 500 ms; the paper gives no tick for them.) The
//!   experts then span [1, 129] ticks = 4 ms … 516 ms; η = 2 is only meaningful in that unit.
//! - **Index base**: i = 1…N, so x_N = RTT_min + RTT_max = 129 ticks (§6.2).
//! - **Samples above the top expert** (y > x_N): every expert under-predicts and pays the same
//!   loss 2y, so the trial leaves the relative weights unchanged and sharing pulls them toward
//!   uniform: the prediction collapses toward the mean expert x̄ ≈ 9 ticks, *not* toward x_N.
//!   `clamp = top` feeds min(y, x_N) to the trial instead (docs/algorithms.md §6.2 suggests clamping);
//!   the default `off` is the paper's Table I as printed. The RTO rules still see the raw sample.
//! - **RTO** (the paper leaves it to future work; it says only that `tcp_rtt_estimator()` was made
//!   to return the experts' output): `rto = linux` (default, our choice) keeps Linux's RTO
//!   machinery — its mdev/rttvar fed the raw samples, rto_min inside it — with SRTT replaced by
//!   the prediction, one reading of what that modification implies; `rto = rfc6298` uses
//!   ŷ + max(G, 4·RTTVAR) with RTTVAR updated as RFC 6298 but against ŷ (§6.2 variant (a)).
//! - **Underflow**: losses are shifted by their minimum before exponentiation (the prediction is
//!   invariant to a common weight scale), and weights are normalised every trial, so no sample
//!   — not even one beyond the largest expert — can underflow every weight to zero.

use super::linux::{self, Linux};
use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        n: usize = int("100", 2.0, 10000.0, "number of experts N (paper: 100; more gave no gain)"),
        eta: f64 = float("2", 0.0, 1000.0, "learning rate η (paper: 2; 1.7–2.5 worked)"),
        alpha: f64 = float("0.08", 0.0, 1.0, "sharing rate α (paper: 0.08)"),
        tick: Nanos = duration("4ms", 0.000001, 10.0, "length of one tick, the unit of experts and loss (4 ms: one jiffy of the paper's Linux 2.6.28 at its default HZ = 250) [ambiguous: BSD 500 ms, Linux 1/HZ]"),
        rtt_min: f64 = float("1", 0.0, 1e6, "RTT_min in ticks: x_i = RTT_min + RTT_max·2^((i−N)/4)"),
        rtt_max: f64 = float("128", 0.001, 1e6, "RTT_max in ticks"),
        share: Share = choice("uniform", "uniform: pool/N to every expert (Nunes); others: pool from the other N−1 experts (Herbster & Warmuth 1998)"),
        /// Feed min(y, x_N) to the experts (`clamp = top`).
        clamp: Clamp = choice("off", "samples above the top expert x_N: off = as Table I (the prediction collapses toward the mean expert); top = fed to the experts as x_N"),
        rto: RtoRule = choice("linux", "how the RTO is derived from the prediction (the paper leaves it open; both are our choices): linux = Linux's rttvar machinery around the prediction; rfc6298 = ŷ + max(G, 4·RTTVAR)"),
        min_rto: Nanos = duration("200ms", 0.0, 60.0, "rto=linux: rto_min inside rttvar; rto=rfc6298: floor of the RTO"),
        granularity: Nanos = duration("1ms", 0.0, 1.0, "rto=rfc6298: clock granularity G"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
        max_rto: Nanos = duration("120s", 1.0, 86400.0, "RTO cap after back-off"),
    }
}

impl Config {
    /// Exponential spacing, Table I: x_i = RTT_min + RTT_max · 2^((i − N)/4), i = 1…N (ticks).
    /// Sorted ascending (the trial relies on it).
    pub fn experts(&self) -> Vec<f64> {
        (1..=self.n)
            .map(|i| self.rtt_min + self.rtt_max * ((i as f64 - self.n as f64) / 4.0).exp2())
            .collect()
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "fixed-share",
        aliases: &[],
        summary:
            "Fixed-Share experts predictor (Nunes et al. 2011), RTO via Linux or RFC 6298 rules",
        source: "Nunes et al. ICCCN 2011 Table I; Herbster & Warmuth 1998; docs/algorithms.md §6",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| {
        Ok(Estimator::FixedShare(FixedShare::new(Config::from_params(
            p,
        )?)))
    },
};

crate::choices! {
    pub enum Share {
        Uniform = "uniform",
        Others = "others",
    }
}

crate::choices! {
    /// What the experts see of a sample above the top expert x_N.
    pub enum Clamp {
        Off = "off",
        Top = "top",
    }
}

crate::choices! {
    pub enum RtoRule {
        Linux = "linux",
        Rfc6298 = "rfc6298",
    }
}

#[derive(Debug, Clone)]
pub struct FixedShare {
    cfg: Config,
    experts: Vec<f64>,
    /// Normalised weights (Σ = 1).
    weights: Vec<f64>,
    /// ŷ for the next trial, in ticks.
    prediction: f64,
    has_sample: bool,
    /// Variance term for `rto = rfc6298` (ns), against the prediction.
    rttvar: f64,
    /// Linux's mdev/rttvar machinery for `rto = linux`, fed the same samples.
    linux: Linux,
    rto: Nanos,
    /// The CPU has AVX2 (checked once, at construction).
    avx2: bool,
}

impl FixedShare {
    pub fn new(cfg: Config) -> Self {
        let experts = cfg.experts();
        let weights = vec![1.0 / cfg.n as f64; cfg.n];
        let prediction = experts.iter().sum::<f64>() / cfg.n as f64;
        let linux = Linux::new(linux::Config {
            rto_min: cfg.min_rto,
            rto_max: cfg.max_rto,
            initial_rto: cfg.initial_rto,
            hz: 1000,
            window: linux::Window::Auto,
        });
        Self {
            cfg,
            experts,
            weights,
            prediction,
            has_sample: false,
            rttvar: 0.0,
            linux,
            rto: cfg.initial_rto.min(cfg.max_rto),
            #[cfg(target_arch = "x86_64")]
            avx2: std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            avx2: false,
        }
    }

    /// The prediction ŷ for the next sample, in ticks.
    pub fn prediction_ticks(&self) -> f64 {
        self.prediction
    }

    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// x_N, the largest expert, in ticks (RTT_min + RTT_max with i = 1…N).
    pub fn top_expert(&self) -> f64 {
        self.experts[self.experts.len() - 1]
    }

    /// One trial of Table I with sample `y` (ticks); returns the new prediction.
    ///
    /// Same arithmetic as the table, arranged for speed: the experts are sorted, so those below
    /// `y` form a prefix that shares one loss (2y) and one exponential, and above `y` the loss
    /// grows with x, so once an expert's factor underflows to 0 every later one does too.
    fn trial(&mut self, y: f64) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the running CPU reports AVX2.
            return unsafe { self.trial_avx2(y) };
        }
        self.trial_portable(y)
    }

    /// The same code compiled for AVX2: 4-wide instead of SSE2's 2-wide lanes. No FMA is enabled,
    /// so every operation rounds exactly as in the portable build: results are bit-identical.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn trial_avx2(&mut self, y: f64) -> f64 {
        self.trial_portable(y)
    }

    #[inline(always)]
    fn trial_portable(&mut self, y: f64) -> f64 {
        let eta = self.cfg.eta;
        // Step 2: loss. Over-predicting experts pay (x − y)²; every under-predicting expert pays 2y.
        let k = self.experts.partition_point(|&x| x < y);
        let under_loss = 2.0 * y;
        let min_loss = match self.experts.get(k) {
            Some(&x) if k > 0 => ((x - y) * (x - y)).min(under_loss),
            Some(&x) => (x - y) * (x - y),
            None => under_loss,
        };
        // Step 3: w' = w·exp(−η L), shifted by the smallest loss (a common factor). The prefix's
        // common factor is applied in step 4's pass instead of a pass of its own.
        let (below, above) = self.weights.split_at_mut(k);
        let shared = exp_nonpositive(-eta * (under_loss - min_loss));
        // The weights sum to 1 (normalised every trial), so the prefix's sum is 1 − Σ above: the
        // ~20 experts above the sample are summed instead of the ~80 below. A rounding error ε in
        // Σw is damped by (1 − α) each trial, so it cannot accumulate.
        let below_sum = (1.0 - sum(above)).max(0.0);
        // Beyond (x − y)² > 708/η + min_loss the factor underflows to 0 (exp_nonpositive masks it
        // exactly); bounding the loop first, with a tick of margin, keeps it branch-free.
        let reach = y + (-EXP_UNDERFLOW / eta + min_loss).sqrt() + 1.0;
        let vanished = self.experts[k..].partition_point(|&x| x <= reach);
        // No reduction inside this loop, so it vectorises; the sum is a pass of its own.
        let live = &mut above[..vanished];
        for (w, &x) in live.iter_mut().zip(&self.experts[k..k + vanished]) {
            *w *= exp_nonpositive(-eta * ((x - y) * (x - y) - min_loss));
        }
        let total = shared * below_sum + sum(live);
        above[vanished..].iter_mut().for_each(|w| *w = 0.0);
        // Step 4: share, normalised so Σw = 1; prediction ŷ = Σ w·x (step 1 of the next trial).
        let n = self.cfg.n as f64;
        let alpha = self.cfg.alpha;
        let (scale, floor) = match self.cfg.share {
            // w_i ← (1−α)·w'_i/Σw' + α/N
            Share::Uniform => ((1.0 - alpha) / total, alpha / n),
            // w_i ← (1−α)·v_i + α·(1 − v_i)/(N−1), v = w'/Σw' (Herbster & Warmuth)
            Share::Others => ((1.0 - alpha - alpha / (n - 1.0)) / total, alpha / (n - 1.0)),
        };
        let (x_below, x_above) = self.experts.split_at(k);
        share_and_predict(below, x_below, shared * scale, floor)
            + share_and_predict(above, x_above, scale, floor)
    }
}

/// Below this, [`exp_nonpositive`] returns exactly 0.
const EXP_UNDERFLOW: f64 = -708.0;

/// Σv with four independent accumulators, so the loop vectorises (strict FP order would not).
#[inline(always)]
fn sum(v: &[f64]) -> f64 {
    let (chunks, tail) = v.as_chunks::<4>();
    let acc = chunks.iter().fold([0.0; 4], |a, c| {
        [a[0] + c[0], a[1] + c[1], a[2] + c[2], a[3] + c[3]]
    });
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail.iter().sum::<f64>()
}

/// Σ w·x, four accumulators wide.
#[inline(always)]
fn dot(w: &[f64], x: &[f64]) -> f64 {
    let (wc, wt) = w.as_chunks::<4>();
    let (xc, xt) = x.as_chunks::<4>();
    let acc = wc.iter().zip(xc).fold([0.0; 4], |a, (w, x)| {
        [
            a[0] + w[0] * x[0],
            a[1] + w[1] * x[1],
            a[2] + w[2] * x[2],
            a[3] + w[3] * x[3],
        ]
    });
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + wt.iter().zip(xt).map(|(w, x)| w * x).sum::<f64>()
}

/// w ← w·scale + floor, returning Σ w·x (two simple loops vectorise; one fused loop did not).
#[inline(always)]
fn share_and_predict(w: &mut [f64], x: &[f64], scale: f64, floor: f64) -> f64 {
    w.iter_mut().for_each(|v| *v = *v * scale + floor);
    dot(w, x)
}

impl RttEstimator for FixedShare {
    fn on_sample(&mut self, rtt: Nanos, ctx: &Context) {
        let tick = self.cfg.tick as f64;
        let y = rtt as f64 / tick;
        let y = if self.cfg.clamp == Clamp::Top {
            y.min(self.top_expert())
        } else {
            y
        };
        let before = self.prediction;
        self.prediction = self.trial(y);
        let predicted_ns = self.prediction * tick;
        self.rto = match self.cfg.rto {
            RtoRule::Linux => {
                // Linux's deviation machinery, with SRTT replaced by the prediction in the RTO.
                self.linux.on_sample(rtt, ctx);
                let us = predicted_ns / 1e3 + self.linux.rttvar_us() as f64;
                ((us.ceil() as Nanos) * 1000).min(self.cfg.max_rto)
            }
            RtoRule::Rfc6298 => {
                let error = (before * tick - rtt as f64).abs();
                self.rttvar = if self.has_sample {
                    0.75 * self.rttvar + 0.25 * error
                } else {
                    rtt as f64 / 2.0
                };
                let rto = predicted_ns + (self.cfg.granularity as f64).max(4.0 * self.rttvar);
                round_ns(rto).max(self.cfg.min_rto).min(self.cfg.max_rto)
            }
        };
        self.has_sample = true;
    }

    /// The experts predict before any sample (ŷ_1 = mean expert ≈ 9.05 ticks).
    fn prediction(&self) -> Option<Nanos> {
        Some(round_ns(self.prediction * self.cfg.tick as f64))
    }

    fn rto(&self) -> Nanos {
        self.rto
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.max_rto
    }
}

/// e^x for x ≤ 0, branch-free so the weight loop vectorises: x = k·ln2 + r, |r| ≤ ln2/2,
/// e^r by its degree-13 Taylor polynomial (truncation < 2e-16 relative), 2^k built in the
/// exponent bits. Underflows to exactly 0 below −708 (subnormals are not needed here).
#[inline(always)]
fn exp_nonpositive(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // fdlibm's split of ln 2: the high part has trailing zero bits, so k·LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // 1.5·2^52: adding it rounds to an integer held in the low mantissa bits.
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    let underflow = x < EXP_UNDERFLOW;
    let x = x.max(EXP_UNDERFLOW);
    let t = x * LOG2E + SHIFTER;
    let k = t - SHIFTER;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 6_227_020_800.0;
    for c in [
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = p * r + c;
    }
    let k_bits = t.to_bits().wrapping_sub(SHIFTER.to_bits());
    let scale = f64::from_bits(k_bits.wrapping_add(1023) << 52);
    if underflow {
        0.0
    } else {
        p * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};
    use proptest::prelude::*;

    fn ticks(cfg: Config) -> FixedShare {
        FixedShare::new(cfg)
    }

    /// docs/algorithms.md §14: expert spacing, N = 100, i = 1…N.
    #[test]
    fn experts_are_spaced_as_in_table_one() {
        let x = Config::default().experts();
        assert!((x[0] - 1.000005).abs() < 1e-6);
        for (i, want) in [
            (95, 65.0),
            (96, 77.109),
            (97, 91.51),
            (98, 108.635),
            (99, 129.0),
        ] {
            assert!((x[i] - want).abs() < 0.001, "x_{} = {}", i + 1, x[i]);
        }
        let count = |limit: f64| x.iter().filter(|&&v| v <= limit).count();
        assert_eq!(
            (count(2.0), count(8.0), count(32.0), count(64.0)),
            (72, 83, 91, 95)
        );
    }

    /// docs/algorithms.md §14: predictions made before each sample, N=100, η=2, α=0.08, in ticks.
    /// The vectors are in ticks, so they hold for any tick length: fed y ticks of the default.
    #[test]
    fn matches_the_derived_prediction_vectors() {
        let y = [10, 10, 10, 10, 30, 30, 10, 10, 5, 5, 5, 5];
        let want = [
            9.045, 10.396, 10.396, 10.396, 10.396, 31.084, 31.084, 10.396, 10.396, 5.496, 5.388,
            5.346,
        ];
        let mut est = ticks(Config::default());
        for i in 0..y.len() {
            assert!(
                (est.prediction_ticks() - want[i]).abs() < 0.0015,
                "trial {i}: {} vs {}",
                est.prediction_ticks(),
                want[i]
            );
            est.on_sample(y[i] * Config::default().tick, &Context::default());
        }
    }

    #[test]
    fn the_default_tick_is_one_jiffy_of_linux_2_6_28_at_hz_250() {
        assert_eq!(Config::default().tick, 4 * MS);
        assert!((ticks(Config::default()).top_expert() - 129.0).abs() < 1e-9);
    }

    #[test]
    fn samples_above_the_top_expert_pull_the_prediction_toward_the_mean_expert_unless_clamped() {
        // Lock onto 100 ticks, then 100 samples of 400 ticks (1.6 s at 4 ms), far above x_N.
        let run = |clamp: Clamp| {
            let mut est = ticks(Config {
                clamp,
                ..Config::default()
            });
            for _ in 0..20 {
                est.on_sample(400 * MS, &Context::default());
            }
            for _ in 0..100 {
                est.on_sample(1600 * MS, &Context::default());
            }
            est.prediction_ticks()
        };
        let mean_expert = Config::default().experts().iter().sum::<f64>() / 100.0;
        // Every expert pays 2y: the trial keeps the weights, sharing drifts them to uniform —
        // the weight left on the old expert shrinks by (1 − α) per sample: 0.92^100 ≈ 2.4e-4.
        assert!(
            (run(Clamp::Off) - mean_expert).abs() < 0.1,
            "{} vs x̄ = {mean_expert}",
            run(Clamp::Off)
        );
        // Clamped, the samples are x_N itself: the weight sits on the top expert except for
        // the share floor, so ŷ = (1 − α)·x_N + α·x̄ (docs/algorithms.md §6.2).
        let want = 0.92 * 129.0 + 0.08 * mean_expert;
        assert!(
            (run(Clamp::Top) - want).abs() < 1e-6,
            "{} vs {want}",
            run(Clamp::Top)
        );
    }

    #[test]
    fn a_sample_beyond_every_expert_leaves_the_weights_usable() {
        let mut est = ticks(Config::default());
        est.on_sample(3600 * SEC, &Context::default());
        assert!(est.weights().iter().all(|w| w.is_finite() && *w > 0.0));
        est.on_sample(100 * MS, &Context::default());
        assert!(est.prediction_ticks().is_finite());
    }

    #[test]
    fn herbster_warmuth_sharing_keeps_weights_normalised() {
        let mut est = ticks(Config {
            share: Share::Others,
            ..Config::default()
        });
        for ms in [100, 300, 50, 5000, 20] {
            est.on_sample(ms * MS, &Context::default());
            assert!((est.weights().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn the_rfc6298_rule_keeps_its_floor() {
        let mut est = ticks(Config {
            rto: RtoRule::Rfc6298,
            min_rto: SEC,
            ..Config::default()
        });
        est.on_sample(50 * MS, &Context::default());
        assert_eq!(est.rto(), SEC);
    }

    #[test]
    fn the_fast_exponential_agrees_with_the_standard_one() {
        let mut x = 0.0;
        while x > -750.0 {
            let (got, want) = (exp_nonpositive(x), x.exp());
            if x < -708.0 {
                assert_eq!(got, 0.0);
            } else {
                assert!(
                    (got - want).abs() <= 1e-15 * want,
                    "exp({x}) = {got} vs {want}"
                );
            }
            x -= 0.0137;
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Weights stay normalised and strictly positive over long adversarial runs.
        #[test]
        fn weights_stay_normalised(samples in proptest::collection::vec(1u64..100_000, 1..2000)) {
            let mut est = ticks(Config::default());
            for ms in samples {
                est.on_sample(ms * MS / 10, &Context::default());
            }
            let sum: f64 = est.weights().iter().sum();
            prop_assert!((sum - 1.0).abs() < 1e-9);
            prop_assert!(est.weights().iter().all(|w| *w > 0.0));
        }
    }

    /// The invariant at full length: 10⁶ trials without underflow or drift.
    #[test]
    fn weights_stay_normalised_over_a_million_steps() {
        let mut est = ticks(Config::default());
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1_000_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // 1 ms … 3 s, heavy on small values.
            let rtt = MS + (state % 3000) * (state >> 60) * MS / 16;
            est.on_sample(rtt, &Context::default());
        }
        let sum: f64 = est.weights().iter().sum();
        assert!((sum - 1.0).abs() < 1e-9, "Σw = {sum}");
        assert!(
            est.weights().iter().all(|w| *w >= 0.08 / 100.0 * 0.999),
            "share floor α/N holds"
        );
    }
}
