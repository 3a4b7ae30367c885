//! The sender's record of outstanding segments and, for SACK flows, the RFC 6675 scoreboard:
//! which segments the receiver has SACKed (RFC 2018), which are deemed lost (`IsLost`, RFC 6675
//! §4), and `pipe`, the sender's estimate of the bytes still in the network (`SetPipe`).
//!
//! Segment boundaries never move (every segment but the last is one MSS from byte 0), so a
//! sequence number finds its segment by division, and SACK blocks, which the receiver builds
//! from whole segments, cover whole segments.

use std::collections::VecDeque;

use crate::time::Nanos;

/// One sent, not yet cumulatively acknowledged segment.
#[derive(Debug, Clone, Copy)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub sent_at: Nanos,
    /// Transmissions so far minus one (0 = never retransmitted).
    pub tx: u8,
    /// Covered by a SACK block.
    pub sacked: bool,
    /// Deemed lost and not retransmitted since: out of `pipe`, first in line to be resent.
    pub lost: bool,
}

impl Segment {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    segments: VecDeque<Segment>,
    mss: u64,
    sacked_bytes: u64,
    lost_bytes: u64,
    /// No segment below this sequence number is marked lost (where the search for one starts).
    lost_from: u64,
}

impl Scoreboard {
    pub fn new(mss: u32) -> Self {
        Self {
            mss: mss as u64,
            ..Self::default()
        }
    }

    pub fn push(&mut self, seq: u64, len: u32, now: Nanos) {
        self.segments.push_back(Segment {
            seq,
            len,
            sent_at: now,
            tx: 0,
            sacked: false,
            lost: false,
        });
    }

    pub fn front(&self) -> Option<&Segment> {
        self.segments.front()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter()
    }

    fn index(&self, seq: u64) -> Option<usize> {
        let front = self.segments.front()?.seq;
        let idx = (seq.checked_sub(front)? / self.mss) as usize;
        (self.segments.get(idx)?.seq == seq).then_some(idx)
    }

    /// The segment at `seq`, about to be resent: no longer lost, so back in `pipe`.
    pub fn resend(&mut self, seq: u64) -> Option<&mut Segment> {
        let s = self.segments.get_mut(self.index(seq)?)?;
        if std::mem::take(&mut s.lost) {
            self.lost_bytes -= s.len as u64;
        }
        Some(s)
    }

    /// Drop the segments the cumulative ACK `ack` covers.
    pub fn ack(&mut self, ack: u64) {
        while let Some(s) = self.segments.front().filter(|s| s.end() <= ack) {
            if s.sacked {
                self.sacked_bytes -= s.len as u64;
            }
            if s.lost {
                self.lost_bytes -= s.len as u64;
            }
            self.segments.pop_front();
        }
    }

    /// Bytes SACKed and bytes deemed lost (and not resent) among the outstanding segments.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    /// RFC 6675 `SetPipe` over `flight` outstanding bytes: every byte not SACKed counts once
    /// unless deemed lost, and a lost byte that was resent counts again. Resending clears `lost`
    /// here, so both cases are "not SACKed and not marked lost" (Linux's
    /// `packets_out - sacked_out - lost_out + retrans_out` in bytes).
    pub fn pipe(&self, flight: u64) -> u64 {
        flight - self.sacked_bytes - self.lost_bytes
    }

    /// Mark the segments inside the SACK blocks (RFC 6675 `Update()`); returns the bytes newly
    /// SACKed, which make the ACK a duplicate ACK in RFC 6675's sense (§2).
    pub fn apply_sack(&mut self, blocks: impl Iterator<Item = (u64, u64)>) -> u64 {
        let mut newly = 0;
        for (start, end) in blocks {
            let Some(front) = self.segments.front().map(|s| s.seq) else {
                break;
            };
            let first = (start.max(front) - front).div_ceil(self.mss) as usize;
            for s in self.segments.range_mut(first.min(self.segments.len())..) {
                if s.end() > end {
                    break;
                }
                if s.seq >= start && !s.sacked {
                    s.sacked = true;
                    newly += s.len as u64;
                    if std::mem::take(&mut s.lost) {
                        self.lost_bytes -= s.len as u64;
                    }
                }
            }
        }
        self.sacked_bytes += newly;
        newly
    }

    /// RFC 6675 `IsLost` applied to every outstanding segment at or above `high_rxt` (segments
    /// resent in this recovery are not resent again before the timer fires, §5 NextSeg (1.a)):
    /// a segment is lost when more than (DupThresh − 1)·SMSS bytes above it are SACKed, or
    /// DupThresh discontiguous SACKed runs lie above it. DupThresh = 3.
    pub fn mark_lost(&mut self, high_rxt: u64) {
        const DUP_THRESH: u64 = 3;
        let (mut sacked_above, mut runs_above, mut in_run) = (0u64, 0u64, false);
        let mut lowest = None;
        for s in self.segments.iter_mut().rev() {
            if s.sacked {
                sacked_above += s.len as u64;
                runs_above += u64::from(!in_run);
                in_run = true;
                continue;
            }
            in_run = false;
            if s.seq < high_rxt {
                break;
            }
            let lost = sacked_above > (DUP_THRESH - 1) * self.mss || runs_above >= DUP_THRESH;
            if lost && mark(s, &mut self.lost_bytes) {
                lowest = Some(s.seq);
            }
        }
        if let Some(seq) = lowest {
            self.lost_from = self.lost_from.min(seq);
        }
    }

