//! Spurious-timeout detection as a seam, like the congestion control ([`super::cc`]) and the loss
//! recovery ([`super::recovery`]): the sender holds one [`SpuriousDetector`], built from the
//! typed `tcp.spurious_detection` choice ([`SpuriousDetection::build`]), and only acts on what it
//! decides. The algorithms stay in their own files: Eifel detection ([`super::eifel`], RFC 3522)
//! and F-RTO ([`super::frto`], RFC 5682 §2 and §3). What the sender does once a timeout is found
//! spurious (`tcp.spurious_response`) is not the detector's: `Sender::respond`.
//!
//! The sender calls it at four points: the timeout's retransmission ([`SpuriousDetector::on_timeout`]),
//! every ACK ([`SpuriousDetector::sack_mark`] before the SACK blocks are read, then
//! [`SpuriousDetector::on_ack`] → a [`Decision`]), entering fast recovery
//! ([`SpuriousDetector::on_fast_recovery`]), and F-RTO's two new segments
//! ([`SpuriousDetector::sent_new`]); the spurious oracle asks [`SpuriousDetector::judging`].

use super::eifel::{Eifel, Verdict};
use super::frto::{AckFacts, Frto, Variant};
use super::recovery::Flight;
use super::SpuriousDetection;
use crate::sim::packet::Packet;
use crate::time::Nanos;

/// The detector the sender consults (enum dispatch, as [`super::cc::CongestionControl`]).
#[derive(Debug, Clone)]
pub enum SpuriousDetector {
    /// No detection (`tcp.spurious_detection = "off"`): every timeout stands.
    Off,
    /// Eifel detection (RFC 3522), `"eifel"`.
    Eifel(Eifel),
    /// F-RTO (RFC 5682 §2 or §3), `"frto"` or `"frto-sack"`.
    Frto(Frto),
}

impl SpuriousDetection {
    /// The detector this choice names.
    pub fn build(self) -> SpuriousDetector {
        match self {
            Self::Off => SpuriousDetector::Off,
            Self::Eifel => SpuriousDetector::Eifel(Eifel::default()),
            Self::Frto(v) => SpuriousDetector::Frto(Frto::new(v)),
        }
    }
}

/// What the sender does with an ACK, as the detector decides: F-RTO's decisions, which Eifel's
/// verdicts are a subset of (Pass, Conventional without a cap, Spurious without `reset_recover`).
pub use super::frto::Decision;

/// RFC 5682 §3 step 3 reads the bytes an ACK newly SACKs below RecoveryPoint: the point and the
/// bytes SACKed below it before the ACK's SACK blocks were read.
#[derive(Debug, Clone, Copy)]
pub struct SackMark {
    point: u64,
    sacked_before: u64,
}

fn sacked_below(seq: &Flight, p: u64) -> u64 {
    seq.board
        .iter()
        .filter(|s| s.sacked && s.end() <= p)
        .map(|s| s.len as u64)
        .sum::<u64>()
}

impl SpuriousDetector {
    /// Before the ACK's SACK blocks reach the scoreboard: what SACK-enhanced F-RTO in step 3
    /// must measure (None for every other detector and state).
    pub fn sack_mark(&self, seq: &Flight) -> Option<SackMark> {
        match self {
            Self::Frto(f) if f.in_step3() && f.variant() == Variant::Sack => {
                f.point().map(|point| SackMark {
                    point,
                    sacked_before: sacked_below(seq, point),
                })
            }
            _ => None,
        }
    }

