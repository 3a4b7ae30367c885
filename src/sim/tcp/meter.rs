//! A flow's running measurements, kept in one place: the estimator's prediction errors, the RTT
//! moments after the warm-up and the time integral of cwnd, with the methods that update them and
//! the summary values they produce ([`MeterSummary`]). The simulated sender ([`super::sender`]) and
//! the testbed's wire sender (`src/testbed/stack.rs`, which drives the same `Sender`) both feed a
//! `FlowMeter`; the simulator's flows table (`src/sim/tables.rs`) and the testbed's per-flow
//! readings (`src/python.rs`) both read its [`MeterSummary`].
//!
//! Adding a per-flow running metric: a field and its update here (in [`FlowMeter::on_sample`] or
//! [`FlowMeter::on_cwnd`] when it needs no new input), its value in [`MeterSummary`], a column in
//! `src/sim/tables.rs` marked `sender!` (the testbed then reports it for rttlab's senders too,
//! with nothing to add there), its row in docs/schema.md.

use crate::time::Nanos;

/// Σ|ŷ − y| in ns over the samples that had a prediction ŷ, and how many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorSum {
    pub sum_ns: u64,
    pub n: u64,
}

impl ErrorSum {
    fn add(&mut self, prediction: Nanos, sample: Nanos) {
        self.sum_ns += prediction.abs_diff(sample);
        self.n += 1;
    }

    /// Mean |ŷ − y| in ns (None without a sample).
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_ns as f64 / self.n as f64)
    }
}

/// RTT samples since the measurement began (simulation.warmup): how many, their Σ and Σ² (ns, ns²,
/// exact integers so the variance does not cancel), the smallest and the largest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moments {
    pub n: u64,
    pub sum: u128,
    pub sum_sq: u128,
    pub min: u64,
    pub max: u64,
}

impl Moments {
    fn add(&mut self, rtt: Nanos) {
        self.n += 1;
        self.sum += rtt as u128;
        self.sum_sq += rtt as u128 * rtt as u128;
        self.min = if self.n == 1 { rtt } else { self.min.min(rtt) };
        self.max = self.max.max(rtt);
    }

    /// Mean, population standard deviation, minimum and maximum in seconds (None without samples).
    pub fn summary(&self) -> Option<[f64; 4]> {
        let n = self.n as u128;
        if n == 0 {
            return None;
        }
        let var = (n * self.sum_sq - self.sum * self.sum) as f64 / (n * n) as f64;
        Some([
            self.sum as f64 / n as f64 / 1e9,
            var.sqrt() / 1e9,
            self.min as f64 / 1e9,
            self.max as f64 / 1e9,
        ])
    }
}

/// A flow's running measurements (see the module header).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowMeter {
    /// |ŷ − y| with ŷ the prediction made *before* sample y (the estimator's forecast error).
    pub pred_error_before: ErrorSum,
    /// |ŷ' − y| with ŷ' the prediction just *after* absorbing y (how well it tracks).
    pub pred_error_after: ErrorSum,
    /// The RTT samples after the warm-up.
    pub rtt: Moments,
    /// ∫ cwnd dt in byte·ns from the first send to the last window change.
    pub cwnd_area: u128,
    /// When the window was last accounted and its value then.
    cwnd_since: Option<(Nanos, u64)>,
    /// When the flow started sending (the start of the time average).
    started_at: Option<Nanos>,
}

impl FlowMeter {
    /// The flow starts sending at `now` (the time average of cwnd runs from here).
    pub fn start(&mut self, now: Nanos) {
        self.started_at = Some(now);
    }

    /// One RTT sample the sender accepted, with the estimator's prediction before and after it.
    /// Both readings of "prediction error" are kept (Nunes et al. Table II does not say which).
    pub fn on_sample(&mut self, rtt: Nanos, before: Option<Nanos>, after: Option<Nanos>) {
        if let Some(b) = before {
            self.pred_error_before.add(b, rtt);
        }
        if let Some(a) = after {
            self.pred_error_after.add(a, rtt);
        }
        self.rtt.add(rtt);
    }

