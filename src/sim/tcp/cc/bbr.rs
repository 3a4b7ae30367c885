//! BBR v1 (Cardwell, Cheng, Gunn, Yeganeh & Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5) 2016) as Linux `net/ipv4/tcp_bbr.c` runs it — docs/algorithms.md
//! §15.2.
//!
//! The model: BtlBw = the largest delivery rate of the last 10 rounds (`bbr_bw_rtts`), from the
//! sender's rate samples ([`crate::sim::tcp::rate`]; app-limited samples only if they raise it);
//! RTprop = the smallest RTT, refreshed when 10 s pass without a smaller one
//! (`bbr_min_rtt_win_sec`). It paces at pacing_gain·BtlBw (less 1 %, `bbr_pacing_margin_percent`)
//! through the sender's pacing ([`crate::sim::tcp::pacing`]) and bounds cwnd by
//! cwnd_gain·BtlBw·RTprop plus a quantisation allowance (`bbr_quantization_budget`).
//!
//! States (`bbr_update_gains`): Startup (both gains 2/ln 2, Linux 739/256) until BtlBw grew less
//! than 25 % in 3 non-app-limited rounds; Drain (pacing gain 88/256, cwnd gain 739/256) until
//! inflight ≤ BDP; ProbeBW (cwnd gain 2) cycling pacing gains [5/4, 3/4, 1, 1, 1, 1, 1, 1], one
//! phase per RTprop — 5/4 lasts until inflight reaches 5/4·BDP too, 3/4 ends early once inflight
//! ≤ BDP — starting at a random phase other than 3/4; ProbeRTT when RTprop expires: cwnd 4
//! segments for max(200 ms, one round), then back (restoring cwnd).
//!
//! Choices (also in docs/algorithms.md §15.2):
//! - Loss: no reduction of BtlBw or ssthresh (`bbr_ssthresh` keeps it); the window is saved
//!   (`bbr_save_cwnd`) and recovery starts at inflight + one segment (packet conservation); the
//!   simulator's recovery strategy (RFC 5681/6582/6675 mechanics) then runs the recovery, and
//!   its exit restores at least the saved window. A timeout leaves 1 segment and restarts the
//!   full-bandwidth count (`bbr->full_bw = 0`); the window then grows by the bytes ACKed up to
//!   the target. Linux's per-ACK packet conservation inside recovery is the recovery strategy's.
//! - Not done (future work): long-term bandwidth sampling for token-bucket policers
//!   (`bbr_lt_bw_sampling`), the ACK-aggregation allowance (`bbr_extra_acked`), the idle restart
//!   (`CA_EVENT_TX_START`), and inflight "at EDT" (`bbr_packets_in_net_at_edt`; inflight is
//!   read as the ACK found it). BBR v2/v3 (loss- and ECN-bounded inflight_hi/lo, ProbeBW's
//!   Down/Cruise/Refill/Up, 2.77 startup gain, 0.9/0.7 backoffs) are documented as future work.
//! - The initial pacing rate is 2.89·IW per 1 ms (no RTT yet: `bbr_init_pacing_rate_from_rtt`'s
//!   nominal 1 ms, as a connection without a handshake RTT); at the first RTT sample it is set
//!   from that sample (Linux: from SRTT, whose first value is the first sample).
//! - Rates are bytes of payload per second, windows bytes; gains are Linux's integers over 256.
//! - RTprop starts from the first data sample: Linux's `bbr_init` seeds it with the handshake's
//!   RTT (`tcp_min_rtt`) and ns-3's TcpBbr with SRTT at CA_OPEN, but rttlab's sender has no
//!   handshake. `initial_min_rtt` stands in for that sample (stamped at the first ACK). It
//!   matters for flows that start behind a queue: their first data sample is inflated, a lower
//!   one comes later, and their ProbeRTT falls out of step with the others' (docs/ns3-comparison.md).
//! - `send_quantum` fixes the quantisation budget's skb size (ns-3's TcpBbr uses 1 segment at
//!   every rate; Linux's `bbr_tso_segs_goal`, the default, 2 above 1.2 Mbit/s).

