//! F-RTO, Forward RTO-Recovery (RFC 5682): a sender-only detector of spurious timeouts that needs
//! no TCP option. After the timeout's retransmission of the first unacknowledged segment, the
//! first new ACK lets the sender transmit two *new* segments instead of go-back-N
//! retransmissions; if the next ACK then acknowledges data that was never retransmitted, the
//! original transmissions were only delayed and the timeout was spurious (SPUR_TO). docs/algorithms.md
//! §9.9. The response is the sender's undo-able timeout response, shared with Eifel
//! ([`super::sender::Sender::undo_timeout`]).
//!
//! Two variants, one state machine, the branches kept apart by [`Variant`]:
//! - [`Variant::Basic`], RFC 5682 §2 (any sender, with or without SACK);
//! - [`Variant::Sack`], RFC 5682 §3, the SACK-enhanced algorithm (needs SACK).
//!
//! Choices where the RFC leaves room (also in docs/scenarios.md):
//! - Judged retransmission: the timeout's retransmission of SND.UNA, scored by the spurious oracle
//!   like Eifel's. F-RTO judges it exactly once: "spurious" at step 3b, "needed" whenever it falls
//!   back to conventional RTO recovery (steps 1, 2a, 2b without new data, 3a) — SpuriousRecovery
//!   stays FALSE there — including a later timeout that ends a detection under way.
//! - §2 step 2b / §3 step 2b "cannot send new data" (application or receiver window): the
//!   recommended action, conventional recovery; the alternatives of Appendix A are not built.
//! - §3 step 2 "if the retransmission timeout expires again, go to step 1": the detection restarts
//!   on the new retransmission unless RecoveryPoint ≥ SND.UNA; §2 step 1 falls back to conventional
//!   recovery instead ("already in RTO recovery").

use super::eifel::Verdict;
use super::{SpuriousDetection, TcpOptions};
use crate::sim::component::{Component, Declaration};

/// `tcp.spurious_detection = "frto"`.
pub const COMPONENT: Component<SpuriousDetection, TcpOptions> = Component {
    decl: Declaration {
        name: "frto",
        aliases: &[],
        summary: "F-RTO: two new segments after the first new ACK; an ACK of never-retransmitted data next => spurious (no TCP option)",
        source: "RFC 5682 §2; src/sim/tcp/frto.rs",
        params: &[],
        defaults: &[],
    },
    build: |_| Ok(SpuriousDetection::Frto(Variant::Basic)),
};

/// `tcp.spurious_detection = "frto-sack"`.
pub const SACK_COMPONENT: Component<SpuriousDetection, TcpOptions> = Component {
    decl: Declaration {
        name: "frto-sack",
        aliases: &[],
        summary: "SACK-enhanced F-RTO: as frto, reading SACK information against RecoveryPoint (needs sack)",
        source: "RFC 5682 §3; src/sim/tcp/frto.rs",
        params: &[],
        defaults: &[],
    },
    build: |a| if a.ctx.sack { Ok(SpuriousDetection::Frto(Variant::Sack)) } else { Err(a.inconsistent("\"frto-sack\" needs sack = true (RFC 5682 §3 reads the SACK information)")) },
};

/// Which algorithm of RFC 5682.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// §2: decisions on cumulative ACKs and duplicate ACKs only.
    Basic,
    /// §3: the SACK-enhanced algorithm; duplicate ACKs carrying SACK information are read.
    Sack,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Idle,
    /// Step 2: waiting for the first (§2) / first new (§3) ACK after the timeout's retransmission
    /// of [judged.seq, end).
    First {
        judged: (u64, u8),
        end: u64,
    },
    /// Step 3: up to two new segments went out after the first new ACK.
    Second {
        judged: (u64, u8),
    },
}

/// What the sender saw on one ACK, as F-RTO reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckFacts {
    pub ack: u64,
    /// SND.UNA before this ACK.
    pub snd_una: u64,
    /// SND.MAX: one past the highest byte sent so far.
    pub snd_max: u64,
    /// A duplicate ACK in RFC 5681's sense: it does not advance SND.UNA while data is outstanding.
    pub duplicate: bool,
    /// §3 only: one past the highest byte any SACK block of this ACK covers (0: no blocks).
    pub sack_high: u64,
    /// §3 only: bytes below RecoveryPoint this ACK SACKed that were not SACKed before.
    pub newly_sacked_below_point: u64,
}

