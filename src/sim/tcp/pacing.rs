//! Pacing: a sender capability any congestion control may ask for (BBR does; CUBIC and the others
//! do not). The scheme names a rate per flow ([`super::cc::CongestionOps::pacing_rate`], bytes
//! per second of payload, as Linux's `sk_pacing_rate`); `tcp.max_pacing_rate` caps it, and alone
//! paces a scheme that asks for none (Linux `SO_MAX_PACING_RATE` / fq's `maxrate`).
//!
//! The model is Linux's internal pacing (`tcp_pacing_check`, `tcp_update_skb_after_send` in
//! `net/ipv4/tcp_output.c`): every segment sent moves the earliest departure time of the next
//! one to max(that time, now) + len·10⁹/rate ns (`tcp_wstamp_ns`); the send loop stops while that
//! time is in the future and a pacing timer (the hrtimer `pacing_timer`) wakes the sender then.
//! Integer time: the gap is truncated to whole nanoseconds, as Linux's `div64_ul`.
//!
//! Choices (docs/algorithms.md §15.0):
//! - `len` is the segment's payload, as `skb->len` of the original skb in Linux and as the rate
//!   is measured (delivered payload bytes); headers are not charged.
//! - Only the send loop waits. Retransmissions sent outside it (the first one of a fast recovery,
//!   a timeout's, a partial ACK's, F-RTO's two new segments) leave at once but are charged to the
//!   schedule like any other segment.
//! - No credit for idle time: Linux shortens the next gap by up to half of the time the sender
//!   fell behind its schedule (the `credit` in `tcp_update_skb_after_send`); here the schedule
//!   simply restarts from now.

use crate::time::Nanos;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The sender's pacing schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pacer {
    /// Earliest departure time of the next segment (Linux `tcp_wstamp_ns`).
    next_at: Nanos,
    /// The send loop stopped for pacing and wants to resume at this time (the pacing timer).
    waiting: Option<Nanos>,
    /// `tcp.max_pacing_rate` in bytes per second, if set.
    cap: Option<u64>,
}

impl Pacer {
    pub fn new(cap: Option<u64>) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    /// The rate in force: the scheme's, capped by `tcp.max_pacing_rate`; None: not paced.
    #[inline]
    pub fn rate(&self, asked: Option<u64>) -> Option<u64> {
        match (asked, self.cap) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
        .filter(|&r| r > 0)
    }

    /// Time to send `len` payload bytes at `rate` bytes/s, truncated to whole nanoseconds.
    pub fn gap(len: u64, rate: u64) -> Nanos {
        (len as u128 * NANOS_PER_SEC / rate as u128).min(Nanos::MAX as u128) as Nanos
    }

    /// When the next segment may leave, if later than `now` (at `rate`; None: unpaced).
    #[inline]
    pub fn closed_until(&self, now: Nanos, rate: Option<u64>) -> Option<Nanos> {
        rate.and(Some(self.next_at)).filter(|&t| t > now)
    }

    /// A segment of `len` payload bytes left at `now` while pacing at `rate`.
    pub fn on_sent(&mut self, now: Nanos, len: u64, rate: u64) {
        self.next_at = self.next_at.max(now).saturating_add(Self::gap(len, rate));
    }

    /// The send loop stopped until `at` (Some) or runs free again (None).
    pub fn wait(&mut self, at: Option<Nanos>) {
        self.waiting = at;
    }

    /// The pacing timer's deadline, if the send loop is waiting.
    #[inline]
    pub fn deadline(&self) -> Option<Nanos> {
        self.waiting
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, US};

    #[test]
    fn a_gap_is_the_payload_at_the_rate_truncated_to_whole_nanoseconds() {
        assert_eq!(Pacer::gap(1000, 1_000_000), MS, "1000 B at 1 MB/s");
        assert_eq!(
            Pacer::gap(1448, 1_250_000),
            1_158_400,
            "1448 B at 10 Mbit/s"
        );
        assert_eq!(
            Pacer::gap(1, 3),
            333_333_333,
            "truncated, as Linux's div64_ul"
        );
    }

    #[test]
    fn the_schedule_restarts_from_now_after_idling_and_queues_back_to_back_sends() {
        let mut p = Pacer::new(None);
        let rate = Some(1_000_000);
        assert_eq!(
            p.closed_until(0, rate),
            None,
            "the first segment goes at once"
        );
        p.on_sent(0, 1000, 1_000_000);
        p.on_sent(0, 1000, 1_000_000);
        assert_eq!(
            p.closed_until(500 * US, rate),
            Some(2 * MS),
            "two segments booked: the third waits 2 ms"
        );
        assert_eq!(p.closed_until(2 * MS, rate), None);
        p.on_sent(10 * MS, 500, 1_000_000);
        assert_eq!(
            p.closed_until(10 * MS, rate),
            Some(10 * MS + 500 * US),
            "idle time earns no credit"
        );
        assert_eq!(
            p.closed_until(10 * MS, None),
            None,
            "a scheme that stops pacing is not held back"
        );
    }

    #[test]
    fn the_cap_bounds_the_schemes_rate_and_alone_paces_a_scheme_that_asks_for_none() {
        let p = Pacer::new(Some(500));
        assert_eq!(p.rate(Some(1000)), Some(500));
        assert_eq!(p.rate(Some(100)), Some(100));
        assert_eq!(p.rate(None), Some(500));
        assert_eq!(Pacer::new(None).rate(None), None);
        assert_eq!(
            Pacer::new(None).rate(Some(0)),
            None,
            "a zero rate means unpaced, never a stall"
        );
    }
}
