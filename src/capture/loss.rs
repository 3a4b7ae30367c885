//! Retransmissions and whether each was needed: the evidence a capture holds that a segment was
//! really lost, for the wait W of Allman & Paxson, "On estimating end-to-end network path
//! properties", SIGCOMM 1999, §2 (docs/metrics.md). A&P had sender *and* receiver traces; a
//! single capture point has only indirect evidence, weighed here from strongest to weakest:
//!
//! 1. **acked** — the data was acknowledged (cumulatively, or every overlapped segment SACKed)
//!    at the capture point before the resend: it had arrived; the resend was not needed.
//! 2. **dsack** — the receiver reported the resent range as a duplicate (RFC 2883 D-SACK): it
//!    received the data twice, so the earlier transmission had arrived (or arrived late).
//! 3. **ts** — the first ACK covering the resent range echoes a TSval (RFC 7323 §4.3: the
//!    receiver echoes the segment that advanced its window). The resend's own TSval: the
//!    resend filled the hole, the original never arrived — needed (`ts-resend`). An older
//!    TSval: the original's ACK, the resend was spurious (`ts-original`; the Eifel detection
//!    algorithm, RFC 3522 §2).
//! 4. **unacked** — none of the above: the data was never acknowledged before the resend and
//!    nothing says it arrived. Presumed lost (needed). A&P's receiver trace would say more; at a
//!    capture between the loss and the receiver this is the best available.
//! 5. **unknown** — the capture holds no earlier transmission of the data (e.g. its segment
//!    state was released after an idle period): no send time, never scored.
//!
//! A later piece of evidence overrides an earlier weaker one (a D-SACK arriving after a TS echo
//! of the resend means the original arrived late, not that it was lost).

/// What the capture says about one retransmission (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Evidence {
    Acked = 0,
    Dsack = 1,
    TsOriginal = 2,
    TsResend = 3,
    Unacked = 4,
    Unknown = 5,
}

impl Evidence {
    pub const ALL: [Evidence; 6] = [
        Evidence::Acked,
        Evidence::Dsack,
        Evidence::TsOriginal,
        Evidence::TsResend,
        Evidence::Unacked,
        Evidence::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Evidence::Acked => "acked",
            Evidence::Dsack => "dsack",
            Evidence::TsOriginal => "ts-original",
            Evidence::TsResend => "ts-resend",
            Evidence::Unacked => "unacked",
            Evidence::Unknown => "unknown",
        }
    }

    /// The earlier transmission was really lost: the resend was needed.
    pub fn needed(self) -> bool {
        matches!(self, Evidence::TsResend | Evidence::Unacked)
    }

    /// Whether later evidence `e` replaces this one: `acked` and `unknown` are final, a D-SACK
    /// overrides a TS echo, a TS echo overrides the presumption.
    pub(crate) fn replaced_by(self, e: Evidence) -> bool {
        match self {
            Evidence::Acked | Evidence::Unknown | Evidence::Dsack => false,
            Evidence::TsOriginal | Evidence::TsResend => e == Evidence::Dsack,
            Evidence::Unacked => true,
        }
    }
}

/// One retransmitted packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retransmission {
    pub conn: u32,
    /// Direction of the resent data (as `Samples::dir`).
    pub dir: u8,
    /// Sequence range of the resent packet `[start, end)`.
    pub seq_start: u32,
    pub seq_end: u32,
    /// Time (ns from the first frame) and frame of the resend.
    pub resent: i64,
    pub frame: u64,
    /// The transmission this resend repeats — the latest earlier one of the first outstanding,
    /// not SACKed segment it overlaps — or `None` when the capture holds none ([`Evidence::Unknown`],
    /// or data already acknowledged).
    pub sent: Option<i64>,
    pub ref_frame: u64,
    /// When the sender's retransmission timer covering that data was (re)started: the later of
    /// its send time and the last ACK that advanced the cumulative ACK before the resend
    /// (RFC 6298 §5.1, §5.3). `None` with `sent`.
    pub timer_start: Option<i64>,
    /// 1 for the first resend of that data, 2 when a resend is resent, ...
    pub attempt: u16,
    /// Duplicate ACKs seen since the cumulative ACK last advanced (RFC 5681 §2): ≥ 3, or SACK
    /// blocks, suggest a fast retransmit rather than a timeout.
    pub dupacks: u32,
    pub evidence: Evidence,
}

/// A retransmission whose evidence is still open: waiting for the first ACK covering it (TS
/// echo) and for D-SACKs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open {
    pub idx: u32,
    pub start: u32,
    pub end: u32,
    /// TSval of the resend.
    pub tsval: Option<u32>,
}

/// Open retransmissions kept per direction: D-SACKs come about one RTT after the resend, so
/// only the latest few matter; the oldest are settled as they are.
pub(crate) const MAX_OPEN: usize = 1024;

/// The evidence a TS echo `ecr` on the first ACK covering a resend gives (RFC 7323 §4.3,
/// RFC 3522 §2), or `None` when it says nothing (an echo of a later packet).
pub(crate) fn ts_evidence(resend_tsval: Option<u32>, ecr: Option<u32>) -> Option<Evidence> {
    let (val, ecr) = (resend_tsval?, ecr?);
    if ecr == val {
        Some(Evidence::TsResend)
    } else if super::track::seq_lt(ecr, val) {
        Some(Evidence::TsOriginal)
    } else {
        None
    }
}

/// Whether the first SACK block of an ACK is a D-SACK (RFC 2883 §4): at or below the
/// cumulative ACK, or inside the second block.
pub(crate) fn is_dsack(blocks: &[(u32, u32)], ack: u32) -> bool {
    use super::track::{seq_ge, seq_le};
    match blocks {
        [] => false,
        [(l, r), rest @ ..] => {
            seq_le(*r, ack)
                || rest
                    .first()
                    .is_some_and(|(l2, r2)| seq_ge(*l, *l2) && seq_le(*r, *r2))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dsack_is_the_first_block_below_the_ack_or_inside_the_second() {
        assert!(is_dsack(&[(100, 200)], 300));
        assert!(is_dsack(&[(500, 600), (400, 700)], 300));
        assert!(!is_dsack(&[(400, 500)], 300));
        assert!(!is_dsack(&[(400, 500), (600, 700)], 300));
        assert!(!is_dsack(&[], 300));
    }

    #[test]
    fn an_echo_of_the_resend_means_the_original_was_lost_and_an_older_echo_that_it_arrived() {
        assert_eq!(ts_evidence(Some(50), Some(50)), Some(Evidence::TsResend));
        assert_eq!(ts_evidence(Some(50), Some(40)), Some(Evidence::TsOriginal));
        assert_eq!(ts_evidence(Some(50), Some(60)), None);
        assert_eq!(ts_evidence(None, Some(60)), None);
    }

    #[test]
    fn a_dsack_overrides_a_ts_echo_but_nothing_overrides_an_ack_seen_before_the_resend() {
        assert!(Evidence::TsResend.replaced_by(Evidence::Dsack));
        assert!(Evidence::Unacked.replaced_by(Evidence::TsOriginal));
        assert!(!Evidence::Acked.replaced_by(Evidence::Dsack));
        assert!(!Evidence::Dsack.replaced_by(Evidence::TsResend));
    }
}