    /// The window is `cwnd` bytes from `now` on: integrate the old value up to `now`. Every window
    /// change must pass through here.
    pub fn on_cwnd(&mut self, now: Nanos, cwnd: u64) {
        if let Some((t, c)) = self.cwnd_since {
            self.cwnd_area += c as u128 * now.saturating_sub(t) as u128;
        }
        self.cwnd_since = Some((now, cwnd));
    }

    /// Measurement begins (warm-up over): forget the RTT samples so far. The prediction errors
    /// and the cwnd average run over the whole flow.
    pub fn restart_rtt(&mut self) {
        self.rtt = Moments::default();
    }

    /// Time-averaged cwnd in segments of `mss` bytes from the flow's start to `end`.
    pub fn mean_cwnd(&self, end: Nanos, mss: u32) -> Option<f64> {
        let (t, cwnd) = self.cwnd_since?;
        let area = self.cwnd_area + cwnd as u128 * end.saturating_sub(t) as u128;
        let span = end.saturating_sub(self.started_at?);
        (span > 0).then(|| area as f64 / span as f64 / mss as f64)
    }

    /// The summary values at `end` (the flow's completion or the run's end).
    pub fn summary(&self, end: Nanos, mss: u32) -> MeterSummary {
        MeterSummary {
            pred_error_before: self.pred_error_before.mean(),
            pred_error_after: self.pred_error_after.mean(),
            mean_cwnd: self.mean_cwnd(end, mss),
            rtt_stats: self.rtt.summary(),
        }
    }
}

/// What a [`FlowMeter`] reports per flow.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeterSummary {
    /// Mean |ŷ − y| over RTT samples, ŷ the estimator's prediction before the sample (its forecast
    /// error), in ns; None without such samples.
    pub pred_error_before: Option<f64>,
    /// The same with ŷ the prediction after absorbing the sample.
    pub pred_error_after: Option<f64>,
    /// cwnd averaged over time from the flow's start to its completion or the end, in segments.
    pub mean_cwnd: Option<f64>,
    /// Mean, standard deviation, minimum and maximum of the RTT samples (s) after the warm-up.
    pub rtt_stats: Option<[f64; 4]>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn prediction_errors_average_only_the_samples_that_had_a_prediction() {
        let mut m = FlowMeter::default();
        m.on_sample(100 * MS, None, Some(100 * MS));
        m.on_sample(120 * MS, Some(100 * MS), Some(110 * MS));
        m.on_sample(90 * MS, Some(110 * MS), None);
        let s = m.summary(0, 1000);
        assert_eq!(s.pred_error_before, Some((20 * MS + 20 * MS) as f64 / 2.0));
        assert_eq!(s.pred_error_after, Some((10 * MS) as f64 / 2.0));
    }

    #[test]
    fn rtt_moments_give_mean_population_std_min_and_max_and_restart_at_the_warmup() {
        let mut m = FlowMeter::default();
        m.on_sample(500 * MS, None, None);
        m.restart_rtt();
        for r in [10, 30, 20] {
            m.on_sample(r * MS, None, None);
        }
        let [mean, std, min, max] = m.summary(0, 1).rtt_stats.unwrap();
        assert!(
            (mean - 0.02).abs() < 1e-15 && (min - 0.01).abs() < 1e-15 && (max - 0.03).abs() < 1e-15
        );
        assert!(
            (std - (200.0f64 / 3.0).sqrt() * 1e-3).abs() < 1e-12,
            "{std}"
        );
        assert_eq!(FlowMeter::default().summary(0, 1).rtt_stats, None);
    }

    #[test]
    fn mean_cwnd_is_the_time_average_from_the_start_to_the_end_in_segments() {
        let mut m = FlowMeter::default();
        assert_eq!(m.mean_cwnd(10 * MS, 1000), None, "never ran");
        m.start(0);
        m.on_cwnd(0, 2000);
        m.on_cwnd(10 * MS, 4000);
        // 2 segments for 10 ms, then 4 for 30 ms: 140/40 = 3.5.
        assert_eq!(m.mean_cwnd(40 * MS, 1000), Some(3.5));
        assert_eq!(m.mean_cwnd(0, 1000), None, "an empty span has no average");
    }
}
