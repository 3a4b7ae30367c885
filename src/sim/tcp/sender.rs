//! TCP sender: the sequence space and the wire, with three strategies plugged in — the
//! congestion control ([`super::cc`], owns cwnd and ssthresh), the loss recovery
//! ([`super::recovery`]: Reno, NewReno or RFC 6675 SACK) and the retransmission timer
//! ([`RetransmitTimer`]: estimator, RTO policy, back-off, Karn) — plus ECN (RFC 3168 §6.1) and a
//! spurious-timeout detector ([`super::detect`]) whose decisions it acts on.
//! Sequence numbers count payload bytes from 0. The application's data arrives up front (bulk) or
//! over time through [`Sender::write`].

use super::cc::{
    AckEvent, Congestion, CongestionControl, CongestionEvent, CongestionOps, Connection,
    RouterSignal, Window,
};
use super::detect::{Decision, SpuriousDetector};
use super::eifel::Verdict;
use super::eifel_response::{self, Saved};
use super::meter::{FlowMeter, MeterSummary};
use super::pacing::Pacer;
use super::rate::RateSampler;
use super::recovery::{Episode, Flight, LossRecovery, Next, Recovery, TimeoutUndo};
use super::scoreboard::Scoreboard;
use super::{RecoveryTimeout, Sampling, SpuriousResponse, TcpConfig};
use crate::rtt::policy::Policy;
use crate::rtt::timer::{karn, Measurement, RetransmitTimer};
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
    /// Source quenches received and ignored (`tcp.source_quench = "ignore"`).
    pub quench_ignored: u64,
    pub rtt_samples: u64,
    /// Timeouts a detector found spurious and undid (Eifel RFC 3522, F-RTO RFC 5682).
    pub timeouts_undone: u64,
    /// RFC 4015 responses whose RTO adaptation ran, and those skipped because the estimator keeps
    /// no SRTT/RTTVAR pair (`tcp.spurious_response = "rfc4015"`).
    pub rto_adapted: u64,
    pub rto_not_adapted: u64,
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
    /// Tick the estimator's samples are counted in (0: exact); see [`Sender::clocked`].
    sample_clock: Nanos,
    ecn: bool,
    recovery_timeout: RecoveryTimeout,
    ignore_quench: bool,
    seq: Flight,
    win: Window,
    cc: CongestionControl,
    recovery: Recovery,
    episode: Episode,
    timer: RetransmitTimer,
    /// snd_max when the current RTT round began (Linux `rtt_seq`, Context::new_window).
    rtt_window_end: u64,
    /// cwnd in segments before the last congestion event (CA-RTO's max_cwnd).
    max_cwnd: Option<f64>,
    /// No further ECN/quench reduction until snd_una passes this (once per window, RFC 3168 §6.1.2).
    cwr_until: Option<u64>,
    /// Set CWR on the next new data segment.
    cwr_pending: bool,
    /// The congestion control answered the current loss recovery as congestion; if not (SpecTCP
    /// judged it corruption), ECN-Echo and router signals are not gated by it.
    loss_reduced: bool,
    /// Initial window in bytes, the restart window's cap after idle (RFC 5681 §4.1).
    iw: u64,
    /// When a segment last went out (None: never).
    last_send: Option<Nanos>,
    /// What the last first timeout of an episode changed, until undone or superseded.
    undo: Option<TimeoutUndo>,
    /// Spurious-timeout detection ([`super::detect`]: off, Eifel RFC 3522, F-RTO RFC 5682).
    detector: SpuriousDetector,
    response: SpuriousResponse,
    /// RFC 4015: what the first timeout of the episode saved for the response.
    saved: Option<Saved>,
    /// RFC 4015 RTO adaptation pending: (SRTT_prev, RTTVAR_prev) and the SND.MAX of the timeout.
    adapt: Option<((f64, f64), u64)>,
    /// Judgements the detector made since the owner last took them (for the spurious oracle).
    verdicts: Vec<Verdict>,
    /// The pacing schedule, used when the scheme asks for a rate or `tcp.max_pacing_rate` is set.
    pacer: Pacer,
    /// The scheme paces or a cap is set: otherwise the send path skips pacing altogether.
    paced: bool,
    /// Delivery-rate estimation, when the scheme asks for it.
    rate: Option<RateSampler>,
    pub stats: SenderStats,
    /// The running measurements (prediction errors, RTT moments, cwnd area) behind the flow's
    /// summary columns.
    pub meter: FlowMeter,
}

