//! The retransmission timer, kept once for the simulator's sender and for open-loop timer replay:
//! an estimator, an RTO policy over it, exponential back-off, Karn's rule, the timed segment and
//! the deadline (RFC 6298 §§3, 5). Sans-IO like quinn's and smoltcp's timers: every call takes
//! `now`, the owner asks [`RetransmitTimer::deadline`] and calls [`RetransmitTimer::on_timeout`]
//! when it has passed.

use super::policy::Policy;
use super::{Context, Estimator, RttEstimator};
use crate::time::Nanos;

/// Where an RTT measurement comes from, so that Karn's rule can judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measurement {
    /// RFC 7323 RTTM: the ACK echoes the timestamp of the transmission it answers (TSecr), so
    /// even a retransmitted segment gives an unambiguous sample.
    Echo { ts_ecr: Nanos },
    /// The newest segment the ACK covers, sent at `sent_at`; `retransmitted`: more than one copy
    /// was sent, and the ACK cannot tell which it answers.
    Segment { sent_at: Nanos, retransmitted: bool },
}

/// Karn's algorithm (RFC 6298 §3; Karn & Partridge 1987): the RTT sample an ACK at `now` gives for
/// `m`, or None when the segment was retransmitted and no timestamp names the transmission.
pub fn karn(m: Measurement, now: Nanos) -> Option<Nanos> {
    match m {
        Measurement::Echo { ts_ecr } => Some(now.saturating_sub(ts_ecr)),
        Measurement::Segment {
            retransmitted: true,
            ..
        } => None,
        Measurement::Segment {
            sent_at,
            retransmitted: false,
        } => Some(now.saturating_sub(sent_at)),
    }
}

/// Karn's algorithm as a predicate (kept for callers that judge before measuring).
pub fn karn_accepts(segment_was_retransmitted: bool, timestamp_echo: bool) -> bool {
    !segment_was_retransmitted || timestamp_echo
}

/// The segment being timed in classic one-sample-per-RTT mode (BSD, ns-2): its end sequence and
/// the time it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    pub end: u64,
    pub sent_at: Nanos,
}

/// One connection's retransmission timer.
///
/// - [`arm`](Self::arm) (re)starts it with the RTO in force (RFC 6298 §5.1, §5.3, §5.6);
///   [`arm_if_idle`](Self::arm_if_idle) only if it is not running (§5.1); [`stop`](Self::stop)
///   when everything is acknowledged (§5.2).
/// - [`on_timeout`](Self::on_timeout): it fired — one more doubling (§5.5), the estimator and
///   policy hear of it, the timed segment is forgotten (it will be resent: Karn).
/// - [`on_sample`](Self::on_sample): a valid sample (judged by [`karn`] or taken from the timed
///   segment) feeds the estimator and ends the back-off (§5.7 note with Karn).
#[derive(Debug, Clone)]
pub struct RetransmitTimer {
    estimator: Estimator,
    policy: Policy,
    backoff: Backoff,
    deadline: Option<Nanos>,
    timed: Option<Timed>,
}

impl RetransmitTimer {
    pub fn new(estimator: Estimator, policy: Policy) -> Self {
        Self {
            estimator,
            policy,
            backoff: Backoff::default(),
            deadline: None,
            timed: None,
        }
    }

    pub fn estimator(&self) -> &Estimator {
        &self.estimator
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The estimator's prediction (its SRTT), if it has one.
    pub fn prediction(&self) -> Option<Nanos> {
        self.estimator.prediction()
    }

    /// The policy's RTO over the estimator, before back-off.
    #[inline]
    pub fn base_rto(&self) -> Nanos {
        self.policy.rto(&self.estimator)
    }

    /// The RTO in force: base · 2^backoff, capped at the estimator's maximum (§5.5); a policy may
    /// add its part after back-off instead (CA-RTO `backoff = after`).
    #[inline]
    pub fn rto(&self) -> Nanos {
        self.policy
            .backed_off_rto(&self.estimator, self.backoff.count)
    }

    /// Expiries since the last valid sample.
    pub fn backoff_count(&self) -> u32 {
        self.backoff.count
    }

    /// When the timer fires, if it runs.
    pub fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }

