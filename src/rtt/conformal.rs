//! Online conformal RTO: an RFC 6298 SRTT as the point forecast, times a margin calibrated
//! online so the timer's miss rate tracks a chosen target — docs/algorithms.md §15.
//!
//! Idea and source: the *quantile tracker* of Angelopoulos, Barber & Bates, "Conformal PID
//! Control for Time Series Prediction" (NeurIPS 2023, §2 eq. 2 and Prop. 1), the step-size form
//! of Gibbs & Candès' adaptive conformal inference ("Adaptive Conformal Inference Under
//! Distribution Shift", NeurIPS 2021). The conformity score is the log ratio ln(y/ŷ) of the RTT
//! to the forecast, so the margin is scale-free: RTO = ŷ·e^q, and after each sample
//!
//! ```text
//! q ← q + η (err − α),   err = 1 if the sample reached the RTO in force, else 0.
//! ```
//!
//! Prop. 1 of Angelopoulos et al.: for *any* sequence whose scores stay in a bounded range, the
//! long-run fraction of misses is within (B + η)/(η T) of α — no exchangeability needed. Choices
//! (ours; the papers calibrate a forecast interval, not a timer):
//! - A miss is also learnt from the timer itself: [`RttEstimator::on_timeout`] counts one miss
//!   per timeout episode (back-off repeats are the same episode). Without it, Karn's rule would
//!   hide exactly the misses (a timed-out segment's sample is withheld) and q would only fall.
//!   A sample arriving after such an episode (timestamps keep it) is not counted twice.
//! - q is kept in [0, ln 1000]: never below the forecast (α < 0.5 always wants q > 0 anyway)
//!   and bounded, as Prop. 1 needs.
//! - The forecast is RFC 6298's SRTT (α = 1/8, §2.3) and the RTO keeps G above it, as
//!   RFC 6298's max(G, K·RTTVAR) does.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        target: f64 = float("0.01", 0.0001, 0.5, "miss rate α the margin is calibrated to: the fraction of samples allowed to outlive the RTO"),
        eta: f64 = float("0.05", 0.0001, 2.0, "step η of the margin's log per sample (Angelopoulos et al. 2023 eq. 2); larger adapts faster and jitters more"),
        initial_margin: f64 = float("2", 1.0, 1000.0, "RTO / SRTT before any calibration (e^q₀)"),
        granularity: Nanos = duration("1ms", 0.0, 1.0, "clock granularity G: the RTO is at least SRTT + G"),
        min_rto: Nanos = duration("0", 0.0, 60.0, "RTO floor (none by default: the calibration sets the margin)"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
        max_rto: Nanos = duration("60s", 1.0, 86400.0, "RTO cap after back-off"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "conformal",
        aliases: &[],
        summary: "online conformal RTO: SRTT times a margin calibrated online to a target miss rate",
        source: "Angelopoulos, Barber & Bates NeurIPS 2023 (quantile tracker); Gibbs & Candès 2021; docs/algorithms.md §15",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::Conformal(Conformal::new(Config::from_params(p)?))),
};

/// The margin's log is kept in [0, ln 1000] (see the module's comment).
const Q_MAX: f64 = 6.907_755_278_982_137;
/// RFC 6298 §2.3's SRTT gain.
const GAIN: f64 = 0.125;

#[derive(Debug, Clone, PartialEq)]
pub struct Conformal {
    cfg: Config,
    srtt: Option<f64>,
    /// log of the margin RTO / SRTT.
    q: f64,
    /// A timeout episode was counted as a miss and no sample has arrived since.
    timed_out: bool,
    rto: Nanos,
}

impl Conformal {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            srtt: None,
            q: cfg.initial_margin.ln().clamp(0.0, Q_MAX),
            timed_out: false,
            rto: cfg.initial_rto.max(cfg.min_rto).min(cfg.max_rto),
        }
    }

    /// The current margin RTO / SRTT (before G, floor and cap).
    pub fn margin(&self) -> f64 {
        self.q.exp()
    }

    fn learn(&mut self, miss: bool) {
        let err = if miss { 1.0 } else { 0.0 };
        self.q = (self.q + self.cfg.eta * (err - self.cfg.target)).clamp(0.0, Q_MAX);
    }

    fn compute_rto(&self) -> Nanos {
        let Some(srtt) = self.srtt else {
            return self.rto;
        };
        let raw = (srtt * self.q.exp()).max(srtt + self.cfg.granularity as f64);
        round_ns(raw)
            .max(self.cfg.min_rto)
            .clamp(1, self.cfg.max_rto)
    }
}