use super::Response;
use super::{
    AckEvent, Congestion, CongestionControl, CongestionEvent, CongestionOps, Connection, Window,
};
use crate::component::{Component, Declaration};
use crate::rng::{self, Stream};
use crate::sim::tcp::rate::RateSample;
use crate::time::{Nanos, MS, SEC};

/// Gains are fixed point over BBR_UNIT (Linux `BBR_SCALE` = 8).
const BBR_UNIT: u64 = 256;
/// `bbr_high_gain` = 2/ln 2 ≈ 2.885: BBR_UNIT·2885/1000 + 1 = 739.
const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = ln 2/2, its inverse: BBR_UNIT·1000/2885 = 88.
const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain` = 2 in ProbeBW.
const CWND_GAIN: u64 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`: the ProbeBW cycle (CYCLE_LEN = 8).
pub const PACING_GAIN_CYCLE: [u64; 8] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand` = 7: the first phase is drawn among 7 (never the 3/4 one).
const CYCLE_RAND: u64 = 7;
/// `bbr_cwnd_min_target` = 4 segments (also ProbeRTT's window).
const CWND_MIN_TARGET: u64 = 4;
/// `bbr_full_bw_thresh` = 5/4 and `bbr_full_bw_cnt` = 3 rounds.
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// `bbr_bw_rtts` = CYCLE_LEN + 2 = 10 rounds of the max filter.
const BW_RTTS: u64 = 10;
/// `bbr_min_rtt_win_sec` = 10 s and `bbr_probe_rtt_mode_ms` = 200 ms.
const MIN_RTT_WIN: Nanos = 10 * SEC;
const PROBE_RTT_MODE: Nanos = 200 * MS;
/// `bbr_pacing_margin_percent` = 1: pace 1 % below the estimate.
const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_min_tso_rate` = 1.2 Mbit/s (bytes/s here) and `sk_pacing_shift` = 10 (~1 ms of data).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
const PACING_SHIFT: u32 = 10;
/// TCP_INIT_CWND = 10 segments: the BDP before any RTT sample (`bbr_bdp`).
const INIT_CWND: u64 = 10;

crate::params! {
    /// BBR's parameters (both default to Linux's behaviour).
    pub struct Config {
        send_quantum: u64 = int("0", 0.0, 127.0, "segments per skb in the cwnd's quantisation budget (3 of them): 0 = Linux's bbr_tso_segs_goal (1 below 1.2 Mbit/s of pacing, else max(2, 1 ms of data)), N = fixed N (ns-3's TcpBbr: 1)"),
        initial_min_rtt: Nanos = duration("0s", 0.0, 3600.0, "RTprop before the first sample, as the handshake's RTT seeds it in Linux's bbr_init (tcp_min_rtt) and ns-3's TcpBbr (SRTT at CA_OPEN); rttlab's sender has no handshake, so 0s (the default) starts from the first data sample"),
    }
}

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "bbr",
        aliases: &["bbr1"],
        summary: "BBR v1: paces at the max delivery rate of 10 rounds, cwnd 2·BDP; Startup, Drain, ProbeBW gain cycle, ProbeRTT",
        source: "Cardwell et al. 2016 (ACM Queue); Linux tcp_bbr.c; docs/algorithms.md §15.2",
        params: PARAMS,
        defaults: &[("recovery", "newreno")],
    },
    build: |p| {
        let cfg = Config::from_params(p)?;
        Ok(CongestionControl::Bbr(Box::new(Bbr::with(cfg.send_quantum, cfg.initial_min_rtt))))
    },
};

