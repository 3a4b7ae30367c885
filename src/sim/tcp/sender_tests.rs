//! The sender alone, in the smoltcp manner: feed ACKs (and timer expiries) at given times, assert
//! which segments went out and what the window became. MSS = 1000 B, RFC 6298 timer (initial RTO
//! 1 s), one timed segment per RTT unless a test says otherwise.

use super::*;
use crate::sim::packet::SackBlocks;
use crate::sim::tcp::cc::CcSpec;
use crate::sim::tcp::recovery::RecoveryKind;
use crate::time::{MS, SEC};

const MSS: u64 = 1000;

struct Harness {
    s: Sender,
    out: Vec<Packet>,
    trace: Trace,
}

impl Harness {
    fn new(init_cwnd: u32, tweak: impl FnOnce(&mut TcpConfig)) -> Self {
        let mut cfg = TcpConfig {
            mss: MSS as u32,
            header: 40,
            init_cwnd,
            ..TcpConfig::default()
        };
        tweak(&mut cfg);
        let est = crate::rtt::build("rfc6298", &[]).unwrap();
        let mut h = Self {
            s: Sender::new(0, 0, 1, &cfg, u64::MAX, est),
            out: Vec::new(),
            trace: Trace::default(),
        };
        h.s.start(0, &mut h.out, &mut h.trace);
        h
    }

    /// What went out since the last call: (first byte in segments, transmission number).
    fn sent(&mut self) -> Vec<(u64, u8)> {
        self.out.drain(..).map(|p| (p.seq / MSS, p.tx)).collect()
    }

    fn ack_with(&mut self, at: Nanos, ack_segments: u64, sack: &[(u64, u64)], ece: bool) {
        let ack = ack_segments * MSS;
        let pkt = Packet {
            flow: 0,
            src: 1,
            dst: 0,
            kind: Kind::Ack,
            size: 40,
            seq: 0,
            len: 0,
            ack,
            rwnd: 1 << 30,
            tx: 0,
            ecn: Ecn::NotEct,
            ece,
            cwr: false,
            ts_val: 0,
            ts_ecr: 0,
            sack: SackBlocks::new(ack, sack.iter().map(|&(a, b)| (a * MSS, b * MSS))),
        };
        self.s.on_ack(&pkt, at, &mut self.out, &mut self.trace);
    }

    fn ack(&mut self, at: Nanos, ack_segments: u64) {
        self.ack_with(at, ack_segments, &[], false);
    }

    /// Let the timer fire at its deadline; returns when that was.
    fn expire(&mut self) -> Nanos {
        let at = self.s.rto_deadline().expect("the timer runs");
        self.s.on_rto(at, &mut self.out, &mut self.trace);
        at
    }

    /// (cwnd, ssthresh) in bytes.
    fn window(&self) -> (u64, u64) {
        let w = self.s.window();
        (w.cwnd, w.ssthresh)
    }
}

/// Four segments out, the first ACKed (slow start: cwnd 5), two more sent: 0..6 outstanding
/// from snd_una = 1, then three duplicate ACKs for 1.
fn three_dupacks_after_one_ack(h: &mut Harness) {
    assert_eq!(h.sent(), vec![(0, 0), (1, 0), (2, 0), (3, 0)]);
    h.ack(100 * MS, 1);
    assert_eq!(h.sent(), vec![(4, 0), (5, 0)]);
    for i in 0..3 {
        h.ack(110 * MS + i * MS, 1);
    }
}

#[test]
fn the_third_duplicate_ack_resends_the_hole_and_sets_cwnd_to_ssthresh_plus_three_segments() {
    let mut h = Harness::new(4, |_| {});
    h.ack(100 * MS, 0); // a duplicate of nothing outstanding yet counts nothing
    three_dupacks_after_one_ack(&mut h);
    // FlightSize 5 segments → ssthresh = max(2.5, 2) segments; cwnd = ssthresh + 3 (RFC 5681 §3.2).
    assert_eq!(h.sent(), vec![(1, 1)]);
    assert_eq!(h.window(), (2500 + 3 * MSS, 2500));
    assert!(h.s.in_recovery());
    assert_eq!(h.s.stats.fast_recoveries, 1);
    // Each further dupACK inflates by one segment; 5.5 + 1 − 5 in flight lets one new segment out.
    h.ack(120 * MS, 1);
    assert_eq!(h.window().0, 2500 + 4 * MSS);
    assert_eq!(h.sent(), vec![(6, 0)]);
}

