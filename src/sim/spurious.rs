//! Which retransmissions were unnecessary, resolved with memory bounded by the window.
//!
//! A retransmission (transmission number k ≥ 1) of a segment is spurious when an earlier copy
//! (number j < k) reached the receiver by the end of the run. The engine sees every copy sent and
//! every copy delivered. A segment's verdicts become final as soon as the sender's cumulative ACK
//! passes it: the sender never sends it again, and an ACK can only pass it after some copy c
//! arrived; every earlier copy travelled the same FIFO path ahead of c (static routes, FIFO
//! queues and wires), so it arrived before c or was lost — no later arrival can change the
//! minimum transmission number that arrived. So only segments from snd_una up are held; what is
//! left when the run ends is resolved with the arrivals seen by then (a copy still in flight does
//! not count, as before).
//!
//! Assumption written down: a node agent that re-sends a cached copy (Snoop) could break the FIFO
//! argument. Snoop keeps it: its cache holds the sender's latest copy of each segment, so a local
//! copy numbered below c left the gateway before c passed it, on the same FIFO path onwards
//! (`agent::snoop`).

use super::trace::RetxTrace;
use std::collections::VecDeque;

const NONE: u16 = u16::MAX;

#[derive(Debug, Clone)]
struct Segment {
    /// Retransmissions sent (copies with a transmission number ≥ 1).
    retransmissions: u32,
    /// Lowest transmission number that arrived, `NONE` if none yet.
    first_arrival: u16,
    /// Indices of this segment's records in the retransmission trace, if it is kept.
    records: Vec<u32>,
    /// A detector's judgement of one of its retransmissions: (transmission number, called spurious).
    judged: Option<(u8, bool)>,
}

impl Default for Segment {
    fn default() -> Self {
        Self {
            retransmissions: 0,
            first_arrival: NONE,
            records: Vec::new(),
            judged: None,
        }
    }
}

/// How a spurious-timeout detector (Eifel) fared against the oracle: each judged timeout
/// retransmission, by what the detector said and what was true.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetectorScore {
    /// Called spurious, and an earlier copy had reached the receiver.
    pub true_positives: u64,
    /// Called spurious, but the retransmission was needed.
    pub false_positives: u64,
    /// Called needed, but it was spurious.
    pub false_negatives: u64,
    /// Called needed, and it was.
    pub true_negatives: u64,
}

/// One flow's oracle.
#[derive(Debug, Clone)]
pub struct SpuriousOracle {
    mss: u64,
    /// Segment index (seq / mss) of `open[0]`.
    base: u64,
    open: VecDeque<Segment>,
    /// Spurious retransmissions of the segments already resolved.
    pub spurious: u64,
    /// The detector's judgements of resolved segments, scored.
    pub detector: DetectorScore,
}

impl SpuriousOracle {
    pub fn new(mss: u32) -> Self {
        Self {
            mss: mss.max(1) as u64,
            base: 0,
            open: VecDeque::new(),
            spurious: 0,
            detector: DetectorScore::default(),
        }
    }

    /// Segments held right now (bounded by the window).
    pub fn held(&self) -> usize {
        self.open.len()
    }

    fn segment(&mut self, seq: u64) -> Option<&mut Segment> {
        let i = seq / self.mss;
        if i < self.base {
            return None; // resolved already: nothing about it can change
        }
        let at = (i - self.base) as usize;
        if at >= self.open.len() {
            self.open.resize_with(at + 1, Segment::default);
        }
        self.open.get_mut(at)
    }

    /// A copy of the segment at `seq` was sent; `record` is its retransmission-trace row.
    pub fn sent(&mut self, seq: u64, tx: u8, record: Option<u32>) {
        if tx == 0 {
            return;
        }
        if let Some(s) = self.segment(seq) {
            s.retransmissions += 1;
            s.records.extend(record);
        }
    }

    /// A detector judged transmission `tx` of the segment at `seq` (spurious or not); scored when
    /// the segment resolves. Call before [`Self::acked`] for the ACK that prompted the judgement.
    pub fn judged(&mut self, seq: u64, tx: u8, spurious: bool) {
        if let Some(s) = self.segment(seq) {
            s.judged = Some((tx, spurious));
        }
    }

    /// A copy of the segment at `seq` reached the receiver.
    pub fn arrived(&mut self, seq: u64, tx: u8) {
        if let Some(s) = self.segment(seq) {
            s.first_arrival = s.first_arrival.min(tx as u16);
        }
    }