    /// An ACK arrived: `seq` after the SACK blocks were read and before SND.UNA moves, `flight`
    /// the FlightSize before the ACK, `mark` what [`Self::sack_mark`] measured.
    pub fn on_ack(
        &mut self,
        pkt: &Packet,
        seq: &Flight,
        flight: u64,
        mark: Option<SackMark>,
    ) -> Decision {
        let advances = pkt.ack > seq.snd_una;
        match self {
            Self::Off => Decision::Pass,
            // RFC 3522 §3.2 steps (2)–(4): the first acceptable ACK after a timeout's retransmission.
            Self::Eifel(e) => match advances.then(|| e.on_acceptable_ack(pkt.ts_ecr)).flatten() {
                Some(v) if v.spurious => Decision::Spurious {
                    verdict: v,
                    reset_recover: false,
                },
                Some(v) => Decision::Conventional {
                    cap_segments: None,
                    verdict: v,
                },
                None => Decision::Pass,
            },
            // RFC 5682 §2/§3 steps 2–3.
            Self::Frto(f) if f.watching() => {
                let facts = AckFacts {
                    ack: pkt.ack,
                    snd_una: seq.snd_una,
                    snd_max: seq.snd_max,
                    duplicate: pkt.ack == seq.snd_una && flight > 0,
                    sack_high: pkt.sack.iter(pkt.ack).map(|(_, e)| e).max().unwrap_or(0),
                    newly_sacked_below_point: mark.map_or(0, |m| {
                        sacked_below(seq, m.point).saturating_sub(m.sacked_before)
                    }),
                };
                f.on_ack(&facts)
            }
            Self::Frto(_) => Decision::Pass,
        }
    }

    /// The timeout's retransmission of SND.UNA went out (`sent` bytes, at `now`, the TSval it
    /// carried); `first_of_episode`: no back-off yet. Returns the verdict of a detection this
    /// timeout ended.
    pub fn on_timeout(
        &mut self,
        seq: &Flight,
        sent: u32,
        first_of_episode: bool,
        now: Nanos,
    ) -> Option<Verdict> {
        if sent == 0 {
            return None;
        }
        let una = seq.snd_una;
        let tx = || seq.board.iter().find(|s| s.seq == una).map_or(1, |s| s.tx);
        match self {
            Self::Off => None,
            // RFC 3522 §3.2 step (1): only the first retransmission of an episode arms the detector.
            Self::Eifel(e) => {
                if first_of_episode {
                    e.on_timeout_retransmit(una, tx(), now); // the retransmission's TSval is `now`
                }
                None
            }
            // RFC 5682 step 1, at every timeout (the detector decides whether a detection starts).
            Self::Frto(f) => f.on_timeout(una, tx(), una + sent as u64, seq.snd_max),
        }
    }

    /// The sender entered fast recovery with RecoveryPoint = `snd_max` (RFC 6675 §5 step 4), read
    /// by RFC 5682 §3 step 1.
    pub fn on_fast_recovery(&mut self, snd_max: u64) {
        if let Self::Frto(f) = self {
            f.on_fast_recovery(snd_max);
        }
    }

    /// After [`Decision::SendNew`]: `n` new segments went out. Some verdict if the detection fell
    /// back to conventional recovery (none could be sent).
    pub fn sent_new(&mut self, n: u32) -> Option<Verdict> {
        match self {
            Self::Frto(f) => f.sent_new(n),
            _ => None,
        }
    }