    pub fn is_running(&self) -> bool {
        self.deadline.is_some()
    }

    /// The deadline has come.
    pub fn expired(&self, now: Nanos) -> bool {
        self.deadline.is_some_and(|d| d <= now)
    }

    /// (Re)start the timer with the current RTO (RFC 6298 §5.1, §5.3, §5.6). The estimator and
    /// policy hear of it first: CA-RTO draws its extension from `ctx`'s window here.
    pub fn arm(&mut self, now: Nanos, ctx: &Context) {
        self.estimator.on_timer_armed(ctx);
        self.policy.on_timer_armed(ctx);
        self.deadline = Some(now.saturating_add(self.rto()));
    }

    /// Start the timer unless it runs (RFC 6298 §5.1: on sending data, "if the timer is not
    /// running"); true if it was started.
    pub fn arm_if_idle(&mut self, now: Nanos, ctx: &Context) -> bool {
        let idle = self.deadline.is_none();
        if idle {
            self.arm(now, ctx);
        }
        idle
    }

    /// Everything outstanding is acknowledged (RFC 6298 §5.2), or the owner is about to act on
    /// an expiry.
    pub fn stop(&mut self) {
        self.deadline = None;
    }

    /// The timer expired (RFC 6298 §5.5): stop, double, tell the estimator; the timed segment
    /// will be resent and so can no longer give a sample (Karn).
    pub fn on_timeout(&mut self) {
        self.deadline = None;
        self.timed = None;
        self.backoff.on_timeout(&mut self.estimator);
    }

    /// The timer expired but is not to back off (a congestion control's choice, e.g. SpecTCP's
    /// `timeout_backoff = "congestion"` for a timeout judged corruption): stop and forget the
    /// timed segment (Karn) as [`Self::on_timeout`] does, and tell the estimator, without the
    /// doubling; the RTO stays at base · 2^count for the count so far.
    pub fn on_timeout_without_backoff(&mut self) {
        self.deadline = None;
        self.timed = None;
        self.estimator.on_timeout();
    }

    /// Feed one valid sample (Karn already applied: see [`karn`], [`Self::timed_sample`]): the
    /// estimator updates and the back-off ends (RFC 6298 §5.7 note; Linux `tcp_ack_update_rtt`
    /// sets icsk_backoff = 0).
    pub fn on_sample(&mut self, rtt: Nanos, ctx: &Context) {
        self.estimator.on_sample(rtt, ctx);
        self.policy.on_sample(ctx);
        self.backoff.on_valid_sample();
    }

    /// Re-initialise SRTT and RTTVAR (the Eifel response's RTO adaptation, RFC 4015) and end the
    /// back-off, as a valid sample would; false (nothing changed) if the estimator keeps no
    /// SRTT/RTTVAR pair.
    pub fn set_smoothed(&mut self, srtt: f64, rttvar: f64) -> bool {
        if self.estimator.smoothed().is_none() {
            return false;
        }
        self.estimator.set_smoothed(srtt, rttvar);
        self.backoff.on_valid_sample();
        true
    }

    /// Classic timing: a segment ending at `end` left at `now`; timed if none is being timed.
    pub fn on_new_segment(&mut self, end: u64, now: Nanos) {
        if self.timed.is_none() {
            self.timed = Some(Timed { end, sent_at: now });
        }
    }

    /// Karn (RFC 6298 §3): a retransmission of `[seq, end)` covering the timed segment's last
    /// byte makes its ACK ambiguous, so timing stops.
    pub fn on_retransmit(&mut self, seq: u64, end: u64) {
        if self.timed.is_some_and(|t| seq < t.end && t.end <= end) {
            self.timed = None;
        }
    }

    /// Stop timing without a sample (a loss episode begins: the ACKs that follow measure queues
    /// drained by recovery, as BSD and ns-2 discard the timed segment on fast retransmit).
    pub fn discard_timed(&mut self) {
        self.timed = None;
    }