/// `enum bbr_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Debug, Clone)]
pub struct Bbr {
    mode: Mode,
    /// Max-filter of the delivery rate: (round, rate bytes/s) of the last BW_RTTS rounds.
    bw_samples: Vec<(u64, u64)>,
    /// Rounds so far (`rtt_cnt`) and the delivered count that ends this one.
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    probe_rtt_done_stamp: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// Samples sent before delivered passes this are app-limited (ProbeRTT's `tp->app_limited`).
    app_limited_until: u64,
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw: u64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Nanos,
    prior_cwnd: u64,
    pacing_rate: u64,
    has_seen_rtt: bool,
    rng: Stream,
    /// The last ACK's sample and inflight after it (from `on_ack_event` for `on_ack`).
    acked: u64,
    /// Mode changes (time, mode) for tests and traces: a handful per 10 s.
    pub transitions: Vec<(Nanos, Mode)>,
    /// `send_quantum`: 0 = Linux's `bbr_tso_segs_goal`, else fixed segments.
    send_quantum: u64,
    /// `initial_min_rtt`: the handshake RTT stand-in (0: none).
    initial_min_rtt: Nanos,
}

impl Default for Bbr {
    fn default() -> Self {
        Self::new()
    }
}

impl Bbr {
    pub fn new() -> Self {
        Self {
            mode: Mode::Startup,
            bw_samples: Vec::new(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            app_limited_until: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            prior_cwnd: 0,
            pacing_rate: 0,
            has_seen_rtt: false,
            rng: Stream::new(0, rng::Component::CongestionControl(0)),
            acked: 0,
            transitions: vec![(0, Mode::Startup)],
            send_quantum: 0,
            initial_min_rtt: 0,
        }
    }

    /// With the parameters: `send_quantum` segments (0: Linux's goal) and `initial_min_rtt`.
    pub fn with(send_quantum: u64, initial_min_rtt: Nanos) -> Self {
        Self {
            send_quantum,
            initial_min_rtt,
            ..Self::new()
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The current pacing gain over 256 and the ProbeBW phase.
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// BtlBw, bytes of payload per second (`bbr_max_bw`).
    pub fn max_bw(&self) -> u64 {
        self.bw_samples.iter().map(|&(_, b)| b).max().unwrap_or(0)
    }

    /// RTprop (`min_rtt_us`).
    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }

    /// When RTprop was last lowered or met (`min_rtt_stamp`).
    pub fn min_rtt_stamp(&self) -> Nanos {
        self.min_rtt_stamp
    }

    fn set_mode(&mut self, mode: Mode, now: Nanos) {
        if self.mode != mode {
            self.transitions.push((now, mode));
        }
        self.mode = mode;
    }

    /// `bbr_bdp` in segments, rounded up; INIT_CWND before any RTT sample.
    fn bdp(&self, bw: u64, gain: u64, mss: u64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return INIT_CWND;
        };
        let bytes = bw as u128 * rtt as u128 * gain as u128;
        bytes.div_ceil(BBR_UNIT as u128 * SEC as u128 * mss as u128) as u64
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate, at least 1 or 2 segments.
    fn tso_segs_goal(&self, mss: u64) -> u64 {
        if self.send_quantum > 0 {
            return self.send_quantum; // ns-3's TcpBbr: SetSendQuantum = 1 segment, always
        }
        let min = if self.pacing_rate < MIN_TSO_RATE {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(65_536 - 1 - 320); // GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER
        (bytes / mss).max(min).min(0x7F)
    }

    /// `bbr_inflight` = `bbr_quantization_budget(bbr_bdp(...))`, segments.
    fn inflight(&self, bw: u64, gain: u64, mss: u64) -> u64 {
        let mut cwnd = self.bdp(bw, gain, mss) + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1; // round up to even: fewer delayed ACKs
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2; // gain cycling gets inflight above BDP even for small BDPs
        }
        cwnd
    }

    /// `bbr_bw_to_pacing_rate`: bytes/s at `gain`, 1 % margin.
    fn rate_at(bw: u64, gain: u64) -> u64 {
        (bw as u128 * gain as u128 / BBR_UNIT as u128 * (100 - PACING_MARGIN_PERCENT) as u128 / 100)
            as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / RTT (1 ms before any sample).
    fn init_pacing_rate(&mut self, cwnd: u64, rtt: Option<Nanos>) {
        let rtt = rtt.unwrap_or(MS).max(1);
        self.has_seen_rtt = rtt != MS || self.has_seen_rtt;
        let bw = (cwnd as u128 * SEC as u128 / rtt as u128) as u64;
        self.pacing_rate = Self::rate_at(bw, HIGH_GAIN);
    }

    fn reset_probe_bw(&mut self, now: Nanos) {
        self.set_mode(Mode::ProbeBw, now);
        // `CYCLE_LEN − 1 − random(bbr_cycle_rand)`, then advance: any phase but the 3/4 one.
        self.cycle_idx = (8 - 1 - (self.rng.next_u64() % CYCLE_RAND)) as usize;
        self.advance_cycle(now);
    }

    fn advance_cycle(&mut self, now: Nanos) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = now;
    }

    fn reset_mode(&mut self, now: Nanos) {
        if self.full_bw_reached {
            self.reset_probe_bw(now);
        } else {
            self.set_mode(Mode::Startup, now);
        }
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64, in_recovery: bool) {
        self.prior_cwnd = if !in_recovery && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// `bbr_update_model` for one ACK: bandwidth, gain cycle, Startup exit, Drain, RTprop and
    /// ProbeRTT, gains; then the pacing rate (`bbr_set_pacing_rate`).
    fn update_model(&mut self, w: &Window, ev: &AckEvent, rs: &RateSample) {
        let now = ev.now;
        let mss = w.mss;
        let inflight_now = ev.pipe.saturating_sub(rs.acked_sacked) / mss;
        let prior_inflight = ev.pipe / mss;
        let app_limited = rs.app_limited
            || (self.app_limited_until != 0 && rs.prior_delivered < self.app_limited_until);
        if self.app_limited_until != 0 && rs.total_delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        // bbr_update_bw
        self.round_start = false;
        if rs.valid {
            if rs.prior_delivered >= self.next_rtt_delivered {
                self.next_rtt_delivered = rs.total_delivered;
                self.rtt_cnt += 1;
                self.round_start = true;
            }
            let bw = rs.rate().unwrap_or(0);
            if !app_limited || bw >= self.max_bw() {
                // Windowed max over the last BW_RTTS rounds (Linux's minmax_running_max keeps an
                // approximation of it with three samples; this keeps it exactly).
                let round = self.rtt_cnt;
                self.bw_samples.retain(|&(r, _)| r + BW_RTTS > round);
                match self.bw_samples.last_mut() {
                    Some((r, b)) if *r == round => *b = (*b).max(bw),
                    _ => self.bw_samples.push((round, bw)),
                }
            }
        }
        let bw = self.max_bw();
        // bbr_update_cycle_phase
        if self.mode == Mode::ProbeBw {
            let full_length = self.min_rtt.is_some_and(|m| now - self.cycle_stamp > m);
            let next = match self.pacing_gain {
                g if g == BBR_UNIT => full_length,
                g if g > BBR_UNIT => full_length && prior_inflight >= self.inflight(bw, g, mss),
                _ => full_length || prior_inflight <= self.inflight(bw, BBR_UNIT, mss),
            };
            if next {
                self.advance_cycle(now);
            }
        }
        // bbr_check_full_bw_reached
        if !self.full_bw_reached && self.round_start && !app_limited {
            if bw >= self.full_bw * FULL_BW_THRESH / BBR_UNIT {
                self.full_bw = bw;
                self.full_bw_cnt = 0;
            } else {
                self.full_bw_cnt += 1;
                self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
            }
        }
        // bbr_check_drain
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.set_mode(Mode::Drain, now);
        }
        if self.mode == Mode::Drain && inflight_now <= self.inflight(bw, BBR_UNIT, mss) {
            self.reset_probe_bw(now);
        }
        // The handshake's sample that `bbr_init` would have read (`tcp_min_rtt`), stamped now:
        // the first ACK stands in for the end of the handshake.
        if self.min_rtt.is_none() && self.initial_min_rtt > 0 && ev.newest_rtt.is_some() {
            self.min_rtt = Some(self.initial_min_rtt);
            self.min_rtt_stamp = now;
        }
        // bbr_update_min_rtt: a sample equal to RTprop refreshes its stamp (`rs->rtt_us <=
        // bbr->min_rtt_us`); Linux also skips a delayed ACK's sample on expiry
        // (`is_ack_delayed`, a lone runt segment's ACK), which this model does not flag.
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = ev.newest_rtt {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.set_mode(Mode::ProbeRtt, now);
            self.save_cwnd(w.cwnd, ev.in_recovery);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples of this mode: what is in flight now is app-limited.
            self.app_limited_until =
                (rs.total_delivered + ev.pipe.saturating_sub(rs.acked_sacked)).max(1);
            match self.probe_rtt_done_stamp {
                None if inflight_now <= CWND_MIN_TARGET => {
                    self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = rs.total_delivered;
                }
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now > done {
                        self.min_rtt_stamp = now; // wait a while until the next ProbeRTT
                        self.reset_mode(now);
                    }
                }
                None => {}
            }
        }
        // bbr_update_gains
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        // bbr_set_pacing_rate: before the pipe is full, only ever raise it.
        if !self.has_seen_rtt {
            if let Some(rtt) = ev.newest_rtt {
                self.init_pacing_rate(w.cwnd, Some(rtt));
                self.has_seen_rtt = true;
            }
        }
        let rate = Self::rate_at(bw, self.pacing_gain);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }
}

impl CongestionOps for Bbr {
    fn on_established(&mut self, c: &Connection) {
        self.rng = Stream::new(c.seed, rng::Component::CongestionControl(c.flow));
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn on_ack_event(&mut self, w: &Window, ev: &AckEvent) {
        if self.pacing_rate == 0 {
            self.init_pacing_rate(w.cwnd, None);
        }
        self.acked = 0;
        let Some(rs) = ev.rate else { return };
        self.acked = rs.acked_sacked;
        self.update_model(w, ev, &rs);
    }

    /// `bbr_set_cwnd` outside recovery.
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        let mss = w.mss;
        if self.acked > 0 {
            let target = self.inflight(self.max_bw(), self.cwnd_gain, mss) * mss;
            let delivered = ev.rate.map_or(0, |r| r.total_delivered);
            if self.full_bw_reached {
                w.cwnd = (w.cwnd + self.acked).min(target);
            } else if w.cwnd < target || delivered < INIT_CWND * mss {
                w.cwnd += self.acked;
            }
            w.cwnd = w.cwnd.max(CWND_MIN_TARGET * mss);
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN_TARGET * mss);
        }
    }

    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response {
        match ev.kind {
            Congestion::Loss => {
                // `bbr_ssthresh` → `bbr_save_cwnd`; ssthresh stays. Packet conservation: the
                // first round of recovery starts from what is in flight plus this ACK's data.
                self.save_cwnd(w.cwnd, ev.in_recovery);
                w.cwnd = (ev.outstanding + w.mss)
                    .max(CWND_MIN_TARGET * w.mss)
                    .min(w.cwnd.max(CWND_MIN_TARGET * w.mss));
            }
            Congestion::Timeout { .. } => {
                self.save_cwnd(w.cwnd, ev.in_recovery);
                w.cwnd = w.mss; // tcp_enter_loss: one segment
                self.full_bw = 0; // `bbr_cwnd_event`/`set_state(TCP_CA_Loss)`: restart the full-bw count
                self.round_start = true;
            }
            // BBR v1 does not react to ECN or router signals (no `ssthresh` cut).
            Congestion::Ecn | Congestion::Router(_) => {}
        }
        Response::CONGESTION
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _flight: u64) {
        // `bbr_set_cwnd_to_recover_or_restore`: restore the window saved before recovery.
        w.cwnd = w.cwnd.max(self.prior_cwnd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gains_are_linuxs_fixed_point_values() {
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        assert_eq!(PACING_GAIN_CYCLE, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    #[test]
    fn the_first_probe_bw_phase_is_never_the_draining_one() {
        let mut b = Bbr::new();
        let mut seen = [0u32; 8];
        for i in 0..700 {
            b.reset_probe_bw(i);
            seen[b.cycle_idx] += 1;
        }
        assert_eq!(seen[1], 0, "3/4 never starts a cycle");
        assert!(
            seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 50),
            "{seen:?}"
        );
    }

    #[test]
    fn the_bdp_rounds_up_to_whole_segments_and_the_budget_adds_tso_room() {
        let mut b = Bbr::new();
        b.min_rtt = Some(40 * MS);
        // 1 250 000 B/s × 40 ms = 50 000 B = 34.5 segments of 1448 B → 35; ×2 gain → 70.
        assert_eq!(b.bdp(1_250_000, BBR_UNIT, 1448), 35);
        assert_eq!(b.bdp(1_250_000, CWND_GAIN, 1448), 70);
        // Pacing 1.25 MB/s: 1 ms ≈ 1220 B < 1 segment, rate ≥ 150 kB/s → 2 segments of TSO goal;
        // 35 + 3·2 = 41 → even 42.
        b.pacing_rate = 1_250_000;
        assert_eq!(b.inflight(1_250_000, BBR_UNIT, 1448), 42);
        // send_quantum = 1 (ns-3's TcpBbr): 35 + 3·1 = 38, already even.
        let mut n = Bbr::with(1, 0);
        (n.min_rtt, n.pacing_rate) = (Some(40 * MS), 1_250_000);
        assert_eq!(n.inflight(1_250_000, BBR_UNIT, 1448), 38);
    }

    fn ack(b: &mut Bbr, now: Nanos, rtt: Nanos) {
        let w = Window {
            cwnd: 10 * 1448,
            ssthresh: u64::MAX,
            mss: 1448,
        };
        let rs = RateSample {
            delivered: 1448,
            interval: rtt,
            valid: true,
            acked_sacked: 1448,
            ..RateSample::default()
        };
        b.update_model(
            &w,
            &AckEvent {
                now,
                newest_rtt: Some(rtt),
                pipe: 5 * 1448,
                rate: Some(rs),
                ..AckEvent::default()
            },
            &rs,
        );
    }

    #[test]
    fn an_rtt_sample_equal_to_rtprop_restarts_its_ten_second_window_as_linuxs_does() {
        let mut b = Bbr::new();
        ack(&mut b, SEC, 50 * MS);
        ack(&mut b, 5 * SEC, 50 * MS); // `rs->rtt_us <= bbr->min_rtt_us`: stamp → 5 s
        ack(&mut b, 12 * SEC, 60 * MS);
        assert_eq!(
            (b.min_rtt, b.mode),
            (Some(50 * MS), Mode::Startup),
            "not expired: 12 s < 5 s + 10 s"
        );
        ack(&mut b, 15 * SEC + 1, 60 * MS);
        assert_eq!(
            (b.min_rtt, b.mode),
            (Some(60 * MS), Mode::ProbeRtt),
            "expired: the sample replaces RTprop"
        );
    }

    #[test]
    fn initial_min_rtt_stands_in_for_the_handshake_sample_until_a_lower_one() {
        let mut b = Bbr::with(0, 45 * MS);
        ack(&mut b, 300 * MS, 90 * MS); // a first sample behind a queue does not replace it
        assert_eq!((b.min_rtt, b.min_rtt_stamp), (Some(45 * MS), 300 * MS));
        ack(&mut b, 2 * SEC, 44 * MS);
        assert_eq!((b.min_rtt, b.min_rtt_stamp), (Some(44 * MS), 2 * SEC));
        let mut plain = Bbr::new();
        ack(&mut plain, 300 * MS, 90 * MS);
        assert_eq!(
            plain.min_rtt,
            Some(90 * MS),
            "default: the first data sample"
        );
    }
}
