//! TCP sender: Reno or NewReno loss recovery (RFC 5681 §3.2, RFC 6582 §3.2; the congestion
//! control picks, see [`Recovery`]) or, with SACK, RFC 6675 loss recovery for any congestion
//! control; RFC 6298 timer management, ECN reaction (RFC 3168 §6.1.2).
//! Sequence numbers count payload bytes from 0. The application's data arrives up front (bulk) or
//! over time through [`Sender::write`].

use super::cc::{AckEvent, CongestionControl, CongestionOps, Recovery, Signal, Window};
use super::scoreboard::Scoreboard;
use super::{RecoveryTimeout, Sampling, TcpConfig};
use crate::rtt::timer::{karn_accepts, Backoff};
use crate::rtt::{Context, Estimator, RttEstimator};
use crate::sim::packet::{Ecn, FlowId, Kind, NodeId, Packet};
use crate::sim::trace::{RetxCause, Trace};
use crate::time::Nanos;

/// Counters reported per flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub bytes_sent: u64,
    pub retx_timeout: u64,
    pub retx_fast: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub ecn_reductions: u64,
    pub quench_reductions: u64,
    pub rtt_samples: u64,
}

#[derive(Debug, Clone)]
pub struct Sender {
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    mss: u32,
    header: u32,
    timestamps: bool,
    sampling: Sampling,
    ecn: bool,
    recovery_timeout: RecoveryTimeout,
    /// Bytes the application hands over in total (u64::MAX: unlimited).
    app_bytes: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    board: Scoreboard,
    /// SACK negotiated: RFC 6675 recovery, `pipe` instead of FlightSize for sending.
    sack: bool,
    /// RFC 6675 HighRxt, as one past the highest byte resent in this recovery (or since the
    /// last timeout).
    high_rxt: u64,
    win: Window,
    rwnd: u64,
    cc: CongestionControl,
    /// Fast-recovery mechanics, fixed by the congestion control at construction.
    recovery: Recovery,
    estimator: Estimator,
    backoff: Backoff,
    rto_deadline: Option<Nanos>,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`, stored as one past the highest byte sent at the time (None = ISS).
    /// Reno keeps it only to tell whether a timeout ends the current recovery episode.
    recover: Option<u64>,
    partial_ack_seen: bool,
    /// The timed segment (end sequence, send time) in `Sampling::Timed` mode.
    timed: Option<(u64, Nanos)>,
    /// snd_max when the current RTT window began (Linux `rtt_seq`, Context::new_window).
    rtt_window_end: u64,
    /// cwnd in segments before the last congestion event (CA-RTO's max_cwnd).
    max_cwnd: Option<f64>,
    /// No further ECN/quench reduction until snd_una passes this (once per window, RFC 3168 §6.1.2).
    cwr_until: Option<u64>,
    /// Set CWR on the next new data segment.
    cwr_pending: bool,
    /// Initial window in bytes, the restart window's cap after idle (RFC 5681 §4.1).
    iw: u64,
    /// When a segment last went out (None: never).
    last_send: Option<Nanos>,
    pub stats: SenderStats,
}

impl Sender {
    pub fn new(flow: FlowId, src: NodeId, dst: NodeId, cfg: &TcpConfig, app_bytes: u64, estimator: Estimator) -> Self {
        let mss = cfg.mss as u64;
        let cc = cfg.cc.build();
        Self {
            flow,
            src,
            dst,
            mss: cfg.mss,
            header: cfg.header,
            timestamps: cfg.timestamps,
            sampling: cfg.sampling,
            ecn: cfg.ecn,
            recovery_timeout: cfg.recovery_timeout,
            app_bytes,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            board: Scoreboard::new(cfg.mss),
            sack: cfg.sack,
            high_rxt: 0,
            win: Window { cwnd: cfg.init_cwnd as u64 * mss, ssthresh: cfg.init_ssthresh, mss },
            rwnd: cfg.rwnd,
            recovery: cc.recovery(),
            cc,
            estimator,
            backoff: Backoff::default(),
            rto_deadline: None,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_ack_seen: false,
            timed: None,
            rtt_window_end: 0,
            max_cwnd: None,
            cwr_until: None,
            cwr_pending: false,
            iw: cfg.init_cwnd as u64 * mss,
            last_send: None,
            stats: SenderStats::default(),
        }
    }

    pub fn window(&self) -> Window {
        self.win
    }

    /// Bytes the application has handed over so far (u64::MAX: unlimited).
    pub fn app_bytes(&self) -> u64 {
        self.app_bytes
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// The application hands over `bytes` more (an on/off source); send what the windows allow.
    /// Whole segments keep segment boundaries at multiples of the MSS.
    pub fn write(&mut self, bytes: u64, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        // RFC 5681 §4.1: after sending nothing for longer than the RTO, restart from
        // RW = min(IW, cwnd) rather than release a stale window as one burst. Only a source that
        // writes over time can go idle with new data to send, so bulk transfers never get here.
        if self.last_send.is_some_and(|t| now.saturating_sub(t) > self.rto()) && self.win.cwnd > self.iw {
            self.win.cwnd = self.iw;
            self.trace_window(now, trace);
        }
        self.app_bytes = self.app_bytes.saturating_add(bytes);
        self.send_allowed(now, out, trace);
    }

    /// All the application's data is acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.app_bytes
    }

    pub fn rto_deadline(&self) -> Option<Nanos> {
        self.rto_deadline
    }

    /// The RTO in force, back-off included.
    pub fn rto(&self) -> Nanos {
        self.backoff.rto(&self.estimator)
    }

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// The data in the network that a congestion signal halves: FlightSize (RFC 5681 eq. 4), or
    /// with SACK RFC 6675's `pipe`, which leaves out what was SACKed or deemed lost. Read this
    /// way, as ns-3 does, because with SACK the sender keeps sending past a stuck hole (pipe
    /// governs) and FlightSize then counts data long delivered: halving it can leave ssthresh
    /// above the window that caused the loss.
    fn outstanding(&self) -> u64 {
        if self.sack {
            self.board.pipe(self.flight())
        } else {
            self.flight()
        }
    }

    fn context(&self, now: Nanos, new_window: Option<bool>) -> Context {
        let mss = self.mss as f64;
        Context {
            now,
            cwnd: Some(self.win.cwnd as f64 / mss),
            ssthresh: Some(self.win.ssthresh.min(u64::MAX / 4) as f64 / mss),
            max_cwnd: self.max_cwnd,
            new_window,
            ack_delay: 0,
        }
    }

    fn trace_window(&self, now: Nanos, trace: &mut Trace) {
        trace.window(now, self.flow, self.win.cwnd, self.win.ssthresh, self.estimator.prediction().unwrap_or(0), self.rto());
    }

    /// RFC 6298 §5.1/5.3: (re)start the timer with the current (backed-off) RTO.
    fn arm_timer(&mut self, now: Nanos) {
        let ctx = self.context(now, None);
        self.estimator.on_timer_armed(&ctx);
        self.rto_deadline = Some(now.saturating_add(self.rto()));
    }

    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        self.trace_window(now, trace);
        self.send_allowed(now, out, trace);
    }

    /// Send what cwnd and rwnd allow, from snd_nxt (which is below snd_max after a timeout:
    /// go-back-N resends count as timeout retransmissions).
    fn send_allowed(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if self.sack {
            return self.send_allowed_sack(now, out, trace);
        }
        let wnd = self.win.cwnd.min(self.rwnd);
        while self.snd_nxt < self.app_bytes {
            let len = (self.mss as u64).min(self.app_bytes - self.snd_nxt);
            if self.snd_nxt - self.snd_una + len > wnd {
                break;
            }
            let seq = self.snd_nxt;
            let cause = (seq < self.snd_max).then_some(RetxCause::Timeout);
            let sent = self.transmit(seq, now, cause, out, trace);
            if sent == 0 {
                break; // no such segment: cannot happen with fixed segment boundaries, never spin
            }
            self.snd_nxt += sent as u64;
        }
    }

    /// RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, send NextSeg — the first segment deemed
    /// lost (rule 1), else new data within the receiver's window (rule 2). Rules 3 and 4 (resending
    /// unSACKed segments not yet deemed lost; the rescue retransmission) are left out: they only
    /// act when the application has no new data, which bulk transfers never lack.
    fn send_allowed_sack(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        loop {
            let pipe = self.board.pipe(self.flight());
            if pipe + self.mss as u64 > self.win.cwnd {
                break;
            }
            if let Some(seq) = self.board.first_lost() {
                let cause = if self.in_recovery { RetxCause::Fast } else { RetxCause::Timeout };
                let len = self.transmit(seq, now, Some(cause), out, trace);
                if len == 0 {
                    break; // no such segment: cannot happen (first_lost names one), never spin
                }
                self.high_rxt = self.high_rxt.max(seq + len as u64);
                continue;
            }
            let len = (self.mss as u64).min(self.app_bytes.saturating_sub(self.snd_max));
            if len == 0 || self.snd_max + len > self.snd_una + self.rwnd {
                break;
            }
            self.transmit(self.snd_max, now, None, out, trace);
            self.snd_nxt = self.snd_max;
        }
    }

    /// Put the segment starting at `seq` on the wire; returns its length.
    fn transmit(&mut self, seq: u64, now: Nanos, retx: Option<RetxCause>, out: &mut Vec<Packet>, trace: &mut Trace) -> u32 {
        let (len, tx) = if seq >= self.snd_max {
            let len = (self.mss as u64).min(self.app_bytes - seq) as u32;
            self.board.push(seq, len, now);
            self.snd_max = seq + len as u64;
            if self.sampling == Sampling::Timed && self.timed.is_none() {
                self.timed = Some((self.snd_max, now));
            }
            (len, 0)
        } else {
            let Some(s) = self.board.resend(seq) else { return 0 };
            s.tx = s.tx.saturating_add(1);
            s.sent_at = now;
            let (len, tx) = (s.len, s.tx);
            // Karn (RFC 6298 §3): a retransmitted timed segment gives no sample.
            if self.timed.is_some_and(|(end, _)| seq < end && end <= seq + len as u64) {
                self.timed = None;
            }
            let cause = retx.unwrap_or(RetxCause::Fast);
            match cause {
                RetxCause::Timeout => self.stats.retx_timeout += 1,
                RetxCause::Fast => self.stats.retx_fast += 1,
            }
            trace.retx(now, self.flow, seq, cause, tx);
            (len, tx)
        };
        // RFC 3168 §6.1.5: retransmissions are not ECT; CWR rides on the next new data segment.
        let new_data = tx == 0;
        let cwr = new_data && std::mem::take(&mut self.cwr_pending);
        out.push(Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            kind: Kind::Data,
            size: len + self.header,
            seq,
            len,
            ack: 0,
            rwnd: 0,
            tx,
            ecn: if self.ecn && new_data { Ecn::Ect0 } else { Ecn::NotEct },
            ece: false,
            cwr,
            ts_val: now,
            ts_ecr: 0,
            sack: Default::default(),
        });
        self.stats.segments_sent += 1;
        self.last_send = Some(now);
        self.stats.bytes_sent += len as u64;
        if self.rto_deadline.is_none() {
            self.arm_timer(now); // RFC 6298 §5.1
        }
        len
    }

    /// A congestion signal that needs no retransmission: ECN-Echo or source quench, at most once
    /// per window of data (RFC 3168 §6.1.2), not during loss recovery.
    fn reduce_once_per_window(&mut self, now: Nanos, signal: Signal, trace: &mut Trace) {
        // The window ends only once the ACK passes the data sent before the last reduction: ACKs
        // up to it were sent before the receiver could see our CWR, so their ECE is stale (Linux
        // holds CWR "until something *above* high_seq is ACKed"; ns-3 `ackNumber > m_recover`).
        if self.in_recovery || self.cwr_until.is_some_and(|c| self.snd_una <= c) || self.flight() == 0 {
            return;
        }
        self.max_cwnd = Some(self.win.cwnd as f64 / self.mss as f64);
        let flight = self.flight();
        self.win.ssthresh = self.cc.ssthresh(&self.win, flight, signal);
        self.win.cwnd = self.win.ssthresh.max(self.mss as u64);
        self.cwr_until = Some(self.snd_max);
        match signal {
            Signal::Ecn => {
                self.cwr_pending = true;
                self.stats.ecn_reductions += 1;
            }
            _ => self.stats.quench_reductions += 1,
        }
        self.trace_window(now, trace);
    }

    pub fn on_quench(&mut self, now: Nanos, trace: &mut Trace) {
        self.reduce_once_per_window(now, Signal::Quench, trace);
    }

    pub fn on_ack(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if pkt.ack > self.snd_max {
            return; // acknowledges data never sent: ignore (RFC 793 §3.9)
        }
        self.rwnd = pkt.rwnd;
        // RFC 6675 §2: with SACK, a duplicate ACK is one that SACKs new data, so ACKs for
        // duplicate segments (after a go-back-N resend, say) do not count.
        let newly_sacked = if self.sack { self.board.apply_sack(pkt.sack.iter(pkt.ack)) } else { 0 };
        if newly_sacked > 0 {
            self.board.mark_lost(self.high_rxt);
        }
        let dupack = pkt.ack == self.snd_una && self.flight() > 0 && (!self.sack || newly_sacked > 0);
        let event = AckEvent {
            now,
            acked: pkt.ack.saturating_sub(self.snd_una),
            dupack,
            ece: self.ecn && pkt.ece,
            in_recovery: self.in_recovery,
        };
        self.cc.on_ack_event(&self.win, &event);
        if pkt.ack > self.snd_una {
            self.on_new_ack(pkt, now, out, trace);
        } else if dupack {
            self.on_dupack(now, out, trace);
        }
        if self.ecn && pkt.ece {
            self.reduce_once_per_window(now, Signal::Ecn, trace);
        }
        self.send_allowed(now, out, trace);
    }

    fn on_new_ack(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        let ack = pkt.ack;
        let acked = ack - self.snd_una;
        let sample = self.take_sample(pkt, now);
        self.board.ack(ack);
        self.snd_una = ack;
        self.high_rxt = self.high_rxt.max(ack);
        self.snd_nxt = self.snd_nxt.max(ack);
        // An RTT window ends when snd_una passes the snd_max recorded at its start (Linux rtt_seq).
        let new_window = ack >= self.rtt_window_end;
        if new_window {
            self.rtt_window_end = self.snd_max;
        }
        if let Some(rtt) = sample {
            let before = self.estimator.prediction();
            let ctx = self.context(now, Some(new_window));
            self.estimator.on_sample(rtt, &ctx);
            self.backoff.on_valid_sample();
            self.cc.on_rtt_sample(rtt, now);
            self.stats.rtt_samples += 1;
            trace.rtt(now, self.flow, rtt, before, self.estimator.rto());
        }

        let mut restart_timer = true;
        if self.in_recovery {
            let recover = self.recover.unwrap_or(0);
            // RFC 5681 §3.2 step 6: Reno leaves on the first ACK of new data, partial or not;
            // a second loss in the window then needs three new dupACKs or the timer.
            if ack >= recover || (self.recovery == Recovery::Reno && !self.sack) {
                // Full ACK (RFC 6582 §3.2 step 3), or any new ACK for Reno.
                self.in_recovery = false;
                self.dupacks = 0;
                let flight = self.flight();
                self.cc.on_recovery_exit(&mut self.win, flight);
            } else if self.sack {
                // RFC 6675 §5 (B): a partial ACK only updates the scoreboard; NextSeg resends
                // what it deems lost. The timer restarts on every new ACK (RFC 6298 §5.3).
            } else {
                // Partial ACK (RFC 6582 §3.2 step 3): retransmit the first unacknowledged segment,
                // deflate by the amount acknowledged, add back one MSS if at least one was.
                self.transmit(self.snd_una, now, Some(RetxCause::Fast), out, trace);
                self.snd_nxt = self.snd_nxt.max(self.snd_una + self.board.front().map_or(0, |s| s.len as u64));
                let mss = self.mss as u64;
                self.win.cwnd = self.win.cwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
                self.win.cwnd = self.win.cwnd.max(mss);
                // Only the first partial ACK resets the timer ("Impatient" variant).
                restart_timer = !std::mem::replace(&mut self.partial_ack_seen, true);
            }
        } else {
            self.dupacks = 0;
            self.cc.on_ack(&mut self.win, acked, now);
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None; // RFC 6298 §5.2
        } else if restart_timer {
            self.arm_timer(now); // RFC 6298 §5.3
        }
        self.trace_window(now, trace);
    }

    /// The RTT sample this ACK yields, Karn's rule applied through `rtt::timer`.
    fn take_sample(&mut self, pkt: &Packet, now: Nanos) -> Option<Nanos> {
        if self.timestamps {
            // RFC 7323 §4 (RTTM): every ACK advancing the left edge; TSecr names the transmission.
            return karn_accepts(true, true).then(|| now.saturating_sub(pkt.ts_ecr));
        }
        match self.sampling {
            Sampling::Timed => match self.timed {
                Some((end, sent)) if pkt.ack >= end => {
                    self.timed = None;
                    Some(now - sent)
                }
                _ => None,
            },
            Sampling::EveryAck => {
                let newest = self.board.iter().take_while(|s| s.end() <= pkt.ack).last()?;
                karn_accepts(newest.tx > 0, false).then(|| now - newest.sent_at)
            }
        }
    }

    fn on_dupack(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if self.sack {
            return self.on_dupack_sack(now, out, trace);
        }
        self.dupacks += 1;
        let mss = self.mss as u64;
        if self.in_recovery {
            // RFC 6582 §3.2 step 4 / RFC 5681 §3.2 step 4: inflate by one MSS per further dupACK.
            self.win.cwnd += mss;
        } else if self.dupacks == 3 {
            // RFC 6582 §3.2 step 2: enter fast retransmit only if the ACK covers more than
            // `recover`, so one window's losses cause one reduction.
            // Reno has no `recover`: every third dupACK outside recovery starts a new one.
            if self.recovery == Recovery::NewReno && self.recover.is_some_and(|r| self.snd_una <= r) {
                return;
            }
            self.max_cwnd = Some(self.win.cwnd as f64 / mss as f64);
            let flight = self.flight();
            self.win.ssthresh = self.cc.ssthresh(&self.win, flight, Signal::FastRetransmit);
            self.recover = Some(self.snd_max);
            self.cwr_until = Some(self.snd_max);
            self.in_recovery = true;
            self.partial_ack_seen = false;
            self.stats.fast_recoveries += 1;
            self.timed = None;
            self.transmit(self.snd_una, now, Some(RetxCause::Fast), out, trace);
            // RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS for the three segments that left.
            self.win.cwnd = self.win.ssthresh + 3 * mss;
            self.trace_window(now, trace);
        }
    }

    /// RFC 6675 §5: count duplicate ACKs outside recovery; enter recovery at the third or as soon
    /// as the first unacknowledged segment is deemed lost (steps 1–2), then (step 4) RecoveryPoint
    /// = HighData, ssthresh = cwnd = the congestion control's answer for `pipe` (half of it for
    /// Reno and NewReno; see [`Self::outstanding`]), resend the first segment. As after a NewReno timeout, a new
    /// recovery starts only once the cumulative ACK passes the previous `recover` (RFC 6675 §5.1
    /// keeps RecoveryPoint across a timeout for this reason).
    fn on_dupack_sack(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if self.in_recovery {
            return; // pipe already shrank by the SACKed bytes; send_allowed does the rest
        }
        self.dupacks += 1;
        if self.dupacks < 3 && !self.board.is_lost(self.snd_una) {
            return;
        }
        if self.recover.is_some_and(|r| self.snd_una <= r) {
            return;
        }
        let mss = self.mss as u64;
        self.max_cwnd = Some(self.win.cwnd as f64 / mss as f64);
        self.board.mark_one_lost(self.snd_una);
        let outstanding = self.outstanding();
        self.win.ssthresh = self.cc.ssthresh(&self.win, outstanding, Signal::FastRetransmit);
        self.win.cwnd = self.win.ssthresh;
        self.recover = Some(self.snd_max);
        self.cwr_until = Some(self.snd_max);
        self.in_recovery = true;
        self.stats.fast_recoveries += 1;
        self.timed = None;
        // Step 4.3: the first segment is resent whatever pipe says.
        let len = self.transmit(self.snd_una, now, Some(RetxCause::Fast), out, trace);
        self.high_rxt = self.snd_una + len as u64;
        self.trace_window(now, trace);
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1, RFC 6582 §3.2 step 1).
    pub fn on_rto(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        self.rto_deadline = None;
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        // One reduction per congestion event: RFC 5681 eq. (4) applies to the first timeout of a
        // segment only (later back-offs keep ssthresh), and a timeout that ends a fast recovery
        // belongs to the loss episode that recovery already halved for — as Linux's
        // tcp_enter_loss keeps ssthresh when the RTO fires in Recovery. Halving FlightSize here
        // instead would use a flight inflated by the new data NewReno sent during recovery, and
        // send the flow back into an overshooting slow start again and again.
        let same_episode = self.recovery_timeout == RecoveryTimeout::Keep && self.in_recovery && self.recover.is_some_and(|r| self.snd_una < r);
        if self.backoff.count() == 0 && !same_episode {
            self.max_cwnd = Some(self.win.cwnd as f64 / self.mss as f64);
            let outstanding = self.outstanding();
            self.win.ssthresh = self.cc.ssthresh(&self.win, outstanding, Signal::Timeout);
        }
        self.cc.on_timeout(&mut self.win);
        self.backoff.on_timeout(&mut self.estimator); // RFC 6298 §5.5
        self.recover = Some(self.snd_max);
        self.cwr_until = Some(self.snd_max);
        self.in_recovery = false;
        self.dupacks = 0;
        self.timed = None;
        if self.sack {
            // RFC 6675 §5.1: recovery ends; every unSACKed segment is resent before new data,
            // SACKed ones are skipped.
            self.board.mark_all_lost();
        } else {
            self.snd_nxt = self.snd_una; // go-back-N
        }
        // §5.4 retransmit the earliest unacknowledged segment; transmit() restarts the timer (§5.6).
        let sent = self.transmit(self.snd_una, now, Some(RetxCause::Timeout), out, trace);
        if self.sack {
            self.high_rxt = self.snd_una + sent as u64;
        } else {
            self.snd_nxt += sent as u64;
        }
        self.trace_window(now, trace);
    }
}