impl Sender {
    /// A sender with the congestion control and recovery `cfg` names and the plain RTO of
    /// `estimator` (use [`Sender::with_timer`] for an RTO policy).
    pub fn new(
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        cfg: &TcpConfig,
        app_bytes: u64,
        estimator: Estimator,
    ) -> Self {
        Self::with_timer(
            flow,
            src,
            dst,
            cfg,
            app_bytes,
            RetransmitTimer::new(estimator, Policy::None),
        )
    }

    pub fn with_timer(
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        cfg: &TcpConfig,
        app_bytes: u64,
        timer: RetransmitTimer,
    ) -> Self {
        let mss = cfg.mss as u64;
        let cc = cfg
            .cc
            .build()
            .expect("TcpConfig::cc is checked when the scenario is read");
        Self {
            flow,
            src,
            dst,
            mss: cfg.mss,
            header: cfg.header,
            timestamps: cfg.timestamps,
            sampling: cfg.sampling,
            sample_clock: cfg.sample_clock,
            // RFC 3168 §6.1.1: ECN is used only if both ends agree at set-up.
            ecn: cfg.ecn && cfg.receiver_ecn,
            recovery_timeout: cfg.recovery_timeout,
            ignore_quench: cfg.ignore_quench,
            seq: Flight {
                snd_una: 0,
                snd_nxt: 0,
                snd_max: 0,
                app_bytes,
                rwnd: cfg.rwnd,
                mss,
                board: Scoreboard::new(cfg.mss),
            },
            win: Window {
                cwnd: cfg.init_cwnd as u64 * mss,
                ssthresh: cfg.init_ssthresh,
                mss,
            },
            rate: cc.wants_rate_samples().then(|| RateSampler::new(cfg.mss)),
            paced: cc.pacing_rate().is_some() || cfg.max_pacing_rate.is_some(),
            cc,
            recovery: cfg.recovery_kind().build(),
            episode: Episode::default(),
            timer,
            rtt_window_end: 0,
            max_cwnd: None,
            cwr_until: None,
            cwr_pending: false,
            loss_reduced: true,
            iw: cfg.init_cwnd as u64 * mss,
            last_send: None,
            undo: None,
            detector: cfg.spurious_detection.build(),
            response: cfg.spurious_response,
            saved: None,
            adapt: None,
            verdicts: Vec::new(),
            pacer: Pacer::new(cfg.max_pacing_rate),
            stats: SenderStats::default(),
            meter: FlowMeter::default(),
        }
    }

    /// The connection is set up: tell the congestion control what was negotiated (ECN) and give
    /// it the simulation's seed for any random draws of its own.
    /// Maximum segment size, bytes (the unit of the window in segments).
    pub fn mss(&self) -> u32 {
        self.mss
    }

    pub fn connect(&mut self, seed: u64) {
        self.cc.on_established(&Connection {
            flow: self.flow,
            seed,
            ecn: self.ecn,
        });
    }

    pub fn window(&self) -> Window {
        self.win
    }

    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    pub fn congestion_control(&self) -> &CongestionControl {
        &self.cc
    }

    pub fn timer(&self) -> &RetransmitTimer {
        &self.timer
    }

    pub fn in_recovery(&self) -> bool {
        self.episode.in_recovery
    }

    /// Bytes the application has handed over so far (u64::MAX: unlimited).
    pub fn app_bytes(&self) -> u64 {
        self.seq.app_bytes
    }

    pub fn snd_una(&self) -> u64 {
        self.seq.snd_una
    }

    pub fn snd_max(&self) -> u64 {
        self.seq.snd_max
    }

