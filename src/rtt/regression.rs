//! Linear-regression RTT predictor *inspired by* Baddam et al. 2018 (CSE534 project) — docs/algorithms.md §10.
//!
//! ŷ = b0 + b1·hops + b2·min_rtt + b3·max_rtt + b4·ttl, in milliseconds, feature order
//! [intercept, hops, min_rtt, max_rtt, ttl] (confirmed from `linear_regression.py`). Defaults are
//! the published Cubic coefficients (`coef = "b0,b1,b2,b3,b4"` or `b0`…`b4` replace them, e.g.
//! with what `rttlab train regression` fitted). hops and ttl are per-path constants (parameters).
//!
//! Two forms (`form`):
//! - `rttlab` (default, rttlab's own redesign — not the paper's pseudo-code): min_rtt and max_rtt
//!   are the minimum and maximum of the last `window` live samples (default 25: the project took
//!   them from `hping3 -c 25` probes, so a window of 25 recent samples is the closest analogue in
//!   a stream; `window = 0` uses every sample so far). RTO = ŷ + k·e with the error rule of the
//!   project's kernel code, not of the report: e_new = ŷ − measured, or a fixed `under_penalty`
//!   (3 ms) when the prediction was too low, averaged as e ← (e + e_new)/2.
//! - `paper`: the report's pseudo-code (§Solution, `tcp_rtt_estimator`/`tcp_set_rto`): ŷ is
//!   computed from the path's probe features — `min_rtt`/`max_rtt` as measured before the
//!   connection (the project's 25 hping3 probes); when not given, the connection's first sample
//!   stands for both (our choice: a stream has no probe before its first sample) — and stays
//!   constant; error = ŷ − y on the first sample, then error ← (error + (ŷ − y))/2, signed (no
//!   penalty: the pseudo-code has none); RTO = ŷ + error ("rto = rtt + dev_rtt", with rtt the
//!   prediction, as the kernel code sets srtt_us ← predicted).
//!
//! The project removed Linux's rto_min (which the report blames for its extra retransmissions);
//! `min_rto` defaults to 0 to stay faithful and can be raised.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::params::Quantity;
use crate::time::{parse_duration, round_ns, Nanos, MS, SEC};

/// `none` → Some(None); anything else through `parse` (None when it does not read).
fn none_or<T>(text: &str, parse: impl Fn(&str) -> Option<T>) -> Option<Option<T>> {
    if text.trim() == "none" {
        Some(None)
    } else {
        parse(text).map(Some)
    }
}

/// `coef`'s text: five finite numbers separated by commas and/or spaces, optionally in brackets
/// (so NumPy's printed arrays and `rttlab train`'s output are both accepted).
pub fn parse_coef(text: &str) -> Option<[f64; 5]> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    let values: Vec<f64> = inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect::<Option<_>>()?;
    values.try_into().ok()
}

/// Published Cubic coefficients (docs/algorithms.md §10), [intercept, hops, min_rtt, max_rtt, ttl].
pub const CUBIC: [f64; 5] = [-0.52218434, 0.01509783, 0.58899585, 0.41376639, 0.00157301];

crate::choices! {
    /// Which reading of the project runs (module doc).
    pub enum Form {
        /// rttlab's redesign: window of live samples, the kernel code's error penalty, RTO = ŷ + k·e.
        Rttlab = "rttlab",
        /// The report's pseudo-code: constant ŷ from probe features, signed running error, RTO = ŷ + e.
        Paper = "paper",
    }
}

/// `coef`: all five coefficients at once, or `none` (the default: b0…b4 apply).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coef(pub Option<[f64; 5]>);

