//! Replay: one pass per estimator over (time, rtt) samples, monomorphised per estimator type.
//!
//! Each pass runs the estimator open loop (every sample absorbed: prediction errors) and, beside
//! it, the retransmission timer its sender would have run ([`super::timer`]: bad timeouts, W).

use super::metrics::{Metrics, Scorer, TimerOutcome};
use super::timer::{SenderTimer, TimerConfig};
use crate::rtt::{Context, Estimator, RttEstimator, WithEstimator};
use crate::time::Nanos;

/// How to replay and score (defaults: 1 ms tick, no heartbeat, no common floor, Karn applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayConfig {
    /// The unit of `mae_ticks`.
    pub tick: Nanos,
    pub timer: TimerConfig,
    /// Keep the per-sample [`Trace`].
    pub trace: bool,
    /// Also score each stream alone (the same numbers as replaying it by itself: each stream
    /// starts afresh), in one pass.
    pub per_stream: bool,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        Self {
            tick: crate::time::MS,
            timer: TimerConfig::default(),
            trace: false,
            per_stream: false,
        }
    }
}

/// What one estimator's replay gives: pooled metrics, the per-sample trace if asked for, and
/// each stream's own metrics if asked for (`ReplayConfig::per_stream`; in stream order).
pub type Replayed = (Metrics, Option<Trace>, Vec<Metrics>);

/// Per-sample record of what the estimator held when each sample arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Forecast in ns, or `None` before the estimator had one.
    pub prediction: Vec<Option<Nanos>>,
    /// The estimate just after absorbing the sample.
    pub prediction_after: Vec<Option<Nanos>>,
    /// Base RTO (ns) the open-loop estimator held when the sample arrived (common floor applied).
    pub rto: Vec<Nanos>,
    /// The timer replay: W (ns) and expiries for each sample (0, 0 for each stream's first).
    pub wait: Vec<Nanos>,
    pub expiries: Vec<u32>,
}

struct Pass<'a> {
    /// A fresh estimator of the kind replayed (the timer is built from it when it diverges).
    template: &'a Estimator,
    times: &'a [Nanos],
    rtts: &'a [Nanos],
    /// Where independent streams (connections) begin; each gets a fresh estimator.
    starts: &'a [usize],
    /// Per stream (in order): its samples come from TCP timestamps (overrides the config).
    timestamps: &'a [bool],
    /// Really lost segments: (stream, timer start), sorted.
    losses: &'a [(usize, Nanos)],
    cfg: ReplayConfig,
}

/// The pooled scorer and, when asked for, the current stream's own.
struct Scorers {
    pooled: Scorer,
    stream: Option<Scorer>,
    done: Vec<Metrics>,
    tick: Nanos,
}

impl Scorers {
    fn record(
        &mut self,
        rtt: Nanos,
        before: Option<Nanos>,
        after: Option<Nanos>,
        rto: Nanos,
        timer: TimerOutcome,
    ) {
        self.pooled.record(rtt, before, after, rto, timer);
        if let Some(s) = self.stream.as_mut() {
            s.record(rtt, before, after, rto, timer);
        }
    }

    fn record_loss(&mut self, wait: Nanos) {
        self.pooled.record_loss(wait);
        if let Some(s) = self.stream.as_mut() {
            s.record_loss(wait);
        }
    }

    fn end_stream(&mut self) {
        if let Some(s) = self.stream.as_mut() {
            self.done.push(std::mem::take(s).finish(self.tick));
        }
    }
}

/// Score the losses of `stream` whose timer started before `until` (all of them with `None`),
/// with the estimator and timer as they stand; `next` walks `losses`.
fn score_losses<E: RttEstimator>(
    losses: &[(usize, Nanos)],
    next: &mut usize,
    stream: usize,
    until: Option<Nanos>,
    timer: &SenderTimer,
    est: &E,
    scorer: &mut Scorers,
) {
    while let Some(&(k, armed)) = losses.get(*next) {
        if k > stream || (k == stream && until.is_some_and(|u| armed >= u)) {
            break;
        }
        if k == stream {
            scorer.record_loss(timer.wait_if_lost(armed, est));
        }
        *next += 1;
    }
}