/// What the sender does with the ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// F-RTO is not deciding anything on this ACK: process it as usual.
    Pass,
    /// Step 3 ignores this ACK (neither a duplicate nor a new cumulative ACK): process it, but
    /// send nothing conventional yet.
    Hold,
    /// Step 2b: send up to two new (never sent) segments instead of retransmissions, then report
    /// how many went out ([`Frto::sent_new`]).
    SendNew,
    /// Steps 2a and 3a: conventional RTO recovery (slow-start retransmissions) with cwnd at most
    /// `cap_segments` (None: as slow start left it). The timeout was judged needed.
    Conventional {
        cap_segments: Option<u64>,
        verdict: Verdict,
    },
    /// SPUR_TO: respond to the spurious timeout (RFC 5682 step 3b; Eifel's "spurious").
    /// `reset_recover`: `recover` ← SND.UNA, so later losses may start fast recovery (§2 step 3b;
    /// the SACK variant, §3, says nothing of RecoveryPoint there, and Eifel does not touch it).
    Spurious {
        verdict: Verdict,
        reset_recover: bool,
    },
}

#[derive(Debug, Clone)]
pub struct Frto {
    variant: Variant,
    step: Step,
    /// §2 "recover" / §3 "RecoveryPoint", as one past the highest byte it names (None: never set).
    point: Option<u64>,
}