    /// The application hands over `bytes` more (an on/off source); send what the windows allow.
    /// Whole segments keep segment boundaries at multiples of the MSS.
    pub fn write(&mut self, bytes: u64, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        // RFC 5681 §4.1: after sending nothing for longer than the RTO, restart from
        // RW = min(IW, cwnd) rather than release a stale window as one burst. Only a source that
        // writes over time can go idle with new data to send, so bulk transfers never get here.
        if self
            .last_send
            .is_some_and(|t| now.saturating_sub(t) > self.rto())
            && self.win.cwnd > self.iw
        {
            self.cc.on_idle_restart(&mut self.win, self.iw);
            self.trace_window(now, trace);
        }
        self.seq.app_bytes = self.seq.app_bytes.saturating_add(bytes);
        self.send_allowed(now, out, trace);
    }

    /// The application stops offering data (ns-2's `$ftp stop`: `advance 0` sets the send limit
    /// to the highest sequence already sent). Bytes sent before stay to be delivered; nothing
    /// beyond them is ever sent.
    pub fn stop_app(&mut self) {
        self.seq.app_bytes = self.seq.app_bytes.min(self.seq.snd_max);
    }

    /// All the application's data is acknowledged.
    pub fn done(&self) -> bool {
        self.seq.snd_una >= self.seq.app_bytes
    }

    pub fn rto_deadline(&self) -> Option<Nanos> {
        self.timer.deadline()
    }

    /// The pacing rate in force (bytes/s): the scheme's, capped by `tcp.max_pacing_rate`.
    #[inline]
    pub fn pacing_rate(&self) -> Option<u64> {
        if !self.paced {
            return None;
        }
        self.pacer.rate(self.cc.pacing_rate())
    }

    /// When the pacing timer wants the send loop to resume, if it stopped for pacing.
    pub fn pacing_deadline(&self) -> Option<Nanos> {
        self.pacer.deadline()
    }

    /// The pacing timer fired: resume sending if it is still due.
    pub fn on_pacing_timer(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if self.pacer.deadline().is_some_and(|t| t <= now) {
            self.send_allowed(now, out, trace);
        }
    }

    /// The RTO in force, back-off included.
    pub fn rto(&self) -> Nanos {
        self.timer.rto()
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

    fn trace_window(&mut self, now: Nanos, trace: &mut Trace) {
        self.account_cwnd(now);
        trace.window(
            now,
            self.flow,
            self.win.cwnd,
            self.win.ssthresh,
            self.timer.prediction().unwrap_or(0),
            self.rto(),
        );
    }

    /// Integrate cwnd over time up to `now` (every window change passes through here).
    fn account_cwnd(&mut self, now: Nanos) {
        self.meter.on_cwnd(now, self.win.cwnd);
    }

    /// Time-averaged cwnd in segments from the flow's start to `end`.
    pub fn mean_cwnd(&self, end: Nanos) -> Option<f64> {
        self.meter.mean_cwnd(end, self.mss)
    }

    /// The flow's running measurements summarised at `end` (its completion or the run's end).
    pub fn meter_summary(&self, end: Nanos) -> MeterSummary {
        self.meter.summary(end, self.mss)
    }

    /// RFC 6298 §5.1/5.3: (re)start the timer with the current (backed-off) RTO.
    fn arm_timer(&mut self, now: Nanos) {
        let ctx = self.context(now, None);
        self.timer.arm(now, &ctx);
    }

    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        self.meter.start(now);
        self.trace_window(now, trace);
        self.send_allowed(now, out, trace);
    }

    /// Send what the windows allow, segment by segment as the recovery strategy picks them.
    /// With pacing, the loop stops while the next departure time is in the future and the pacing
    /// timer resumes it then (Linux `tcp_pacing_check`); `next` has no side effects, so asking
    /// and not sending is safe.
    fn send_allowed(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if self.paced {
            self.pacer.wait(None);
        }
        let rate = self.pacing_rate();
        while let Next::Send { seq, cause } =
            self.recovery.next(&mut self.seq, &self.win, &self.episode)
        {
            if let Some(at) = self.pacer.closed_until(now, rate) {
                self.pacer.wait(Some(at));
                break;
            }
            let retransmission = seq < self.seq.snd_max;
            let len = self.transmit(seq, now, cause, out, trace);
            if !self
                .recovery
                .on_sent(&mut self.seq, seq, len, retransmission)
            {
                break;
            }
        }
        if let Some(r) = self.rate.as_mut() {
            let pipe = self.recovery.outstanding(&self.seq);
            r.check_app_limited(
                self.seq.snd_max >= self.seq.app_bytes,
                pipe,
                self.win.cwnd,
                self.seq.board.lost_bytes(),
            );
        }
    }

