//! Replay: one pass per estimator over (time, rtt) samples, monomorphised per estimator type.

use super::metrics::{Metrics, Scorer};
use crate::rtt::{Context, Estimator, RttEstimator, WithEstimator};
use crate::time::Nanos;

/// Per-sample record of what the estimator held when each sample arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Prediction in ns, or `None` before the estimator had one.
    pub prediction: Vec<Option<Nanos>>,
    /// RTO in force (ns) when the sample arrived.
    pub rto: Vec<Nanos>,
}

struct Pass<'a> {
    times: &'a [Nanos],
    rtts: &'a [Nanos],
    /// Where independent streams (connections) begin; each gets a fresh estimator.
    starts: &'a [usize],
    tick: Nanos,
    trace: bool,
}

impl WithEstimator for Pass<'_> {
    type Output = (Metrics, Option<Trace>);

    fn call<E: RttEstimator + Clone>(self, est: &mut E) -> Self::Output {
        let n = self.rtts.len();
        let fresh = est.clone();
        let mut starts = self.starts.iter().copied().peekable();
        let mut scorer = Scorer::with_capacity(n);
        let mut trace = self.trace.then(|| Trace { prediction: Vec::with_capacity(n), rto: Vec::with_capacity(n) });
        for (i, (&now, &rtt)) in self.times.iter().zip(self.rtts).enumerate() {
            let first_of_stream = i == 0 || starts.peek() == Some(&i);
            if first_of_stream && i > 0 {
                *est = fresh.clone();
            }
            while starts.peek().is_some_and(|&s| s <= i) {
                starts.next();
            }
            // The timer is (re)armed by every ACK (RFC 6298 §5.3); in open loop there is no
            // expiry, so no back-off: the RTO in force is the estimator's base RTO.
            let prediction = est.prediction();
            let rto = est.rto();
            if !first_of_stream {
                scorer.record(rtt, prediction, rto);
            }
            if let Some(t) = trace.as_mut() {
                t.prediction.push(prediction);
                t.rto.push(rto);
            }
            let ctx = Context { now, ..Context::default() };
            est.on_sample(rtt, &ctx);
            est.on_timer_armed(&ctx);
        }
        (scorer.finish(self.tick), trace)
    }
}

/// Replay one estimator (consumed: replay mutates its state). `times` and `rtts` have equal
/// length; `tick` is the unit of `mae_ticks`.
pub fn replay(estimator: Estimator, times: &[Nanos], rtts: &[Nanos], tick: Nanos, trace: bool) -> (Metrics, Option<Trace>) {
    replay_streams(estimator, times, rtts, &[], tick, trace)
}

/// As [`replay`], over several independent streams laid end to end (one per connection):
/// `starts` holds the index where each stream begins (sorted; 0 may be omitted). Every stream
/// starts from a fresh estimator, its first sample is not scored, and the metrics pool all
/// streams' scored samples.
pub fn replay_streams(mut estimator: Estimator, times: &[Nanos], rtts: &[Nanos], starts: &[usize], tick: Nanos, trace: bool) -> (Metrics, Option<Trace>) {
    assert_eq!(times.len(), rtts.len(), "times and rtts must have equal length");
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "stream starts must be sorted");
    estimator.with(Pass { times, rtts, starts, tick, trace })
}

/// Replay several estimators over the same samples, one thread each (results in input order;
/// each pass is sequential and deterministic, so threading does not change any number).
pub fn replay_all(estimators: Vec<Estimator>, times: &[Nanos], rtts: &[Nanos], starts: &[usize], tick: Nanos, trace: bool, threads: usize) -> Vec<(Metrics, Option<Trace>)> {
    let threads = threads.max(1);
    if threads == 1 || estimators.len() == 1 {
        return estimators.into_iter().map(|e| replay_streams(e, times, rtts, starts, tick, trace)).collect();
    }
    let mut slots: Vec<Option<(Metrics, Option<Trace>)>> = vec![None; estimators.len()];
    let jobs: Vec<(usize, Estimator)> = estimators.into_iter().enumerate().collect();
    let next = std::sync::Mutex::new(jobs.into_iter());
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let job = next.lock().map(|mut it| it.next()).unwrap_or(None);
                let Some((i, e)) = job else { break };
                let out = replay_streams(e, times, rtts, starts, tick, trace);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(out);
                }
            });
        }
    });
    slots.into_iter().map(|s| s.expect("every job ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::build;
    use crate::time::MS;

    fn stream(ms: &[u64]) -> (Vec<Nanos>, Vec<Nanos>) {
        let rtts: Vec<Nanos> = ms.iter().map(|m| m * MS).collect();
        let times = rtts.iter().scan(0, |t, r| { *t += r; Some(*t) }).collect();
        (times, rtts)
    }

    #[test]
    fn the_rto_in_force_is_the_one_before_the_sample() {
        let (t, r) = stream(&[100, 100, 2000]);
        let (m, trace) = replay(build("rfc6298", &[]).unwrap(), &t, &r, MS, true);
        let trace = trace.unwrap();
        assert_eq!(trace.rto, vec![1000 * MS, 1000 * MS, 1000 * MS]);
        assert_eq!(trace.prediction, vec![None, Some(100 * MS), Some(100 * MS)]);
        // Scored: samples 2 and 3; the 2 s sample exceeds the 1 s RTO.
        assert_eq!(m.samples, 2);
        assert_eq!(m.premature_timeout_rate, Some(0.5));
        assert!((m.mae_s.unwrap() - 0.95).abs() < 1e-12);
    }

    #[test]
    fn threaded_replay_gives_the_same_numbers_in_the_same_order() {
        let ms: Vec<u64> = (0..5000).map(|i| 50 + (i * 7919 % 97)).collect();
        let (t, r) = stream(&ms);
        let names = ["rfc6298", "linux", "fixed-share", "quic", "eifel"];
        let make = || names.iter().map(|n| build(n, &[]).unwrap()).collect::<Vec<_>>();
        assert_eq!(replay_all(make(), &t, &r, &[], MS, false, 1), replay_all(make(), &t, &r, &[], MS, false, 2));
    }

    #[test]
    fn streams_restart_the_estimator_and_pool_their_scores() {
        let (t1, r1) = stream(&[100, 120, 90, 110]);
        let (t2, r2) = stream(&[400, 380, 420]);
        let alone = |t: &[Nanos], r: &[Nanos]| replay(build("rfc6298", &[]).unwrap(), t, r, MS, true);
        let (m1, tr1) = alone(&t1, &r1);
        let (m2, tr2) = alone(&t2, &r2);
        let t: Vec<Nanos> = t1.iter().chain(&t2).copied().collect();
        let r: Vec<Nanos> = r1.iter().chain(&r2).copied().collect();
        let (m, tr) = replay_streams(build("rfc6298", &[]).unwrap(), &t, &r, &[0, 4], MS, true);
        let tr = tr.unwrap();
        // The second stream starts afresh: same trace as replayed alone.
        assert_eq!(tr.prediction[4..], tr2.unwrap().prediction[..]);
        assert_eq!(tr.prediction[..4], tr1.unwrap().prediction[..]);
        // Scores pool the 3 + 2 scored samples.
        assert_eq!(m.samples, m1.samples + m2.samples);
        let pooled_mae = (m1.mae_s.unwrap() * 3.0 + m2.mae_s.unwrap() * 2.0) / 5.0;
        assert!((m.mae_s.unwrap() - pooled_mae).abs() < 1e-12);
    }
}