#[test]
fn a_newreno_partial_ack_resends_the_next_hole_at_once_and_deflates_the_window() {
    let mut h = Harness::new(4, |_| {});
    three_dupacks_after_one_ack(&mut h);
    h.sent();
    let (cwnd, _) = h.window();
    // Segments 1 and 3 were lost: the retransmitted 1 fills the first hole, the ACK stops at 3.
    h.ack(200 * MS, 3);
    assert_eq!(
        h.window().0,
        cwnd - 2 * MSS + MSS,
        "deflate by the 2 segments acked, add back one"
    );
    // 4.5 segments of window, 3 in flight: the resend first, then one new segment.
    assert_eq!(
        h.sent(),
        vec![(3, 1), (6, 0)],
        "RFC 6582 §3.2 step 3: resend the first unacknowledged segment"
    );
    assert!(h.s.in_recovery(), "recover (6) not yet acknowledged");
    // The full ACK ends recovery: cwnd = min(ssthresh 2.5, max(FlightSize 1, 1) + 1) segments.
    h.ack(300 * MS, 6);
    assert!(!h.s.in_recovery());
    assert_eq!(h.window().0, 2 * MSS);
}

#[test]
fn reno_recovery_ends_on_the_first_new_ack_even_a_partial_one() {
    let mut h = Harness::new(4, |c| c.cc = CcSpec::new("reno", vec![]).unwrap());
    assert_eq!(h.s.recovery().kind(), RecoveryKind::Reno);
    three_dupacks_after_one_ack(&mut h);
    h.sent();
    h.ack(200 * MS, 3);
    assert!(!h.s.in_recovery());
    assert_eq!(
        h.window(),
        (2500, 2500),
        "RFC 5681 §3.2 step 6: cwnd = ssthresh"
    );
    assert!(
        h.sent().iter().all(|&(_, tx)| tx == 0),
        "no partial-ACK retransmission in Reno"
    );
}

#[test]
fn the_recovery_strategy_is_chosen_apart_from_the_congestion_control() {
    let h = Harness::new(4, |c| {
        c.cc = CcSpec::new("reno", vec![]).unwrap();
        c.recovery = Some(RecoveryKind::NewReno);
    });
    assert_eq!(h.s.recovery().kind(), RecoveryKind::NewReno);
    let h = Harness::new(4, |c| c.sack = true);
    assert_eq!(h.s.recovery().kind(), RecoveryKind::Sack);
}

#[test]
fn sack_recovery_resends_only_the_hole_and_sends_new_data_as_pipe_allows() {
    let mut h = Harness::new(6, |c| c.sack = true);
    assert_eq!(h.sent().len(), 6);
    // Segment 0 is lost; the receiver SACKs 1, 1–2, 1–3. Before recovery each SACK takes a
    // segment out of pipe, so new data keeps flowing (cwnd 6).
    h.ack_with(100 * MS, 0, &[(1, 2)], false);
    assert_eq!(h.sent(), vec![(6, 0)]);
    h.ack_with(101 * MS, 0, &[(1, 3)], false);
    assert_eq!(h.sent(), vec![(7, 0)]);
    assert!(!h.s.in_recovery());
    h.ack_with(102 * MS, 0, &[(1, 4)], false);
    // Enter: pipe = 8 − 3 SACKed − 1 lost = 4 segments → ssthresh = cwnd = 2 segments.
    assert!(h.s.in_recovery());
    assert_eq!(h.window(), (2 * MSS, 2 * MSS));
    assert_eq!(
        h.sent(),
        vec![(0, 1)],
        "the hole, and nothing SACKed, is resent"
    );
    // pipe = 3 (resent 0, 6, 7) once 1–5 are SACKed: no room; SACKing 6 and 7 too makes room.
    h.ack_with(103 * MS, 0, &[(1, 6)], false);
    assert!(h.sent().is_empty());
    h.ack_with(104 * MS, 0, &[(1, 8)], false);
    assert_eq!(h.sent(), vec![(8, 0)]);
    // The retransmission arrives: the cumulative ACK passes recover (8) and recovery ends.
    h.ack(150 * MS, 8);
    assert!(!h.s.in_recovery());
}

