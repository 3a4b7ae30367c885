//! Quantile-tracking experts RTO: Fixed-Share's machinery with a pinball loss, so the RTO follows
//! a chosen quantile of the RTT instead of a mean plus variance — docs/algorithms.md §15.3.
//!
//! Sources: Fixed-Share (Herbster & Warmuth, "Tracking the Best Expert", Machine Learning 1998,
//! §3: loss update, then share α of the weight uniformly), as Nunes et al. 2011 use it for RTTs
//! (`fixed_share.rs`); the pinball (quantile) loss L_τ(y, x) = τ·(y − x) for y ≥ x, else
//! (1 − τ)·(x − y), whose minimiser in expectation is the τ-quantile of y (Koenker & Bassett 1978).
//! With τ = 1 − `target`, the RTO aims at the RTT that only `target` of the samples exceed.
//!
//! Choices (ours; no source tunes an RTO this way):
//! - **Experts are candidate RTOs** on a geometric grid from `lo` to `hi` (`n` of them), and the
//!   loss is taken on ln y and ln x: quantiles commute with the logarithm, and the loss becomes
//!   scale-free, so one η fits paths of 1 ms and of 10 s alike.
//! - **The RTO is the weighted geometric mean of the experts** (the exponentially weighted
//!   average forecaster; the pinball loss is convex, so it does no worse than the weighted
//!   average loss of the experts).
//! - **A timeout is a censored sample**: the sender only knows y ≥ RTO. Karn's rule withholds the
//!   real sample, exactly one that says "too low", so each timeout episode is fed to the experts
//!   as y = the RTO in force (a lower bound of the truth); the sample ending the episode, when
//!   timestamps let it through, is not fed again.
//! - It predicts no RTT (as Peak-Hopper): its output is a timeout, not a forecast.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::params::{ParamError, Params};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        target: f64 = float("0.01", 0.0001, 0.5, "rate of samples allowed above the RTO: the experts track the (1 − target)-quantile of the RTT"),
        eta: f64 = float("20", 0.0, 10000.0, "learning rate η on the log-scale pinball loss"),
        alpha: f64 = float("0.01", 0.0, 1.0, "sharing rate α (Fixed-Share): how fast the weight can move to another expert"),
        n: usize = int("64", 2.0, 4096.0, "number of experts (candidate RTOs)"),
        lo: Nanos = duration("1ms", 0.000001, 60.0, "smallest candidate RTO"),
        hi: Nanos = duration("60s", 0.001, 3600.0, "largest candidate RTO"),
        min_rto: Nanos = duration("0", 0.0, 60.0, "RTO floor"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
        max_rto: Nanos = duration("60s", 1.0, 86400.0, "RTO cap after back-off"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "quantile-experts",
        aliases: &[],
        summary: "Fixed-Share experts on a pinball loss: the RTO tracks the (1 − target)-quantile of the RTT",
        source: "Herbster & Warmuth 1998 (Fixed-Share); Koenker & Bassett 1978 (pinball loss); docs/algorithms.md §15.3",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::QuantileExperts(QuantileExperts::new(Config::from_params(p)?.checked(p)?))),
};

