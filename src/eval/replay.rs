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
    tick: Nanos,
    trace: bool,
}

impl WithEstimator for Pass<'_> {
    type Output = (Metrics, Option<Trace>);

    fn call<E: RttEstimator>(self, est: &mut E) -> Self::Output {
        let n = self.rtts.len();
        let mut scorer = Scorer::with_capacity(n);
        let mut trace = self.trace.then(|| Trace { prediction: Vec::with_capacity(n), rto: Vec::with_capacity(n) });
        for (i, (&now, &rtt)) in self.times.iter().zip(self.rtts).enumerate() {
            // The timer is (re)armed by every ACK (RFC 6298 §5.3); in open loop there is no
            // expiry, so no back-off: the RTO in force is the estimator's base RTO.
            let prediction = est.prediction();
            let rto = est.rto();
            if i > 0 {
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
pub fn replay(mut estimator: Estimator, times: &[Nanos], rtts: &[Nanos], tick: Nanos, trace: bool) -> (Metrics, Option<Trace>) {
    assert_eq!(times.len(), rtts.len(), "times and rtts must have equal length");
    estimator.with(Pass { times, rtts, tick, trace })
}

/// Replay several estimators over the same samples, one thread each (results in input order;
/// each pass is sequential and deterministic, so threading does not change any number).
pub fn replay_all(estimators: Vec<Estimator>, times: &[Nanos], rtts: &[Nanos], tick: Nanos, trace: bool, threads: usize) -> Vec<(Metrics, Option<Trace>)> {
    let threads = threads.max(1);
    if threads == 1 || estimators.len() == 1 {
        return estimators.into_iter().map(|e| replay(e, times, rtts, tick, trace)).collect();
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
                let out = replay(e, times, rtts, tick, trace);
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
        assert_eq!(replay_all(make(), &t, &r, MS, false, 1), replay_all(make(), &t, &r, MS, false, 2));
    }
}
