//! Typed trace records in columnar sinks (one `Vec` per column), ready to cross into Python as
//! arrays without per-record objects. Enumerations are stored as small integer codes whose names
//! are given by the `*_NAMES` tables.

use super::packet::{FlowId, Kind, Signal};
use super::queue::{DropCause, Verdict};
use crate::time::Nanos;

/// Why a segment was retransmitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetxCause {
    /// The retransmission timer expired (the timed-out segment and the go-back-N resends after it).
    Timeout = 0,
    /// Fast retransmit on three duplicate ACKs, or a NewReno partial-ACK retransmission.
    Fast = 1,
}

pub const RETX_CAUSE_NAMES: [&str; 2] = ["timeout", "fast"];
pub const DROP_CAUSE_NAMES: [&str; 4] = ["overflow", "aqm", "corruption", "scheduled"];
pub const PACKET_KIND_NAMES: [&str; 3] = ["data", "ack", "quench"];

pub fn kind_code(kind: Kind) -> u8 {
    match kind {
        Kind::Data => 0,
        Kind::Ack => 1,
        Kind::Signal(Signal::Quench { .. }) => 2,
    }
}

/// Sender state after every ACK, timeout or congestion signal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowTrace {
    pub time: Vec<Nanos>,
    pub flow: Vec<FlowId>,
    pub cwnd: Vec<u64>,
    pub ssthresh: Vec<u64>,
    /// The estimator's current prediction (its SRTT), 0 before the first sample.
    pub srtt: Vec<Nanos>,
    /// The RTO in force, back-off included.
    pub rto: Vec<Nanos>,
}

/// Every RTT sample the sender accepted, with what the estimator predicted just before it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RttTrace {
    pub time: Vec<Nanos>,
    pub flow: Vec<FlowId>,
    pub sample: Vec<Nanos>,
    /// Prediction before the sample; `None` for a flow's first sample.
    pub prediction: Vec<Option<Nanos>>,
    /// Base RTO after the sample.
    pub rto: Vec<Nanos>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RetxTrace {
    pub time: Vec<Nanos>,
    pub flow: Vec<FlowId>,
    pub seq: Vec<u64>,
    /// Code into [`RETX_CAUSE_NAMES`].
    pub cause: Vec<u8>,
    /// Transmission number (1 = first retransmission).
    pub tx: Vec<u8>,
    /// An earlier copy of the segment reached the receiver: the retransmission was unnecessary.
    /// Resolved when the run ends (a copy still in flight may arrive later).
    pub spurious: Vec<bool>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DropTrace {
    pub time: Vec<Nanos>,
    pub channel: Vec<u32>,
    pub flow: Vec<FlowId>,
    /// Code into [`PACKET_KIND_NAMES`].
    pub kind: Vec<u8>,
    pub seq: Vec<u64>,
    /// Code into [`DROP_CAUSE_NAMES`].
    pub cause: Vec<u8>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MarkTrace {
    pub time: Vec<Nanos>,
    pub channel: Vec<u32>,
    pub flow: Vec<FlowId>,
    pub seq: Vec<u64>,
}

/// Periodic samples of monitored queues.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueTrace {
    pub time: Vec<Nanos>,
    pub channel: Vec<u32>,
    pub packets: Vec<u32>,
    pub bytes: Vec<u64>,
    /// RED's average (NaN for other disciplines).
    pub average: Vec<f64>,
}

// ---- per-arrival traces of router queues (SmoothTCP's Figs 4–8, Vieira & Bauer 2006) ----------------------

pub const VERDICT_NAMES: [&str; 3] = ["enqueued", "marked", "dropped"];

pub fn verdict_code(v: Verdict) -> u8 {
    match v {
        Verdict::Enqueued => 0,
        Verdict::Marked => 1,
        Verdict::Dropped(_) => 2,
    }
}

/// Every packet offered to a monitored queue (both directions of the dumbbell's bottleneck, a
/// graph's `monitor`ed links), whatever became of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArrivalTrace {
    pub time: Vec<Nanos>,
    pub channel: Vec<u32>,
    pub flow: Vec<FlowId>,
    /// Code into [`PACKET_KIND_NAMES`].
    pub kind: Vec<u8>,
    pub seq: Vec<u64>,
    /// Packets in the queue right after it decided on the arrival (the arrival included if
    /// queued), before an idle transmitter took the head: what a threshold router compares with τ.
    pub queue: Vec<u32>,
    /// Code into [`VERDICT_NAMES`].
    pub verdict: Vec<u8>,
}

