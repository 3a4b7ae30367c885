//! Delivery-rate estimation (Linux `net/ipv4/tcp_rate.c`; Cheng, Cardwell, Yeganeh & Jacobson,
//! draft-cheng-iccrg-delivery-rate-estimation): a sender capability a congestion control asks
//! for ([`super::cc::CongestionOps::wants_rate_samples`]; BBR does). Off, it costs nothing.
//!
//! Each transmission stamps its segment with the connection's delivered count, when that count
//! last moved and when the current send burst began (`tcp_rate_skb_sent`). An ACK delivering
//! segments (cumulatively or by SACK) takes the most recently sent of them and yields
//! delivered bytes since its stamp over max(send interval, ACK interval) (`tcp_rate_gen`); a
//! sample over less than the minimum RTT is invalid. Segments sent while the application had
//! nothing to send (`tcp_rate_check_app_limited`) give app-limited samples.
//!
//! Choices: counts are bytes (Linux counts packets); the minimum RTT is the smallest sample
//! ever (Linux's `tcp_min_rtt` is a 5-minute window); a segment's stamps sit in a queue beside
//! the scoreboard, indexed the same way (fixed MSS boundaries).

use crate::time::Nanos;
use std::collections::VecDeque;

/// What one ACK tells about the delivery rate (Linux `struct rate_sample`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over `interval` (Linux `rs->delivered`); with `valid` false, not a rate.
    pub delivered: u64,
    pub interval: Nanos,
    /// A rate can be read from it (a segment was delivered, the interval is at least min RTT).
    pub valid: bool,
    /// The segment it was measured from was sent while the application was the limit.
    pub app_limited: bool,
    /// Bytes this ACK newly delivered (ACKed or SACKed).
    pub acked_sacked: u64,
    /// The connection's delivered count when that segment was sent (Linux `prior_delivered`).
    pub prior_delivered: u64,
    /// The connection's delivered count after this ACK (Linux `tp->delivered`).
    pub total_delivered: u64,
}

impl RateSample {
    /// Delivery rate, bytes per second, if valid.
    pub fn rate(&self) -> Option<u64> {
        (self.valid && self.interval > 0)
            .then(|| (self.delivered as u128 * 1_000_000_000 / self.interval as u128) as u64)
    }
}

/// A segment's state at its last transmission (Linux `tcp_skb_cb::tx`).
#[derive(Debug, Clone, Copy)]
struct Stamp {
    seq: u64,
    len: u32,
    sent_at: Nanos,
    delivered: u64,
    delivered_at: Nanos,
    first_tx_at: Nanos,
    app_limited: bool,
    /// Already counted as delivered (SACKed); Linux zeroes `delivered_mstamp`.
    counted: bool,
}

#[derive(Debug, Clone, Default)]
pub struct RateSampler {
    stamps: VecDeque<Stamp>,
    mss: u64,
    /// Bytes delivered so far (Linux `tp->delivered`), and when it last grew.
    delivered: u64,
    delivered_at: Nanos,
    /// Send time of the segment the last sample came from (Linux `first_tx_mstamp`).
    first_tx_at: Nanos,
    /// Non-zero: app-limited until `delivered` passes it (Linux `tp->app_limited`).
    app_limited: u64,
    min_rtt: Option<Nanos>,
}

impl RateSampler {
    pub fn new(mss: u32) -> Self {
        Self {
            mss: mss as u64,
            ..Self::default()
        }
    }

    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    fn index(&self, seq: u64) -> Option<usize> {
        let front = self.stamps.front()?.seq;
        let idx = (seq.checked_sub(front)? / self.mss) as usize;
        (self.stamps.get(idx)?.seq == seq).then_some(idx)
    }

    /// A segment left (`tcp_rate_skb_sent`); `idle`: nothing was outstanding before it.
    pub fn on_sent(&mut self, seq: u64, len: u32, now: Nanos, idle: bool) {
        if idle {
            self.first_tx_at = now;
            self.delivered_at = now;
        }
        let stamp = Stamp {
            seq,
            len,
            sent_at: now,
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx_at: self.first_tx_at,
            app_limited: self.app_limited != 0,
            counted: false,
        };
        match self.index(seq) {
            Some(i) => {
                self.stamps[i] = Stamp {
                    counted: self.stamps[i].counted,
                    ..stamp
                }
            }
            None => self.stamps.push_back(stamp),
        }
    }

