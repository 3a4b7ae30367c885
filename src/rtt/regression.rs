//! Linear-regression RTT predictor (Baddam et al. 2018, CSE534 project) — docs/algorithms.md §10.
//!
//! ŷ = b0 + b1·hops + b2·min_rtt + b3·max_rtt + b4·ttl, in milliseconds, feature order
//! [intercept, hops, min_rtt, max_rtt, ttl] (confirmed from `linear_regression.py`). Defaults are
//! the published Cubic coefficients. hops and ttl are per-path constants (parameters); min_rtt and
//! max_rtt are the minimum and maximum of the last `window` samples (default 25: the project
//! took them from `hping3 -c 25` probes, so a window of 25 recent samples is the closest analogue
//! in a stream; `window = 0` uses every sample so far).
//!
//! RTO = ŷ + k·error, with the running error of the project's kernel code: e = ŷ − measured, or a
//! fixed `under_penalty` (3 ms) when the prediction was too low, averaged as e ← (e + e_new)/2.
//! The project removed Linux's rto_min (which the report blames for its extra retransmissions);
//! `min_rto` defaults to 0 to stay faithful and can be raised.

use super::{Context, Estimator, Info, RttEstimator};
use crate::params::{ParamError, ParamSpec, Params};
use crate::time::{Nanos, MS, SEC, round_ns};

/// Published Cubic coefficients (docs/algorithms.md §10), [intercept, hops, min_rtt, max_rtt, ttl].
pub const CUBIC: [f64; 5] = [-0.52218434, 0.01509783, 0.58899585, 0.41376639, 0.00157301];

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::float("b0", "-0.52218434", -1e6, 1e6, "intercept (ms); default: published Cubic fit"),
    ParamSpec::float("b1", "0.01509783", -1e6, 1e6, "coefficient of hops (ms per hop)"),
    ParamSpec::float("b2", "0.58899585", -1e6, 1e6, "coefficient of min_rtt (ms per ms)"),
    ParamSpec::float("b3", "0.41376639", -1e6, 1e6, "coefficient of max_rtt (ms per ms)"),
    ParamSpec::float("b4", "0.00157301", -1e6, 1e6, "coefficient of the reply TTL (ms per unit)"),
    ParamSpec::float("hops", "0", 0.0, 255.0, "hop count of the path (a capture's TTL gives it)"),
    ParamSpec::float("ttl", "0", 0.0, 255.0, "IP TTL seen on replies"),
    ParamSpec::int("window", "25", 0.0, 1e6, "samples over which min_rtt/max_rtt are taken (hping3 -c 25); 0 = all so far"),
    ParamSpec::float("k", "2", 0.0, 100.0, "RTO = ŷ + k·error (2 in the Cubic/Vegas kernels, 1 in Reno)"),
    ParamSpec::duration("under_penalty", "3ms", 0.0, 10.0, "error charged when the prediction was below the sample"),
    ParamSpec::duration("min_rto", "0", 0.0, 60.0, "RTO floor (the project removed Linux's)"),
    ParamSpec::duration("initial_rto", "1s", 0.001, 60.0, "RTO before the first sample"),
    ParamSpec::duration("max_rto", "120s", 1.0, 86400.0, "RTO cap after back-off"),
];

pub const INFO: Info = Info::new(
    "regression",
    "linear regression on [hops, min_rtt, max_rtt, ttl] (CSE534), RTO = ŷ + k·running error",
    "Baddam et al. 2018; github swetheendra84/CSE534Project; docs/algorithms.md §10",
    PARAMS,
    |p| Ok(Estimator::Regression(Regression::new(Config::from_params(p)?))),
);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub coefficients: [f64; 5],
    pub hops: f64,
    pub ttl: f64,
    pub window: usize,
    pub k: f64,
    pub under_penalty: Nanos,
    pub min_rto: Nanos,
    pub initial_rto: Nanos,
    pub max_rto: Nanos,
}