/// Every source-quench signal a router sent about one of its queues.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuenchTrace {
    pub time: Vec<Nanos>,
    /// The queue the signal is about.
    pub channel: Vec<u32>,
    /// The flow whose sender it goes to (the flow of the arrival that caused it).
    pub flow: Vec<FlowId>,
    /// Sequence number of that arrival.
    pub seq: Vec<u64>,
    /// The occupancy the signal reports.
    pub queue: Vec<u32>,
}

/// Every data packet that reached its receiver (`receive`): what receiver-side loss
/// discriminators read (arrival time, the sender's send time for the relative one-way trip time,
/// the sequence number for gaps). Per packet, so kept only when named (not part of `all`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReceiveTrace {
    pub time: Vec<Nanos>,
    pub flow: Vec<FlowId>,
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    /// Transmission number of the copy (0 = original); a gateway's local copy keeps the number of
    /// the copy it cached.
    pub tx: Vec<u8>,
    /// When the sender sent this copy (its TSval clock; a cached copy keeps the original's).
    pub sent: Vec<Nanos>,
}

/// Which traces a run keeps. Traces are the only per-run buffers that grow with simulated time;
/// with none kept, a run's memory is its flows, queues and packets in flight (plus the
/// one-byte-per-segment spurious-retransmission oracles, see `Engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceSet {
    pub window: bool,
    pub rtt: bool,
    pub retx: bool,
    pub drops: bool,
    pub marks: bool,
    pub queue: bool,
    /// Per-arrival traces: one record per packet offered to a monitored queue / per quench.
    /// Not in `all` (they are as large as the packet count); ask for them by name.
    pub arrival: bool,
    pub quench: bool,
    /// Per data packet at its receiver; not in `all` (name it: `all,receive`).
    pub receive: bool,
}

impl TraceSet {
    /// Names as used by `--traces` and in results, in the order of the flags.
    pub const NAMES: [&'static str; 9] = [
        "window",
        "rtt",
        "retransmissions",
        "drops",
        "marks",
        "queue",
        "arrival",
        "quench",
        "receive",
    ];
    /// `all`, the default: every trace but the per-packet ones (`arrival`, `quench`, `receive`),
    /// which are asked for by name.
    pub const ALL: Self = Self {
        window: true,
        rtt: true,
        retx: true,
        drops: true,
        marks: true,
        queue: true,
        arrival: false,
        quench: false,
        receive: false,
    };
    /// Every trace, the per-packet ones included.
    pub const EVERY: Self = Self {
        arrival: true,
        quench: true,
        receive: true,
        ..Self::ALL
    };
    pub const NONE: Self = Self {
        window: false,
        rtt: false,
        retx: false,
        drops: false,
        marks: false,
        queue: false,
        arrival: false,
        quench: false,
        receive: false,
    };