impl Config {
    /// The candidate RTOs must span a range.
    fn checked(self, p: &Params) -> Result<Self, ParamError> {
        if self.lo >= self.hi {
            return Err(p.inconsistent("lo must be below hi"));
        }
        Ok(self)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct QuantileExperts {
    cfg: Config,
    /// ln of each expert's RTO in ns, rising.
    log_x: Vec<f64>,
    weights: Vec<f64>,
    seen: bool,
    timed_out: bool,
    rto: Nanos,
}

impl QuantileExperts {
    pub fn new(cfg: Config) -> Self {
        let (a, b) = ((cfg.lo as f64).ln(), (cfg.hi as f64).ln());
        let log_x: Vec<f64> = (0..cfg.n)
            .map(|i| a + (b - a) * i as f64 / (cfg.n - 1) as f64)
            .collect();
        let weights = vec![1.0 / cfg.n as f64; cfg.n];
        Self {
            cfg,
            log_x,
            weights,
            seen: false,
            timed_out: false,
            rto: cfg.initial_rto.max(cfg.min_rto).min(cfg.max_rto),
        }
    }

    /// The weighted geometric mean of the experts, in ns, before floor and cap.
    pub fn raw_rto(&self) -> f64 {
        self.weights
            .iter()
            .zip(&self.log_x)
            .map(|(w, x)| w * x)
            .sum::<f64>()
            .exp()
    }

    /// One Fixed-Share trial on a (possibly censored) sample `y` ns.
    fn trial(&mut self, y: f64) {
        let ly = y.max(1.0).ln();
        let tau = 1.0 - self.cfg.target;
        let loss = |lx: f64| {
            if ly >= lx {
                tau * (ly - lx)
            } else {
                (1.0 - tau) * (lx - ly)
            }
        };
        // Shift by the smallest loss (a common factor) so no weight underflows to zero at once.
        let min_loss = self
            .log_x
            .iter()
            .map(|&lx| loss(lx))
            .fold(f64::INFINITY, f64::min);
        let eta = self.cfg.eta;
        for (w, &lx) in self.weights.iter_mut().zip(&self.log_x) {
            *w *= (-eta * (loss(lx) - min_loss)).exp();
        }
        let total: f64 = self.weights.iter().sum();
        let share = self.cfg.alpha / self.cfg.n as f64;
        for w in &mut self.weights {
            *w = (1.0 - self.cfg.alpha) * (*w / total) + share;
        }
        self.rto = round_ns(self.raw_rto())
            .max(self.cfg.min_rto)
            .clamp(1, self.cfg.max_rto);
    }
}

impl RttEstimator for QuantileExperts {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        self.seen = true;
        if self.timed_out {
            // Fed as a censored sample when the timer fired: not twice.
            self.timed_out = false;
            return;
        }
        self.trial(rtt as f64);
    }

    /// It predicts no RTT: its output is a timeout (as Peak-Hopper).
    fn prediction(&self) -> Option<Nanos> {
        None
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
        if self.seen {
            self.raw_rto()
        } else {
            self.rto as f64
        }
    }

    fn on_timeout(&mut self) {
        if !self.timed_out && self.seen {
            self.timed_out = true;
            let censored = self.rto as f64;
            self.trial(censored);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;
    use crate::time::SEC;

    #[test]
    fn the_rto_settles_near_the_chosen_quantile_of_a_fixed_distribution() {
        // RTTs cycle through 100 values 100..=199 ms: the 0.9-quantile is about 190 ms.
        let mut e = QuantileExperts::new(Config {
            target: 0.1,
            n: 256,
            lo: 10 * MS,
            hi: 1000 * MS,
            ..Config::default()
        });
        let (mut above, mut n) = (0, 0);
        for round in 0..200 {
            for i in 0..100u64 {
                let y = (100 + (i * 37) % 100) * MS;
                if round >= 100 {
                    n += 1;
                    above += usize::from(y > e.rto());
                }
                e.on_sample(y, &Context::default());
            }
        }
        let rate = above as f64 / n as f64;
        assert!(
            (0.05..=0.15).contains(&rate),
            "rate above the RTO {rate}, RTO {} ms",
            e.rto() as f64 / 1e6
        );
    }

    #[test]
    fn a_timeout_raises_the_rto_and_counts_once_per_episode() {
        let mut e = QuantileExperts::new(Config::default());
        for _ in 0..200 {
            e.on_sample(100 * MS, &Context::default());
        }
        let before = e.rto();
        e.on_timeout();
        let after = e.rto();
        e.on_timeout();
        assert!(after > before, "{before} → {after}");
        assert_eq!(e.rto(), after, "a back-off repeat is the same episode");
        e.on_sample(5 * SEC, &Context::default());
        assert_eq!(
            e.rto(),
            after,
            "the sample ending the episode is not fed again"
        );
    }

    #[test]
    fn a_low_target_costs_a_higher_rto() {
        let run = |target: f64| {
            let mut e = QuantileExperts::new(Config {
                target,
                ..Config::default()
            });
            for i in 0..2000u64 {
                e.on_sample((100 + (i * 7919) % 50) * MS, &Context::default());
            }
            e.rto()
        };
        assert!(run(0.01) > run(0.3));
    }
}