impl Default for Config {
    fn default() -> Self {
        Self { coefficients: CUBIC, hops: 0.0, ttl: 0.0, window: 25, k: 2.0, under_penalty: 3 * MS, min_rto: 0, initial_rto: SEC, max_rto: 120 * SEC }
    }
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(Self {
            coefficients: [p.float("b0")?, p.float("b1")?, p.float("b2")?, p.float("b3")?, p.float("b4")?],
            hops: p.float("hops")?,
            ttl: p.float("ttl")?,
            window: p.int("window")? as usize,
            k: p.float("k")?,
            under_penalty: p.duration("under_penalty")?,
            min_rto: p.duration("min_rto")?,
            initial_rto: p.duration("initial_rto")?,
            max_rto: p.duration("max_rto")?,
        })
    }

    /// ŷ in ms for the features [hops, min_rtt, max_rtt, ttl] (ms where times).
    pub fn predict_ms(&self, hops: f64, min_rtt_ms: f64, max_rtt_ms: f64, ttl: f64) -> f64 {
        let b = &self.coefficients;
        b[0] + b[1] * hops + b[2] * min_rtt_ms + b[3] * max_rtt_ms + b[4] * ttl
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    cfg: Config,
    /// The last `window` samples (ms), or the running extremes when the window is 0.
    recent: std::collections::VecDeque<f64>,
    min_rtt: f64,
    max_rtt: f64,
    /// ŷ in ms for the next sample, once there is one.
    prediction_ms: Option<f64>,
    error_ms: Option<f64>,
    rto: Nanos,
}

impl Regression {
    pub fn new(cfg: Config) -> Self {
        Self { cfg, recent: std::collections::VecDeque::with_capacity(cfg.window), min_rtt: f64::INFINITY, max_rtt: 0.0, prediction_ms: None, error_ms: None, rto: cfg.initial_rto.min(cfg.max_rto) }
    }
}

impl RttEstimator for Regression {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        let m = rtt as f64 / MS as f64;
        if let Some(predicted) = self.prediction_ms {
            let e = if predicted >= m { predicted - m } else { self.cfg.under_penalty as f64 / MS as f64 };
            self.error_ms = Some(self.error_ms.map_or(e, |old| (old + e) / 2.0));
        }
        if self.cfg.window == 0 {
            self.min_rtt = self.min_rtt.min(m);
            self.max_rtt = self.max_rtt.max(m);
        } else {
            if self.recent.len() == self.cfg.window {
                self.recent.pop_front();
            }
            self.recent.push_back(m);
            self.min_rtt = self.recent.iter().copied().fold(f64::INFINITY, f64::min);
            self.max_rtt = self.recent.iter().copied().fold(0.0, f64::max);
        }
        let y = self.cfg.predict_ms(self.cfg.hops, self.min_rtt, self.max_rtt, self.cfg.ttl).max(0.0);
        self.prediction_ms = Some(y);
        let rto_ms = y + self.cfg.k * self.error_ms.unwrap_or(0.0);
        self.rto = round_ns(rto_ms * MS as f64).max(self.cfg.min_rto).clamp(1, self.cfg.max_rto);
    }

    fn prediction(&self) -> Option<Nanos> {
        self.prediction_ms.map(|y| round_ns(y * MS as f64))
    }

    fn rto(&self) -> Nanos {
        self.rto
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.max_rto
    }
}

