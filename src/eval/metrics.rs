//! Scores of one estimator over one sample stream (definitions: docs/metrics.md, the only place
//! they are defined; this file follows it).
//!
//! Every metric is taken over the *scored* samples: all but the first of each stream, so that
//! every estimator has seen at least one sample before it is judged (Fixed-Share predicts before
//! any sample, the others do not; the first RTO is everybody's initial value).
//!
//! Two families:
//! - **prediction error**, two named definitions: the one-step *forecast* made before the sample
//!   (`mae_s`, Nunes et al. 2011's "prediction error") and the estimate just *after* absorbing it
//!   (`mae_after_s`, what a log written inside the kernel's estimator sees);
//! - **the retransmission timer** as its sender would run it (Allman & Paxson 1999 §2; see
//!   [`super::timer`]): bad (spurious) timeouts per timer episode, and the wait W on a loss.

use crate::time::Nanos;

/// Accumulates scores sample by sample; [`Scorer::finish`] turns them into [`Metrics`].
#[derive(Debug, Clone, Default)]
pub struct Scorer {
    scored: u64,
    predicted: u64,
    abs_error_sum: f64,
    after_predicted: u64,
    after_abs_error_sum: f64,
    ape_sum: f64,
    under: u64,
    rto_sum: f64,
    bad_timeouts: u64,
    expiries: u64,
    withheld: u64,
    wait_sum: f64,
    /// W of every scored sample, in ns, for the p99.
    waits: Vec<Nanos>,
    lost: u64,
    lost_wait_sum: f64,
    lost_wait_max: Nanos,
}

/// What the timer replay saw for one scored sample (see [`super::timer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimerOutcome {
    /// W: how long the timer armed for this segment would run before firing (RTO in force,
    /// back-off and timer granularity included) — the wait had the segment been lost.
    pub wait: Nanos,
    /// Expiries before the ACK arrived (0: none; ≥ 1: one bad-timeout episode, backed off
    /// `expiries − 1` times).
    pub expiries: u32,
    /// Karn's rule kept the sample from the timer's estimator (its segment was retransmitted).
    pub withheld: bool,
}

impl Scorer {
    pub fn with_capacity(n: usize) -> Self {
        Self {
            waits: Vec::with_capacity(n),
            ..Self::default()
        }
    }

    /// One scored sample: `before` and `rto` are what the estimator held *before* it saw `rtt`,
    /// `after` its prediction just after absorbing it.
    #[inline]
    pub fn record(
        &mut self,
        rtt: Nanos,
        before: Option<Nanos>,
        after: Option<Nanos>,
        rto: Nanos,
        timer: TimerOutcome,
    ) {
        self.scored += 1;
        let y = rtt as f64;
        if let Some(p) = before {
            let err = p as f64 - y;
            self.predicted += 1;
            self.abs_error_sum += err.abs();
            self.ape_sum += err.abs() / y;
            self.under += (err < 0.0) as u64;
        }
        if let Some(p) = after {
            self.after_predicted += 1;
            self.after_abs_error_sum += (p as f64 - y).abs();
        }
        self.rto_sum += rto as f64;
        self.bad_timeouts += (timer.expiries > 0) as u64;
        self.expiries += timer.expiries as u64;
        self.withheld += timer.withheld as u64;
        self.wait_sum += timer.wait as f64;
        self.waits.push(timer.wait);
    }

    /// W of one segment the capture shows was really lost (see [`super::timer::SenderTimer::wait_if_lost`]).
    pub fn record_loss(&mut self, wait: Nanos) {
        self.lost += 1;
        self.lost_wait_sum += wait as f64;
        self.lost_wait_max = self.lost_wait_max.max(wait);
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
            mae_after_s: (self.after_predicted > 0)
                .then(|| self.after_abs_error_sum / self.after_predicted as f64 / 1e9),
            mae_ticks: mae_ns.map(|e| e / tick as f64),
            mape: per_pred(self.ape_sum * 100.0),
            under_prediction_rate: per_pred(self.under as f64),
            bad_timeouts: self.bad_timeouts,
            expiries: self.expiries,
            karn_withheld: self.withheld,
            bad_timeout_rate: per_sample(self.bad_timeouts as f64),
            wait_mean_s: per_sample(self.wait_sum / 1e9),
            wait_p99_s: wait_p99,
            rto_mean_s: per_sample(self.rto_sum / 1e9),
            lost_segments: self.lost,
            lost_wait_mean_s: (self.lost > 0).then(|| self.lost_wait_sum / self.lost as f64 / 1e9),
            lost_wait_max_s: (self.lost > 0).then(|| self.lost_wait_max as f64 / 1e9),
        }
    }
}