impl WithEstimator for Pass<'_> {
    type Output = Replayed;

    fn call<E: RttEstimator + Clone>(self, est: &mut E) -> Self::Output {
        let n = self.rtts.len();
        let fresh = est.clone();
        let mut starts = self.starts.iter().copied().peekable();
        let per_stream = self.cfg.per_stream.then(Scorer::default);
        let mut scorer = Scorers {
            pooled: Scorer::with_capacity(n),
            stream: per_stream,
            done: Vec::new(),
            tick: self.cfg.tick,
        };
        let timer_cfg = |k: usize| TimerConfig {
            timestamps: self
                .timestamps
                .get(k)
                .copied()
                .unwrap_or(self.cfg.timer.timestamps),
            ..self.cfg.timer
        };
        let mut stream = 0;
        let mut timer = SenderTimer::new(timer_cfg(0), self.template);
        let mut stream_start = 0;
        let mut trace = self.cfg.trace.then(|| Trace {
            prediction: Vec::with_capacity(n),
            prediction_after: Vec::with_capacity(n),
            rto: Vec::with_capacity(n),
            wait: Vec::with_capacity(n),
            expiries: Vec::with_capacity(n),
        });
        let mut next_loss = 0;
        for (i, (&now, &rtt)) in self.times.iter().zip(self.rtts).enumerate() {
            let first_of_stream = i == 0 || starts.peek() == Some(&i);
            if first_of_stream && i > 0 {
                score_losses(
                    self.losses,
                    &mut next_loss,
                    stream,
                    None,
                    &timer,
                    &*est,
                    &mut scorer,
                );
                scorer.end_stream();
                *est = fresh.clone();
            }
            if first_of_stream && i > 0 {
                stream += 1;
                timer = SenderTimer::new(timer_cfg(stream), self.template);
                stream_start = i;
            }
            while starts.peek().is_some_and(|&s| s <= i) {
                starts.next();
            }
            // A loss whose timer started before this ACK saw the state before it; one started
            // by this very ACK sees the sample absorbed and the timer restarted (RFC 6298 §5.3).
            score_losses(
                self.losses,
                &mut next_loss,
                stream,
                Some(now),
                &timer,
                &*est,
                &mut scorer,
            );
            let ctx = Context {
                now,
                ..Context::default()
            };
            let before = est.prediction();
            let rto = self.cfg.timer.base(&*est);
            let outcome = if first_of_stream {
                timer.warm_up(now);
                TimerOutcome::default()
            } else {
                timer.on_ack(
                    now,
                    rtt,
                    &*est,
                    (&self.times[stream_start..i], &self.rtts[stream_start..i]),
                )
            };
            est.on_sample(rtt, &ctx);
            est.on_timer_armed(&ctx);
            if !first_of_stream {
                timer.absorb(now, rtt, &outcome, &ctx);
            }
            let after = est.prediction();
            if !first_of_stream {
                scorer.record(rtt, before, after, rto, outcome);
            }
            if let Some(t) = trace.as_mut() {
                t.prediction.push(before);
                t.prediction_after.push(after);
                t.rto.push(rto);
                t.wait.push(outcome.wait);
                t.expiries.push(outcome.expiries);
            }
        }
        if n > 0 {
            score_losses(
                self.losses,
                &mut next_loss,
                stream,
                None,
                &timer,
                &*est,
                &mut scorer,
            );
            scorer.end_stream();
        }
        (scorer.pooled.finish(self.cfg.tick), trace, scorer.done)
    }
}

/// Replay one estimator (consumed: replay mutates its state). `times` and `rtts` have equal
/// length.
pub fn replay(
    estimator: Estimator,
    times: &[Nanos],
    rtts: &[Nanos],
    cfg: &ReplayConfig,
) -> (Metrics, Option<Trace>) {
    replay_streams(estimator, times, rtts, &Streams::default(), cfg)
}

/// How the samples split into independent streams (connections).
#[derive(Debug, Clone, Copy, Default)]
pub struct Streams<'a> {
    /// The index where each stream begins (sorted; 0 may be omitted).
    pub starts: &'a [usize],
    /// One flag per stream, in order: its samples are TCP-timestamp samples, so Karn's rule
    /// does not withhold them ([`TimerConfig::timestamps`] for streams not listed).
    pub timestamps: &'a [bool],
    /// Segments the input shows were really lost, as (stream index, the time their sender's
    /// timer started), sorted: each is scored with the W the stream's timer would have imposed
    /// ([`SenderTimer::wait_if_lost`]). Streams are counted in order from 0.
    pub losses: &'a [(usize, Nanos)],
}