impl Quantity for Coef {
    const EXPECTED: &'static str = "five numbers b0,b1,b2,b3,b4 (intercept, hops, min_rtt, max_rtt, ttl), separated by commas or spaces";
    fn parse(text: &str) -> Option<Self> {
        none_or(text, parse_coef).map(Coef)
    }
    /// The range is checked on the largest absolute coefficient.
    fn magnitude(&self) -> f64 {
        self.0
            .map_or(0.0, |b| b.iter().fold(0.0, |m: f64, x| m.max(x.abs())))
    }
    /// The five numbers comma-separated, each in its shortest text that reads back exactly.
    fn spelling(text: &str) -> Option<String> {
        let b = Self::parse(text)?.0;
        Some(b.map_or_else(
            || "none".into(),
            |b| b.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
        ))
    }
}

/// form=paper's `min_rtt`/`max_rtt`: the path's probed RTT, or `none` (the first sample stands for it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe(pub Option<Nanos>);

impl Quantity for Probe {
    const EXPECTED: &'static str = "a duration such as 40ms, or none";
    fn parse(text: &str) -> Option<Self> {
        none_or(text, parse_duration).map(Probe)
    }
    fn magnitude(&self) -> f64 {
        self.0.map_or(0.0, |ns| ns as f64 / SEC as f64)
    }
    fn spelling(text: &str) -> Option<String> {
        Some(
            Self::parse(text)?
                .0
                .map_or_else(|| "none".into(), crate::time::exact_duration),
        )
    }
}

impl Probe {
    /// In ms, the unit of the features.
    pub fn ms(&self) -> Option<f64> {
        self.0.map(|ns| ns as f64 / MS as f64)
    }
}

