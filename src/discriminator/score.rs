//! Scoring discriminators against the simulator's ground truth, open loop: replay one flow's
//! trace of a finished run (RTT samples, window, retransmissions, drops) through each
//! discriminator. A *loss* is a drop of a data packet (a first copy or a retransmission) that the
//! sender noticed: it is classified when the sender next resends that segment (fast retransmit or
//! timeout); its truth is the drop's cause — a queue (overflow or AQM: congestion) or the link
//! (corruption or a scheduled loss). Resends of segments never dropped (go-back-N, spurious
//! timeouts) are no loss and are skipped. Scoring is per lost segment; the sender's reaction is
//! whatever the run's congestion control did, not the discriminator's.

use super::{LossClass, ReceiverDiscriminator, SenderDiscriminator};
use crate::sim::packet::FlowId;
use crate::sim::trace::Trace;
use crate::time::Nanos;
use std::collections::HashMap;

/// Verdicts against the truth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    pub congestion_as_congestion: u64,
    pub congestion_as_corruption: u64,
    pub corruption_as_corruption: u64,
    pub corruption_as_congestion: u64,
}

impl Confusion {
    pub fn add(&mut self, truth: LossClass, verdict: LossClass) {
        match (truth, verdict) {
            (LossClass::Congestion, LossClass::Congestion) => self.congestion_as_congestion += 1,
            (LossClass::Congestion, LossClass::Corruption) => self.congestion_as_corruption += 1,
            (LossClass::Corruption, LossClass::Corruption) => self.corruption_as_corruption += 1,
            (LossClass::Corruption, LossClass::Congestion) => self.corruption_as_congestion += 1,
        }
    }

    pub fn congestion_losses(&self) -> u64 {
        self.congestion_as_congestion + self.congestion_as_corruption
    }

    pub fn corruption_losses(&self) -> u64 {
        self.corruption_as_corruption + self.corruption_as_congestion
    }

    /// Share of congestion losses called corruption (NaN without any).
    pub fn congestion_missed(&self) -> f64 {
        self.congestion_as_corruption as f64 / self.congestion_losses() as f64
    }

    /// Share of corruption losses called congestion (NaN without any).
    pub fn corruption_missed(&self) -> f64 {
        self.corruption_as_congestion as f64 / self.corruption_losses() as f64
    }

    /// Share of all losses classified wrongly.
    pub fn misprediction(&self) -> f64 {
        (self.congestion_as_corruption + self.corruption_as_congestion) as f64
            / (self.congestion_losses() + self.corruption_losses()) as f64
    }
}

/// Replay `flow` of `trace` (which must keep the window, rtt, retransmissions and drops traces)
/// through every discriminator; `mss` converts the window to segments.
pub fn score(
    trace: &Trace,
    flow: FlowId,
    mss: u64,
    ds: &mut [Box<dyn SenderDiscriminator>],
) -> Vec<Confusion> {
    // Each segment's retransmission times, then every data drop of the flow that a later
    // retransmission of the same segment answered: (when noticed, truth).
    let x = &trace.retx;
    let mut resent: HashMap<u64, Vec<u64>> = HashMap::new();
    for i in 0..x.time.len() {
        if x.flow[i] == flow {
            resent.entry(x.seq[i]).or_default().push(x.time[i]);
        }
    }
    let d = &trace.drops;
    let mut losses: Vec<(u64, LossClass)> = (0..d.time.len())
        .filter(|&i| d.flow[i] == flow && d.kind[i] == 0)
        .filter_map(|i| {
            let noticed = *resent.get(&d.seq[i])?.iter().find(|&&t| t >= d.time[i])?;
            Some((
                noticed,
                if d.cause[i] <= 1 {
                    LossClass::Congestion
                } else {
                    LossClass::Corruption
                },
            ))
        })
        .collect();
    losses.sort_by_key(|l| l.0); // stable: drops noticed together keep their order
    let w = &trace.window;
    let window: Vec<(u64, u64)> = (0..w.time.len())
        .filter(|&i| w.flow[i] == flow)
        .map(|i| (w.time[i], w.cwnd[i]))
        .collect();
    let cwnd_at = |t: u64| -> f64 {
        let k = window.partition_point(|&(wt, _)| wt <= t);
        if k == 0 {
            1.0
        } else {
            window[k - 1].1 as f64 / mss as f64
        }
    };
    let r = &trace.rtt;
    let samples: Vec<(u64, u64)> = (0..r.time.len())
        .filter(|&i| r.flow[i] == flow)
        .map(|i| (r.time[i], r.sample[i]))
        .collect();
    let mut out = vec![Confusion::default(); ds.len()];
    let mut s = 0;
    for (t, truth) in losses {
        // Samples up to and including the loss's instant come first.
        while s < samples.len() && samples[s].0 <= t {
            let cwnd = cwnd_at(samples[s].0);
            ds.iter_mut().for_each(|d| d.on_sample(samples[s].1, cwnd));
            s += 1;
        }
        for (d, c) in ds.iter_mut().zip(out.iter_mut()) {
            c.add(truth, d.classify());
            d.learn(truth);
        }
    }
    out
}