    pub fn timed(&self) -> Option<Timed> {
        self.timed
    }

    /// The cumulative ACK `ack` at `now` covers the timed segment: its sample, and timing stops.
    pub fn timed_sample(&mut self, ack: u64, now: Nanos) -> Option<Nanos> {
        match self.timed {
            Some(t) if ack >= t.end => {
                self.timed = None;
                Some(now.saturating_sub(t.sent_at))
            }
            _ => None,
        }
    }
}

/// The back-off state of one retransmission timer (RFC 6298 §5.5–5.6): each expiry doubles the RTO
/// up to the estimator's maximum; the backed-off value stays until a valid sample arrives (§5.7
/// with Karn, RFC 6298 §3), which resets the count. QUIC's PTO (RFC 9002 §6.2.1) multiplies by
/// 2^pto_count in the same way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backoff {
    count: u32,
}

impl Backoff {
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The RTO in force: base · 2^count, capped at the estimator's maximum.
    pub fn rto<E: RttEstimator + ?Sized>(&self, estimator: &E) -> Nanos {
        backed_off(estimator.rto(), self.count, estimator.max_rto())
    }

    /// The timer expired: one more doubling, and the estimator hears of it.
    pub fn on_timeout<E: RttEstimator + ?Sized>(&mut self, estimator: &mut E) {
        if self.count < estimator.max_backoff() {
            self.count += 1; // 64 doublings already saturate backed_off: no cap short of that binds
        }
        estimator.on_timeout();
    }

    /// A valid (Karn-accepted) sample arrived: back-off ends (RFC 6298 §5.7 note; Linux
    /// `tcp_ack_update_rtt` sets icsk_backoff = 0).
    pub fn on_valid_sample(&mut self) {
        self.count = 0;
    }
}

