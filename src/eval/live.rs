//! Live evaluation: the replay of [`super::replay`] fed one sample at a time, for streams that
//! arrive as they happen (`rttlab live`: the kernel's RTT samples per connection, docs/live.md).
//!
//! Sans-IO: the caller hands in (stream, ACK time, RTT) in time order per stream; each stream
//! gets a fresh estimator and timer, exactly as a replay's stream does, so feeding a series
//! sample by sample gives the metrics `replay` gives (a test pins it). What differs is only that
//! nothing is known in advance: the samples before a stream's first expiry are kept (the timer
//! is built from them then, `SenderTimer::on_ack`) and dropped once it has diverged.

use super::metrics::{Metrics, Scorer, TimerOutcome};
use super::timer::{SenderTimer, TimerConfig};
use crate::rtt::{Context, Estimator, RttEstimator};
use crate::time::Nanos;
use std::collections::BTreeMap;

/// One stream (connection) of one estimator.
#[derive(Debug, Clone)]
struct Stream {
    est: Estimator,
    timer: SenderTimer<'static>,
    /// The stream's samples so far (ACK times, RTTs) until the timer diverged.
    times: Vec<Nanos>,
    rtts: Vec<Nanos>,
    /// Samples fed (the first only warms up).
    fed: u64,
    scorer: Scorer,
}

/// What one sample did, as [`super::Trace`] records it for a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The forecast before the sample and the estimate after it.
    pub before: Option<Nanos>,
    pub after: Option<Nanos>,
    /// Base RTO (common floor applied) the estimator held when the sample arrived.
    pub rto: Nanos,
    /// The timer replay for the segment this sample timed (the stream's first: default).
    pub timer: TimerOutcome,
    /// The sample was scored (not the first of its stream).
    pub scored: bool,
}

/// One estimator over many live streams: per-stream and pooled scores.
#[derive(Debug, Clone)]
pub struct LiveEval {
    template: Estimator,
    timer: TimerConfig,
    tick: Nanos,
    streams: BTreeMap<u64, Stream>,
    pooled: Scorer,
}

impl LiveEval {
    /// `timer.timestamps` is the default for streams whose first sample does not say.
    pub fn new(template: Estimator, timer: TimerConfig, tick: Nanos) -> Self {
        Self {
            template,
            timer,
            tick: tick.max(1),
            streams: BTreeMap::new(),
            pooled: Scorer::default(),
        }
    }

    /// Feed one sample of `stream` (ACK at `now`, RTT `rtt`); a stream not seen before starts
    /// afresh, its timer honouring `timestamps` (Karn, docs/metrics.md step 5) if given.
    pub fn sample(
        &mut self,
        stream: u64,
        now: Nanos,
        rtt: Nanos,
        timestamps: Option<bool>,
    ) -> Step {
        let cfg = TimerConfig {
            timestamps: timestamps.unwrap_or(self.timer.timestamps),
            ..self.timer
        };
        let template = &self.template;
        let s = self.streams.entry(stream).or_insert_with(|| Stream {
            est: template.clone(),
            timer: SenderTimer::owned(cfg, template.clone()),
            times: Vec::new(),
            rtts: Vec::new(),
            fed: 0,
            scorer: Scorer::default(),
        });
        // The same order of calls as the replay's per-sample loop (replay.rs, Pass::call).
        let first = s.fed == 0;
        s.fed += 1;
        let ctx = Context {
            now,
            ..Context::default()
        };
        let before = s.est.prediction();
        let rto = self.timer.base(&s.est);
        let timer = if first {
            s.timer.warm_up(now);
            TimerOutcome::default()
        } else {
            s.timer.on_ack(now, rtt, &s.est, (&s.times, &s.rtts))
        };
        s.est.on_sample(rtt, &ctx);
        s.est.on_timer_armed(&ctx);
        if !first {
            s.timer.absorb(now, rtt, &timer, &ctx);
        }
        let after = s.est.prediction();
        if !first {
            s.scorer.record(rtt, before, after, rto, timer);
            self.pooled.record(rtt, before, after, rto, timer);
        }
        if s.timer.diverged() {
            s.times = Vec::new();
            s.rtts = Vec::new();
        } else {
            s.times.push(now);
            s.rtts.push(rtt);
        }
        Step {
            before,
            after,
            rto,
            timer,
            scored: !first,
        }
    }

    /// W had a segment of `stream` been lost with its timer started at `armed`: the RTO in
    /// force in this stream's timer now (back-off included; [`SenderTimer::wait_if_lost`]).
    /// `None` for a stream without a sample yet.
    pub fn wait_if_lost(&self, stream: u64, armed: Nanos) -> Option<Nanos> {
        self.streams
            .get(&stream)
            .map(|s| s.timer.wait_if_lost(armed, &s.est))
    }

