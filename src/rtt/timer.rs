//! Karn's rule and exponential back-off, kept once for every estimator (RFC 6298 §§3, 5).

use super::RttEstimator;
use crate::time::Nanos;

/// Karn's algorithm (RFC 6298 §3; Karn & Partridge 1987): a segment that was retransmitted gives no
/// RTT sample, because the ACK cannot tell which transmission it answers — unless timestamps
/// (RFC 7323) name the transmission being echoed.
pub fn karn_accepts(segment_was_retransmitted: bool, timestamp_echo: bool) -> bool {
    !segment_was_retransmitted || timestamp_echo
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
        self.count = self.count.saturating_add(1);
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
    let scaled = if count >= 64 { Nanos::MAX } else { base.checked_shl(count).filter(|v| v >> count == base).unwrap_or(Nanos::MAX) };
    scaled.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::{build, Context};
    use crate::time::{MS, SEC};

    #[test]
    fn karn_rejects_retransmitted_segments_unless_timestamps_disambiguate() {
        assert!(karn_accepts(false, false));
        assert!(!karn_accepts(true, false));
        assert!(karn_accepts(true, true));
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
        assert_eq!(*seen.last().unwrap(), 60 * SEC, "RFC 6298 cap defaults to 60 s");
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
