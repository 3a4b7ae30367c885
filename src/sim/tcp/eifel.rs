//! The Eifel detection algorithm (RFC 3522) for timeouts; a detection triggers the sender's
//! response to a spurious timeout (`tcp.spurious_response`, below). docs/algorithms.md §9.8.
//!
//! Detection needs timestamps (RFC 3522 §2: RFC 7323's TSecr names the transmission an ACK
//! answers). Only timeouts are judged — the response of RFC 4015 is defined for them, and a
//! spurious fast retransmit has no undo here yet.
//!
//! The response is the sender's (`tcp.spurious_response`): Linux's undo by default, or RFC 4015's
//! Eifel response in full ([`super::eifel_response`]): SND.NXT ← SND.MAX, cwnd = FlightSize +
//! min(bytes_acked, IW) and ssthresh = pipe_prev unless ECN-Echo, and the RTO adaptation.
//! Only SPUR_TO is detected (the first acceptable ACK after the retransmission); LATE_SPUR_TO
//! (RFC 4015 without timestamps) does not arise here.

use super::{SpuriousDetection, TcpOptions};
use crate::sim::component::{Component, Declaration};
use crate::time::Nanos;

/// `tcp.spurious_detection = "eifel"`.
pub const COMPONENT: Component<SpuriousDetection, TcpOptions> = Component {
    decl: Declaration {
        name: "eifel",
        aliases: &[],
        summary: "Eifel detection: the first ACK after a timeout's retransmission echoes an older timestamp => spurious (needs timestamps)",
        source: "RFC 3522 §3.2; src/sim/tcp/eifel.rs",
        params: &[],
        // RFC 3522 §2: the timestamp echo (TSecr) names the transmission an ACK answers.
        defaults: &[],
    },
    build: |a| if a.ctx.timestamps { Ok(SpuriousDetection::Eifel) } else { Err(a.inconsistent("\"eifel\" needs timestamps = true (RFC 3522 §2: TSecr names the transmission)")) },
};

/// What the detector is waiting for: the first acceptable ACK after the first retransmission of
/// a timeout episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Armed {
    /// RetransmitTS: the TSval carried by the retransmission (RFC 3522 §3.2 step (1)).
    retransmit_ts: Nanos,
    seq: u64,
    tx: u8,
}

/// A detector's judgement of one timeout retransmission, for the oracle to score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub seq: u64,
    pub tx: u8,
    /// The detector called the timeout spurious (SpuriousRecovery = SPUR_TO).
    pub spurious: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Eifel {
    armed: Option<Armed>,
}

impl Eifel {
    /// RFC 3522 §3.2 step (1): the first retransmission of the oldest outstanding segment after a
    /// timeout went out with TSval `ts_val`; SpuriousRecovery ← FALSE.
    pub fn on_timeout_retransmit(&mut self, seq: u64, tx: u8, ts_val: Nanos) {
        self.armed = Some(Armed {
            retransmit_ts: ts_val,
            seq,
            tx,
        });
    }

    /// Steps (2)–(4): an acceptable ACK (it acknowledges new data) echoing `ts_ecr`. The first one
    /// after the retransmission decides: TSecr < RetransmitTS means it answers the original
    /// transmission, so the timeout was spurious (SPUR_TO).
    pub fn on_acceptable_ack(&mut self, ts_ecr: Nanos) -> Option<Verdict> {
        let a = self.armed.take()?;
        Some(Verdict {
            seq: a.seq,
            tx: a.tx,
            spurious: ts_ecr < a.retransmit_ts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_echoing_the_original_transmission_marks_the_timeout_spurious() {
        // RFC 3522 §3.2 step (3): TSecr (10) < RetransmitTS (500): the original was ACKed.
        let mut e = Eifel::default();
        e.on_timeout_retransmit(1000, 1, 500);
        assert_eq!(
            e.on_acceptable_ack(10),
            Some(Verdict {
                seq: 1000,
                tx: 1,
                spurious: true
            })
        );
        assert_eq!(
            e.on_acceptable_ack(10),
            None,
            "only the first acceptable ACK decides (step (2))"
        );
    }

    #[test]
    fn an_ack_echoing_the_retransmission_means_the_timeout_was_needed() {
        // Step (3) → (DONE): TSecr = RetransmitTS: the retransmission filled the hole.
        let mut e = Eifel::default();
        e.on_timeout_retransmit(0, 1, 500);
        assert_eq!(
            e.on_acceptable_ack(500),
            Some(Verdict {
                seq: 0,
                tx: 1,
                spurious: false
            })
        );
    }

    #[test]
    fn without_a_timeout_nothing_is_judged() {
        assert_eq!(Eifel::default().on_acceptable_ack(3), None);
    }
}