/// One data packet at the receiver: arrival time, first sequence number, payload bytes, and the
/// sender's clock when it was sent (TSval on a capture; any offset, only differences matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub time: Nanos,
    pub seq: u64,
    pub len: u32,
    pub sent: Nanos,
}

/// One gap the receiver saw: the packet after it arrived at `time` starting at `seq`, `missing`
/// segments (of the flow's largest payload so far) were never seen before it, at sequence
/// [`Gap::from`] .. `seq`; `verdicts` in the discriminators' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub time: Nanos,
    pub from: u64,
    pub seq: u64,
    pub missing: u32,
    pub verdicts: Vec<LossClass>,
}

/// Feed one flow's arrivals, in arrival order, to every receiver-side discriminator; a packet
/// starting above the highest byte seen so far reveals a gap of ⌈gap / segment⌉ missing packets
/// (the segment size is the largest payload seen so far). Retransmissions filling holes are
/// in-sequence arrivals to them (no gap). Classification only: no truth needed (a capture).
pub fn classify_arrivals(
    arrivals: &[Arrival],
    ds: &mut [Box<dyn ReceiverDiscriminator>],
) -> Vec<Gap> {
    let mut high: Option<u64> = None;
    let mut seg: u64 = 0;
    let mut out = Vec::new();
    for a in arrivals {
        seg = seg.max(a.len as u64);
        let missing = match high {
            Some(h) if a.seq > h && seg > 0 => {
                (a.seq - h).div_ceil(seg).min(u32::MAX as u64) as u32
            }
            _ => 0,
        };
        let rott = a.time.saturating_sub(a.sent);
        let verdicts: Vec<Option<LossClass>> = ds
            .iter_mut()
            .map(|d| d.on_arrival(a.time, rott, missing))
            .collect();
        if missing > 0 {
            // A discriminator without enough history yet (no T_min, no mean) abstains: congestion,
            // the safe answer.
            out.push(Gap {
                time: a.time,
                from: high.unwrap_or(0),
                seq: a.seq,
                missing,
                verdicts: verdicts
                    .into_iter()
                    .map(|v| v.unwrap_or(LossClass::Congestion))
                    .collect(),
            });
        }
        let end = a.seq + a.len as u64;
        high = Some(high.map_or(end, |h| h.max(end)));
    }
    out
}