impl Frto {
    pub fn new(variant: Variant) -> Self {
        Self {
            variant,
            step: Step::Idle,
            point: None,
        }
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// A detection is under way (steps 2–3).
    pub fn watching(&self) -> bool {
        self.step != Step::Idle
    }

    /// Step 3 is waiting (the sender holds conventional retransmissions back).
    pub fn in_step3(&self) -> bool {
        matches!(self.step, Step::Second { .. })
    }

    /// §3's RecoveryPoint (or §2's recover), for the sender's SACK bookkeeping.
    pub fn point(&self) -> Option<u64> {
        self.point
    }

    /// The segment whose timeout retransmission awaits a verdict: the oracle must not resolve it
    /// before the verdict (step 3 comes after the ACK that covered it).
    pub fn judging(&self) -> Option<u64> {
        self.judged().map(|j| j.0)
    }

    fn judged(&self) -> Option<(u64, u8)> {
        match self.step {
            Step::Idle => None,
            Step::First { judged, .. } | Step::Second { judged } => Some(judged),
        }
    }

    fn verdict(judged: (u64, u8), spurious: bool) -> Verdict {
        Verdict {
            seq: judged.0,
            tx: judged.1,
            spurious,
        }
    }

    /// Ends a detection as "needed" (SpuriousRecovery stays FALSE), if one was under way.
    fn give_up(&mut self) -> Option<Verdict> {
        let v = self.judged().map(|j| Self::verdict(j, false));
        self.step = Step::Idle;
        v
    }

    /// The sender entered fast recovery with RecoveryPoint = `snd_max` (RFC 6675 §5 step 4):
    /// §3 step 1 does not start a detection while the cumulative ACK is below it.
    pub fn on_fast_recovery(&mut self, snd_max: u64) {
        if self.variant == Variant::Sack {
            self.point = Some(snd_max);
        }
    }

    /// Step 1: the retransmission timer expired and the first unacknowledged segment [seq, end),
    /// transmission number `tx`, was retransmitted; SpuriousRecovery = FALSE. Returns the verdict
    /// of a detection this timeout ended.
    pub fn on_timeout(&mut self, seq: u64, tx: u8, end: u64, snd_max: u64) -> Option<Verdict> {
        let ended = self.give_up();
        let snd_una = seq;
        // §2 step 1: "already in RTO recovery AND recover ≥ SND.UNA"; §3 step 1: "RecoveryPoint
        // ≥ SND.UNA". Stored one past the byte, so ≥ becomes >.
        let conventional = self.point.is_some_and(|p| p > snd_una);
        match self.variant {
            // §2 keeps `recover` as RFC 6582 does at every timeout: the RTO recovery lasts until
            // the ACK passes the data sent before it.
            Variant::Basic => self.point = Some(snd_max),
            // §3 step 1: only the fallback sets RecoveryPoint (step 2 sets it on the first new ACK).
            Variant::Sack if conventional => self.point = Some(snd_max),
            Variant::Sack => {}
        }
        if !conventional && end > seq {
            self.step = Step::First {
                judged: (seq, tx),
                end,
            };
        }
        ended
    }

    /// An ACK arrived while a detection may be under way (steps 2 and 3).
    pub fn on_ack(&mut self, a: &AckFacts) -> Decision {
        let advances = a.ack > a.snd_una;
        match (self.step, self.variant) {
            (Step::Idle, _) => Decision::Pass,
            // §2 step 2: the first ACK after the retransmission decides.
            (Step::First { judged, end }, Variant::Basic) => {
                if !advances && !a.duplicate {
                    return Decision::Pass;
                }
                self.point = Some(a.snd_max); // store the highest sequence number sent in `recover`
                                              // 2a: a duplicate ACK, an ACK covering `recover`, or one not covering all of
                                              // the retransmitted segment: conventional recovery.
                if a.duplicate || a.ack >= a.snd_max || a.ack < end {
                    self.step = Step::Idle;
                    return Decision::Conventional {
                        cap_segments: None,
                        verdict: Self::verdict(judged, false),
                    };
                }
                // 2b: it advances the window below `recover`: two new segments, then step 3.
                self.step = Step::Second { judged };
                Decision::SendNew
            }
            // §3 step 2: duplicate ACKs only update the scoreboard; wait for a new ACK.
            (Step::First { judged, .. }, Variant::Sack) => {
                if !advances {
                    return Decision::Pass;
                }
                self.point = Some(a.snd_max); // RecoveryPoint = highest sequence number sent
                if a.ack >= a.snd_max {
                    // 2a: covers RecoveryPoint: conventional, cwnd ≤ 2·MSS.
                    self.step = Step::Idle;
                    return Decision::Conventional {
                        cap_segments: Some(2),
                        verdict: Self::verdict(judged, false),
                    };
                }
                // 2b: below RecoveryPoint and above SND.UNA.
                self.step = Step::Second { judged };
                Decision::SendNew
            }
            // §2 step 3: a duplicate ACK means the segments sent before the timeout were lost.
            (Step::Second { judged }, Variant::Basic) => {
                if a.duplicate {
                    self.step = Step::Idle;
                    Decision::Conventional {
                        cap_segments: Some(3),
                        verdict: Self::verdict(judged, false),
                    }
                } else if advances {
                    // 3b: it acknowledges data not retransmitted after the timeout: SPUR_TO, and
                    // `recover` ← SND.UNA.
                    self.step = Step::Idle;
                    self.point = Some(a.ack);
                    Decision::Spurious {
                        verdict: Self::verdict(judged, true),
                        reset_recover: self.variant == Variant::Basic,
                    }
                } else {
                    Decision::Hold
                }
            }
            // §3 step 3: only duplicate ACKs and new cumulative ACKs count; others are ignored.
            (Step::Second { judged }, Variant::Sack) => {
                if !advances && !a.duplicate {
                    return Decision::Hold;
                }
                let point = self.point.unwrap_or(a.snd_max);
                let beyond = a.ack > point || a.sack_high > point;
                let new_below = (advances && a.ack <= point) || a.newly_sacked_below_point > 0;
                self.step = Step::Idle;
                if beyond || !new_below {
                    // 3a: (S)ACK information covers more than RecoveryPoint, or a duplicate ACK
                    // acknowledges nothing new below it: conventional, cwnd ≤ 3·MSS.
                    Decision::Conventional {
                        cap_segments: Some(3),
                        verdict: Self::verdict(judged, false),
                    }
                } else {
                    // 3b: new data below RecoveryPoint, sent before the timeout, was acknowledged.
                    Decision::Spurious {
                        verdict: Self::verdict(judged, true),
                        reset_recover: self.variant == Variant::Basic,
                    }
                }
            }
        }
    }

    /// Step 2b went through: `n` new segments were sent. With none (no new data, or the receiver
    /// window is full), fall back to conventional recovery as §2/§3 step 2b recommend; returns
    /// that verdict.
    pub fn sent_new(&mut self, n: u32) -> Option<Verdict> {
        if n == 0 {
            self.give_up()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A sender that sent 10 segments and timed out on the first one.
    fn timed_out(variant: Variant) -> Frto {
        let mut f = Frto::new(variant);
        assert_eq!(f.on_timeout(0, 1, MSS, 10 * MSS), None);
        assert!(f.watching());
        f
    }

    fn ack(ack: u64, snd_una: u64, snd_max: u64) -> AckFacts {
        AckFacts {
            ack,
            snd_una,
            snd_max,
            duplicate: ack == snd_una,
            ..AckFacts::default()
        }
    }

    #[test]
    fn acks_for_never_retransmitted_data_after_two_new_segments_mean_the_timeout_was_spurious() {
        for variant in [Variant::Basic, Variant::Sack] {
            let mut f = timed_out(variant);
            // Step 2: the delayed original of segment 0 is acknowledged; below recover: 2b.
            assert_eq!(
                f.on_ack(&ack(MSS, 0, 10 * MSS)),
                Decision::SendNew,
                "{variant:?}"
            );
            assert_eq!(f.sent_new(2), None);
            assert!(f.in_step3());
            // Step 3: segment 1, never retransmitted, is acknowledged: 3b.
            assert_eq!(
                f.on_ack(&ack(2 * MSS, MSS, 12 * MSS)),
                Decision::Spurious {
                    verdict: Verdict {
                        seq: 0,
                        tx: 1,
                        spurious: true
                    },
                    reset_recover: variant == Variant::Basic
                },
                "{variant:?}"
            );
            assert!(!f.watching());
        }
    }

    #[test]
    fn a_duplicate_ack_after_the_new_segments_means_the_window_was_lost() {
        for variant in [Variant::Basic, Variant::Sack] {
            let mut f = timed_out(variant);
            assert_eq!(f.on_ack(&ack(MSS, 0, 10 * MSS)), Decision::SendNew);
            f.sent_new(2);
            // The new segment 10 arrives above a hole: a duplicate ACK, SACKing 10 (above
            // RecoveryPoint) for the SACK variant.
            let dup = AckFacts {
                sack_high: 11 * MSS,
                ..ack(MSS, MSS, 12 * MSS)
            };
            assert_eq!(
                f.on_ack(&dup),
                Decision::Conventional {
                    cap_segments: Some(3),
                    verdict: Verdict {
                        seq: 0,
                        tx: 1,
                        spurious: false
                    }
                },
                "{variant:?}"
            );
        }
    }

    #[test]
    fn an_ack_covering_everything_sent_falls_back_to_conventional_recovery() {
        // §2 step 2a / §3 step 2a: nothing outstanding is left to tell original from resent.
        let mut f = timed_out(Variant::Basic);
        assert!(matches!(
            f.on_ack(&ack(10 * MSS, 0, 10 * MSS)),
            Decision::Conventional {
                cap_segments: None,
                ..
            }
        ));
        let mut f = timed_out(Variant::Sack);
        assert!(matches!(
            f.on_ack(&ack(10 * MSS, 0, 10 * MSS)),
            Decision::Conventional {
                cap_segments: Some(2),
                ..
            }
        ));
    }

    #[test]
    fn the_basic_variant_gives_up_on_a_first_duplicate_ack_and_the_sack_variant_waits() {
        let mut basic = timed_out(Variant::Basic);
        assert!(
            matches!(
                basic.on_ack(&ack(0, 0, 10 * MSS)),
                Decision::Conventional { .. }
            ),
            "§2 step 2a"
        );
        let mut sack = timed_out(Variant::Sack);
        assert_eq!(
            sack.on_ack(&ack(0, 0, 10 * MSS)),
            Decision::Pass,
            "§3 step 2: stay and wait"
        );
        assert_eq!(sack.on_ack(&ack(MSS, 0, 10 * MSS)), Decision::SendNew);
    }

    #[test]
    fn the_basic_variant_needs_the_whole_retransmitted_segment_acknowledged() {
        // §2 step 2a: the ACK does not cover all of the data retransmitted in step 1.
        let mut f = Frto::new(Variant::Basic);
        f.on_timeout(0, 1, MSS, 10 * MSS);
        assert!(matches!(
            f.on_ack(&ack(MSS / 2, 0, 10 * MSS)),
            Decision::Conventional { .. }
        ));
    }

    #[test]
    fn a_sack_ack_in_step3_that_sacks_old_data_below_recovery_point_is_spurious() {
        // §3 step 3b: a duplicate ACK whose SACK information acknowledges new data below
        // RecoveryPoint (a segment sent before the timeout) also proves the original arrived.
        let mut f = timed_out(Variant::Sack);
        f.on_ack(&ack(MSS, 0, 10 * MSS));
        f.sent_new(2);
        let dup = AckFacts {
            sack_high: 3 * MSS,
            newly_sacked_below_point: MSS,
            ..ack(MSS, MSS, 12 * MSS)
        };
        assert!(matches!(
            f.on_ack(&dup),
            Decision::Spurious {
                reset_recover: false,
                ..
            }
        ));
    }

    #[test]
    fn step3_ignores_acks_that_are_neither_duplicate_nor_new() {
        let mut f = timed_out(Variant::Sack);
        f.on_ack(&ack(MSS, 0, 10 * MSS));
        f.sent_new(2);
        let nothing = AckFacts {
            duplicate: false,
            ..ack(MSS, MSS, 12 * MSS)
        };
        assert_eq!(f.on_ack(&nothing), Decision::Hold);
        assert!(f.in_step3());
    }

    #[test]
    fn without_new_data_to_send_the_detection_falls_back_and_judges_the_timeout_needed() {
        let mut f = timed_out(Variant::Basic);
        assert_eq!(f.on_ack(&ack(MSS, 0, 10 * MSS)), Decision::SendNew);
        assert_eq!(
            f.sent_new(0),
            Some(Verdict {
                seq: 0,
                tx: 1,
                spurious: false
            })
        );
        assert!(!f.watching());
    }

    #[test]
    fn a_second_timeout_ends_the_detection_and_only_the_sack_variant_restarts_it() {
        // §2 step 1: already in RTO recovery with recover ≥ SND.UNA: conventional recovery.
        let mut basic = timed_out(Variant::Basic);
        assert_eq!(
            basic.on_timeout(0, 2, MSS, 10 * MSS),
            Some(Verdict {
                seq: 0,
                tx: 1,
                spurious: false
            })
        );
        assert!(!basic.watching());
        // §3 step 2 → step 1: RecoveryPoint was not set by the first timeout, so it restarts.
        let mut sack = timed_out(Variant::Sack);
        assert_eq!(
            sack.on_timeout(0, 2, MSS, 10 * MSS),
            Some(Verdict {
                seq: 0,
                tx: 1,
                spurious: false
            })
        );
        assert!(sack.watching());
    }

    #[test]
    fn no_detection_starts_below_a_fast_recoverys_recovery_point_in_the_sack_variant() {
        // §3 step 1: RecoveryPoint ≥ SND.UNA (a timeout during SACK recovery).
        let mut f = Frto::new(Variant::Sack);
        f.on_fast_recovery(10 * MSS);
        assert_eq!(f.on_timeout(0, 1, MSS, 10 * MSS), None);
        assert!(!f.watching());
        // The basic variant only looks at RTO recovery.
        let mut f = Frto::new(Variant::Basic);
        f.on_fast_recovery(10 * MSS);
        f.on_timeout(0, 1, MSS, 10 * MSS);
        assert!(f.watching());
    }
}
