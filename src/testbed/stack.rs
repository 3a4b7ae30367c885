//! rttlab's own TCP sender on real packets (`stack = "rttlab"`): the simulator's [`Sender`] —
//! its congestion control, loss recovery, RTO estimator and policy, spurious-timeout detection,
//! unchanged and built by the simulator's own builder — behind a handshake
//! ([`super::handshake`]) and a translation between its 0-based sequence space and real
//! IPv4/TCP segments ([`super::segment`]). It stands at its sender host's port of the emulator
//! in place of a kernel (there is no namespace behind that node: its packets enter the emulated
//! network as a host's would), and the receiver is a Linux listening socket in its namespace.
//!
//! Sans-IO: `now` in, encoded packets out; the real-time loop ([`super::realtime`]) feeds it the
//! emulator's clock. Time on the wire is kept in whole microseconds: the sender sees `now`
//! rounded down to 1 µs, and its TSval is that time in µs (+1, so a flow starting at 0 never
//! sends TSval 0), so every echoed TSecr maps back to the exact `now` the segment was sent at —
//! which Eifel detection (RFC 3522) compares against the retransmission's send time.

use super::emulator::{node_addr, ADDR_BASE, PORT_BASE};
use super::handshake::{Handshake, State, Tuple, Want};
use super::segment::{flags::*, Options, Segment};
use super::wire;
use crate::sim::packet::{Ecn, Kind, Packet, SackBlocks};
use crate::sim::tcp::cc::RouterSignal;
use crate::sim::tcp::sender::Sender;
use crate::sim::trace::Trace;
use crate::time::{Nanos, US};

/// The sender's source port for flow f (the receiver listens on `PORT_BASE + f`).
pub const SPORT_BASE: u16 = 40_000;

/// What one on-the-wire connection counted beyond the sender's own statistics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackStats {
    pub syns: u32,
    pub established_at: Option<Nanos>,
    pub acks: u64,
    /// Packets for this flow that failed a checksum or could not be read (a real stack drops them).
    pub undecodable: u64,
    pub quenches: u64,
    pub resets_sent: u32,
    pub resets_received: u32,
    /// Payload bytes sent at the warm-up (for throughput over the measured interval).
    pub sent_at_warmup: u64,
}

#[derive(Debug, Clone)]
pub struct WireSender {
    pub flow: u32,
    /// What the sender runs, as the simulator labels the flow (cc, recovery, estimator, policy).
    pub label: crate::sim::engine::FlowLabel,
    pub hs: Handshake,
    pub sender: Sender,
    start: Nanos,
    stop: Option<Nanos>,
    end: Nanos,
    warmup: Nanos,
    /// Phases passed: the data started, the application stopped, the warm-up, the end (RST).
    started: bool,
    stopped: bool,
    warm: bool,
    closed: bool,
    /// ISN + 1: the wire sequence number of the sender's byte 0.
    base: u32,
    rcv_nxt: u32,
    snd_wscale: u8,
    ts_recent: u32,
    ip_id: u16,
    pub error: Option<String>,
    pub stats: StackStats,
    /// When the sender's last byte was cumulatively acknowledged (a finite or stopped transfer):
    /// the end of its mean cwnd, as the simulator ends it at the flow's completion. The wire
    /// sender cannot see the receiver's application, so this is the ACK's arrival, about half a
    /// round trip after the simulator's "last byte delivered".
    pub completed_at: Option<Nanos>,
    /// The scenario's receiver window (`tcp.rwnd`): the sender takes the smaller of it and the
    /// window the Linux receiver advertises, as the simulated receiver advertises exactly
    /// `tcp.rwnd`. Linux cannot be held to it from the receiving side: 6.18 raises a
    /// `TCP_WINDOW_CLAMP` as receive-buffer autotuning grows the buffer, even a locked one
    /// (docs/testbed.md). `u64::MAX` (no cap) unless set.
    pub rwnd_cap: u64,
    pkts: Vec<Packet>,
    out: Vec<Vec<u8>>,
}

fn tsval(now: Nanos) -> u32 {
    (now / US) as u32 + 1
}

