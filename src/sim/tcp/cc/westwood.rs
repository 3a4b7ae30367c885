//! TCP Westwood+ (Mascolo et al.; Linux `net/ipv4/tcp_westwood.c`) — docs/algorithms.md §9.4 [exact].
//!
//! Probes like Reno; after a loss it sets the window from an estimate of the bandwidth actually
//! delivered (ACKed bytes per RTT window, twice low-pass filtered) times the minimum RTT, instead
//! of halving blindly — so random link losses cost little. As in Linux: Reno halving at the start
//! of fast recovery, cwnd = ssthresh = ER when recovery completes, ssthresh = ER on a timeout.
//! Not modelled: Linux's ER on completion of an ECN window reduction (CWR); ECE halves as Reno.

use super::reno::Reno;
use super::Response;
use super::{
    standard_response, AckEvent, Congestion, CongestionControl, CongestionEvent, CongestionOps,
    Window,
};
use crate::component::{Component, Declaration};
use crate::time::{Nanos, MS, SEC};

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "westwood+",
        aliases: &["westwood"],
        summary: "Westwood+: Reno probing; after a loss the window is set from delivered bandwidth × RTT_min",
        source: "Mascolo et al.; Linux tcp_westwood.c; docs/algorithms.md §9.4",
        params: &[],
        defaults: &[("recovery", "newreno")],
    },
    build: |_| Ok(CongestionControl::Westwood(Box::default())),
};

/// `TCP_WESTWOOD_RTT_MIN` = HZ/20: a bandwidth sample spans at least 50 ms.
const RTT_MIN_WINDOW: Nanos = 50 * MS;
/// `TCP_WESTWOOD_INIT_RTT` = 20 s: the RTT assumed before the first sample.
const INIT_RTT: Nanos = 20 * SEC;

#[derive(Debug, Clone, PartialEq)]
pub struct Westwood {
    /// Bandwidth estimates in bytes per nanosecond: the first filter stage and the output.
    bw_ns_est: f64,
    bw_est: f64,
    /// Start of the current sampling window.
    win_start: Nanos,
    /// Bytes counted as delivered in the current window.
    bk: u64,
    /// Bytes credited ahead by duplicate ACKs, taken back from the cumulative ACK that follows.
    accounted: u64,
    rtt: Nanos,
    rtt_min: Nanos,
    reset_rtt_min: bool,
    first_ack: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Self {
            bw_ns_est: 0.0,
            bw_est: 0.0,
            win_start: 0,
            bk: 0,
            accounted: 0,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            reset_rtt_min: true,
            first_ack: true,
        }
    }
}

impl Westwood {
    /// The smallest RTT seen since the last timeout.
    pub fn rtt_min(&self) -> Nanos {
        self.rtt_min
    }

    /// Bandwidth estimate in bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.bw_est * 1e9
    }

    /// ER = max(bw_est · RTT_min / MSS, 2) whole segments, in bytes (`tcp_westwood_bw_rttmin`).
    pub fn eligible_window(&self, mss: u64) -> u64 {
        let segments = (self.bw_est * self.rtt_min as f64 / mss as f64).floor() as u64;
        segments.max(2) * mss
    }

    /// `westwood_do_filter`: a ← (7a + b)/8.
    fn filter(a: f64, b: f64) -> f64 {
        (7.0 * a + b) / 8.0
    }

    /// `westwood_update_window` + `westwood_filter`: close a window longer than max(RTT, 50 ms).
    fn update_window(&mut self, now: Nanos) {
        let delta = now.saturating_sub(self.win_start);
        if delta > self.rtt.max(RTT_MIN_WINDOW) {
            let sample = self.bk as f64 / delta as f64;
            if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
                // The first sample fills both stages.
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = Self::filter(self.bw_ns_est, sample);
                self.bw_est = Self::filter(self.bw_est, self.bw_ns_est);
            }
            self.bk = 0;
            self.win_start = now;
        }
    }

    /// `tcp_westwood_pkts_acked` / `update_rtt_min`: the RTT, and its minimum (restarted from the
    /// next sample after a timeout).
    fn on_rtt_sample(&mut self, rtt: Nanos) {
        if rtt == 0 {
            return;
        }
        self.rtt = rtt;
        self.rtt_min = if std::mem::take(&mut self.reset_rtt_min) {
            rtt
        } else {
            self.rtt_min.min(rtt)
        };
    }

    /// `westwood_acked_count`: a duplicate ACK counts one MSS now; the cumulative ACK that ends
    /// the episode is reduced by what was credited ahead.
    fn acked_count(&mut self, acked: u64, mss: u64) -> u64 {
        if acked == 0 {
            self.accounted += mss;
            return mss;
        }
        if acked > mss {
            if self.accounted >= acked {
                self.accounted -= acked;
                return mss;
            }
            let count = acked - self.accounted;
            self.accounted = 0;
            return count;
        }
        acked
    }
}