crate::params! {
    pub struct Config {
        b0: f64 = float("-0.52218434", -1e6, 1e6, "intercept (ms); default: published Cubic fit"),
        b1: f64 = float("0.01509783", -1e6, 1e6, "coefficient of hops (ms per hop)"),
        b2: f64 = float("0.58899585", -1e6, 1e6, "coefficient of min_rtt (ms per ms)"),
        b3: f64 = float("0.41376639", -1e6, 1e6, "coefficient of max_rtt (ms per ms)"),
        b4: f64 = float("0.00157301", -1e6, 1e6, "coefficient of the reply TTL (ms per unit)"),
        hops: f64 = float("0", 0.0, 255.0, "hop count of the path (a capture's TTL gives it)"),
        ttl: f64 = float("0", 0.0, 255.0, "IP TTL seen on replies"),
        window: usize = int("25", 0.0, 1e6, "samples over which min_rtt/max_rtt are taken (hping3 -c 25); 0 = all so far"),
        k: f64 = float("2", 0.0, 100.0, "RTO = ŷ + k·error (2 in the Cubic/Vegas kernels, 1 in Reno)"),
        under_penalty: Nanos = duration("3ms", 0.0, 10.0, "error charged when the prediction was below the sample"),
        min_rto: Nanos = duration("0", 0.0, 60.0, "RTO floor (the project removed Linux's)"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
        max_rto: Nanos = duration("120s", 1.0, 86400.0, "RTO cap after back-off"),
        form: Form = choice("rttlab", "rttlab: min/max over the last `window` samples, RTO = ŷ + k·error with the kernel code's under_penalty (rttlab's redesign); paper: the report's pseudo-code, ŷ from probe min_rtt/max_rtt, RTO = ŷ + signed running error"),
        coef: Coef = quantity("none", "(largest absolute coefficient)", 0.0, 1e6, "all five coefficients at once, b0,b1,b2,b3,b4 (what `rttlab train regression` writes); replaces b0…b4"),
        min_rtt: Probe = quantity("none", "s", 0.0, 3600.0, "form=paper: the path's probed minimum RTT, a duration (none: the first sample)"),
        max_rtt: Probe = quantity("none", "s", 0.0, 3600.0, "form=paper: the path's probed maximum RTT, a duration (none: the first sample)"),
    }
    // "none" (the default) means not given, for coef and the probe values alike.
    check(cfg, p) {
        if cfg.coef.0.is_some() {
            if let Some(name) = ["b0", "b1", "b2", "b3", "b4"].iter().find(|name| p.is_given(name)) {
                return Err(p.inconsistent(format!("give coef or {name}, not both (coef sets all five coefficients)")));
            }
        }
        match cfg.form {
            Form::Paper => {
                if let Some(k) = ["k", "window", "under_penalty"].iter().find(|k| p.is_given(k)) {
                    return Err(p.inconsistent(format!("{k} belongs to form=rttlab; form=paper is the report's pseudo-code (RTO = ŷ + signed running error)")));
                }
                if let (Some(lo), Some(hi)) = (cfg.min_rtt.ms(), cfg.max_rtt.ms()) {
                    if lo > hi {
                        return Err(p.inconsistent(format!("min_rtt ({lo} ms) is above max_rtt ({hi} ms)")));
                    }
                }
            }
            Form::Rttlab => {
                if let Some(k) = [("min_rtt", cfg.min_rtt), ("max_rtt", cfg.max_rtt)].iter().find(|(_, v)| v.0.is_some()).map(|(k, _)| k) {
                    return Err(p.inconsistent(format!("{k} belongs to form=paper (form=rttlab takes min and max over the last `window` samples)")));
                }
            }
        }
        Ok(())
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "regression",
        aliases: &[],
        summary: "linear regression on [hops, min_rtt, max_rtt, ttl] inspired by the CSE534 project; RTO = ŷ + k·running error (form=paper: the report's own pseudo-code)",
        source: "inspired by Baddam et al. 2018 (a redesign; form=paper follows its pseudo-code); github swetheendra84/CSE534Project; docs/algorithms.md §10",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::Regression(Regression::new(Config::from_params(p)?))),
};

impl Config {
    /// [intercept, hops, min_rtt, max_rtt, ttl]: `coef` when given, else b0…b4.
    pub fn coefficients(&self) -> [f64; 5] {
        self.coef
            .0
            .unwrap_or([self.b0, self.b1, self.b2, self.b3, self.b4])
    }

    /// ŷ in ms for the features [hops, min_rtt, max_rtt, ttl] (ms where times).
    pub fn predict_ms(&self, hops: f64, min_rtt_ms: f64, max_rtt_ms: f64, ttl: f64) -> f64 {
        let b = self.coefficients();
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
        Self {
            cfg,
            recent: std::collections::VecDeque::with_capacity(cfg.window),
            min_rtt: f64::INFINITY,
            max_rtt: 0.0,
            prediction_ms: None,
            error_ms: None,
            rto: cfg.initial_rto.min(cfg.max_rto),
        }
    }
}

impl Regression {
    /// form=paper, the report's `tcp_rtt_estimator`: ŷ = predict(hops, min, max, ttl) from the
    /// probe features (the first sample when none was given); error = ŷ − y on the first sample,
    /// then (error + (ŷ − y))/2; `tcp_set_rto`: RTO = ŷ + error.
    fn on_sample_paper(&mut self, m: f64) {
        let y = match self.prediction_ms {
            Some(y) => y,
            None => {
                let (lo, hi) = (
                    self.cfg.min_rtt.ms().unwrap_or(m),
                    self.cfg.max_rtt.ms().unwrap_or(m),
                );
                self.min_rtt = lo;
                self.max_rtt = hi;
                self.cfg
                    .predict_ms(self.cfg.hops, lo, hi, self.cfg.ttl)
                    .max(0.0)
            }
        };
        self.prediction_ms = Some(y);
        let e = self.error_ms.map_or(y - m, |old| (old + (y - m)) / 2.0);
        self.error_ms = Some(e);
        self.set_rto(y + e);
    }

    fn set_rto(&mut self, rto_ms: f64) {
        self.rto = round_ns(rto_ms * MS as f64)
            .max(self.cfg.min_rto)
            .clamp(1, self.cfg.max_rto);
    }
}

impl RttEstimator for Regression {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        let m = rtt as f64 / MS as f64;
        if self.cfg.form == Form::Paper {
            return self.on_sample_paper(m);
        }
        if let Some(predicted) = self.prediction_ms {
            let e = if predicted >= m {
                predicted - m
            } else {
                self.cfg.under_penalty as f64 / MS as f64
            };
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
        let y = self
            .cfg
            .predict_ms(self.cfg.hops, self.min_rtt, self.max_rtt, self.cfg.ttl)
            .max(0.0);
        self.prediction_ms = Some(y);
        let rto_ms = y + self.cfg.k * self.error_ms.unwrap_or(0.0);
        self.set_rto(rto_ms);
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
        return Err(FitError::Shape {
            rows: rows.len(),
            targets: targets.len(),
        });
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
    use crate::params::{ParamError, Params};

    #[test]
    fn the_declared_default_coefficients_are_the_published_cubic_fit() {
        assert_eq!(Config::default().coefficients(), CUBIC);
        assert_eq!(
            Config {
                coef: Coef(Some([1.0; 5])),
                ..Config::default()
            }
            .coefficients(),
            [1.0; 5]
        );
    }

    /// docs/algorithms.md §10: two of the nine published Cubic predictions, reproduced to 6 decimals.
    #[test]
    fn the_cubic_coefficients_reproduce_the_published_predictions() {
        let cfg = Config::default();
        assert!((cfg.predict_ms(15.0, 90.8, 91.1, 50.0) - 90.957875).abs() < 5e-7);
        assert!((cfg.predict_ms(14.0, 100.8, 128.2, 241.0) - 112.483914).abs() < 5e-7);
    }

    #[test]
    fn min_and_max_come_from_the_recent_window() {
        let mut e = Regression::new(Config {
            window: 2,
            coef: Coef(Some([0.0, 0.0, 0.5, 0.5, 0.0])),
            ..Config::default()
        });
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
            let row = [
                5.0 + (i % 7) as f64,
                20.0 + f,
                25.0 + f * 1.3 + (i % 5) as f64,
                40.0 + ((i * 13) % 17) as f64,
            ];
            targets.push(
                truth[0]
                    + truth[1] * row[0]
                    + truth[2] * row[1]
                    + truth[3] * row[2]
                    + truth[4] * row[3],
            );
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
        let rows: Vec<[f64; 4]> = (0..20)
            .map(|i| [i as f64, i as f64, (i * i) as f64, 3.0 + (i % 3) as f64])
            .collect();
        let targets: Vec<f64> = (0..20).map(|i| i as f64).collect();
        assert!(matches!(
            fit(&rows, &targets),
            Err(FitError::RankDeficient(_))
        ));
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

    fn built(given: &[(&str, &str)]) -> Result<Config, ParamError> {
        let given: Vec<(String, String)> = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_params(&Params::new("regression", PARAMS, &given)?)
    }

    #[test]
    fn the_default_form_is_rttlabs_and_keeps_the_cubic_coefficients() {
        assert_eq!(built(&[]).unwrap(), Config::default());
        // The defaults written out ("none") mean the same as leaving them out.
        assert_eq!(
            built(&[("coef", "none"), ("min_rtt", "none"), ("max_rtt", "none")]).unwrap(),
            Config::default()
        );
        assert!(matches!(
            built(&[("form", "paper"), ("min_rtt", "fast")]),
            Err(ParamError::Malformed { .. })
        ));
    }

    #[test]
    fn coef_sets_all_five_coefficients_in_any_common_spelling() {
        for text in [
            "1,2,3,4,5",
            "1, 2, 3, 4, 5",
            "[1. 2. 3. 4. 5.]",
            "1 2 3 4 5",
        ] {
            assert_eq!(
                built(&[("coef", text)]).unwrap().coefficients(),
                [1.0, 2.0, 3.0, 4.0, 5.0],
                "{text}"
            );
        }
    }

    #[test]
    fn coef_refuses_four_numbers_a_word_and_a_clash_with_b0() {
        assert!(matches!(
            built(&[("coef", "1,2,3,4")]),
            Err(ParamError::Malformed { .. })
        ));
        assert!(matches!(
            built(&[("coef", "1,2,x,4,5")]),
            Err(ParamError::Malformed { .. })
        ));
        assert!(matches!(
            built(&[("coef", "1,2,3,4,2e6")]),
            Err(ParamError::OutOfRange { .. })
        ));
        let clash = built(&[("coef", "1,2,3,4,5"), ("b0", "1")])
            .unwrap_err()
            .to_string();
        assert!(clash.contains("give coef or b0, not both"), "{clash}");
    }

    #[test]
    fn each_form_refuses_the_other_forms_parameters() {
        let e = built(&[("form", "paper"), ("k", "3")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("k belongs to form=rttlab"), "{e}");
        let e = built(&[("min_rtt", "10ms")]).unwrap_err().to_string();
        assert!(e.contains("min_rtt belongs to form=paper"), "{e}");
        let e = built(&[("form", "paper"), ("min_rtt", "20ms"), ("max_rtt", "10ms")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("min_rtt (20 ms) is above max_rtt (10 ms)"),
            "{e}"
        );
    }

    /// The report's pseudo-code by hand, coefficients [0, 0, 0.5, 0.5, 0], probe 80/120 ms so
    /// ŷ = 100 ms throughout: samples 90, 130, 100 → error 10, (10 − 30)/2 = −10, (−10 + 0)/2 = −5;
    /// RTO = ŷ + error = 110, 90, 95 ms (a signed error: below ŷ after a late sample).
    #[test]
    fn the_paper_form_follows_the_reports_pseudo_code() {
        let cfg = built(&[
            ("form", "paper"),
            ("coef", "0,0,0.5,0.5,0"),
            ("min_rtt", "80ms"),
            ("max_rtt", "120ms"),
        ])
        .unwrap();
        let mut e = Regression::new(cfg);
        let mut rtos = vec![];
        for ms in [90, 130, 100] {
            e.on_sample(ms * MS, &Context::default());
            assert_eq!(e.prediction(), Some(100 * MS));
            rtos.push(e.rto());
        }
        assert_eq!(rtos, [110 * MS, 90 * MS, 95 * MS]);
    }

    /// Without probe values the first sample stands for min and max: ŷ = −0.522 + 1.00276·50 ms
    /// (Cubic, hops = ttl = 0) for every later sample, whatever the window would have seen.
    #[test]
    fn the_paper_forms_prediction_stays_at_the_first_samples() {
        let mut e = Regression::new(built(&[("form", "paper")]).unwrap());
        for ms in [50, 500, 5, 80] {
            e.on_sample(ms * MS, &Context::default());
        }
        let y = CUBIC[0] + (CUBIC[2] + CUBIC[3]) * 50.0;
        assert_eq!(e.prediction(), Some((y * 1e6).round() as Nanos));
    }

    #[test]
    fn a_negative_paper_form_rto_is_held_at_one_nanosecond_or_the_floor() {
        let mut e = Regression::new(
            built(&[
                ("form", "paper"),
                ("coef", "0,0,0.5,0.5,0"),
                ("min_rtt", "1ms"),
                ("max_rtt", "1ms"),
            ])
            .unwrap(),
        );
        e.on_sample(100 * MS, &Context::default()); // error = 1 − 100: RTO = 1 − 99 < 0
        assert_eq!(e.rto(), 1);
        let mut e = Regression::new(
            built(&[
                ("form", "paper"),
                ("coef", "0,0,0.5,0.5,0"),
                ("min_rtt", "1ms"),
                ("max_rtt", "1ms"),
                ("min_rto", "200ms"),
            ])
            .unwrap(),
        );
        e.on_sample(100 * MS, &Context::default());
        assert_eq!(e.rto(), 200 * MS);
    }
}