impl WireSender {
    /// Flow `flow` of the scenario, from node `src` to `dst`, with the sender the simulator built
    /// for it; the SYN goes out at `start`, the application stops at `stop`, the run ends (RST)
    /// at `end`; `isn` is the initial sequence number (any: the sender counts from 0 above it).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        src: u32,
        dst: u32,
        sender: Sender,
        want: Want,
        isn: u32,
        start: Nanos,
        stop: Option<Nanos>,
        end: Nanos,
        warmup: Nanos,
    ) -> Self {
        let tuple = Tuple {
            src: node_addr(src),
            dst: node_addr(dst),
            sport: SPORT_BASE + flow as u16,
            dport: PORT_BASE + flow as u16,
        };
        Self {
            flow,
            label: Default::default(),
            hs: Handshake::new(tuple, isn, want),
            sender,
            start,
            stop,
            end,
            warmup,
            started: false,
            stopped: false,
            warm: warmup == 0,
            closed: false,
            base: isn.wrapping_add(1),
            rcv_nxt: 0,
            snd_wscale: 0,
            ts_recent: 0,
            ip_id: 0,
            error: None,
            stats: StackStats::default(),
            completed_at: None,
            rwnd_cap: u64::MAX,
            pkts: Vec::new(),
            out: Vec::new(),
        }
    }

    fn emit(&mut self, mut s: Segment) {
        s.ip_id = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        if s.flags & RST != 0 {
            self.stats.resets_sent += 1;
        }
        if s.flags & SYN != 0 {
            self.stats.syns += 1;
        }
        self.out.push(s.encode());
    }

    fn fail(&mut self, why: String) {
        if self.error.is_none() {
            self.error = Some(why);
        }
        self.closed = true;
    }

    /// The sender's segments in `self.pkts` onto the wire.
    fn flush(&mut self) {
        let ts = self.hs.negotiated().is_some_and(|n| n.timestamps);
        for p in std::mem::take(&mut self.pkts) {
            let mut s = self.hs.segment(
                self.base.wrapping_add(p.seq as u32),
                self.rcv_nxt,
                ACK | if p.cwr { CWR } else { 0 },
            );
            // RFC 3168 §6.1.5: the sender marks new data ECT(0) and never a retransmission.
            s.ecn = if p.ecn == Ecn::Ect0 { 2 } else { 0 };
            s.payload = p.len;
            if ts {
                s.options.timestamps = Some((tsval(p.ts_val), self.ts_recent));
            }
            self.emit(s);
        }
    }

    /// Run what is due at `now` (the SYN, its retries, the start, the stop, the RTO, the pacing
    /// timer, the warm-up, the end) and return what to send.
    pub fn poll(&mut self, now: Nanos, trace: &mut Trace) -> std::vec::Drain<'_, Vec<u8>> {
        let now = now / US * US;
        if self.closed {
            return self.out.drain(..);
        }
        if now >= self.end {
            // The run is over: abort (RFC 9293 §3.10.7 ABORT) so the receiver keeps nothing half-open.
            match self.hs.state {
                State::Established(_) => {
                    let s = self.hs.segment(
                        self.base.wrapping_add(self.sender.snd_max() as u32),
                        0,
                        RST,
                    );
                    self.emit(s);
                }
                State::SynSent { syns, first, .. } => {
                    let s = self.hs.segment(self.hs.isn.wrapping_add(1), 0, RST);
                    self.emit(s);
                    self.fail(format!(
                        "no answer to {syns} SYN(s) in {:.1} s before the run ended; sent RST",
                        (now - first) as f64 / 1e9
                    ));
                }
                _ => {}
            }
            self.closed = true;
            return self.out.drain(..);
        }
        if !self.warm && now >= self.warmup {
            self.warm = true;
            self.sender.meter.restart_rtt();
            self.stats.sent_at_warmup = self.sender.stats.bytes_sent;
        }
        match self.hs.state {
            State::Closed if now >= self.start => {
                for s in self.hs.open(now, tsval(now)) {
                    self.emit(s);
                }
            }
            State::SynSent { .. } => {
                for s in self.hs.on_timer(now, tsval(now)) {
                    self.emit(s);
                }
                if let State::Failed(e) = &self.hs.state {
                    let e = e.to_string();
                    self.fail(e);
                }
            }
            State::Established(_) => {
                if self.stop.is_some_and(|t| now >= t) && !self.stopped {
                    self.stopped = true;
                    self.sender.stop_app();
                    self.note_completion(now);
                }
                if self.sender.rto_deadline().is_some_and(|t| t <= now) {
                    self.sender.on_rto(now, &mut self.pkts, trace);
                }
                if self.sender.pacing_deadline().is_some_and(|t| t <= now) {
                    self.sender.on_pacing_timer(now, &mut self.pkts, trace);
                }
                self.flush();
            }
            _ => {}
        }
        self.out.drain(..)
    }

    /// When [`Self::poll`] next has something to do.
    pub fn deadline(&self) -> Option<Nanos> {
        if self.closed {
            return None;
        }
        let mut d = vec![Some(self.end)];
        if !self.warm {
            d.push(Some(self.warmup));
        }
        match self.hs.state {
            State::Closed => d.push(Some(self.start)),
            State::SynSent { .. } => d.push(self.hs.deadline()),
            State::Established(_) => {
                d.push(self.sender.rto_deadline());
                d.push(self.sender.pacing_deadline());
                if !self.stopped {
                    d.push(self.stop);
                }
            }
            _ => {}
        }
        // Deadlines are met at the µs the sender's clock reads: round up, so the timer has fired.
        d.into_iter().flatten().min().map(|t| t.div_ceil(US) * US)
    }

    /// Wire sequence number `w` as the sender's offset, taken nearest to `near` (its snd_una).
    fn unwrap(&self, w: u32, near: u64) -> Option<u64> {
        let d = w.wrapping_sub(self.base.wrapping_add(near as u32)) as i32 as i64;
        u64::try_from(near as i64 + d).ok()
    }

    /// Whether a packet the emulator delivers to this sender's host is this connection's: a TCP
    /// segment from the receiver's address and port to our source port, or an ICMP source quench
    /// (RFC 792 type 4) quoting one of our segments (its quote holds the IP header and the first
    /// 8 data bytes: the ports). This is how one host's port is shared — several rttlab senders,
    /// and a namespace whose kernel sends or receives other flows: the source port of flow f,
    /// `SPORT_BASE + f`, is taken by no one else (the host's namespace reserves it). By the tuple alone,
    /// whatever the connection's state, so nothing meant for a closed sender reaches the kernel.
    pub fn claims(&self, bytes: &[u8]) -> bool {
        let Some(f) = wire::parse(bytes) else {
            return false;
        };
        let t = self.hs.tuple;
        if f.dst != t.src {
            return false;
        }
        match f.proto {
            wire::IPPROTO_TCP => f.src == t.dst && f.sport == t.dport && f.dport == t.sport,
            wire::IPPROTO_ICMP => {
                let ihl = (bytes[0] & 0x0f) as usize * 4;
                bytes.get(ihl) == Some(&4)
                    && bytes.get(ihl + 8..).is_some_and(|q| {
                        let qihl = (q.first().copied().unwrap_or(0) & 0x0f) as usize * 4;
                        q.len() >= qihl + 4
                            && qihl >= 20
                            && q[9] == wire::IPPROTO_TCP
                            && q[16..20] == t.dst.to_be_bytes()
                            && q[qihl..qihl + 4]
                                == [t.sport.to_be_bytes(), t.dport.to_be_bytes()].concat()[..]
                    })
            }
            _ => false,
        }
    }

    /// A packet the emulator delivered to this sender's host at `now`; returns what to send.
    pub fn on_packet(
        &mut self,
        bytes: &[u8],
        now: Nanos,
        trace: &mut Trace,
    ) -> std::vec::Drain<'_, Vec<u8>> {
        let now = now / US * US;
        if self.closed {
            return self.out.drain(..);
        }
        let Some(f) = wire::parse(bytes) else {
            return self.out.drain(..);
        };
        let t = self.hs.tuple;
        if f.proto == wire::IPPROTO_ICMP {
            // A source quench (RFC 792 type 4) quoting one of our segments: the router's signal.
            // The quote is the offending packet's IP header and its first 8 data bytes (the ports).
            let ihl = (bytes[0] & 0x0f) as usize * 4;
            let ours = bytes.get(ihl + 8..).is_some_and(|q| {
                let qihl = (q[0] & 0x0f) as usize * 4;
                q.len() >= qihl + 4
                    && q[9] == wire::IPPROTO_TCP
                    && q[qihl..qihl + 4]
                        == [t.sport.to_be_bytes(), t.dport.to_be_bytes()].concat()[..]
            });
            if bytes.get(ihl) == Some(&4) && ours && self.hs.negotiated().is_some() {
                self.stats.quenches += 1;
                let router = f.src.checked_sub(ADDR_BASE + 1);
                self.sender.on_router_signal(
                    now,
                    RouterSignal {
                        router,
                        queue_len: None,
                    },
                    trace,
                );
                self.flush();
            }
            return self.out.drain(..);
        }
        if f.proto != wire::IPPROTO_TCP
            || f.src != t.dst
            || f.sport != t.dport
            || f.dport != t.sport
        {
            return self.out.drain(..);
        }
        let seg = match Segment::decode(bytes) {
            Ok(s) => s,
            Err(_) => {
                self.stats.undecodable += 1;
                return self.out.drain(..);
            }
        };
        if !matches!(self.hs.state, State::Established(_)) {
            for s in self.hs.on_segment(&seg, tsval(now)) {
                self.emit(s);
            }
            match &self.hs.state {
                State::Established(n) => {
                    let n = *n;
                    self.stats.established_at = Some(now);
                    self.rcv_nxt = n.peer_isn.wrapping_add(1);
                    self.snd_wscale = n.snd_wscale;
                    self.ts_recent = n.ts_recent;
                    if (n.mss as u32) < self.sender.mss() {
                        let s = self.hs.segment(self.base, 0, RST);
                        self.emit(s);
                        self.fail(format!(
                            "the receiver's MSS {} is below the scenario's tcp.mss {}; sent RST",
                            n.mss,
                            self.sender.mss()
                        ));
                    } else {
                        self.started = true;
                        self.sender.start(now, &mut self.pkts, trace);
                        self.flush();
                    }
                }
                State::Failed(e) => {
                    let e = e.to_string();
                    self.fail(e);
                }
                _ => {}
            }
            return self.out.drain(..);
        }
        if seg.flags & RST != 0 {
            self.stats.resets_received += 1;
            self.fail("the receiver reset the connection".into());
            return self.out.drain(..);
        }
        if seg.flags & SYN != 0 {
            for s in self.hs.on_segment(&seg, tsval(now)) {
                self.emit(s);
            }
            return self.out.drain(..);
        }
        if seg.flags & ACK == 0 {
            return self.out.drain(..);
        }
        self.stats.acks += 1;
        // The peer sends no data, but its FIN takes a sequence number: acknowledge past it.
        if seg.flags & FIN != 0 {
            self.rcv_nxt = seg.seq.wrapping_add(seg.payload + 1);
        }
        let una = self.sender.snd_una();
        let Some(ack) = self.unwrap(seg.ack, una) else {
            return self.out.drain(..);
        };
        let ts_ecr = match seg.options.timestamps {
            Some((val, ecr)) => {
                self.ts_recent = val; // RFC 7323 §4.3: the peer sends no data, so every ACK is in window
                                      // TSecr back to the send time: µs before now, exact (the sender's clock is in µs).
                now.saturating_sub(tsval(now).wrapping_sub(ecr) as u64 * US)
            }
            None => 0,
        };
        let blocks: Vec<(u64, u64)> = seg
            .options
            .sack
            .iter()
            .filter_map(|&(l, r)| Some((self.unwrap(l, una)?, self.unwrap(r, una)?)))
            .filter(|(l, r)| l < r)
            .collect();
        let pkt = Packet {
            flow: self.flow,
            src: self.sender_dst(),
            dst: self.sender_src(),
            kind: Kind::Ack,
            size: f.total_len as u32,
            seq: 0,
            len: 0,
            ack,
            rwnd: ((seg.window as u64) << self.snd_wscale).min(self.rwnd_cap),
            tx: 0,
            ecn: Ecn::NotEct,
            ece: seg.flags & ECE != 0,
            cwr: false,
            ts_val: 0,
            ts_ecr,
            sack: SackBlocks::new(ack, blocks),
        };
        self.sender.on_ack(&pkt, now, &mut self.pkts, trace);
        self.note_completion(now);
        self.flush();
        self.out.drain(..)
    }

    fn note_completion(&mut self, now: Nanos) {
        if self.completed_at.is_none() && self.sender.done() {
            self.completed_at = Some(now);
        }
    }

    fn sender_src(&self) -> u32 {
        self.hs.tuple.src - ADDR_BASE - 1
    }

    fn sender_dst(&self) -> u32 {
        self.hs.tuple.dst - ADDR_BASE - 1
    }

    /// Whether the connection was set up (it may have ended since).
    pub fn connected(&self) -> bool {
        self.stats.established_at.is_some() && self.started
    }

    /// The flow's row of the flows table as far as the sender knows it, at `end` (the run's end;
    /// a finite transfer's running measurements end at its completion, as the simulator's do):
    /// the values of the columns marked `from_sender` in `src/sim/tables.rs`, from the sender's
    /// own counters and meter as `sim::summarise` takes them. Source quenches are those that
    /// reached this connection. The rest (delivery, the wire's byte counts, the oracle's
    /// spurious counts) stays at zero: the testbed measures or nulls those columns itself.
    pub fn summary(&self, end: Nanos) -> crate::sim::FlowSummary {
        crate::sim::FlowSummary {
            flow: self.flow,
            label: self.label.clone(),
            src: self.sender_src(),
            dst: self.sender_dst(),
            start: self.start,
            quench_received: self.stats.quenches,
            ..crate::sim::FlowSummary::of_sender(&self.sender, self.completed_at.unwrap_or(end))
        }
    }

    /// The options the handshake settled, if it did.
    pub fn options(&self) -> Option<Options> {
        self.hs.negotiated().map(|n| Options {
            mss: Some(n.mss),
            wscale: Some(n.snd_wscale),
            sack_permitted: n.sack,
            timestamps: n.timestamps.then_some((0, 0)),
            sack: vec![],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::Scenario;
    use crate::sim::trace::TraceSet;
    use crate::time::{MS, SEC};

    fn sender() -> (Sender, Want) {
        sender_of("inf")
    }

    /// The sender of one reno flow sending `bytes` (a scenario size, "inf" for bulk).
    fn sender_of(bytes: &str) -> (Sender, Want) {
        let text = format!(
            r#"
[simulation]
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck = {{ bandwidth = "10Mbps", delay = "20ms" }}
access = {{ bandwidth = "100Mbps", delay = "0ms" }}
[tcp]
sack = true
timestamps = true
cc = "reno"
[[flows]]
count = 1
bytes = "{bytes}"
"#
        );
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let mut e = crate::sim::build_with(&s, TraceSet::NONE).unwrap();
        (
            e.flows.remove(0).sender,
            Want {
                mss: 1448,
                sack: true,
                timestamps: true,
                ecn: false,
                syn_retries: 2,
            },
        )
    }

    fn segs(out: std::vec::Drain<'_, Vec<u8>>) -> Vec<Segment> {
        out.map(|b| Segment::decode(&b).unwrap()).collect()
    }

    /// The receiver's answer to `to`: an ACK of `ack` (wire), echoing `ecr`.
    fn ack_from_linux(w: &WireSender, ack: u32, ecr: u32, sack: Vec<(u32, u32)>) -> Vec<u8> {
        let t = w.hs.tuple;
        Segment {
            src: t.dst,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            seq: 901,
            ack,
            flags: ACK,
            window: 1000,
            options: Options {
                timestamps: Some((77, ecr)),
                sack,
                ..Options::default()
            },
            ..Segment::default()
        }
        .encode()
    }

    #[test]
    fn the_sender_opens_then_sends_its_initial_window_as_real_segments_after_the_syn_ack() {
        let (s, want) = sender();
        let mut tr = Trace::new(TraceSet::NONE);
        let mut w = WireSender::new(0, 0, 3, s, want, 1000, 5 * MS, None, 10 * SEC, 0);
        assert!(w.poll(0, &mut tr).next().is_none());
        assert_eq!(w.deadline(), Some(5 * MS));
        let syn = segs(w.poll(5 * MS, &mut tr));
        assert_eq!(
            (
                syn[0].flags,
                syn[0].seq,
                syn[0].dport,
                syn[0].options.timestamps
            ),
            (SYN, 1000, 5000, Some((5001, 0)))
        );
        let t = w.hs.tuple;
        let sa = Segment {
            src: t.dst,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            seq: 900,
            ack: 1001,
            flags: SYN | ACK,
            window: 65160,
            options: Options {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: Some((77, 5001)),
                sack: vec![],
            },
            ..Segment::default()
        };
        let out = segs(w.on_packet(&sa.encode(), 45 * MS, &mut tr));
        // The handshake's ACK, then the initial window of 10 segments (RFC 6928).
        assert_eq!(out.len(), 11);
        assert_eq!((out[0].flags, out[0].payload), (ACK, 0));
        assert!(out[1..].iter().enumerate().all(|(i, s)| s.payload == 1448
            && s.seq == 1001 + 1448 * i as u32
            && s.ack == 901
            && s.options.timestamps == Some((45_001, 77))));
        // An ACK of two segments echoing their TSval: one RTT sample of exactly 40 ms.
        let out = segs(w.on_packet(
            &ack_from_linux(&w, 1001 + 2 * 1448, 45_001, vec![]),
            85 * MS,
            &mut tr,
        ));
        assert_eq!(w.sender.stats.rtt_samples, 1);
        assert_eq!(w.sender.meter.rtt.min, 40 * MS);
        assert_eq!(out.len(), 3, "slow start grows cwnd by one MSS per ACK (RFC 5681 §3.1): cwnd 11 with 8 in flight sends 3");
        // Three duplicate ACKs with SACK blocks above a hole: fast retransmit of the hole (RFC 6675).
        let hole = 1001 + 2 * 1448;
        let mut retx = vec![];
        for k in 1..=3u32 {
            let s = hole + 1448 * k;
            retx.extend(segs(w.on_packet(
                &ack_from_linux(&w, hole, 45_001, vec![(s, s + 1448)]),
                (85 + k as u64) * MS,
                &mut tr,
            )));
        }
        assert!(
            retx.iter().any(|s| s.seq == hole && s.payload == 1448),
            "{retx:?}"
        );
        assert_eq!(w.sender.stats.retx_fast, 1);
        // The end of the run resets the connection.
        let end = segs(w.poll(10 * SEC, &mut tr));
        assert_eq!(end[0].flags, RST);
        assert!(w.deadline().is_none());
    }

    #[test]
    fn a_finite_transfer_completes_when_its_last_byte_is_acknowledged_and_its_mean_cwnd_ends_there()
    {
        let (s, want) = sender_of("4344B"); // three segments
        let mut tr = Trace::new(TraceSet::NONE);
        let mut w = WireSender::new(0, 0, 3, s, want, 1000, 0, None, 10 * SEC, 0);
        w.poll(0, &mut tr).for_each(drop);
        let t = w.hs.tuple;
        let sa = Segment {
            src: t.dst,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            seq: 900,
            ack: 1001,
            flags: SYN | ACK,
            window: 65160,
            options: Options {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: Some((77, 1)),
                sack: vec![],
            },
            ..Segment::default()
        };
        let data = segs(w.on_packet(&sa.encode(), 40 * MS, &mut tr));
        assert_eq!(data.iter().filter(|s| s.payload > 0).count(), 3);
        w.on_packet(
            &ack_from_linux(&w, 1001 + 2 * 1448, 41, vec![]),
            80 * MS,
            &mut tr,
        )
        .for_each(drop);
        assert_eq!(w.completed_at, None, "one segment is still unacknowledged");
        w.on_packet(
            &ack_from_linux(&w, 1001 + 3 * 1448, 41, vec![]),
            90 * MS,
            &mut tr,
        )
        .for_each(drop);
        assert_eq!(w.completed_at, Some(90 * MS));
        // Averaged to the completion, not to the end of the run: the same as at 90 ms.
        assert_eq!(
            w.sender.mean_cwnd(w.completed_at.unwrap()),
            w.sender.mean_cwnd(90 * MS)
        );
        assert!(w.sender.mean_cwnd(w.completed_at.unwrap()).unwrap() >= 3.0);
        // Its flows-table row as the sender knows it: counters, window, and the meter ended at
        // the completion too, whatever the run's end.
        let row = w.summary(10 * SEC);
        assert_eq!((row.flow, row.src, row.dst), (0, 0, 3));
        assert_eq!(
            (row.rtt_samples, row.final_cwnd, row.retransmissions()),
            (w.sender.stats.rtt_samples, w.sender.window().cwnd, 0)
        );
        assert!(row.rtt_samples > 0);
        assert_eq!(row.meter, w.sender.meter_summary(90 * MS));
        assert_eq!(
            crate::sim::tables::FLOWS
                .sender_batch(&vec![row])
                .num_rows(),
            1
        );
    }

    #[test]
    fn the_scenarios_receiver_window_caps_what_linux_advertises() {
        let (s, want) = sender();
        let mut tr = Trace::new(TraceSet::NONE);
        let mut w = WireSender::new(0, 0, 3, s, want, 1000, 0, None, 10 * SEC, 0);
        w.rwnd_cap = 3 * 1448;
        w.poll(0, &mut tr).for_each(drop);
        let t = w.hs.tuple;
        let sa = Segment {
            src: t.dst,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            seq: 900,
            ack: 1001,
            flags: SYN | ACK,
            window: 65160,
            options: Options {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: Some((77, 1)),
                sack: vec![],
            },
            ..Segment::default()
        };
        w.on_packet(&sa.encode(), 40 * MS, &mut tr).for_each(drop);
        // The initial window (10 segments) left with the SYN-ACK. Linux opens 1000 << 7 bytes on
        // every ACK, the scenario 3 segments: nothing new while 9 are outstanding ...
        let out = segs(w.on_packet(
            &ack_from_linux(&w, 1001 + 1448, 40_001, vec![]),
            80 * MS,
            &mut tr,
        ));
        assert!(out.iter().all(|s| s.payload == 0), "{out:?}");
        // ... and an ACK of all ten opens exactly three.
        let out = segs(w.on_packet(
            &ack_from_linux(&w, 1001 + 10 * 1448, 40_001, vec![]),
            81 * MS,
            &mut tr,
        ));
        let seqs: Vec<u32> = out
            .iter()
            .filter(|s| s.payload > 0)
            .map(|s| s.seq)
            .collect();
        assert_eq!(seqs, (10..13).map(|k| 1001 + k * 1448).collect::<Vec<_>>());
    }

    #[test]
    fn a_real_icmp_source_quench_quoting_our_segment_reaches_the_sender_as_a_router_signal() {
        let (s, want) = sender();
        let mut tr = Trace::new(TraceSet::NONE);
        let mut w = WireSender::new(0, 0, 3, s, want, 1000, 0, None, 10 * SEC, 0);
        w.poll(0, &mut tr).for_each(drop);
        let t = w.hs.tuple;
        let sa = Segment {
            src: t.dst,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            seq: 900,
            ack: 1001,
            flags: SYN | ACK,
            window: 65160,
            options: Options {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: Some((77, 1)),
                sack: vec![],
            },
            ..Segment::default()
        };
        let data: Vec<Vec<u8>> = w.on_packet(&sa.encode(), 40 * MS, &mut tr).collect();
        let quench = wire::source_quench(node_addr(1), &data[1]);
        w.on_packet(&quench, 41 * MS, &mut tr).for_each(drop);
        assert_eq!(w.stats.quenches, 1);
        assert_eq!(
            w.sender.stats.quench_reductions, 1,
            "Reno answers a quench as congestion (once per window)"
        );
        assert_eq!(
            (
                w.summary(SEC).quench_received,
                w.summary(SEC).quench_reductions
            ),
            (1, 1)
        );
        // A quench quoting someone else's segment is not ours.
        let mut other = data[1].clone();
        other[20..22].copy_from_slice(&1234u16.to_be_bytes());
        w.on_packet(&wire::source_quench(node_addr(1), &other), 42 * MS, &mut tr)
            .for_each(drop);
        assert_eq!(w.stats.quenches, 1);
    }

    #[test]
    fn several_senders_and_a_kernel_share_one_host_by_source_port() {
        let mut tr = Trace::new(TraceSet::NONE);
        // Flows 0 and 1 from node 0 to node 3 (receivers on ports 5000 and 5001).
        let mut w: Vec<WireSender> = (0..2u32)
            .map(|f| {
                WireSender::new(
                    f,
                    0,
                    3,
                    sender().0,
                    sender().1,
                    1000 + f,
                    0,
                    None,
                    10 * SEC,
                    0,
                )
            })
            .collect();
        let data: Vec<Vec<u8>> = w
            .iter_mut()
            .map(|w| w.poll(0, &mut tr).next().unwrap())
            .collect();
        let to = |w: &WireSender, dport: u16| {
            let t = w.hs.tuple;
            Segment {
                src: t.dst,
                dst: t.src,
                sport: t.dport,
                dport,
                seq: 900,
                ack: 1001,
                flags: ACK,
                window: 100,
                ..Segment::default()
            }
            .encode()
        };
        // A segment from flow 1's receiver to flow 1's source port is flow 1's alone.
        let seg1 = to(&w[1], SPORT_BASE + 1);
        assert_eq!((w[0].claims(&seg1), w[1].claims(&seg1)), (false, true));
        // Flow 0's receiver port to flow 1's source port: neither (not a connection of ours).
        let crossed = to(&w[0], SPORT_BASE + 1);
        assert!(!w[0].claims(&crossed) && !w[1].claims(&crossed));
        // A kernel connection of the same host (an ephemeral port): the namespace's.
        let kernel = to(&w[0], 33_000);
        assert!(w.iter().all(|w| !w.claims(&kernel)));
        // A source quench quoting flow 0's SYN: flow 0's.
        let q = wire::source_quench(node_addr(1), &data[0]);
        assert_eq!((w[0].claims(&q), w[1].claims(&q)), (true, false));
        // Claimed by the tuple whatever the state: after the end (RST sent) still flow 1's.
        w[1].poll(10 * SEC, &mut tr).for_each(drop);
        assert!(w[1].claims(&seg1));
    }

    #[test]
    fn a_receiver_that_never_answers_gets_its_syns_then_a_reset_and_the_flow_an_error() {
        let (s, want) = sender();
        let mut tr = Trace::new(TraceSet::NONE);
        let mut w = WireSender::new(0, 0, 3, s, want, 1000, 0, None, 60 * SEC, 0);
        let mut sent = vec![];
        let mut now = 0;
        while let Some(d) = w.deadline() {
            now = d;
            sent.extend(segs(w.poll(now, &mut tr)));
        }
        let flags: Vec<u8> = sent.iter().map(|s| s.flags).collect();
        assert_eq!(flags, vec![SYN, SYN, SYN, RST]);
        assert_eq!(now, 7 * SEC);
        assert_eq!(
            w.error.as_deref(),
            Some("no answer to 3 SYN(s) in 7.0 s; gave up and sent RST")
        );
        assert!(!w.connected());
    }

    #[test]
    fn a_refusal_is_the_flows_error_and_nothing_more_is_sent() {
        let (s, want) = sender();
        let mut tr = Trace::new(TraceSet::NONE);
        let mut w = WireSender::new(0, 0, 3, s, want, 1000, 0, None, 60 * SEC, 0);
        w.poll(0, &mut tr).for_each(drop);
        let t = w.hs.tuple;
        let rst = Segment {
            src: t.dst,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            seq: 0,
            ack: 1001,
            flags: RST | ACK,
            ..Segment::default()
        };
        assert_eq!(w.on_packet(&rst.encode(), MS, &mut tr).count(), 0);
        assert_eq!(
            w.error.as_deref(),
            Some("the receiver refused the connection (RST)")
        );
        assert!(w.deadline().is_none());
    }
}