impl CongestionOps for Westwood {
    fn on_ack_event(&mut self, w: &Window, ev: &AckEvent) {
        if self.first_ack {
            self.first_ack = false;
            self.win_start = ev.now;
        }
        self.update_window(ev.now);
        if ev.acked > 0 || ev.dupack {
            self.bk += self.acked_count(ev.acked, w.mss);
        }
        // The window above closed with the RTT before this ACK's sample, as Linux's
        // `westwood_update_window` runs before `tcp_westwood_pkts_acked` updates the RTT.
        if let Some(rtt) = ev.rtt {
            self.on_rtt_sample(rtt);
        }
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        Reno::grow(w, ev.acked); // probing phase = Reno
    }

    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response {
        standard_response(w, ev, |w| match ev.kind {
            // CA_EVENT_LOSS: ssthresh = ER, and RTT_min restarts.
            Congestion::Timeout { .. } => {
                self.reset_rtt_min = true;
                self.eligible_window(w.mss)
            }
            // Linux keeps Reno's halving at the start of recovery (tcp_reno_ssthresh).
            _ => Reno::halve(w, ev.outstanding),
        });
        Response::CONGESTION
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _flight: u64) {
        // CA_EVENT_COMPLETE_CWR: cwnd = ssthresh = ER.
        let er = self.eligible_window(w.mss);
        w.ssthresh = er;
        w.cwnd = er;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(now: Nanos, acked: u64) -> AckEvent {
        AckEvent {
            now,
            acked,
            dupack: acked == 0,
            ..AckEvent::default()
        }
    }

    #[test]
    fn the_first_bandwidth_sample_fills_both_filter_stages_and_later_ones_are_smoothed() {
        let w = Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        let mut ww = Westwood::default();
        ww.on_rtt_sample(100 * MS);
        ww.on_ack_event(&w, &ack(0, MSS)); // opens the window at t = 0
        ww.on_ack_event(&w, &ack(50 * MS, 9 * MSS));
        // 10 000 bytes over the first 101 ms window closes at the next ACK after 100 ms.
        ww.on_ack_event(&w, &ack(101 * MS, MSS));
        let first = 10_000.0 / (101 * MS) as f64;
        assert!((ww.bw_est - first).abs() < 1e-15 && (ww.bw_ns_est - first).abs() < 1e-15);
        ww.on_ack_event(&w, &ack(150 * MS, 20 * MSS));
        ww.on_ack_event(&w, &ack(202 * MS, MSS));
        let second = 21_000.0 / (101 * MS) as f64;
        let ns = (7.0 * first + second) / 8.0;
        assert!((ww.bw_ns_est - ns).abs() < 1e-15);
        assert!((ww.bw_est - (7.0 * first + ns) / 8.0).abs() < 1e-15);
    }

    #[test]
    fn duplicate_acks_are_credited_one_mss_and_taken_back_from_the_cumulative_ack() {
        let mut ww = Westwood::default();
        assert_eq!(ww.acked_count(0, MSS), MSS);
        assert_eq!(ww.acked_count(0, MSS), MSS);
        // The cumulative ACK for 5 segments delivers 3 not yet counted.
        assert_eq!(ww.acked_count(5 * MSS, MSS), 3 * MSS);
        assert_eq!(ww.accounted, 0);
        // A delayed ACK of two segments with nothing credited counts both.
        assert_eq!(ww.acked_count(2 * MSS, MSS), 2 * MSS);
    }

    #[test]
    fn a_timeout_sets_ssthresh_to_bandwidth_times_min_rtt_in_whole_segments() {
        let mut ww = Westwood {
            bw_est: 1.25e-3,
            rtt_min: 40 * MS,
            ..Westwood::default()
        }; // 10 Mb/s
        let w = Window {
            cwnd: 80 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        // 1.25e-3 B/ns · 40 ms = 50 000 B = 50 segments.
        let event = |kind| CongestionEvent {
            now: 0,
            kind,
            outstanding: 80 * MSS,
            in_recovery: false,
        };
        let mut after = w;
        ww.on_congestion(&mut after, &event(Congestion::Timeout { first: true }));
        assert_eq!((after.ssthresh, after.cwnd), (50 * MSS, MSS));
        let mut after = w;
        ww.on_congestion(&mut after, &event(Congestion::Loss));
        assert_eq!(after.ssthresh, 40 * MSS, "Reno halving at recovery start");
        let mut w2 = w;
        ww.on_recovery_exit(&mut w2, 0);
        assert_eq!((w2.cwnd, w2.ssthresh), (50 * MSS, 50 * MSS));
        assert!(ww.reset_rtt_min, "RTT_min restarts after a timeout");
    }

    #[test]
    fn the_eligible_window_never_drops_below_two_segments() {
        assert_eq!(Westwood::default().eligible_window(MSS), 2 * MSS);
    }
}