    /// `all`, `none`, or a comma-separated list of trace names (`cwnd` and `retx` are accepted
    /// for `window` and `retransmissions`; `all` in a list adds what `all` keeps, e.g.
    /// `all,arrival,quench` or `all,receive`).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "all" => return Ok(Self::ALL),
            "none" | "" => return Ok(Self::NONE),
            _ => {}
        }
        let mut set = Self::NONE;
        for name in text.split(',').map(str::trim) {
            match name {
                "all" => {
                    set = Self {
                        arrival: set.arrival,
                        quench: set.quench,
                        receive: set.receive,
                        ..Self::ALL
                    }
                }
                "arrival" | "arrivals" => set.arrival = true,
                "quench" => set.quench = true,
                "window" | "cwnd" => set.window = true,
                "rtt" => set.rtt = true,
                "retransmissions" | "retx" => set.retx = true,
                "drops" => set.drops = true,
                "marks" => set.marks = true,
                "queue" => set.queue = true,
                "receive" => set.receive = true,
                other => {
                    return Err(format!(
                        "unknown trace '{other}' (known: all, none, {})",
                        Self::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(set)
    }

    /// Whether the trace of this name (one of [`TraceSet::NAMES`]) is kept.
    pub fn contains(&self, name: &str) -> bool {
        match name {
            "window" => self.window,
            "rtt" => self.rtt,
            "retransmissions" => self.retx,
            "drops" => self.drops,
            "marks" => self.marks,
            "queue" => self.queue,
            "arrival" => self.arrival,
            "quench" => self.quench,
            "receive" => self.receive,
            _ => false,
        }
    }
}

impl Default for TraceSet {
    fn default() -> Self {
        Self::ALL
    }
}

/// The sink every component writes typed records into; records of traces not kept are dropped
/// at the door.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub window: WindowTrace,
    pub rtt: RttTrace,
    pub retx: RetxTrace,
    pub drops: DropTrace,
    pub marks: MarkTrace,
    pub queue: QueueTrace,
    pub arrival: ArrivalTrace,
    pub quench: QuenchTrace,
    pub receive: ReceiveTrace,
    pub keep: TraceSet,
}

impl Trace {
    pub fn new(keep: TraceSet) -> Self {
        Self {
            keep,
            ..Self::default()
        }
    }

    /// Records held, all traces together (0 when none are kept).
    pub fn len(&self) -> usize {
        self.window.time.len()
            + self.rtt.time.len()
            + self.retx.time.len()
            + self.drops.time.len()
            + self.marks.time.len()
            + self.queue.time.len()
            + self.arrival.time.len()
            + self.quench.time.len()
            + self.receive.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn window(
        &mut self,
        time: Nanos,
        flow: FlowId,
        cwnd: u64,
        ssthresh: u64,
        srtt: Nanos,
        rto: Nanos,
    ) {
        if !self.keep.window {
            return;
        }
        let w = &mut self.window;
        w.time.push(time);
        w.flow.push(flow);
        w.cwnd.push(cwnd);
        w.ssthresh.push(ssthresh);
        w.srtt.push(srtt);
        w.rto.push(rto);
    }

    #[inline]
    pub fn rtt(
        &mut self,
        time: Nanos,
        flow: FlowId,
        sample: Nanos,
        prediction: Option<Nanos>,
        rto: Nanos,
    ) {
        if !self.keep.rtt {
            return;
        }
        let r = &mut self.rtt;
        r.time.push(time);
        r.flow.push(flow);
        r.sample.push(sample);
        r.prediction.push(prediction);
        r.rto.push(rto);
    }

    #[inline]
    pub fn retx(&mut self, time: Nanos, flow: FlowId, seq: u64, cause: RetxCause, tx: u8) {
        if !self.keep.retx {
            return;
        }
        let r = &mut self.retx;
        r.time.push(time);
        r.flow.push(flow);
        r.seq.push(seq);
        r.cause.push(cause as u8);
        r.tx.push(tx);
        r.spurious.push(false);
    }

    #[inline]
    pub fn drop(
        &mut self,
        time: Nanos,
        channel: u32,
        flow: FlowId,
        kind: Kind,
        seq: u64,
        cause: DropCause,
    ) {
        if !self.keep.drops {
            return;
        }
        let d = &mut self.drops;
        d.time.push(time);
        d.channel.push(channel);
        d.flow.push(flow);
        d.kind.push(kind_code(kind));
        d.seq.push(seq);
        d.cause.push(cause as u8);
    }

    #[inline]
    pub fn mark(&mut self, time: Nanos, channel: u32, flow: FlowId, seq: u64) {
        if !self.keep.marks {
            return;
        }
        let m = &mut self.marks;
        m.time.push(time);
        m.channel.push(channel);
        m.flow.push(flow);
        m.seq.push(seq);
    }

    #[inline]
    pub fn queue(
        &mut self,
        time: Nanos,
        channel: u32,
        packets: u32,
        bytes: u64,
        average: Option<f64>,
    ) {
        if !self.keep.queue {
            return;
        }
        let q = &mut self.queue;
        q.time.push(time);
        q.channel.push(channel);
        q.packets.push(packets);
        q.bytes.push(bytes);
        q.average.push(average.unwrap_or(f64::NAN));
    }

    #[inline]
    #[allow(clippy::too_many_arguments)] // one record's fields, written straight into its columns
    pub fn arrival(
        &mut self,
        time: Nanos,
        channel: u32,
        flow: FlowId,
        kind: Kind,
        seq: u64,
        queue: u32,
        verdict: Verdict,
    ) {
        if !self.keep.arrival {
            return;
        }
        let a = &mut self.arrival;
        a.time.push(time);
        a.channel.push(channel);
        a.flow.push(flow);
        a.kind.push(kind_code(kind));
        a.seq.push(seq);
        a.queue.push(queue);
        a.verdict.push(verdict_code(verdict));
    }

    #[inline]
    pub fn quench(&mut self, time: Nanos, channel: u32, flow: FlowId, seq: u64, queue: u32) {
        if !self.keep.quench {
            return;
        }
        let q = &mut self.quench;
        q.time.push(time);
        q.channel.push(channel);
        q.flow.push(flow);
        q.seq.push(seq);
        q.queue.push(queue);
    }
}

impl Trace {
    #[inline]
    pub fn receive(&mut self, time: Nanos, flow: FlowId, seq: u64, len: u32, tx: u8, sent: Nanos) {
        if !self.keep.receive {
            return;
        }
        let r = &mut self.receive;
        r.time.push(time);
        r.flow.push(flow);
        r.seq.push(seq);
        r.len.push(len);
        r.tx.push(tx);
        r.sent.push(sent);
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 for equal shares, 1/n when one flow takes everything.
/// `None` for no flows or all-zero shares.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && sum_sq > 0.0).then(|| sum * sum / (xs.len() as f64 * sum_sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_set_reads_all_none_and_lists_with_aliases() {
        assert_eq!(TraceSet::parse("all"), Ok(TraceSet::ALL));
        assert_eq!(TraceSet::parse("none"), Ok(TraceSet::NONE));
        let s = TraceSet::parse("cwnd, drops,retx").unwrap();
        assert!(s.window && s.drops && s.retx && !s.rtt && !s.marks && !s.queue);
        assert!(s.contains("retransmissions") && !s.contains("queue"));
        assert_eq!(TraceSet::parse("cwnd,loss").unwrap_err(), "unknown trace 'loss' (known: all, none, window, rtt, retransmissions, drops, marks, queue, arrival, quench, receive)");
    }

    #[test]
    fn the_per_arrival_traces_are_not_in_all_and_are_asked_for_by_name() {
        const { assert!(!TraceSet::ALL.arrival && !TraceSet::ALL.quench) };
        let s = TraceSet::parse("all, arrival,quench").unwrap();
        assert_eq!(
            s,
            TraceSet {
                arrival: true,
                quench: true,
                ..TraceSet::ALL
            }
        );
        let s = TraceSet::parse("quench,all").unwrap();
        assert!(
            s.quench && !s.arrival && s.window && s.contains("quench") && !s.contains("arrival")
        );
        assert!(TraceSet::parse("arrival").unwrap().contains("arrival"));
    }

    #[test]
    fn the_per_packet_receive_trace_is_kept_only_when_named() {
        assert!(!TraceSet::parse("all").unwrap().receive && !TraceSet::default().receive);
        assert_eq!(
            TraceSet::parse("all,receive"),
            Ok(TraceSet {
                receive: true,
                ..TraceSet::ALL
            })
        );
        assert_eq!(
            TraceSet::parse("receive, all, arrival, quench"),
            Ok(TraceSet::EVERY)
        );
        let only = TraceSet::parse("receive").unwrap();
        assert!(only.receive && !only.window && only.contains("receive"));
    }

    #[test]
    fn records_of_traces_not_kept_are_dropped_at_the_door() {
        let mut t = Trace::new(TraceSet::parse("drops").unwrap());
        t.window(1, 0, 10, 20, 3, 4);
        t.rtt(1, 0, 5, None, 6);
        t.retx(1, 0, 0, RetxCause::Fast, 1);
        t.mark(1, 0, 0, 0);
        t.queue(1, 0, 3, 4500, None);
        t.arrival(1, 0, 0, Kind::Data, 0, 3, Verdict::Enqueued);
        t.quench(1, 0, 0, 0, 9);
        assert!(t.is_empty());
        t.drop(1, 0, 0, Kind::Data, 0, DropCause::Overflow);
        assert_eq!((t.len(), t.drops.time.len()), (1, 1));
    }

    #[test]
    fn jain_index_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain_index(&[5.0, 0.0, 0.0, 0.0]), Some(0.25));
        let mixed = jain_index(&[1.0, 2.0]).unwrap();
        assert!((mixed - 9.0 / 10.0).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }
}