    /// The sender's cumulative ACK reached `snd_una`: segments wholly below it are final.
    pub fn acked(&mut self, snd_una: u64, trace: &mut RetxTrace) {
        while !self.open.is_empty() && (self.base + 1) * self.mss <= snd_una {
            let s = self.open.pop_front().expect("not empty");
            self.resolve(&s, trace);
            self.base += 1;
        }
    }

    /// The run ended: resolve what is left with the arrivals seen so far.
    pub fn finish(&mut self, trace: &mut RetxTrace) {
        for s in std::mem::take(&mut self.open) {
            self.resolve(&s, trace);
        }
    }

    fn resolve(&mut self, s: &Segment, trace: &mut RetxTrace) {
        if let Some((tx, called)) = s.judged {
            // The judged copy was unnecessary iff an earlier one arrived.
            let truth = s.first_arrival != NONE && (tx as u16) > s.first_arrival;
            let d = &mut self.detector;
            *match (called, truth) {
                (true, true) => &mut d.true_positives,
                (true, false) => &mut d.false_positives,
                (false, true) => &mut d.false_negatives,
                (false, false) => &mut d.true_negatives,
            } += 1;
        }
        if s.first_arrival == NONE {
            return;
        }
        // Retransmissions are numbered 1, 2, … (saturating at 255): those numbered ≤ m, the first
        // arrival's, were needed or no worse than the copy that made it; the rest were not.
        self.spurious +=
            s.retransmissions
                .saturating_sub((s.first_arrival as u32).min(s.retransmissions)) as u64;
        for &r in &s.records {
            trace.spurious[r as usize] = trace.tx[r as usize] as u16 > s.first_arrival;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace_with(txs: &[u8]) -> RetxTrace {
        RetxTrace {
            tx: txs.to_vec(),
            spurious: vec![false; txs.len()],
            ..RetxTrace::default()
        }
    }

    #[test]
    fn a_retransmission_after_the_original_arrived_is_spurious_once_the_ack_passes() {
        let mut o = SpuriousOracle::new(1000);
        let mut t = trace_with(&[1]);
        o.sent(0, 0, None);
        o.arrived(0, 0);
        o.sent(0, 1, Some(0)); // a premature timeout
        assert_eq!(o.spurious, 0, "not final before the ACK passes");
        o.acked(1000, &mut t);
        assert_eq!((o.spurious, t.spurious[0], o.held()), (1, true, 0));
    }

    #[test]
    fn a_retransmission_of_a_lost_segment_is_necessary_and_later_ones_after_it_are_not() {
        let mut o = SpuriousOracle::new(1000);
        let mut t = trace_with(&[1, 2]);
        o.sent(2000, 1, Some(0)); // original lost; first retransmission arrives
        o.arrived(2000, 1);
        o.sent(2000, 2, Some(1)); // a second, needless one
        o.acked(3000, &mut t);
        assert_eq!((o.spurious, t.spurious.clone()), (1, vec![false, true]));
    }

    #[test]
    fn a_detectors_judgements_are_scored_against_what_arrived() {
        let mut o = SpuriousOracle::new(1000);
        let mut t = trace_with(&[]);
        // Segment 0: the original arrived, the timeout was premature; the detector saw it.
        o.arrived(0, 0);
        o.sent(0, 1, None);
        o.judged(0, 1, true);
        // Segment 1: lost; the retransmission was needed, but the detector called it spurious.
        o.sent(1000, 1, None);
        o.arrived(1000, 1);
        o.judged(1000, 1, true);
        // Segment 2: premature, missed by the detector. Segment 3: needed, called needed.
        o.arrived(2000, 0);
        o.sent(2000, 1, None);
        o.judged(2000, 1, false);
        o.sent(3000, 1, None);
        o.arrived(3000, 1);
        o.judged(3000, 1, false);
        o.acked(4000, &mut t);
        assert_eq!(
            o.detector,
            DetectorScore {
                true_positives: 1,
                false_positives: 1,
                false_negatives: 1,
                true_negatives: 1
            }
        );
    }

    #[test]
    fn only_segments_from_snd_una_up_are_held_and_the_rest_resolve_at_the_end() {
        let mut o = SpuriousOracle::new(1000);
        let mut t = trace_with(&[]);
        for i in 0..100 {
            o.arrived(i * 1000, 0);
        }
        o.acked(90_000, &mut t);
        assert_eq!(o.held(), 10);
        o.arrived(5000, 0); // resolved already: ignored
        o.sent(99_000, 1, None);
        o.finish(&mut t);
        assert_eq!((o.spurious, o.held()), (1, 0));
    }
}