    /// Put the segment starting at `seq` on the wire; returns its length (0: no such segment).
    fn transmit(
        &mut self,
        seq: u64,
        now: Nanos,
        retx: Option<RetxCause>,
        out: &mut Vec<Packet>,
        trace: &mut Trace,
    ) -> u32 {
        let idle = self.seq.snd_una >= self.seq.snd_max;
        let (len, tx) = if seq >= self.seq.snd_max {
            let len = (self.mss as u64).min(self.seq.app_bytes - seq) as u32;
            self.seq.board.push(seq, len, now);
            self.seq.snd_max = seq + len as u64;
            if self.sampling == Sampling::Timed {
                self.timer.on_new_segment(self.seq.snd_max, now);
            }
            (len, 0)
        } else {
            let Some(s) = self.seq.board.resend(seq) else {
                return 0;
            };
            s.tx = s.tx.saturating_add(1);
            s.sent_at = now;
            let (len, tx) = (s.len, s.tx);
            self.timer.on_retransmit(seq, seq + len as u64); // Karn
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
            ecn: if self.ecn && new_data {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            },
            ece: false,
            cwr,
            ts_val: now,
            ts_ecr: 0,
            sack: Default::default(),
        });
        self.stats.segments_sent += 1;
        if let Some(r) = self.rate.as_mut().filter(|_| len > 0) {
            r.on_sent(seq, len, now, idle);
        }
        if let Some(rate) = self.pacing_rate() {
            self.pacer.on_sent(now, len as u64, rate);
        }
        self.last_send = Some(now);
        self.stats.bytes_sent += len as u64;
        if !self.timer.is_running() {
            self.arm_timer(now); // RFC 6298 §5.1
        }
        len
    }

    fn congestion_event(&self, now: Nanos, kind: Congestion, outstanding: u64) -> CongestionEvent {
        CongestionEvent {
            now,
            kind,
            outstanding,
            in_recovery: self.episode.in_recovery,
        }
    }

    /// A congestion signal that needs no retransmission: ECN-Echo or a router's signal. By
    /// default at most once per window of data (RFC 3168 §6.1.2) and not during loss recovery;
    /// the congestion control may take every signal instead ([`CongestionOps::once_per_window`]).
    fn signal(&mut self, now: Nanos, kind: Congestion, trace: &mut Trace) {
        // The window ends only once the ACK passes the data sent before the last reduction: ACKs
        // up to it were sent before the receiver could see our CWR, so their ECE is stale (Linux
        // holds CWR "until something *above* high_seq is ACKed"; ns-3 `ackNumber > m_recover`).
        let gated = (self.episode.in_recovery && self.loss_reduced)
            || self.cwr_until.is_some_and(|c| self.seq.snd_una <= c)
            || self.seq.size() == 0;
        if gated && self.cc.once_per_window(&kind) {
            return;
        }
        self.max_cwnd = Some(self.win.cwnd as f64 / self.mss as f64);
        let ev = self.congestion_event(now, kind, self.seq.size());
        self.cc.on_congestion(&mut self.win, &ev);
        self.cwr_until = Some(self.seq.snd_max);
        match kind {
            Congestion::Ecn => {
                self.cwr_pending = true;
                self.stats.ecn_reductions += 1;
            }
            _ => self.stats.quench_reductions += 1,
        }
        self.trace_window(now, trace);
    }

    /// A router's explicit signal (source quench), with what it carried.
    pub fn on_router_signal(&mut self, now: Nanos, signal: RouterSignal, trace: &mut Trace) {
        if self.ignore_quench {
            self.stats.quench_ignored += 1;
            return;
        }
        self.signal(now, Congestion::Router(signal), trace);
    }

    pub fn on_ack(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if pkt.ack > self.seq.snd_max {
            return; // acknowledges data never sent: ignore (RFC 793 §3.9)
        }
        self.seq.rwnd = pkt.rwnd;
        let flight = self.seq.size();
        // What the detector measures before the SACK blocks are read (RFC 5682 §3 step 3).
        let mark = self.detector.sack_mark(&self.seq);
        let newly_sacked = self.recovery.on_sack(&mut self.seq, pkt);
        let dupack = pkt.ack == self.seq.snd_una
            && flight > 0
            && self.recovery.counts_as_dupack(newly_sacked);
        let advances = pkt.ack > self.seq.snd_una;
        // The detector's decision, on the ACK as it arrived (before SND.UNA moves).
        let decision = self.detector.on_ack(pkt, &self.seq, flight, mark);
        let rtt = if advances {
            self.take_sample(pkt, now)
        } else {
            None
        };
        let newest_rtt = if !advances || self.timestamps || self.sampling == Sampling::EveryAck {
            rtt
        } else {
            self.newest_sample(pkt.ack, now)
        };
        let event = AckEvent {
            now,
            acked: pkt.ack.saturating_sub(self.seq.snd_una),
            sacked: newly_sacked,
            rtt,
            newest_rtt,
            // An RTT round ends when snd_una passes the snd_max recorded at its start (Linux rtt_seq).
            round_ended: advances && pkt.ack >= self.rtt_window_end,
            flight,
            pipe: self.recovery.outstanding(&self.seq),
            ece: self.ecn && pkt.ece,
            dupack,
            in_recovery: self.episode.in_recovery,
            rate: self.rate.as_mut().map(|r| {
                r.on_ack(
                    pkt.ack.max(self.seq.snd_una),
                    pkt.sack.iter(pkt.ack),
                    now,
                    newest_rtt,
                )
            }),
        };
        self.cc.on_ack_event(&self.win, &event);
        if advances {
            self.on_new_ack(&event, pkt.ack, out, trace);
        }
        // Act on the detector's decision, after slow start counted the ACK.
        let mut hold = false;
        let mut spurious_timeout = false;
        match decision {
            Decision::Pass => {}
            Decision::Hold => hold = true,
            Decision::SendNew => {
                // RFC 5682 step 2b: up to two new segments instead of retransmissions, then wait (step 3).
                let sent = self.send_new(now, 2, out, trace);
                match self.detector.sent_new(sent) {
                    Some(v) => self.verdicts.push(v),
                    None => {
                        hold = true;
                        // Should the timeout prove spurious, go on after these (SND.NXT ← SND.MAX).
                        if let Some(u) = self.undo.as_mut() {
                            u.snd_nxt = u.snd_nxt.max(self.seq.snd_max);
                        }
                    }
                }
            }
            Decision::Conventional {
                cap_segments,
                verdict,
            } => {
                self.verdicts.push(verdict);
                if let Some(cap) = cap_segments {
                    self.win.cwnd = self
                        .win
                        .cwnd
                        .min(cap * self.mss as u64)
                        .max(self.mss as u64);
                }
            }
            Decision::Spurious {
                verdict,
                reset_recover,
            } => {
                self.verdicts.push(verdict);
                spurious_timeout = true;
                if reset_recover {
                    self.episode.recover = Some(self.seq.snd_una);
                }
            }
        }
        // RFC 4015 §3: respond to SPUR_TO by undoing the timeout (go forward, restore the window).
        if spurious_timeout && self.respond(now, event.acked, event.ece, out, trace) {
            self.stats.timeouts_undone += 1;
        } else if dupack
            && self
                .recovery
                .on_dupack(&self.seq, &mut self.win, &mut self.episode)
        {
            self.enter_recovery(now, out, trace);
        }
        if event.ece {
            self.signal(now, Congestion::Ecn, trace);
        }
        if !hold {
            self.send_allowed(now, out, trace);
        }
    }

    /// RFC 5682 step 2b: send up to `max` new (never sent) segments, within the receiver's window
    /// and the application's data, whatever the recovery strategy would resend; how many went out.
    fn send_new(&mut self, now: Nanos, max: u32, out: &mut Vec<Packet>, trace: &mut Trace) -> u32 {
        let mut n = 0;
        while n < max {
            let seq = self.seq.snd_max;
            let len = (self.mss as u64).min(self.seq.app_bytes.saturating_sub(seq));
            if len == 0 || seq + len > self.seq.snd_una + self.seq.rwnd {
                break;
            }
            self.transmit(seq, now, None, out, trace);
            n += 1;
        }
        n
    }

    fn on_new_ack(&mut self, ev: &AckEvent, ack: u64, out: &mut Vec<Packet>, trace: &mut Trace) {
        let now = ev.now;
        self.seq.board.ack(ack);
        self.seq.snd_una = ack;
        self.recovery.on_cumulative_ack(ack);
        self.seq.snd_nxt = self.seq.snd_nxt.max(ack);
        if ev.round_ended {
            self.rtt_window_end = self.seq.snd_max;
        }
        if let Some(rtt) = ev.rtt.map(|r| self.clocked(r, now)) {
            let before = self.timer.prediction();
            let ctx = self.context(now, Some(ev.round_ended));
            self.timer.on_sample(rtt, &ctx);
            // RFC 4015 RTO adaptation on the first sample of data sent after the spurious timeout.
            if let Some((prev, _)) = self.adapt.filter(|&(_, after)| ack > after) {
                let (srtt, rttvar) = eifel_response::adapted(prev, rtt);
                if self.timer.set_smoothed(srtt, rttvar) {
                    self.stats.rto_adapted += 1;
                }
                self.adapt = None;
            }
            self.stats.rtt_samples += 1;
            self.meter.on_sample(rtt, before, self.timer.prediction());
            trace.rtt(now, self.flow, rtt, before, self.timer.base_rto());
        }

        let mut restart_timer = true;
        if self.episode.in_recovery {
            if self.recovery.exits_on(ack, &self.episode) {
                // Full ACK (RFC 6582 §3.2 step 3), or any new ACK for Reno (RFC 5681 §3.2 step 6).
                self.episode.in_recovery = false;
                self.episode.dupacks = 0;
                self.cc.on_recovery_exit(&mut self.win, self.seq.size());
            } else if let Some(restart) =
                self.recovery
                    .on_partial_ack(&mut self.seq, &mut self.win, ev.acked)
            {
                let len = self.transmit(self.seq.snd_una, now, Some(RetxCause::Fast), out, trace);
                self.recovery.on_partial_resent(&mut self.seq, len);
                restart_timer = restart;
            }
        } else {
            self.episode.dupacks = 0;
            self.cc.on_ack(&mut self.win, ev);
        }
        if self.seq.snd_una >= self.seq.snd_max {
            self.timer.stop(); // RFC 6298 §5.2
        } else if restart_timer {
            self.arm_timer(now); // RFC 6298 §5.3
        }
        self.trace_window(now, trace);
    }

    /// The sample as the estimator's clock reads it: with a tick, the ticks elapsed between the
    /// send and `now` (a counter of ticks since the start, read twice), and a 0 counted as 1 —
    /// Linux ≤ 3.14's `tcp_rtt_estimator` in jiffies (`if (m == 0) m = 1`). Exact without one.
    fn clocked(&self, rtt: Nanos, now: Nanos) -> Nanos {
        let tick = self.sample_clock;
        if tick == 0 {
            return rtt;
        }
        (now / tick - now.saturating_sub(rtt) / tick).max(1) * tick
    }

    /// The newest segment the cumulative ACK `ack` covers, timed if never retransmitted (Karn).
    fn newest_sample(&self, ack: u64, now: Nanos) -> Option<Nanos> {
        let newest = self
            .seq
            .board
            .iter()
            .take_while(|s| s.end() <= ack)
            .last()?;
        karn(
            Measurement::Segment {
                sent_at: newest.sent_at,
                retransmitted: newest.tx > 0,
            },
            now,
        )
    }

    /// The RTT sample this ACK yields, Karn's rule applied by the timer.
    fn take_sample(&mut self, pkt: &Packet, now: Nanos) -> Option<Nanos> {
        if self.timestamps {
            // RFC 7323 §4 (RTTM): every ACK advancing the left edge; TSecr names the transmission.
            return karn(Measurement::Echo { ts_ecr: pkt.ts_ecr }, now);
        }
        match self.sampling {
            Sampling::Timed => self.timer.timed_sample(pkt.ack, now),
            Sampling::EveryAck => self.newest_sample(pkt.ack, now),
        }
    }

    /// Loss detected (the strategy said so on a dupACK): the congestion control answers for the
    /// data outstanding, RecoveryPoint = HighData (RFC 6582 §3.2 step 2, RFC 6675 §5 step 4),
    /// and the first unacknowledged segment is resent at once.
    fn enter_recovery(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        self.max_cwnd = Some(self.win.cwnd as f64 / self.mss as f64);
        self.recovery.on_enter(&mut self.seq);
        let ev = self.congestion_event(now, Congestion::Loss, self.recovery.outstanding(&self.seq));
        let response = self.cc.on_congestion(&mut self.win, &ev);
        self.episode.recover = Some(self.seq.snd_max);
        self.loss_reduced = response.reduced;
        if self.loss_reduced {
            self.cwr_until = Some(self.seq.snd_max);
        }
        self.episode.in_recovery = true;
        self.detector.on_fast_recovery(self.seq.snd_max); // RFC 6675 RecoveryPoint, read by RFC 5682 §3 step 1
        self.stats.fast_recoveries += 1;
        self.timer.discard_timed();
        let len = self.transmit(self.seq.snd_una, now, Some(RetxCause::Fast), out, trace);
        self.recovery.on_entered(&mut self.seq, &mut self.win, len);
        self.trace_window(now, trace);
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1, RFC 6582 §3.2 step 1).
    pub fn on_rto(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        self.timer.stop();
        if self.seq.snd_una >= self.seq.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        // One reduction per congestion event: RFC 5681 eq. (4) applies to the first timeout of a
        // segment only (later back-offs keep ssthresh), and a timeout that ends a fast recovery
        // belongs to the loss episode that recovery already halved for — as Linux's
        // tcp_enter_loss keeps ssthresh when the RTO fires in Recovery. Halving FlightSize here
        // instead would use a flight inflated by the new data NewReno sent during recovery, and
        // send the flow back into an overshooting slow start again and again.
        let same_episode = self.recovery_timeout == RecoveryTimeout::Keep
            && self.episode.in_recovery
            && self.episode.recover.is_some_and(|r| self.seq.snd_una < r);
        let first = self.timer.backoff_count() == 0 && !same_episode;
        if first {
            self.max_cwnd = Some(self.win.cwnd as f64 / self.mss as f64);
        }
        let first_of_episode = self.timer.backoff_count() == 0;
        if first_of_episode {
            self.undo = Some(TimeoutUndo {
                prior: self.win,
                snd_nxt: self.seq.snd_nxt.max(self.seq.snd_una),
            });
            // RFC 4015: pipe_prev, SRTT_prev, RTTVAR_prev before cwnd and ssthresh change.
            self.adapt = None;
            if self.response == SpuriousResponse::Rfc4015 {
                self.saved = Some(Saved::at_timeout(
                    self.seq.size(),
                    &self.win,
                    self.timer.estimator().smoothed(),
                    self.seq.snd_max,
                ));
            }
        }
        let ev = self.congestion_event(
            now,
            Congestion::Timeout { first },
            self.recovery.outstanding(&self.seq),
        );
        let response = self.cc.on_congestion(&mut self.win, &ev);
        if response.timer_backs_off {
            self.timer.on_timeout(); // RFC 6298 §5.5; forgets the timed segment (Karn)
        } else {
            self.timer.on_timeout_without_backoff(); // a scheme's reading (SpecTCP timeout_backoff)
        }
        self.episode.recover = Some(self.seq.snd_max);
        if response.reduced {
            self.cwr_until = Some(self.seq.snd_max);
        }
        self.episode.in_recovery = false;
        self.episode.dupacks = 0;
        self.recovery.on_timeout(&mut self.seq);
        // §5.4 retransmit the earliest unacknowledged segment; transmit() restarts the timer (§5.6).
        let sent = self.transmit(self.seq.snd_una, now, Some(RetxCause::Timeout), out, trace);
        self.recovery.on_timeout_resent(&mut self.seq, sent);
        // The detector sees the retransmission (RFC 3522 §3.2 step (1), RFC 5682 step 1).
        if let Some(v) = self
            .detector
            .on_timeout(&self.seq, sent, first_of_episode, now)
        {
            self.verdicts.push(v);
        }
        self.trace_window(now, trace);
    }

    /// Where the spurious oracle may resolve segments up to: SND.UNA, or lower while F-RTO waits to
    /// judge a segment the cumulative ACK already passed (its step 3 follows that ACK).
    pub fn oracle_floor(&self) -> u64 {
        self.detector
            .judging()
            .map_or(self.seq.snd_una, |s| s.min(self.seq.snd_una))
    }

    /// The detector's judgements since the last call (the engine scores them against the oracle).
    pub fn take_verdicts(&mut self) -> std::vec::Drain<'_, Verdict> {
        self.verdicts.drain(..)
    }

    /// A detector found the last timeout spurious (Eifel RFC 4015 §3, F-RTO RFC 5682 §3): the
    /// congestion control restores the window ([`CongestionOps::on_undo`]) and the recovery
    /// strategy resumes where the timeout found it. The back-off is left to the next valid
    /// sample. False if there is no timeout to undo. Eifel ([`super::eifel`]) and F-RTO
    /// ([`super::frto`]) call it.
    pub fn undo_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) -> bool {
        self.respond(now, 0, false, out, trace)
    }

    /// The response to a timeout found spurious on an ACK of `acked` bytes (`ece`: it carried
    /// ECN-Echo): `tcp.spurious_response`.
    fn respond(
        &mut self,
        now: Nanos,
        acked: u64,
        ece: bool,
        out: &mut Vec<Packet>,
        trace: &mut Trace,
    ) -> bool {
        if self.response == SpuriousResponse::Rfc4015 {
            return self.respond_rfc4015(now, acked, ece, out, trace);
        }
        let Some(undo) = self.undo.take() else {
            return false;
        };
        if self.response == SpuriousResponse::RateHalving {
            // The timeout's ssthresh stays; cwnd goes to it (never below what it is now).
            self.win.cwnd = self.win.cwnd.max(self.win.ssthresh.max(self.win.mss));
        } else {
            self.cc.on_undo(&mut self.win, &undo.prior);
        }
        self.recovery.on_undo(&mut self.seq, &undo);
        self.trace_window(now, trace);
        self.send_allowed(now, out, trace);
        true
    }

    /// RFC 4015 §3.1 ([`eifel_response`]): SND.NXT ← SND.MAX; unless ECN-Echo, cwnd ← FlightSize +
    /// min(bytes_acked, IW) and ssthresh ← pipe_prev; the RTO adapts on the first sample of new data.
    fn respond_rfc4015(
        &mut self,
        now: Nanos,
        acked: u64,
        ece: bool,
        out: &mut Vec<Packet>,
        trace: &mut Trace,
    ) -> bool {
        let Some(mut undo) = self.undo.take() else {
            return false;
        };
        undo.snd_nxt = self.seq.snd_max;
        self.recovery.on_undo(&mut self.seq, &undo);
        if let Some(saved) = self.saved.take() {
            saved.restore(&mut self.win, self.seq.size(), acked, self.iw, ece);
            match saved.smoothed_prev {
                Some(prev) => self.adapt = Some((prev, saved.snd_max_prev)),
                None => self.stats.rto_not_adapted += 1,
            }
        }
        self.trace_window(now, trace);
        self.send_allowed(now, out, trace);
        true
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