/// Score the receiver-side discriminators on one flow of a finished run (which must keep the
/// `receive` and `drops` traces): every gap the receiver saw is classified once, and the verdict
/// counts once per missing segment against that segment's truth — the cause of its latest drop
/// before the gap showed (queue: congestion; link: corruption). Only first transmissions make
/// gaps, so losses of retransmissions are not scored here (the sender-side scoring counts them);
/// missing segments without a drop (none in a FIFO network) are skipped.
pub fn score_receiver(
    trace: &Trace,
    flow: FlowId,
    ds: &mut [Box<dyn ReceiverDiscriminator>],
) -> Vec<Confusion> {
    let r = &trace.receive;
    let arrivals: Vec<Arrival> = (0..r.time.len())
        .filter(|&i| r.flow[i] == flow)
        .map(|i| Arrival {
            time: r.time[i],
            seq: r.seq[i],
            len: r.len[i],
            sent: r.sent[i],
        })
        .collect();
    let d = &trace.drops;
    let mut drops: HashMap<u64, Vec<(u64, LossClass)>> = HashMap::new();
    for i in (0..d.time.len()).filter(|&i| d.flow[i] == flow && d.kind[i] == 0) {
        drops.entry(d.seq[i]).or_default().push((
            d.time[i],
            if d.cause[i] <= 1 {
                LossClass::Congestion
            } else {
                LossClass::Corruption
            },
        ));
    }
    let seg = arrivals
        .iter()
        .map(|a| a.len as u64)
        .max()
        .unwrap_or(1)
        .max(1);
    let mut out = vec![Confusion::default(); ds.len()];
    for g in classify_arrivals(&arrivals, ds) {
        let mut s = g.from;
        while s < g.seq {
            let truth = drops
                .get(&s)
                .and_then(|v| v.iter().rev().find(|&&(t, _)| t <= g.time))
                .map(|&(_, c)| c);
            if let Some(truth) = truth {
                for (c, &v) in out.iter_mut().zip(&g.verdicts) {
                    c.add(truth, v);
                }
            }
            s += seg;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discriminator::{sender_side, vegas::VegasSender};
    use crate::sim::packet::Kind;
    use crate::sim::queue::DropCause;
    use crate::sim::trace::{RetxCause, TraceSet};
    use crate::time::MS;

    /// Two losses by hand: segment 1000 dropped by the queue while 3.3 segments sit queued,
    /// segment 5000 corrupted with none queued; segment 9000 resent but never dropped (no loss).
    #[test]
    fn each_resent_dropped_segment_is_scored_against_its_drop_cause() {
        let mut t = Trace::new(TraceSet::ALL);
        t.window(0, 0, 10_000, u64::MAX, 0, 0);
        t.rtt(10 * MS, 0, 100 * MS, None, 0);
        t.rtt(20 * MS, 0, 150 * MS, None, 0); // Vegas diff 3.33: congested
        t.drop(25 * MS, 0, 0, Kind::Data, 1000, DropCause::Overflow);
        t.retx(30 * MS, 0, 1000, RetxCause::Fast, 1);
        t.rtt(40 * MS, 0, 101 * MS, None, 0); // diff 0.1: not congested
        t.drop(45 * MS, 0, 0, Kind::Data, 5000, DropCause::Corruption);
        t.retx(50 * MS, 0, 5000, RetxCause::Timeout, 1);
        t.retx(50 * MS, 0, 9000, RetxCause::Timeout, 1);
        t.drop(45 * MS, 0, 1, Kind::Data, 5000, DropCause::Overflow); // another flow's: ignored
        let mut ds: Vec<Box<dyn SenderDiscriminator>> = vec![Box::new(VegasSender::default())];
        let c = score(&t, 0, 1000, &mut ds)[0];
        assert_eq!(
            c,
            Confusion {
                congestion_as_congestion: 1,
                corruption_as_corruption: 1,
                ..Confusion::default()
            }
        );
        let all = score(&t, 0, 1000, &mut sender_side(1));
        let bernoulli = all[0];
        assert_eq!(
            (
                bernoulli.congestion_as_corruption,
                bernoulli.corruption_as_corruption
            ),
            (1, 1),
            "p = 1: all corruption"
        );
        assert_eq!(bernoulli.congestion_missed(), 1.0);
        assert_eq!(bernoulli.corruption_missed(), 0.0);
        assert_eq!(bernoulli.misprediction(), 0.5);
    }
}

#[cfg(test)]
mod receiver_side {
    use super::*;
    use crate::discriminator::{receiver_side, spike::Spike};
    use crate::sim::packet::Kind;
    use crate::sim::queue::DropCause;
    use crate::sim::trace::TraceSet;
    use crate::time::MS;

    /// Segment `seg` arrives at 1 s + `ms` with a ROTT of `rott_ms`.
    fn arrive(t: &mut Trace, ms: u64, seg: u64, rott_ms: u64) {
        t.receive(
            (1000 + ms) * MS,
            0,
            seg * 1000,
            1000,
            0,
            (1000 + ms - rott_ms) * MS,
        );
    }

    #[test]
    fn each_missing_segment_is_scored_against_the_cause_of_its_drop() {
        let mut t = Trace::new(TraceSet::EVERY);
        // ROTTs span 100..200 ms; segment 3 is dropped by the queue while the ROTT is high (Spike
        // says congestion), segments 7 and 8 are corrupted while it is low (corruption).
        arrive(&mut t, 0, 0, 100);
        arrive(&mut t, 10, 1, 200);
        arrive(&mut t, 20, 2, 190);
        t.drop(25 * MS, 0, 0, Kind::Data, 3000, DropCause::Overflow);
        arrive(&mut t, 40, 4, 195);
        arrive(&mut t, 50, 5, 110);
        arrive(&mut t, 60, 6, 100);
        t.drop(65 * MS, 0, 0, Kind::Data, 7000, DropCause::Corruption);
        t.drop(70 * MS, 0, 0, Kind::Data, 8000, DropCause::Corruption);
        t.drop(71 * MS, 0, 1, Kind::Data, 9000, DropCause::Overflow); // another flow's
        arrive(&mut t, 90, 9, 100);
        arrive(&mut t, 100, 3, 100); // the retransmission filling the first hole: no gap
        let mut spike: Vec<Box<dyn ReceiverDiscriminator>> = vec![Box::new(Spike::default())];
        let c = score_receiver(&t, 0, &mut spike)[0];
        assert_eq!(
            c,
            Confusion {
                congestion_as_congestion: 1,
                corruption_as_corruption: 2,
                ..Confusion::default()
            }
        );
        let gaps = classify_arrivals(
            &[
                Arrival {
                    time: 0,
                    seq: 0,
                    len: 1000,
                    sent: 0,
                },
                Arrival {
                    time: 5,
                    seq: 3000,
                    len: 1000,
                    sent: 0,
                },
            ],
            &mut receiver_side(),
        );
        assert_eq!(
            (
                gaps.len(),
                gaps[0].from,
                gaps[0].missing,
                gaps[0].verdicts.len()
            ),
            (1, 1000, 2, 5)
        );
    }
}

/// On a simulated run: SpecTCP on the paper's lossy link, where both kinds of loss occur.
#[cfg(test)]
mod on_a_run {
    use super::*;
    use crate::discriminator::sender_side;
    use crate::sim::{config::Scenario, run};

    #[test]
    fn every_discriminator_sees_the_same_losses_and_the_bernoulli_predictor_calls_all_corruption() {
        let path = format!(
            "{}/examples/spectcp/lossy-link.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let r = run(&Scenario::from_file(
            path.as_ref(),
            &["topology.bottleneck.error.ber=1e-5".into()],
        )
        .unwrap())
        .unwrap();
        let scores = score(&r.trace, 0, 1000, &mut sender_side(1));
        let first = scores[0];
        assert!(
            first.congestion_losses() > 0 && first.corruption_losses() > 0,
            "{first:?}"
        );
        for c in &scores {
            assert_eq!(
                (c.congestion_losses(), c.corruption_losses()),
                (first.congestion_losses(), first.corruption_losses())
            );
        }
        assert_eq!(
            (
                first.congestion_as_congestion,
                first.corruption_as_congestion
            ),
            (0, 0)
        );
        // Every data drop the sender answered with a resend is scored. The rest are drops of
        // go-back-N duplicates whose segment had already arrived (never resent again) and
        // drops still unanswered when the run ends: 39 of 240 in this run.
        let ch = &r.channels[r.bottleneck];
        let data_drops = ch.drops_overflow + ch.drops_aqm + ch.drops_corruption;
        let scored = first.congestion_losses() + first.corruption_losses();
        assert!(
            scored <= data_drops && scored * 5 >= data_drops * 4,
            "{scored} of {data_drops}"
        );
    }

    #[test]
    fn the_receiver_side_discriminators_score_every_gap_the_receiver_saw() {
        use crate::discriminator::receiver_side;
        let path = format!(
            "{}/examples/spectcp/lossy-link.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let s = Scenario::from_file(
            path.as_ref(),
            &["topology.bottleneck.error.ber=1e-5".into()],
        )
        .unwrap();
        let r = crate::sim::run_with(&s, crate::sim::trace::TraceSet::EVERY, u64::MAX, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        let scores = score_receiver(&r.trace, 0, &mut receiver_side());
        let first = scores[0];
        assert!(
            first.congestion_losses() > 0 && first.corruption_losses() > 0,
            "{first:?}"
        );
        for c in &scores {
            assert_eq!(
                (c.congestion_losses(), c.corruption_losses()),
                (first.congestion_losses(), first.corruption_losses())
            );
        }
        // Gaps show only first transmissions lost: fewer than all data drops.
        let ch = &r.channels[r.bottleneck];
        assert!(
            first.congestion_losses() + first.corruption_losses()
                < ch.drops_overflow + ch.drops_aqm + ch.drops_corruption
        );
    }
}