/// Scores of one estimator; `None` where the metric is undefined (no prediction, no sample).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    /// Scored samples (all but the first of each stream).
    pub samples: u64,
    /// Scored samples for which the estimator had a forecast.
    pub predicted: u64,
    /// Forecast error: mean |prediction before the sample − sample|, seconds.
    pub mae_s: Option<f64>,
    /// Tracking error: mean |estimate just after absorbing the sample − sample|, seconds.
    pub mae_after_s: Option<f64>,
    /// `mae_s` in ticks of the evaluation's tick (Nunes et al. 2011, Table II).
    pub mae_ticks: Option<f64>,
    /// Mean absolute percentage error of the forecast, in percent (Baddam et al. 2018).
    pub mape: Option<f64>,
    /// Fraction of forecasts below the sample.
    pub under_prediction_rate: Option<f64>,
    /// Timer episodes that ended in at least one expiry before the ACK (A&P's bad timeouts).
    pub bad_timeouts: u64,
    /// Every expiry, back-off repeats included.
    pub expiries: u64,
    /// Samples Karn's rule kept from the timer's estimator.
    pub karn_withheld: u64,
    /// `bad_timeouts` / scored samples.
    pub bad_timeout_rate: Option<f64>,
    /// Mean W: the time the timer would make the sender wait on a loss (never negative).
    pub wait_mean_s: Option<f64>,
    /// 99th percentile (nearest rank) of W, seconds.
    pub wait_p99_s: Option<f64>,
    /// Mean base RTO the estimator held before each sample (open loop, no back-off), seconds.
    pub rto_mean_s: Option<f64>,
    /// Segments the input shows were really lost (a capture's needed retransmissions; none for
    /// a plain series) that were scored.
    pub lost_segments: u64,
    /// Mean and largest W over those segments (A&P's W on real losses), seconds.
    pub lost_wait_mean_s: Option<f64>,
    pub lost_wait_max_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn timer(wait_ms: u64, expiries: u32) -> TimerOutcome {
        TimerOutcome {
            wait: wait_ms * MS,
            expiries,
            withheld: expiries > 0,
        }
    }

    #[test]
    fn metrics_follow_their_definitions_on_a_hand_worked_stream() {
        let mut s = Scorer::default();
        // (sample, forecast, after, rto, timer) in ms
        s.record(
            100 * MS,
            Some(110 * MS),
            Some(105 * MS),
            300 * MS,
            timer(300, 0),
        ); // err +10, after 5
        s.record(
            200 * MS,
            Some(150 * MS),
            Some(160 * MS),
            150 * MS,
            timer(150, 1),
        ); // err −50 (under), one bad timeout
        s.record(50 * MS, None, None, 400 * MS, timer(800, 2)); // no forecast; an episode with one back-off
        let m = s.finish(10 * MS);
        assert_eq!(m.samples, 3);
        assert_eq!(m.predicted, 2);
        assert!((m.mae_s.unwrap() - 0.030).abs() < 1e-12);
        assert!((m.mae_after_s.unwrap() - 0.0225).abs() < 1e-12);
        assert!((m.mae_ticks.unwrap() - 3.0).abs() < 1e-9);
        assert!((m.mape.unwrap() - (10.0 + 25.0) / 2.0).abs() < 1e-9);
        assert_eq!(m.under_prediction_rate, Some(0.5));
        assert_eq!((m.bad_timeouts, m.expiries, m.karn_withheld), (2, 3, 2));
        assert_eq!(m.bad_timeout_rate, Some(2.0 / 3.0));
        assert!((m.wait_mean_s.unwrap() - 1.25 / 3.0).abs() < 1e-12);
        assert_eq!(m.wait_p99_s, Some(0.8));
        assert!((m.rto_mean_s.unwrap() - 0.85 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn nothing_scored_gives_undefined_metrics_not_zeros() {
        let m = Scorer::default().finish(MS);
        assert_eq!(m.samples, 0);
        assert_eq!(m.mae_s, None);
        assert_eq!(m.bad_timeout_rate, None);
        assert_eq!(m.wait_p99_s, None);
    }

    #[test]
    fn p99_is_the_nearest_rank() {
        let mut s = Scorer::default();
        for i in 1..=200u64 {
            s.record(MS, None, None, MS, timer(i, 0));
        }
        // ⌈0.99·200⌉ = 198th smallest wait = 198 ms.
        assert_eq!(s.finish(MS).wait_p99_s, Some(0.198));
    }
}