#[test]
fn each_timeout_resends_the_first_segment_and_doubles_the_rto_while_karn_keeps_the_back_off() {
    let mut h = Harness::new(4, |_| {});
    assert_eq!(h.sent().len(), 4);
    assert_eq!(h.s.rto_deadline(), Some(SEC));
    assert_eq!(h.expire(), SEC);
    assert_eq!(h.sent(), vec![(0, 1)]);
    // ssthresh = max(FlightSize/2, 2 MSS) = 2 segments, cwnd = 1 segment; next deadline 2 s later.
    assert_eq!(h.window(), (MSS, 2 * MSS));
    assert_eq!(h.s.rto_deadline(), Some(3 * SEC));
    assert_eq!(h.expire(), 3 * SEC);
    assert_eq!(h.sent(), vec![(0, 2)]);
    assert_eq!(h.window(), (MSS, 2 * MSS), "a second expiry keeps ssthresh");
    assert_eq!(h.s.rto_deadline(), Some(7 * SEC));
    // The ACK of the retransmitted segment is ambiguous: no sample, the back-off stays (Karn).
    h.ack(7500 * MS, 1);
    assert_eq!(h.s.stats.rtt_samples, 0);
    assert_eq!(h.s.rto_deadline(), Some(7500 * MS + 4 * SEC));
    // Go-back-N: slow start from one segment resends 1 and 2 as timeout retransmissions.
    assert_eq!(h.sent(), vec![(1, 1), (2, 1)]);
    assert_eq!(h.s.stats.timeouts, 2);
}

#[test]
fn a_spurious_timeout_can_be_undone_to_the_window_before_it() {
    let mut h = Harness::new(4, |_| {});
    h.sent();
    let before = h.window();
    let at = h.expire();
    h.sent();
    assert_eq!(h.window(), (MSS, 2 * MSS));
    // A detector (Eifel, F-RTO) decides the timeout was spurious: the window comes back and new
    // data continues after the 4 segments sent before the timeout.
    assert!(h.s.undo_timeout(at + 10 * MS, &mut h.out, &mut h.trace));
    assert_eq!(h.window(), before);
    assert!(h.sent().iter().all(|&(seq, tx)| tx == 0 && seq >= 4));
    assert!(
        !h.s.undo_timeout(at + 20 * MS, &mut h.out, &mut h.trace),
        "one undo per timeout"
    );
}

#[test]
fn ecn_echo_halves_the_window_once_per_window_of_data() {
    let mut h = Harness::new(4, |c| c.ecn = true);
    assert_eq!(h.sent().len(), 4);
    h.ack_with(100 * MS, 1, &[], true);
    // FlightSize 3 segments → ssthresh = max(1.5, 2) segments = cwnd.
    assert_eq!(h.window(), (2 * MSS, 2 * MSS));
    assert_eq!(h.s.stats.ecn_reductions, 1);
    // More ECE within the same window (up to snd_max = 4 when it was reduced): ignored.
    h.ack_with(110 * MS, 2, &[], true);
    h.ack_with(120 * MS, 4, &[], true);
    assert_eq!(h.s.stats.ecn_reductions, 1);
    let sent: Vec<Packet> = h.out.drain(..).collect();
    assert!(
        sent.len() >= 2 && sent[0].cwr && sent[1..].iter().all(|p| !p.cwr),
        "CWR rides on the next new segment only"
    );
    // Past it, ECE reduces again.
    h.ack_with(200 * MS, 5, &[], true);
    assert_eq!(h.s.stats.ecn_reductions, 2);
}

#[test]
fn the_congestion_control_hears_the_rtt_sample_of_the_ack() {
    // Westwood+ counts RTT_min from AckEvent::rtt: a timed segment's ACK reaches it.
    let mut h = Harness::new(2, |c| c.cc = CcSpec::new("westwood+", vec![]).unwrap());
    h.sent();
    h.ack(80 * MS, 1);
    assert_eq!(h.s.stats.rtt_samples, 1);
    let CongestionControl::Westwood(w) = h.s.congestion_control() else {
        panic!("westwood+")
    };
    assert_eq!(w.rtt_min(), 80 * MS);
}

#[test]
fn the_congestion_control_hears_the_newest_segments_rtt_on_every_ack_even_with_timed_sampling() {
    // One timed segment per RTT feeds the estimator; Vegas still sees every ACK's sample.
    let mut h = Harness::new(4, |c| c.cc = CcSpec::new("vegas", vec![]).unwrap());
    h.sent();
    h.ack(80 * MS, 1);
    h.ack(81 * MS, 2);
    h.ack(79 * MS, 3);
    assert_eq!(h.s.stats.rtt_samples, 1, "the estimator timed one segment");
    let CongestionControl::Vegas(v) = h.s.congestion_control() else {
        panic!("vegas")
    };
    assert_eq!(
        v.base_rtt(),
        Some(79 * MS),
        "the third ACK's segment (sent at 0) took 79 ms"
    );
}

