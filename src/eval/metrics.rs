//! Scores of one estimator over one sample stream (definitions: docs/metrics.md).
//!
//! Every metric is taken over the *scored* samples: all but the first, so that every estimator
//! has seen at least one sample before it is judged (Fixed-Share predicts before any sample,
//! the others do not; the first RTO is everybody's initial value).

use crate::time::Nanos;

/// Accumulates scores sample by sample; [`Scorer::finish`] turns them into [`Metrics`].
#[derive(Debug, Clone, Default)]
pub struct Scorer {
    scored: u64,
    predicted: u64,
    abs_error_sum: f64,
    ape_sum: f64,
    under: u64,
    premature: u64,
    wait_sum: f64,
    rto_sum: f64,
    /// RTO − sample for every scored sample, in ns, for the p99.
    waits: Vec<i64>,
}

impl Scorer {
    pub fn with_capacity(n: usize) -> Self {
        Self { waits: Vec::with_capacity(n), ..Self::default() }
    }

    /// One scored sample: `prediction` and `rto` are what the estimator held *before* it saw `rtt`.
    #[inline]
    pub fn record(&mut self, rtt: Nanos, prediction: Option<Nanos>, rto: Nanos) {
        self.scored += 1;
        let y = rtt as f64;
        if let Some(p) = prediction {
            let err = p as f64 - y;
            self.predicted += 1;
            self.abs_error_sum += err.abs();
            self.ape_sum += err.abs() / y;
            self.under += (err < 0.0) as u64;
        }
        // Allman & Paxson's "bad timeout": the timer in force would have fired before the ACK.
        self.premature += (rto < rtt) as u64;
        let wait = rto as i64 - rtt as i64;
        self.wait_sum += wait as f64;
        self.rto_sum += rto as f64;
        self.waits.push(wait);
    }

    pub fn finish(mut self, tick: Nanos) -> Metrics {
        let n = self.scored as f64;
        let p = self.predicted as f64;
        let per_pred = |x: f64| (self.predicted > 0).then(|| x / p);
        let per_sample = |x: f64| (self.scored > 0).then(|| x / n);
        let wait_p99 = (!self.waits.is_empty()).then(|| {
            // Nearest-rank p99: the ⌈0.99·n⌉-th smallest value.
            let rank = ((0.99 * n).ceil() as usize).clamp(1, self.waits.len()) - 1;
            *self.waits.select_nth_unstable(rank).1 as f64 / 1e9
        });
        let mae_ns = per_pred(self.abs_error_sum);
        Metrics {
            samples: self.scored,
            predicted: self.predicted,
            mae_s: mae_ns.map(|e| e / 1e9),
            mae_ticks: mae_ns.map(|e| e / tick as f64),
            mape: per_pred(self.ape_sum * 100.0),
            under_prediction_rate: per_pred(self.under as f64),
            premature_timeout_rate: per_sample(self.premature as f64),
            wait_mean_s: per_sample(self.wait_sum / 1e9),
            wait_p99_s: wait_p99,
            rto_mean_s: per_sample(self.rto_sum / 1e9),
        }
    }
}

/// Scores of one estimator; `None` where the metric is undefined (no prediction, no sample).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    /// Scored samples (all but the first).
    pub samples: u64,
    /// Scored samples for which the estimator had a prediction.
    pub predicted: u64,
    /// Mean |prediction − sample| in seconds.
    pub mae_s: Option<f64>,
    /// The same in ticks of the evaluation's tick (seed 000, Table II).
    pub mae_ticks: Option<f64>,
    /// Mean absolute percentage error, in percent (seed 004).
    pub mape: Option<f64>,
    /// Fraction of predictions below the sample.
    pub under_prediction_rate: Option<f64>,
    /// Fraction of samples larger than the RTO in force when they arrived.
    pub premature_timeout_rate: Option<f64>,
    /// Mean of RTO − sample, seconds: how long a sender waits beyond the RTT on a real loss.
    pub wait_mean_s: Option<f64>,
    /// 99th percentile (nearest rank) of RTO − sample, seconds.
    pub wait_p99_s: Option<f64>,
    /// Mean RTO in force, seconds.
    pub rto_mean_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn metrics_follow_their_definitions_on_a_hand_worked_stream() {
        let mut s = Scorer::default();
        // (sample, prediction, rto) in ms
        s.record(100 * MS, Some(110 * MS), 300 * MS); // err +10, wait 200
        s.record(200 * MS, Some(150 * MS), 150 * MS); // err −50 (under), premature, wait −50
        s.record(50 * MS, None, 400 * MS); // no prediction, wait 350
        let m = s.finish(10 * MS);
        assert_eq!(m.samples, 3);
        assert_eq!(m.predicted, 2);
        assert!((m.mae_s.unwrap() - 0.030).abs() < 1e-12);
        assert!((m.mae_ticks.unwrap() - 3.0).abs() < 1e-9);
        assert!((m.mape.unwrap() - (10.0 + 25.0) / 2.0).abs() < 1e-9);
        assert_eq!(m.under_prediction_rate, Some(0.5));
        assert_eq!(m.premature_timeout_rate, Some(1.0 / 3.0));
        assert!((m.wait_mean_s.unwrap() - 0.5 / 3.0).abs() < 1e-12);
        assert_eq!(m.wait_p99_s, Some(0.35));
        assert!((m.rto_mean_s.unwrap() - 0.85 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn nothing_scored_gives_undefined_metrics_not_zeros() {
        let m = Scorer::default().finish(MS);
        assert_eq!(m.samples, 0);
        assert_eq!(m.mae_s, None);
        assert_eq!(m.wait_p99_s, None);
    }

    #[test]
    fn p99_is_the_nearest_rank() {
        let mut s = Scorer::default();
        for i in 1..=200u64 {
            s.record(MS, None, MS + i * MS);
        }
        // ⌈0.99·200⌉ = 198th smallest wait = 198 ms.
        assert_eq!(s.finish(MS).wait_p99_s, Some(0.198));
    }
}