    /// The segment whose timeout retransmission awaits a verdict after the cumulative ACK passed
    /// it (F-RTO's step 3), which the spurious oracle must not resolve yet.
    pub fn judging(&self) -> Option<u64> {
        match self {
            Self::Frto(f) => f.judging(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::packet::{Ecn, Kind, SackBlocks};
    use crate::sim::tcp::scoreboard::Scoreboard;

    const MSS: u64 = 1000;

    /// A sender's sequence space: SND.UNA and SND.MAX in segments, nothing SACKed.
    fn flight(una: u64, max: u64) -> Flight {
        Flight {
            snd_una: una * MSS,
            snd_nxt: max * MSS,
            snd_max: max * MSS,
            app_bytes: u64::MAX,
            rwnd: 1 << 30,
            mss: MSS,
            board: Scoreboard::new(MSS as u32),
        }
    }

    fn ack(segments: u64, ts_ecr: Nanos) -> Packet {
        Packet {
            flow: 0,
            src: 1,
            dst: 0,
            kind: Kind::Ack,
            size: 40,
            seq: 0,
            len: 0,
            ack: segments * MSS,
            rwnd: 1 << 30,
            tx: 0,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
            ts_val: 0,
            ts_ecr,
            sack: SackBlocks::default(),
        }
    }

    /// The detector's decision on an ACK of `segments` while `seq` is the sequence space.
    fn decide(d: &mut SpuriousDetector, seq: &Flight, segments: u64, ts_ecr: Nanos) -> Decision {
        let mark = d.sack_mark(seq);
        d.on_ack(&ack(segments, ts_ecr), seq, seq.size(), mark)
    }

    #[test]
    fn with_detection_off_every_timeout_stands() {
        let mut d = SpuriousDetection::Off.build();
        assert_eq!(d.on_timeout(&flight(0, 10), MSS as u32, true, 500), None);
        assert_eq!(decide(&mut d, &flight(0, 10), 10, 10), Decision::Pass);
        assert_eq!(d.judging(), None);
    }

    #[test]
    fn eifel_is_decided_by_the_first_ack_that_advances_not_by_a_duplicate() {
        // RFC 3522 §3.2 step (2): only an acceptable ACK decides; a duplicate leaves it armed.
        let mut d = SpuriousDetection::Eifel.build();
        assert_eq!(d.on_timeout(&flight(0, 10), MSS as u32, true, 500), None);
        assert_eq!(decide(&mut d, &flight(0, 10), 0, 10), Decision::Pass);
        let spurious = Verdict {
            seq: 0,
            tx: 1,
            spurious: true,
        };
        assert_eq!(
            decide(&mut d, &flight(0, 10), 4, 10),
            Decision::Spurious {
                verdict: spurious,
                reset_recover: false
            }
        );
        assert_eq!(
            decide(&mut d, &flight(4, 10), 6, 10),
            Decision::Pass,
            "one verdict per timeout"
        );
    }

    #[test]
    fn eifel_judges_only_the_first_retransmission_of_an_episode() {
        let mut d = SpuriousDetection::Eifel.build();
        assert_eq!(d.on_timeout(&flight(0, 10), MSS as u32, false, 500), None);
        assert_eq!(decide(&mut d, &flight(0, 10), 4, 10), Decision::Pass);
        // An echo of the retransmission itself: the timeout was needed, nothing capped.
        d.on_timeout(&flight(0, 10), MSS as u32, true, 500);
        let needed = Verdict {
            seq: 0,
            tx: 1,
            spurious: false,
        };
        assert_eq!(
            decide(&mut d, &flight(0, 10), 1, 500),
            Decision::Conventional {
                cap_segments: None,
                verdict: needed
            }
        );
    }

    #[test]
    fn basic_frto_resets_recover_on_a_spurious_timeout_and_the_sack_variant_does_not() {
        // RFC 5682 §2 step 3b sets recover ← SND.UNA; §3 step 3b leaves RecoveryPoint alone.
        for (variant, resets) in [(Variant::Basic, true), (Variant::Sack, false)] {
            let mut d = SpuriousDetection::Frto(variant).build();
            assert_eq!(d.on_timeout(&flight(0, 10), MSS as u32, true, 500), None);
            assert_eq!(d.judging(), Some(0));
            assert_eq!(decide(&mut d, &flight(0, 10), 2, 0), Decision::SendNew);
            assert_eq!(d.sent_new(2), None);
            assert_eq!(d.judging(), Some(0), "the oracle waits for step 3");
            let spurious = Verdict {
                seq: 0,
                tx: 1,
                spurious: true,
            };
            assert_eq!(
                decide(&mut d, &flight(2, 12), 3, 0),
                Decision::Spurious {
                    verdict: spurious,
                    reset_recover: resets
                }
            );
            assert_eq!(d.judging(), None);
        }
    }

    #[test]
    fn frto_falls_back_when_no_new_segment_could_be_sent() {
        let mut d = SpuriousDetection::Frto(Variant::Basic).build();
        d.on_timeout(&flight(0, 10), MSS as u32, true, 500);
        assert_eq!(decide(&mut d, &flight(0, 10), 2, 0), Decision::SendNew);
        assert_eq!(
            d.sent_new(0),
            Some(Verdict {
                seq: 0,
                tx: 1,
                spurious: false
            })
        );
        assert_eq!(d.judging(), None);
    }
}