impl RttEstimator for Conformal {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        let r = rtt as f64;
        match self.srtt {
            None => self.srtt = Some(r),
            Some(s) => {
                if self.timed_out {
                    // Counted when the timer fired; this is the same segment's (or a later) sample.
                    self.timed_out = false;
                } else {
                    self.learn(rtt >= self.rto);
                }
                self.srtt = Some(s + GAIN * (r - s));
            }
        }
        self.rto = self.compute_rto();
    }

    fn prediction(&self) -> Option<Nanos> {
        self.srtt.map(round_ns)
    }

    fn rto(&self) -> Nanos {
        self.rto
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.max_rto
    }

    fn min_rto(&self) -> Nanos {
        self.cfg.min_rto
    }

    fn unfloored_rto(&self) -> f64 {
        self.srtt.map_or(self.rto as f64, |s| {
            (s * self.q.exp()).max(s + self.cfg.granularity as f64)
        })
    }

    fn on_timeout(&mut self) {
        if !self.timed_out && self.srtt.is_some() {
            self.timed_out = true;
            self.learn(true);
            self.rto = self.compute_rto();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;
    use crate::time::SEC;

    /// SplitMix64 → a uniform in [0, 1): a fixed test series without the simulator's streams.
    struct Uniform(u64);
    impl Uniform {
        fn next_f64(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn feed(e: &mut Conformal, rtts: impl IntoIterator<Item = Nanos>) -> (usize, usize) {
        let (mut n, mut misses) = (0, 0);
        for rtt in rtts {
            if e.srtt.is_some() {
                n += 1;
                misses += usize::from(rtt >= e.rto());
            }
            e.on_sample(rtt, &Context::default());
        }
        (n, misses)
    }

    #[test]
    fn the_miss_rate_settles_at_the_target_on_a_noisy_series() {
        let mut rng = Uniform(7);
        // 100 ms plus exponential jitter (mean 10 ms) and a 3× spike 2 % of the time.
        let rtts: Vec<Nanos> = (0..40_000)
            .map(|_| {
                let base = 100.0 + 10.0 * -(1.0 - rng.next_f64()).ln();
                let spike = if rng.next_f64() < 0.02 { 3.0 } else { 1.0 };
                (base * spike * MS as f64) as Nanos
            })
            .collect();
        for target in [0.01, 0.05] {
            let mut e = Conformal::new(Config {
                target,
                ..Config::default()
            });
            let (n, misses) = feed(&mut e, rtts.iter().copied());
            let rate = misses as f64 / n as f64;
            // Prop. 1: |rate − α| ≤ (B + η)/(η T), B = ln 1000 here: ≈ 0.0035 for T = 40 000.
            assert!(
                (rate - target).abs() < 0.004,
                "target {target}: miss rate {rate}"
            );
        }
    }

    #[test]
    fn a_timeout_counts_once_per_episode_and_widens_the_margin() {
        let mut e = Conformal::new(Config::default());
        feed(&mut e, [100 * MS, 100 * MS]);
        let before = e.margin();
        e.on_timeout();
        e.on_timeout(); // a back-off repeat: the same episode
        let after = e.margin();
        assert!(
            (after / before - (0.05f64 * 0.99).exp()).abs() < 1e-12,
            "{before} → {after}"
        );
        // The sample that ends the episode is not counted again.
        e.on_sample(500 * MS, &Context::default());
        assert_eq!(e.margin(), after);
    }

    #[test]
    fn the_rto_keeps_granularity_above_the_forecast_and_respects_floor_and_cap() {
        let mut e = Conformal::new(Config {
            initial_margin: 1.0,
            min_rto: 50 * MS,
            ..Config::default()
        });
        feed(&mut e, [10 * MS; 50]);
        assert_eq!(e.rto(), 50 * MS);
        let mut e = Conformal::new(Config {
            initial_margin: 1.0,
            ..Config::default()
        });
        feed(&mut e, [10 * MS; 50]);
        assert_eq!(e.rto(), 11 * MS);
        let mut e = Conformal::new(Config {
            initial_margin: 1000.0,
            max_rto: SEC,
            ..Config::default()
        });
        feed(&mut e, [10 * SEC]);
        assert_eq!(e.rto(), SEC);
    }
}