/// As [`replay`], over several independent streams laid end to end (one per connection):
/// `starts` holds the index where each stream begins (sorted; 0 may be omitted). Every stream
/// starts from a fresh estimator and a fresh timer, its first sample is not scored, and the
/// metrics pool all streams' scored samples.
pub fn replay_streams(
    estimator: Estimator,
    times: &[Nanos],
    rtts: &[Nanos],
    streams: &Streams,
    cfg: &ReplayConfig,
) -> (Metrics, Option<Trace>) {
    let (m, trace, _) = replay_each(estimator, times, rtts, streams, cfg);
    (m, trace)
}

/// As [`replay_streams`], with each stream's own metrics when `cfg.per_stream` is set.
pub fn replay_each(
    mut estimator: Estimator,
    times: &[Nanos],
    rtts: &[Nanos],
    streams: &Streams,
    cfg: &ReplayConfig,
) -> Replayed {
    assert_eq!(
        times.len(),
        rtts.len(),
        "times and rtts must have equal length"
    );
    let starts = streams.starts;
    assert!(
        starts.windows(2).all(|w| w[0] < w[1]),
        "stream starts must be strictly increasing"
    );
    assert!(
        streams.losses.windows(2).all(|w| w[0] <= w[1]),
        "losses must be sorted by stream and time"
    );
    let template = estimator.clone();
    estimator.with(Pass {
        template: &template,
        times,
        rtts,
        starts,
        timestamps: streams.timestamps,
        losses: streams.losses,
        cfg: *cfg,
    })
}