    /// Score W of a segment really lost (the `lost_*` metrics) in `stream` and pooled.
    pub fn record_loss(&mut self, stream: u64, wait: Nanos) {
        if let Some(s) = self.streams.get_mut(&stream) {
            s.scorer.record_loss(wait);
            self.pooled.record_loss(wait);
        }
    }

    /// Metrics so far: of one stream, or pooled over all (`None`).
    pub fn metrics(&self, stream: Option<u64>) -> Option<Metrics> {
        match stream {
            None => Some(self.pooled.clone().finish(self.tick)),
            Some(k) => self
                .streams
                .get(&k)
                .map(|s| s.scorer.clone().finish(self.tick)),
        }
    }

    /// The streams seen, in key order.
    pub fn streams(&self) -> impl Iterator<Item = u64> + '_ {
        self.streams.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{replay_streams, ReplayConfig, Streams};
    use crate::rtt::build;
    use crate::time::MS;

    fn series() -> (Vec<Nanos>, Vec<Nanos>) {
        // Two streams: a steady path with one 2.5 s stall (a bad timeout for every estimator
        // with a sub-second RTO), then a noisy one.
        let rtts: Vec<u64> = [
            100, 110, 95, 2500, 100, 105, 98, 40, 60, 45, 300, 50, 55, 52,
        ]
        .iter()
        .map(|ms| ms * MS)
        .collect();
        let mut now = 0;
        let times = rtts
            .iter()
            .map(|r| {
                now += r;
                now
            })
            .collect();
        (times, rtts)
    }

    #[test]
    fn feeding_samples_one_by_one_scores_what_the_replay_scores() {
        let (times, rtts) = series();
        let starts = [0, 7];
        for (name, params) in [
            ("rfc6298", vec![]),
            ("rfc6298", vec![("min_rto".to_string(), "0".to_string())]),
            ("linux", vec![]),
            ("fixed-share", vec![]),
            ("last", vec![]),
        ] {
            let est = build(name, &params).unwrap();
            let cfg = ReplayConfig {
                tick: 4 * MS,
                per_stream: true,
                ..ReplayConfig::default()
            };
            let streams = Streams {
                starts: &starts,
                ..Streams::default()
            };
            let (pooled, _, each) =
                crate::eval::replay_each(est.clone(), &times, &rtts, &streams, &cfg);
            let mut live = LiveEval::new(est.clone(), cfg.timer, cfg.tick);
            for i in 0..times.len() {
                live.sample(if i < 7 { 10 } else { 20 }, times[i], rtts[i], None);
            }
            assert_eq!(live.metrics(None).unwrap(), pooled, "{name} {params:?}");
            assert_eq!(live.metrics(Some(10)).unwrap(), each[0], "{name}");
            assert_eq!(live.metrics(Some(20)).unwrap(), each[1], "{name}");
            assert_eq!(replay_streams(est, &times, &rtts, &streams, &cfg).0, pooled);
        }
    }

    #[test]
    fn a_loss_probe_reads_the_rto_in_force_with_its_back_off() {
        // `constant` 300 ms: before any expiry W = 300 ms; after a stall that fired twice and
        // whose sample Karn withheld, the back-off stays: 4 × 300 ms.
        let est = build("constant", &[("rto".into(), "300ms".into())]).unwrap();
        let mut live = LiveEval::new(est, TimerConfig::default(), MS);
        assert_eq!(live.wait_if_lost(1, 0), None);
        live.sample(1, 100 * MS, 100 * MS, None);
        assert_eq!(live.wait_if_lost(1, 100 * MS), Some(300 * MS));
        let step = live.sample(1, 1500 * MS, 1450 * MS, None);
        assert_eq!(step.timer.expiries, 2);
        assert_eq!(live.wait_if_lost(1, 1500 * MS), Some(1200 * MS));
        live.record_loss(1, 1200 * MS);
        assert_eq!(live.metrics(Some(1)).unwrap().lost_segments, 1);
        // With timestamps the stall's sample is accepted and ends the back-off.
        let mut ts = LiveEval::new(
            build("constant", &[("rto".into(), "300ms".into())]).unwrap(),
            TimerConfig::default(),
            MS,
        );
        ts.sample(1, 100 * MS, 100 * MS, Some(true));
        ts.sample(1, 1500 * MS, 1450 * MS, None);
        assert_eq!(ts.wait_if_lost(1, 1500 * MS), Some(300 * MS));
    }
}