/// base · 2^count, saturating, then capped. A base already above the cap is capped too.
pub fn backed_off(base: Nanos, count: u32, max: Nanos) -> Nanos {
    let scaled = if count >= 64 {
        Nanos::MAX
    } else {
        base.checked_shl(count)
            .filter(|v| v >> count == base)
            .unwrap_or(Nanos::MAX)
    };
    scaled.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::{build, Context};
    use crate::time::{MS, SEC};

    #[test]
    fn karn_rejects_retransmitted_segments_unless_timestamps_name_the_transmission() {
        assert!(karn_accepts(false, false));
        assert!(!karn_accepts(true, false));
        assert!(karn_accepts(true, true));
        assert_eq!(
            karn(
                Measurement::Segment {
                    sent_at: 10,
                    retransmitted: false
                },
                110
            ),
            Some(100)
        );
        assert_eq!(
            karn(
                Measurement::Segment {
                    sent_at: 10,
                    retransmitted: true
                },
                110
            ),
            None
        );
        assert_eq!(karn(Measurement::Echo { ts_ecr: 40 }, 110), Some(70));
    }

    fn timer(name: &str) -> RetransmitTimer {
        RetransmitTimer::new(build(name, &[]).unwrap(), Policy::None)
    }

    #[test]
    fn an_armed_timer_fires_one_rto_after_it_was_armed() {
        let mut t = timer("rfc6298");
        assert_eq!(t.deadline(), None);
        t.arm(5 * SEC, &Context::default());
        assert_eq!(t.deadline(), Some(6 * SEC));
        assert!(!t.expired(6 * SEC - 1) && t.expired(6 * SEC));
        t.stop();
        assert!(!t.is_running() && !t.expired(u64::MAX));
    }

    #[test]
    fn arming_if_idle_leaves_a_running_timer_alone() {
        let mut t = timer("rfc6298");
        assert!(t.arm_if_idle(0, &Context::default()));
        assert!(!t.arm_if_idle(300 * MS, &Context::default()));
        assert_eq!(t.deadline(), Some(SEC));
    }

    #[test]
    fn each_expiry_doubles_the_next_deadline_until_a_valid_sample_arrives() {
        let mut t = timer("rfc6298");
        t.arm(0, &Context::default());
        t.on_timeout();
        assert_eq!((t.deadline(), t.backoff_count()), (None, 1));
        t.arm(SEC, &Context::default());
        assert_eq!(t.deadline(), Some(3 * SEC));
        t.on_timeout();
        t.arm(3 * SEC, &Context::default());
        assert_eq!(t.deadline(), Some(7 * SEC), "4 s after the second expiry");
        t.on_sample(100 * MS, &Context::default());
        assert_eq!((t.backoff_count(), t.rto()), (0, SEC));
    }

    #[test]
    fn only_one_segment_is_timed_and_its_ack_gives_the_sample() {
        let mut t = timer("rfc6298");
        t.on_new_segment(1000, 0);
        t.on_new_segment(2000, 10 * MS);
        assert_eq!(
            t.timed_sample(999, 50 * MS),
            None,
            "the ACK must cover the segment's last byte"
        );
        assert_eq!(t.timed_sample(2000, 90 * MS), Some(90 * MS));
        assert_eq!(t.timed(), None, "one sample per timed segment");
    }

    #[test]
    fn a_retransmission_of_the_timed_segment_forfeits_its_sample() {
        let mut t = timer("rfc6298");
        t.on_new_segment(2000, 0);
        t.on_retransmit(0, 1000);
        assert!(
            t.timed().is_some(),
            "resending an earlier segment keeps the timed one"
        );
        t.on_retransmit(1000, 2000);
        assert_eq!(t.timed_sample(2000, 90 * MS), None);
    }

    #[test]
    fn a_timeout_forgets_the_timed_segment() {
        let mut t = timer("rfc6298");
        t.on_new_segment(1000, 0);
        t.arm(0, &Context::default());
        t.on_timeout();
        assert_eq!(t.timed_sample(1000, 2 * SEC), None);
    }

    #[test]
    fn a_policy_draws_at_every_arm_and_its_draw_is_backed_off_with_the_base() {
        let mut t = RetransmitTimer::new(
            build("linux", &[]).unwrap(),
            crate::rtt::policy::build("ca-rto", &[]).unwrap(),
        );
        t.on_sample(100 * MS, &Context::default());
        let ctx = Context {
            cwnd: Some(2.0),
            max_cwnd: Some(50.0),
            ..Context::default()
        };
        t.arm(0, &ctx);
        let base = t.base_rto();
        assert!(
            base > t.estimator().rto(),
            "the extension is on top of Linux's RTO"
        );
        t.on_timeout();
        assert_eq!(
            t.rto(),
            2 * base,
            "back-off doubles base + extension, the draw is kept"
        );
    }

    #[test]
    fn each_expiry_doubles_the_rto_up_to_the_cap() {
        let mut est = build("rfc6298", &[]).unwrap();
        let mut backoff = Backoff::default();
        let mut seen = vec![backoff.rto(&est)];
        for _ in 0..10 {
            backoff.on_timeout(&mut est);
            seen.push(backoff.rto(&est));
        }
        assert_eq!(&seen[..4], &[SEC, 2 * SEC, 4 * SEC, 8 * SEC]);
        assert_eq!(
            *seen.last().unwrap(),
            60 * SEC,
            "RFC 6298 cap defaults to 60 s"
        );
    }

    #[test]
    fn a_valid_sample_ends_the_back_off() {
        let mut est = build("rfc6298", &[]).unwrap();
        let mut backoff = Backoff::default();
        backoff.on_timeout(&mut est);
        backoff.on_timeout(&mut est);
        est.on_sample(100 * MS, &Context::default());
        backoff.on_valid_sample();
        assert_eq!(backoff.rto(&est), SEC);
    }

    #[test]
    fn back_off_saturates_instead_of_overflowing() {
        assert_eq!(backed_off(u64::MAX / 2, 3, u64::MAX), u64::MAX);
        assert_eq!(backed_off(5, 200, 100), 100);
    }
}