    /// Whether the segment at `seq` is marked lost.
    pub fn is_lost(&self, seq: u64) -> bool {
        self.index(seq).is_some_and(|i| self.segments[i].lost)
    }

    /// Mark the segment at `seq` lost (the head at the third dupACK, RFC 6675 §5 step 4.3).
    pub fn mark_one_lost(&mut self, seq: u64) {
        if let Some(i) = self.index(seq) {
            if mark(&mut self.segments[i], &mut self.lost_bytes) {
                self.lost_from = self.lost_from.min(seq);
            }
        }
    }

    /// After a retransmission timeout every unSACKed segment is lost; SACK information is kept
    /// (RFC 6675 §5.1 with Errata 1610, as ns-3 and Linux do).
    pub fn mark_all_lost(&mut self) {
        for s in self.segments.iter_mut() {
            mark(s, &mut self.lost_bytes);
        }
        self.lost_from = self.segments.front().map_or(0, |s| s.seq);
    }

    /// Nothing is deemed lost any more (a spurious timeout undone).
    pub fn clear_lost(&mut self) {
        for s in self.segments.iter_mut() {
            s.lost = false;
        }
        self.lost_bytes = 0;
    }

    /// The first segment marked lost (RFC 6675 NextSeg rule 1), if any.
    pub fn first_lost(&mut self) -> Option<u64> {
        if self.lost_bytes == 0 {
            return None;
        }
        let front = self.segments.front()?.seq;
        let from = ((self.lost_from.max(front) - front) / self.mss) as usize;
        let seq = self.segments.range(from..).find(|s| s.lost).map(|s| s.seq);
        if let Some(seq) = seq {
            self.lost_from = seq;
        }
        seq
    }
}

/// Mark an unSACKed segment lost, counting its bytes; false if it was SACKed or lost already.
fn mark(s: &mut Segment, lost_bytes: &mut u64) -> bool {
    if s.sacked || s.lost {
        return false;
    }
    s.lost = true;
    *lost_bytes += s.len as u64;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 100;

    /// Segments 0..n of MSS bytes each, all sent.
    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new(MSS);
        for i in 0..n {
            b.push(i * MSS as u64, MSS, 0);
        }
        b
    }

    fn lost(b: &Scoreboard) -> Vec<u64> {
        b.iter()
            .filter(|s| s.lost)
            .map(|s| s.seq / MSS as u64)
            .collect()
    }

    #[test]
    fn sack_blocks_mark_whole_segments_once_and_report_only_new_bytes() {
        let mut b = board(10);
        assert_eq!(b.apply_sack([(300, 500)].into_iter()), 200);
        assert_eq!(b.apply_sack([(300, 600), (800, 900)].into_iter()), 200);
        assert_eq!(b.sacked_bytes(), 400);
        // A block edge inside a segment covers no part of it.
        assert_eq!(b.apply_sack([(650, 790)].into_iter()), 0);
    }

    #[test]
    fn a_segment_is_lost_once_three_segments_above_it_are_sacked() {
        let mut b = board(10);
        b.apply_sack([(100, 300)].into_iter());
        b.mark_lost(0);
        assert!(
            lost(&b).is_empty(),
            "two SACKed segments above are not enough"
        );
        b.apply_sack([(100, 400)].into_iter());
        b.mark_lost(0);
        assert_eq!(lost(&b), vec![0]);
        assert_eq!(b.pipe(1000), 1000 - 300 - 100);
    }

    #[test]
    fn three_discontiguous_sacked_runs_make_a_loss_even_with_few_bytes() {
        // RFC 6675 §4 IsLost: DupThresh discontiguous SACKed sequences above.
        let mut b = board(10);
        b.apply_sack([(200, 300), (400, 500), (600, 700)].into_iter());
        b.mark_lost(0);
        // Segment 0 and 1 have three runs above (but only 300 bytes: not "more than 2·SMSS").
        assert_eq!(lost(&b), vec![0, 1]);
    }

    #[test]
    fn segments_resent_in_this_recovery_are_not_marked_lost_again() {
        let mut b = board(10);
        b.apply_sack([(100, 500)].into_iter());
        b.mark_lost(0);
        assert_eq!(b.first_lost(), Some(0));
        b.resend(0);
        assert_eq!(b.first_lost(), None);
        b.apply_sack([(500, 700)].into_iter());
        b.mark_lost(100); // HighRxt past segment 0
        assert!(lost(&b).is_empty());
    }

    #[test]
    fn a_timeout_marks_every_unsacked_segment_lost_and_keeps_sack_information() {
        let mut b = board(6);
        b.apply_sack([(200, 400)].into_iter());
        b.mark_all_lost();
        assert_eq!(lost(&b), vec![0, 1, 4, 5]);
        assert_eq!(b.pipe(600), 0);
        assert_eq!(b.first_lost(), Some(0));
        b.resend(0);
        b.resend(100);
        assert_eq!(b.first_lost(), Some(400), "SACKed segments are skipped");
        assert_eq!(b.pipe(600), 200);
    }

    #[test]
    fn cumulative_acks_release_the_counters_of_the_segments_they_cover() {
        let mut b = board(6);
        b.apply_sack([(300, 500)].into_iter());
        b.mark_all_lost();
        b.ack(400);
        assert_eq!((b.sacked_bytes(), b.lost_bytes()), (100, 100));
        assert_eq!(b.front().map(|s| s.seq), Some(400));
        b.ack(600);
        assert_eq!((b.sacked_bytes(), b.lost_bytes(), b.pipe(0)), (0, 0, 0));
    }
}