#[test]
fn frto_sends_two_new_segments_and_the_rfc4015_response_restores_flight_plus_acked_and_adapts_the_rto(
) {
    use crate::rtt::RttEstimator;
    use crate::sim::tcp::{frto::Variant, SpuriousDetection, SpuriousResponse};
    let mut h = Harness::new(4, |c| {
        c.spurious_detection = SpuriousDetection::Frto(Variant::Basic);
        c.spurious_response = SpuriousResponse::Rfc4015;
    });
    h.sent();
    h.ack(100 * MS, 1); // SRTT 100 ms, RTTVAR 50 ms; slow start sends 4 and 5
    assert_eq!(h.sent(), vec![(4, 0), (5, 0)]);
    let at = h.expire(); // RFC 4015 saves pipe_prev = max(FlightSize, ssthresh), SRTT_prev = 102 ms
    assert_eq!(h.sent(), vec![(1, 1)]);
    // RFC 5682 §2 step 2b: segment 1's delayed original is acknowledged: two new segments.
    h.ack(at + 10 * MS, 2);
    assert_eq!(h.sent(), vec![(6, 0), (7, 0)], "new data, not go-back-N");
    // Step 3b: segment 2, never retransmitted, is acknowledged: SPUR_TO.
    h.ack(at + 20 * MS, 3);
    assert_eq!(
        h.s.take_verdicts().collect::<Vec<_>>(),
        vec![Verdict {
            seq: MSS,
            tx: 1,
            spurious: true
        }]
    );
    // cwnd = FlightSize (3..8 = 5 segments) + min(bytes_acked, IW) = 6; ssthresh = pipe_prev,
    // here the initial "arbitrarily high" ssthresh; SND.NXT = SND.MAX, so segment 8 is next.
    assert_eq!(h.window(), (6 * MSS, TcpConfig::default().init_ssthresh));
    assert_eq!(h.sent(), vec![(8, 0)]);
    // The first sample of data sent after the timeout (segment 6, 300 ms): SRTT ← max(102, 300),
    // RTTVAR ← max(50, 150).
    h.ack(at + 310 * MS, 7);
    let s = h.s.timer().estimator().smoothed().unwrap();
    assert_eq!((s.srtt, s.rttvar), (300e6, 150e6));
    assert_eq!((h.s.stats.rto_adapted, h.s.stats.timeouts_undone), (1, 1));
}

#[test]
fn a_paced_sender_spaces_its_window_by_the_rate_and_resumes_on_the_pacing_timer() {
    use crate::sim::deadline::Deadline;
    // 1 MB/s: one 1000-byte segment per millisecond. The initial window of 4 leaves one at a time.
    let mut h = Harness::new(4, |c| c.max_pacing_rate = Some(1_000_000));
    assert_eq!(
        h.sent(),
        vec![(0, 0)],
        "the first segment at once, the rest wait"
    );
    assert_eq!(h.s.pacing_deadline(), Some(MS));
    assert_eq!(
        h.s.next_deadline(),
        Some(MS),
        "the pacing timer is earlier than the RTO"
    );
    let mut times = vec![];
    while let Some(at) = h.s.pacing_deadline() {
        h.s.on_deadline(at, &mut h.out, &mut h.trace);
        times.extend(h.sent().into_iter().map(|(seg, _)| (seg, at)));
    }
    assert_eq!(times, vec![(1, MS), (2, 2 * MS), (3, 3 * MS)]);
    assert_eq!(
        h.s.next_deadline(),
        h.s.rto_deadline(),
        "window full: only the RTO is left"
    );
    // An ACK at 100 ms opens the window by two (slow start): one leaves now, one 1 ms later.
    h.ack(100 * MS, 1);
    assert_eq!(h.sent(), vec![(4, 0)]);
    assert_eq!(h.s.pacing_deadline(), Some(101 * MS));
}

#[test]
fn without_a_rate_the_sender_is_not_paced() {
    let mut h = Harness::new(4, |_| {});
    assert_eq!(h.sent(), vec![(0, 0), (1, 0), (2, 0), (3, 0)]);
    assert_eq!(h.s.pacing_deadline(), None);
}