/// Replay several estimators over the same samples, one thread each (results in input order;
/// each pass is sequential and deterministic, so threading does not change any number).
pub fn replay_all(
    estimators: Vec<Estimator>,
    times: &[Nanos],
    rtts: &[Nanos],
    streams: &Streams,
    cfg: &ReplayConfig,
    threads: usize,
) -> Vec<Replayed> {
    let threads = threads.max(1);
    if threads == 1 || estimators.len() == 1 {
        return estimators
            .into_iter()
            .map(|e| replay_each(e, times, rtts, streams, cfg))
            .collect();
    }
    let mut slots: Vec<Option<Replayed>> = vec![None; estimators.len()];
    let jobs: Vec<(usize, Estimator)> = estimators.into_iter().enumerate().collect();
    let next = std::sync::Mutex::new(jobs.into_iter());
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let job = next.lock().map(|mut it| it.next()).unwrap_or(None);
                let Some((i, e)) = job else { break };
                let out = replay_each(e, times, rtts, streams, cfg);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(out);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.expect("every job ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::build;
    use crate::time::{MS, SEC};

    fn stream(ms: &[u64]) -> (Vec<Nanos>, Vec<Nanos>) {
        let rtts: Vec<Nanos> = ms.iter().map(|m| m * MS).collect();
        let times = rtts
            .iter()
            .scan(0, |t, r| {
                *t += r;
                Some(*t)
            })
            .collect();
        (times, rtts)
    }

    fn traced() -> ReplayConfig {
        ReplayConfig {
            trace: true,
            ..ReplayConfig::default()
        }
    }

    #[test]
    fn the_rto_in_force_is_the_one_before_the_sample() {
        let (t, r) = stream(&[100, 100, 2000]);
        let (m, trace) = replay(build("rfc6298", &[]).unwrap(), &t, &r, &traced());
        let trace = trace.unwrap();
        assert_eq!(trace.rto, vec![1000 * MS, 1000 * MS, 1000 * MS]);
        assert_eq!(trace.prediction, vec![None, Some(100 * MS), Some(100 * MS)]);
        // Scored: samples 2 and 3. Back to back, the 2 s sample's segment was sent at the
        // previous ACK: the 1 s timer fires once before its ACK — one bad timeout.
        assert_eq!(m.samples, 2);
        assert_eq!((m.bad_timeouts, m.expiries), (1, 1));
        assert_eq!(m.bad_timeout_rate, Some(0.5));
        assert_eq!(trace.wait, vec![0, SEC, SEC]);
        assert!((m.mae_s.unwrap() - 0.95).abs() < 1e-12);
    }

    #[test]
    fn the_after_estimate_is_the_prediction_once_the_sample_is_absorbed() {
        let (t, r) = stream(&[100, 200, 100]);
        let (m, trace) = replay(build("last", &[]).unwrap(), &t, &r, &traced());
        // `last` predicts the sample it just saw: after-error 0, forecast error |100−200|, |200−100|.
        assert_eq!(
            trace.unwrap().prediction_after,
            vec![Some(100 * MS), Some(200 * MS), Some(100 * MS)]
        );
        assert_eq!(m.mae_after_s, Some(0.0));
        assert!((m.mae_s.unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn threaded_replay_gives_the_same_numbers_in_the_same_order() {
        let ms: Vec<u64> = (0..5000).map(|i| 50 + (i * 7919 % 97)).collect();
        let (t, r) = stream(&ms);
        let names = ["rfc6298", "linux", "fixed-share", "quic", "eifel"];
        let make = || {
            names
                .iter()
                .map(|n| build(n, &[]).unwrap())
                .collect::<Vec<_>>()
        };
        let cfg = ReplayConfig::default();
        let one = Streams::default();
        assert_eq!(
            replay_all(make(), &t, &r, &one, &cfg, 1),
            replay_all(make(), &t, &r, &one, &cfg, 2)
        );
    }

    #[test]
    fn streams_restart_the_estimator_and_pool_their_scores() {
        let (t1, r1) = stream(&[100, 120, 90, 110]);
        let (t2, r2) = stream(&[400, 380, 420]);
        let alone =
            |t: &[Nanos], r: &[Nanos]| replay(build("rfc6298", &[]).unwrap(), t, r, &traced());
        let (m1, tr1) = alone(&t1, &r1);
        let (m2, tr2) = alone(&t2, &r2);
        let t: Vec<Nanos> = t1.iter().chain(&t2).copied().collect();
        let r: Vec<Nanos> = r1.iter().chain(&r2).copied().collect();
        let (m, tr) = replay_streams(
            build("rfc6298", &[]).unwrap(),
            &t,
            &r,
            &Streams {
                starts: &[0, 4],
                ..Streams::default()
            },
            &traced(),
        );
        let tr = tr.unwrap();
        // The second stream starts afresh: same trace as replayed alone.
        assert_eq!(tr.prediction[4..], tr2.unwrap().prediction[..]);
        assert_eq!(tr.prediction[..4], tr1.unwrap().prediction[..]);
        // Scores pool the 3 + 2 scored samples.
        assert_eq!(m.samples, m1.samples + m2.samples);
        let pooled_mae = (m1.mae_s.unwrap() * 3.0 + m2.mae_s.unwrap() * 2.0) / 5.0;
        assert!((m.mae_s.unwrap() - pooled_mae).abs() < 1e-12);
    }

    #[test]
    fn a_common_floor_raises_the_rto_of_an_estimator_without_one() {
        let (t, r) = stream(&[100, 100, 100, 100]);
        let cfg = ReplayConfig {
            timer: TimerConfig {
                min_rto: 700 * MS,
                ..TimerConfig::default()
            },
            trace: true,
            ..ReplayConfig::default()
        };
        let (m, tr) = replay(build("quic", &[]).unwrap(), &t, &r, &cfg);
        let tr = tr.unwrap();
        assert!(tr.rto[1..].iter().all(|&x| x == 700 * MS), "{:?}", tr.rto);
        assert!((m.wait_mean_s.unwrap() - 0.7).abs() < 1e-12);
    }

    #[test]
    fn each_stream_can_say_whether_its_samples_are_timestamp_samples() {
        // Two identical streams with a stall: Karn withholds the stalled sample in the first
        // (no timestamps), not in the second.
        let (t1, r1) = stream(&[100, 100, 100, 3000, 100]);
        let t: Vec<Nanos> = t1.iter().chain(t1.iter()).copied().collect();
        let r: Vec<Nanos> = r1.iter().chain(r1.iter()).copied().collect();
        let streams = Streams {
            starts: &[0, 5],
            timestamps: &[false, true],
            ..Streams::default()
        };
        let (m, _) = replay_streams(
            build("rfc6298", &[]).unwrap(),
            &t,
            &r,
            &streams,
            &ReplayConfig::default(),
        );
        assert_eq!((m.bad_timeouts, m.karn_withheld), (2, 1));
    }

    #[test]
    fn a_lost_segment_waits_the_rto_in_force_when_its_timer_started() {
        // rfc6298 without a floor, 100 ms samples back to back (ACKs at 100, 200, 300 ms): RTO
        // 1 s before any sample (RFC 6298 §2.1), 300 ms after the first (100 + 4·50), 250 ms
        // after the second (RTTVAR 37.5 ms). Losses whose timers started at 50 ms, 150 ms, at
        // the very ACK of 200 ms (restarted by it, so after it), and after the last ACK.
        let (t, r) = stream(&[100, 100, 100]);
        let losses = [(0, 50 * MS), (0, 150 * MS), (0, 200 * MS), (0, 900 * MS)];
        let streams = Streams {
            losses: &losses,
            ..Streams::default()
        };
        let est = build("rfc6298", &[("min_rto".into(), "0".into())]).unwrap();
        let (m, _) = replay_streams(est, &t, &r, &streams, &ReplayConfig::default());
        assert_eq!(m.lost_segments, 4);
        // After the third sample: RTTVAR 28.125 ms, RTO 212.5 ms.
        let expected = (1.0 + 0.3 + 0.25 + 0.2125) / 4.0;
        assert!(
            (m.lost_wait_mean_s.unwrap() - expected).abs() < 1e-12,
            "{:?}",
            m.lost_wait_mean_s
        );
        assert_eq!(m.lost_wait_max_s, Some(1.0));
        // Scoring losses changes nothing else.
        let (plain, _) = replay(
            build("rfc6298", &[("min_rto".into(), "0".into())]).unwrap(),
            &t,
            &r,
            &ReplayConfig::default(),
        );
        assert_eq!(
            Metrics {
                lost_segments: 0,
                lost_wait_mean_s: None,
                lost_wait_max_s: None,
                ..m
            },
            plain
        );
    }

    #[test]
    fn losses_belong_to_their_stream_and_see_its_fresh_estimator() {
        // Two streams; the second's loss, before its first sample, sees the initial 1 s RTO
        // even though the first stream had brought its RTO down.
        let (t1, r1) = stream(&[100, 100]);
        let t: Vec<Nanos> = t1
            .iter()
            .chain(t1.iter().map(|x| x + 10 * SEC).collect::<Vec<_>>().iter())
            .copied()
            .collect();
        let r: Vec<Nanos> = r1.iter().chain(&r1).copied().collect();
        let losses = [(0, 150 * MS), (1, 10 * SEC + 50 * MS)];
        let streams = Streams {
            starts: &[0, 2],
            losses: &losses,
            ..Streams::default()
        };
        let est = build("rfc6298", &[("min_rto".into(), "0".into())]).unwrap();
        let (m, _) = replay_streams(est, &t, &r, &streams, &ReplayConfig::default());
        assert_eq!(m.lost_segments, 2);
        assert!((m.lost_wait_mean_s.unwrap() - (0.3 + 1.0) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn each_stream_scored_in_the_pooled_pass_equals_the_stream_replayed_alone() {
        let (t1, r1) = stream(&[100, 120, 90, 3000, 110]);
        let (t2, r2) = stream(&[400, 380, 420]);
        let t: Vec<Nanos> = t1.iter().chain(&t2).copied().collect();
        let r: Vec<Nanos> = r1.iter().chain(&r2).copied().collect();
        let losses = [(0, 150 * MS), (1, 500 * MS)];
        let cfg = ReplayConfig {
            per_stream: true,
            ..ReplayConfig::default()
        };
        let streams = Streams {
            starts: &[0, 5],
            losses: &losses,
            ..Streams::default()
        };
        let (_, _, each) = replay_each(build("linux", &[]).unwrap(), &t, &r, &streams, &cfg);
        let alone1 = replay_streams(
            build("linux", &[]).unwrap(),
            &t1,
            &r1,
            &Streams {
                losses: &[(0, 150 * MS)],
                ..Streams::default()
            },
            &cfg,
        )
        .0;
        let alone2 = replay_streams(
            build("linux", &[]).unwrap(),
            &t2,
            &r2,
            &Streams {
                losses: &[(0, 500 * MS)],
                ..Streams::default()
            },
            &cfg,
        )
        .0;
        assert_eq!(each, vec![alone1, alone2]);
    }
}