/// Ordinary least squares with an intercept: rows of [hops, min_rtt, max_rtt, ttl] → target;
/// returns [b0, b1, b2, b3, b4] (statsmodels `OLS(y, add_constant(X))` order). Solved by
/// Householder QR on the design matrix, so collinear columns give an error instead of noise.
pub fn fit(rows: &[[f64; 4]], targets: &[f64]) -> Result<[f64; 5], FitError> {
    if rows.len() != targets.len() {
        return Err(FitError::Shape { rows: rows.len(), targets: targets.len() });
    }
    if rows.len() < 5 {
        return Err(FitError::TooFew(rows.len()));
    }
    if rows.iter().flatten().chain(targets).any(|v| !v.is_finite()) {
        return Err(FitError::NotFinite);
    }
    let n = rows.len();
    // Column-major design matrix with the constant first.
    let mut a: Vec<Vec<f64>> = vec![vec![1.0; n]];
    for j in 0..4 {
        a.push(rows.iter().map(|r| r[j]).collect());
    }
    let mut y = targets.to_vec();
    let mut r = [[0.0f64; 5]; 5];
    for k in 0..5 {
        let norm = a[k][k..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let scale = a[k].iter().map(|v| v.abs()).fold(0.0, f64::max).max(1.0);
        if norm <= 1e-10 * scale * (n as f64).sqrt() {
            return Err(FitError::RankDeficient(k));
        }
        let alpha = if a[k][k] > 0.0 { -norm } else { norm };
        let mut v: Vec<f64> = a[k][k..].to_vec();
        v[0] -= alpha;
        let vv: f64 = v.iter().map(|x| x * x).sum();
        for col in a.iter_mut().skip(k).chain(std::iter::once(&mut y)) {
            let dot: f64 = v.iter().zip(&col[k..]).map(|(p, q)| p * q).sum();
            let f = 2.0 * dot / vv;
            for (c, vi) in col[k..].iter_mut().zip(&v) {
                *c -= f * vi;
            }
        }
        for j in k..5 {
            r[k][j] = a[j][k];
        }
    }
    let mut b = [0.0; 5];
    for k in (0..5).rev() {
        let s: f64 = (k + 1..5).map(|j| r[k][j] * b[j]).sum();
        b[k] = (y[k] - s) / r[k][k];
    }
    Ok(b)
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("regression fit: {rows} feature rows but {targets} targets")]
    Shape { rows: usize, targets: usize },
    #[error("regression fit: need at least 5 rows for 5 coefficients, got {0}")]
    TooFew(usize),
    #[error("regression fit: features or targets contain NaN or infinity")]
    NotFinite,
    #[error("regression fit: feature column {0} is constant or a combination of the others (rank-deficient)")]
    RankDeficient(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/algorithms.md §10: two of the nine published Cubic predictions, reproduced to 6 decimals.
    #[test]
    fn the_cubic_coefficients_reproduce_the_published_predictions() {
        let cfg = Config::default();
        assert!((cfg.predict_ms(15.0, 90.8, 91.1, 50.0) - 90.957875).abs() < 5e-7);
        assert!((cfg.predict_ms(14.0, 100.8, 128.2, 241.0) - 112.483914).abs() < 5e-7);
    }

    #[test]
    fn min_and_max_come_from_the_recent_window() {
        let mut e = Regression::new(Config { window: 2, coefficients: [0.0, 0.0, 0.5, 0.5, 0.0], ..Config::default() });
        for ms in [500, 100, 120] {
            e.on_sample(ms * MS, &Context::default());
        }
        // The 500 ms sample left the 2-sample window: ŷ = (100 + 120)/2.
        assert_eq!(e.prediction(), Some(110 * MS));
    }

    #[test]
    fn fit_recovers_known_coefficients() {
        let truth = [1.5, 0.2, 0.6, 0.4, -0.01];
        let mut rows = Vec::new();
        let mut targets = Vec::new();
        for i in 0..60 {
            let f = i as f64;
            let row = [5.0 + (i % 7) as f64, 20.0 + f, 25.0 + f * 1.3 + (i % 5) as f64, 40.0 + ((i * 13) % 17) as f64];
            targets.push(truth[0] + truth[1] * row[0] + truth[2] * row[1] + truth[3] * row[2] + truth[4] * row[3]);
            rows.push(row);
        }
        let b = fit(&rows, &targets).unwrap();
        for (got, want) in b.iter().zip(truth) {
            assert!((got - want).abs() < 1e-9, "{b:?}");
        }
    }

    #[test]
    fn fit_refuses_collinear_features() {
        // The stored CSE534 CSV repeats the hop count in two columns (docs/algorithms.md §10).
        let rows: Vec<[f64; 4]> = (0..20).map(|i| [i as f64, i as f64, (i * i) as f64, 3.0 + (i % 3) as f64]).collect();
        let targets: Vec<f64> = (0..20).map(|i| i as f64).collect();
        assert!(matches!(fit(&rows, &targets), Err(FitError::RankDeficient(_))));
    }

    /// Hand-computed with hops = ttl = 0: after 100 ms, ŷ = −0.522 + 1.00276·100 = 99.754 ms;
    /// a 90 ms sample: error 9.754, min 90, max 100 → ŷ = 94.2654, RTO = ŷ + 2·9.754.
    #[test]
    fn the_rto_adds_twice_the_running_error() {
        let mut e = Regression::new(Config::default());
        e.on_sample(100 * MS, &Context::default());
        let y1 = CUBIC[0] + (CUBIC[2] + CUBIC[3]) * 100.0;
        assert_eq!(e.rto(), (y1 * 1e6).round() as Nanos);
        e.on_sample(90 * MS, &Context::default());
        let y2 = CUBIC[0] + CUBIC[2] * 90.0 + CUBIC[3] * 100.0;
        let want = y2 + 2.0 * (y1 - 90.0);
        assert_eq!(e.rto(), (want * 1e6).round() as Nanos);
    }
}