    /// An ACK for `ack` with SACK blocks `sack` arrived at `now`, with the RTT sample `rtt`.
    pub fn on_ack(
        &mut self,
        ack: u64,
        sack: impl Iterator<Item = (u64, u64)>,
        now: Nanos,
        rtt: Option<Nanos>,
    ) -> RateSample {
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let mut newly = 0u64;
        let mut newest: Option<Stamp> = None;
        // `tcp_rate_skb_delivered`: the most recently sent delivered segment (ties: the higher).
        let mut deliver = |s: &mut Stamp| {
            if s.counted {
                return;
            }
            s.counted = true;
            newly += s.len as u64;
            if newest
                .is_none_or(|n| s.sent_at > n.sent_at || (s.sent_at == n.sent_at && s.seq > n.seq))
            {
                newest = Some(*s);
            }
        };
        for (start, end) in sack {
            let Some(front) = self.stamps.front().map(|s| s.seq) else {
                break;
            };
            let first = (start.max(front) - front).div_ceil(self.mss) as usize;
            for s in self.stamps.range_mut(first.min(self.stamps.len())..) {
                if s.seq + s.len as u64 > end {
                    break;
                }
                deliver(s);
            }
        }
        while let Some(s) = self
            .stamps
            .front_mut()
            .filter(|s| s.seq + s.len as u64 <= ack)
        {
            deliver(s);
            self.stamps.pop_front();
        }
        self.delivered += newly;
        // `tcp_rate_gen`: the app-limited bubble is gone once delivered passes it.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if newly > 0 {
            self.delivered_at = now;
        }
        let mut rs = RateSample {
            acked_sacked: newly,
            total_delivered: self.delivered,
            ..RateSample::default()
        };
        let Some(p) = newest else { return rs };
        self.first_tx_at = p.sent_at;
        let send_phase = p.sent_at - p.first_tx_at;
        let ack_phase = now - p.delivered_at;
        rs.interval = send_phase.max(ack_phase);
        rs.delivered = self.delivered - p.delivered;
        rs.prior_delivered = p.delivered;
        rs.app_limited = p.app_limited;
        // A sample over less than the minimum RTT would overestimate the rate (ACK compression).
        rs.valid = rs.interval > 0 && self.min_rtt.is_none_or(|m| rs.interval >= m);
        rs
    }

    /// `tcp_rate_check_app_limited`: the application has nothing more to send, the window has
    /// room and nothing is marked lost — samples until this data is delivered are app-limited.
    pub fn check_app_limited(&mut self, no_data: bool, pipe: u64, cwnd: u64, lost: u64) {
        if no_data && pipe < cwnd && lost == 0 {
            self.app_limited = (self.delivered + pipe).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const MSS: u32 = 1000;

    #[test]
    fn a_steady_ack_clock_samples_one_window_per_rtt() {
        // Ten segments sent 1 ms apart from idle, RTT 40 ms; each ACK releases the next segment
        // (segment j ≥ 10 leaves at (30 + j) ms, is ACKed at (70 + j) ms).
        let mut r = RateSampler::new(MSS);
        for i in 0..10u64 {
            r.on_sent(i * 1000, MSS, i * MS, i == 0);
        }
        // First round: every stamp says "0 delivered at 0 ms", so segment i's ACK at (40 + i) ms
        // reads (i + 1)·1000 B over (40 + i) ms: below the rate, as Linux's first samples are.
        for i in 0..10u64 {
            let s = r.on_ack(
                (i + 1) * 1000,
                std::iter::empty(),
                (40 + i) * MS,
                Some(40 * MS),
            );
            assert_eq!(
                (s.delivered, s.interval, s.valid),
                ((i + 1) * 1000, (40 + i) * MS, true),
                "segment {i}"
            );
            r.on_sent((i + 10) * 1000, MSS, (40 + i) * MS, false);
        }
        // Steady state: segment j was stamped with (j − 9)·1000 B delivered at (30 + j) ms and
        // first_tx = (j − 10) ms: 10 000 B over max(40, 40) ms = one window per RTT.
        for j in 10..20u64 {
            let s = r.on_ack(
                (j + 1) * 1000,
                std::iter::empty(),
                (70 + j) * MS,
                Some(40 * MS),
            );
            assert_eq!((s.delivered, s.interval), (10_000, 40 * MS), "segment {j}");
            assert_eq!(s.rate(), Some(250_000));
            r.on_sent((j + 10) * 1000, MSS, (70 + j) * MS, false);
        }
    }

    #[test]
    fn sacked_segments_are_counted_once_and_short_intervals_are_invalid() {
        let mut r = RateSampler::new(MSS);
        for i in 0..4u64 {
            r.on_sent(i * 1000, MSS, 0, i == 0);
        }
        let s = r.on_ack(0, [(2000, 4000)].into_iter(), 50 * MS, Some(50 * MS));
        assert_eq!((s.acked_sacked, s.total_delivered), (2000, 2000));
        let s = r.on_ack(4000, std::iter::empty(), 51 * MS, None);
        assert_eq!(s.acked_sacked, 2000, "the SACKed two are not counted again");
        assert_eq!(r.delivered(), 4000);
        // Delivered 1 ms after it left while the minimum RTT is 50 ms: ACK compression, invalid.
        r.on_sent(4000, MSS, 60 * MS, true);
        let s = r.on_ack(5000, std::iter::empty(), 61 * MS, None);
        assert!(!s.valid && s.rate().is_none());
        // A retransmission re-stamps its segment: sent at 200 ms in a burst that began at 100 ms
        // (send phase 100 ms), delivered_at 100 ms (ACK phase 160 ms): the longer counts.
        r.on_sent(5000, MSS, 100 * MS, true);
        r.on_sent(5000, MSS, 200 * MS, false);
        let s = r.on_ack(6000, std::iter::empty(), 260 * MS, None);
        assert_eq!((s.interval, s.valid), (160 * MS, true));
    }

    #[test]
    fn samples_after_the_application_ran_dry_are_app_limited_until_that_data_is_delivered() {
        let mut r = RateSampler::new(MSS);
        r.on_sent(0, MSS, 0, true);
        r.check_app_limited(true, 1000, 10_000, 0);
        r.on_sent(1000, MSS, MS, false);
        assert!(
            !r.on_ack(1000, std::iter::empty(), 40 * MS, None)
                .app_limited
        );
        assert!(
            r.on_ack(2000, std::iter::empty(), 41 * MS, None)
                .app_limited
        );
    }
}
