//! The simulator's result tables, defined once: every column's name, unit, meaning and how it is
//! built from the run's summaries and trace sinks. These definitions produce the Arrow record
//! batches that cross into Python (`src/python.rs`, zero-copy through the Arrow C stream
//! interface), the Arrow schemas Python reads (`rttlab.sim.schema`) and the column tables of
//! docs/schema.md (checked by `docs_list_every_column_of_every_table`).
//!
//! Units are converted here, once: times are seconds (f64, `ns as f64 / 1e9`), sizes bytes, rates
//! bit/s. Values that do not exist are Arrow nulls (a flow's first RTT sample has no prediction,
//! a bulk flow no offered load, a queue other than RED no average). Enumerations are dictionary
//! columns (u8 codes into the `*_NAMES` tables of [`super::trace`]), which pandas reads as
//! categoricals.

use super::trace::{
    ArrivalTrace, DropTrace, MarkTrace, QuenchTrace, QueueTrace, ReceiveTrace, RetxTrace, RttTrace,
    Trace, TraceSet, WindowTrace, DROP_CAUSE_NAMES, PACKET_KIND_NAMES, RETX_CAUSE_NAMES,
    VERDICT_NAMES,
};
use super::{ChannelSummary, FlowSummary, SimResult, RESULT_SCHEMA_VERSION};
use crate::time::Nanos;
use arrow_array::types::UInt8Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, RecordBatch, StringArray, UInt32Array,
    UInt64Array, UInt8Array,
};
use arrow_schema::{Field, Schema};
use std::collections::HashMap;
use std::sync::Arc;

/// One column: its name, unit (`""` for counts, codes and names), meaning, and its builder.
pub struct Column<S: 'static> {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
    pub build: fn(&S) -> ArrayRef,
    /// A flows column the flow's TCP sender knows by itself (its counters, running measurements,
    /// what it runs), so a testbed run of rttlab's sender reports it from the sender, built here
    /// as in simulation ([`Table::sender_batch`]); the testbed measures the others on the wire,
    /// at the receiving application or in the pcap, or leaves them null.
    pub from_sender: bool,
}

/// A table: its columns, built from a source `S` (a run's summaries or one trace sink).
pub struct Table<S: 'static> {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: &'static [Column<S>],
}

impl Table<Flows> {
    /// The `flow` column and the columns the flows' own senders know ([`Column::from_sender`]),
    /// in the table's order and types: what the testbed reports for rttlab's senders.
    pub fn sender_batch(&self, flows: &Flows) -> RecordBatch {
        let keep: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.from_sender || c.name == "flow")
            .map(|(i, _)| i)
            .collect();
        self.batch(flows)
            .project(&keep)
            .expect("the indices are this table's own columns")
    }
}

impl<S: Default> Table<S> {
    /// The record batch of `source`, in this table's schema.
    pub fn batch(&self, source: &S) -> RecordBatch {
        let arrays: Vec<ArrayRef> = self.columns.iter().map(|c| (c.build)(source)).collect();
        let schema = self.schema_of(&arrays);
        // The builders give one length per source and the types the schema was made from.
        RecordBatch::try_new(Arc::new(schema), arrays)
            .expect("columns of one table have one length")
    }

    /// The table's Arrow schema (types from the builders, unit and meaning as field metadata).
    pub fn schema(&self) -> Schema {
        let empty: Vec<ArrayRef> = self
            .columns
            .iter()
            .map(|c| (c.build)(&S::default()))
            .collect();
        self.schema_of(&empty)
    }

    fn schema_of(&self, arrays: &[ArrayRef]) -> Schema {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .zip(arrays)
            .map(|(c, a)| {
                let meta = HashMap::from([
                    ("unit".to_owned(), c.unit.to_owned()),
                    ("doc".to_owned(), c.doc.to_owned()),
                ]);
                // Nullable: a peer simulator (ns-3) leaves null what it does not report.
                Field::new(c.name, a.data_type().clone(), true).with_metadata(meta)
            })
            .collect();
        let meta = HashMap::from([
            (
                "schema".to_owned(),
                format!("rttlab.simulate/{RESULT_SCHEMA_VERSION}"),
            ),
            ("table".to_owned(), self.name.to_owned()),
            ("doc".to_owned(), self.doc.to_owned()),
        ]);
        Schema::new(fields).with_metadata(meta)
    }
}

// ---- array builders -------------------------------------------------------------------------

fn u64s(it: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(it))
}

fn u32s(it: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(it))
}

fn f64s(it: impl Iterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(it))
}

fn opt_f64s(it: impl Iterator<Item = Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from_iter(it))
}

fn opt_u64s(it: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter(it))
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

fn bools(it: impl Iterator<Item = bool>) -> ArrayRef {
    Arc::new(BooleanArray::from_iter(it.map(Some)))
}

/// Integer nanoseconds as seconds.
fn secs(ns: Nanos) -> f64 {
    ns as f64 / 1e9
}

fn secs_of(v: &[Nanos]) -> ArrayRef {
    f64s(v.iter().map(|&t| secs(t)))
}

/// u8 codes as a dictionary column whose values are the code's names.
fn coded(codes: &[u8], names: &'static [&'static str]) -> ArrayRef {
    let keys = UInt8Array::from(codes.to_vec());
    let values = Arc::new(StringArray::from(names.to_vec()));
    // Codes come from `as u8` of the enums the name tables list, so every key is in range.
    Arc::new(
        DictionaryArray::<UInt8Type>::try_new(keys, values)
            .expect("trace codes index their name table"),
    )
}

// ---- the tables -----------------------------------------------------------------------------

pub type Flows = Vec<FlowSummary>;
pub type Channels = Vec<ChannelSummary>;

macro_rules! col {
    ($name:expr, $unit:literal, $doc:literal, $build:expr) => {
        Column {
            name: $name,
            unit: $unit,
            doc: $doc,
            build: $build,
            from_sender: false,
        }
    };
}

/// A flows column the flow's sender knows by itself ([`Column::from_sender`]).
macro_rules! sender {
    ($col:expr) => {
        Column {
            from_sender: true,
            ..$col
        }
    };
}

/// Counter columns of the flows table: `u64` fields of [`FlowSummary`] named like the column.
macro_rules! flow_u64 {
    ($name:ident, $unit:literal, $doc:literal) => {
        col!(stringify!($name), $unit, $doc, |f: &Flows| u64s(
            f.iter().map(|x| x.$name)
        ))
    };
}

macro_rules! channel_u64 {
    ($name:ident, $unit:literal, $doc:literal) => {
        col!(stringify!($name), $unit, $doc, |c: &Channels| u64s(
            c.iter().map(|x| x.$name)
        ))
    };
}

/// A Snoop counter of the channel's agent (`agent::snoop::SnoopStats`), null without one.
macro_rules! snoop_u64 {
    ($name:ident, $field:ident, $doc:literal) => {
        col!(stringify!($name), "", $doc, |c: &Channels| opt_u64s(
            c.iter().map(|x| x.snoop.map(|s| s.$field))
        ))
    };
}

pub static FLOWS: Table<Flows> = Table {
    name: "flows",
    doc: "One row per flow. Rates are over the measured interval: from max(flow start, `simulation.warmup`) to the transfer's completion (a stopped flow's: when the last byte it sent reached the application) or the end.",
    columns: &[
        col!("flow", "", "flow number, from 0 in the scenario's order", |f| u32s(f.iter().map(|x| x.flow))),
        col!("group", "", "index of the `[[flows]]` group the flow belongs to", |f| u32s(f.iter().map(|x| x.label.group))),
        col!("src", "", "sending node", |f| u32s(f.iter().map(|x| x.src))),
        col!("dst", "", "receiving node", |f| u32s(f.iter().map(|x| x.dst))),
        col!("start", "s", "when the flow started", |f| f64s(f.iter().map(|x| secs(x.start)))),
        col!("completed", "s", "when the last byte of a finite transfer (of a stopped flow: the last byte sent before its stop) reached the application; null if it did not", |f| opt_f64s(
            f.iter().map(|x| x.completed_at.map(secs))
        )),
        col!("stop", "s", "when the flow's application stopped offering data (`[[flows]] stop`); null if it ran to the end", |f| opt_f64s(
            f.iter().map(|x| x.stop.map(secs))
        )),
        flow_u64!(bytes_delivered, "bytes", "bytes delivered in order to the receiving application"),
        flow_u64!(bytes_received, "bytes", "payload bytes that reached the receiver, duplicates included"),
        flow_u64!(bytes_sent, "bytes", "payload bytes the sender put on the wire, retransmissions included"),
        col!("goodput_bps", "bit/s", "bytes delivered in order × 8 over the measured interval", |f| f64s(f.iter().map(|x| x.goodput_bps))),
        col!("throughput_bps", "bit/s", "payload bytes sent (retransmissions included) × 8 over the measured interval", |f| f64s(
            f.iter().map(|x| x.throughput_bps)
        )),
        col!("offered_bps", "bit/s", "bytes an on/off application wrote × 8 over the measured interval; null for bulk flows", |f| opt_f64s(
            f.iter().map(|x| x.offered_bps)
        )),
        sender!(col!("retransmissions", "", "retx_timeout + retx_fast", |f| u64s(f.iter().map(FlowSummary::retransmissions)))),
        sender!(flow_u64!(retx_timeout, "", "retransmissions after a timer expiry, including the go-back-N resends that follow it")),
        sender!(flow_u64!(retx_fast, "", "fast retransmits and NewReno partial-ACK retransmissions")),
        flow_u64!(retx_spurious, "", "retransmissions of a segment an earlier copy of which reached the receiver"),
        flow_u64!(retx_necessary, "", "the other retransmissions (copies still in flight at the end count as necessary)"),
        sender!(flow_u64!(timeouts, "", "retransmission-timer expiries")),
        sender!(flow_u64!(fast_recoveries, "", "fast-recovery episodes entered")),
        sender!(flow_u64!(ecn_reductions, "", "window reductions on ECN echoes")),
        sender!(flow_u64!(quench_reductions, "", "window reductions on source-quench signals")),
        sender!(flow_u64!(quench_received, "", "source-quench signals that reached the sender (acted on or, with `tcp.source_quench = \"ignore\"`, not)")),
        sender!(flow_u64!(rtt_samples, "", "RTT samples the sender accepted")),
        sender!(col!("rtt_mean", "s", "mean of the RTT samples after the warm-up; null without samples", |f| opt_f64s(f.iter().map(|x| x.meter.rtt_stats.map(|s| s[0]))))),
        sender!(col!("rtt_std", "s", "population standard deviation of the RTT samples after the warm-up", |f| opt_f64s(f.iter().map(|x| x.meter.rtt_stats.map(|s| s[1]))))),
        sender!(col!("rtt_min", "s", "smallest RTT sample after the warm-up", |f| opt_f64s(f.iter().map(|x| x.meter.rtt_stats.map(|s| s[2]))))),
        sender!(col!("rtt_max", "s", "largest RTT sample after the warm-up", |f| opt_f64s(f.iter().map(|x| x.meter.rtt_stats.map(|s| s[3]))))),
        sender!(flow_u64!(timeouts_undone, "", "timeouts the spurious-timeout detector (`tcp.spurious_detection`) found spurious and undid")),
        col!("detect_tp", "", "detector called a retransmission spurious and an earlier copy had reached the receiver (0 when detection is off)", |f| u64s(
            f.iter().map(|x| x.detector.true_positives)
        )),
        col!("detect_fp", "", "detector called it spurious but it was needed", |f| u64s(f.iter().map(|x| x.detector.false_positives))),
        col!("detect_fn", "", "detector called it needed but it was spurious", |f| u64s(f.iter().map(|x| x.detector.false_negatives))),
        col!("detect_tn", "", "detector called it needed and it was", |f| u64s(f.iter().map(|x| x.detector.true_negatives))),
        sender!(col!("pred_error_before", "s", "mean |prediction − sample| over RTT samples, the prediction made before the sample (forecast error); null without samples", |f| opt_f64s(
            f.iter().map(|x| x.meter.pred_error_before.map(|e| e / 1e9))
        ))),
        sender!(col!("pred_error_after", "s", "the same with the prediction just after absorbing the sample", |f| opt_f64s(
            f.iter().map(|x| x.meter.pred_error_after.map(|e| e / 1e9))
        ))),
        sender!(col!("mean_cwnd", "segments", "cwnd averaged over time from the flow's start to its completion or the end; null if it never ran", |f| opt_f64s(
            f.iter().map(|x| x.meter.mean_cwnd)
        ))),
        sender!(flow_u64!(final_cwnd, "bytes", "congestion window at the end")),
        sender!(flow_u64!(final_ssthresh, "bytes", "slow-start threshold at the end; 4611686018427387903 (2⁶² − 1) = never set (∞: no loss yet)")),
        col!("stack", "", "the TCP that sent the flow: `rttlab` (rttlab's sender: always in the simulator; `stack = \"rttlab\"` on the testbed) or `kernel` (Linux's, on the testbed)", |f| strings(
            f.iter().map(|_| "rttlab")
        )),
        col!("cc", "", "congestion control the flow ran (scenarios may mix them across flow groups)", |f| strings(f.iter().map(|x| x.label.cc.as_str()))),
        sender!(col!("recovery", "", "loss recovery the flow ran", |f| strings(f.iter().map(|x| x.label.recovery.as_str())))),
        sender!(col!("estimator", "", "RTT estimator the flow ran", |f| strings(f.iter().map(|x| x.label.estimator.as_str())))),
        sender!(col!("rto_policy", "", "RTO policy over the estimator", |f| strings(f.iter().map(|x| x.label.rto_policy.as_str())))),
    ],
};

pub static CHANNELS: Table<Channels> = Table {
    name: "channels",
    doc: "One row per channel (one direction of a link).",
    columns: &[
        col!("channel", "", "channel number", |c| u32s(c.iter().map(|x| x.channel))),
        col!("name", "", "the link's name and direction (`bottleneck>` is the dumbbell's data direction)", |c| Arc::new(
            StringArray::from_iter_values(c.iter().map(|x| x.name.as_str()))
        )),
        col!("from_node", "", "transmitting node", |c| u32s(c.iter().map(|x| x.from))),
        col!("to_node", "", "receiving node", |c| u32s(c.iter().map(|x| x.to))),
        channel_u64!(bandwidth_bps, "bit/s", "link rate"),
        channel_u64!(arrivals, "", "packets offered to the queue"),
        channel_u64!(departures, "", "packets transmitted"),
        channel_u64!(bytes_sent, "bytes", "bytes transmitted"),
        col!("utilisation", "", "fraction of the measured interval the transmitter was busy", |c| f64s(c.iter().map(|x| x.utilisation))),
        channel_u64!(drops_overflow, "", "packets dropped because the queue was full"),
        channel_u64!(drops_aqm, "", "packets dropped by active queue management (RED, CoDel)"),
        channel_u64!(drops_corruption, "", "packets lost to the link's error model"),
        channel_u64!(drops_scheduled, "", "packets lost to scheduled losses"),
        channel_u64!(marks, "", "packets ECN-marked"),
        channel_u64!(quench, "", "source-quench signals sent"),
        snoop_u64!(snoop_local_dupack, local_on_dupack, "local retransmissions a Snoop agent on this channel sent on a duplicate ACK; null without Snoop"),
        snoop_u64!(snoop_local_timeout, local_on_timeout, "local retransmissions Snoop sent on its own timer; null without Snoop"),
        snoop_u64!(snoop_local_dropped, local_dropped, "Snoop's local retransmissions this channel's queue dropped; null without Snoop"),
        snoop_u64!(snoop_dupacks_suppressed, dupacks_suppressed, "duplicate ACKs Snoop kept from the sender; null without Snoop"),
        snoop_u64!(snoop_acks_regenerated, acks_regenerated, "already-acknowledged data segments Snoop answered with the last ACK instead of forwarding; null without Snoop"),
        snoop_u64!(snoop_not_cached, not_cached, "data segments that found Snoop's cache full and passed uncached; null without Snoop"),
        snoop_u64!(snoop_dupacks_stray, dupacks_stray, "duplicate ACKs Snoop passed on without a local resend because a duplicate copy in flight may have caused them; null without Snoop"),
    ],
};

pub static WINDOW: Table<WindowTrace> = Table {
    name: "window",
    doc: "Sender state after every ACK, timeout and congestion signal.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("cwnd", "bytes", "congestion window", |t| u64s(
            t.cwnd.iter().copied()
        )),
        col!(
            "ssthresh",
            "bytes",
            "slow-start threshold; 4611686018427387903 (2⁶² − 1) = never set (∞: no loss yet)",
            |t| u64s(t.ssthresh.iter().copied())
        ),
        col!(
            "srtt",
            "s",
            "the estimator's current prediction (its SRTT); 0 before the first sample",
            |t| secs_of(&t.srtt)
        ),
        col!("rto", "s", "the RTO in force, back-off included", |t| {
            secs_of(&t.rto)
        }),
    ],
};

pub static RTT: Table<RttTrace> = Table {
    name: "rtt",
    doc: "Every RTT sample the sender accepted.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("sample", "s", "the RTT sample", |t| secs_of(&t.sample)),
        col!(
            "prediction",
            "s",
            "the estimator's prediction just before the sample; null for a flow's first",
            |t| opt_f64s(t.prediction.iter().map(|p| p.map(secs)))
        ),
        col!("rto", "s", "the base RTO after the sample", |t| secs_of(
            &t.rto
        )),
    ],
};

pub static RETRANSMISSIONS: Table<RetxTrace> = Table {
    name: "retransmissions",
    doc: "Every retransmitted segment.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("seq", "bytes", "the segment's first sequence number", |t| {
            u64s(t.seq.iter().copied())
        }),
        col!(
            "tx",
            "",
            "transmission number (1 = first retransmission)",
            |t| Arc::new(UInt8Array::from(t.tx.clone()))
        ),
        col!(
            "spurious",
            "",
            "an earlier copy reached the receiver (resolved at the end of the run)",
            |t| bools(t.spurious.iter().copied())
        ),
        col!("cause", "", "timeout or fast", |t| coded(
            &t.cause,
            &RETX_CAUSE_NAMES
        )),
    ],
};

pub static DROPS: Table<DropTrace> = Table {
    name: "drops",
    doc: "Every packet lost in a queue or on a link.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("channel", "", "channel number", |t| u32s(t.channel.iter().copied())),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("seq", "bytes", "the packet's sequence number (ACK number for ACKs)", |t| u64s(t.seq.iter().copied())),
        col!("kind", "", "data, ack or quench", |t| coded(&t.kind, &PACKET_KIND_NAMES)),
        col!("cause", "", "overflow, aqm, corruption or scheduled", |t| coded(&t.cause, &DROP_CAUSE_NAMES)),
        col!("congestion", "", "a congestion drop (overflow, aqm) rather than the link's own loss (corruption, scheduled)", |t| bools(
            t.cause.iter().map(|&c| c <= super::queue::DropCause::Aqm as u8)
        )),
    ],
};

pub static MARKS: Table<MarkTrace> = Table {
    name: "marks",
    doc: "Every ECN mark.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("channel", "", "channel number", |t| u32s(
            t.channel.iter().copied()
        )),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("seq", "bytes", "the packet's sequence number", |t| u64s(
            t.seq.iter().copied()
        )),
    ],
};

pub static QUEUE: Table<QueueTrace> = Table {
    name: "queue",
    doc: "Monitored queues sampled every `simulation.queue_sample_interval`.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("channel", "", "channel number", |t| u32s(
            t.channel.iter().copied()
        )),
        col!("packets", "", "queue length in packets", |t| u32s(
            t.packets.iter().copied()
        )),
        col!("bytes", "bytes", "queue length in bytes", |t| u64s(
            t.bytes.iter().copied()
        )),
        col!(
            "average",
            "packets",
            "RED's average queue; null for other disciplines",
            |t| opt_f64s(t.average.iter().map(|&a| (!a.is_nan()).then_some(a)))
        ),
    ],
};

pub static ARRIVAL: Table<ArrivalTrace> = Table {
    name: "arrival",
    doc: "Every packet offered to a monitored queue (both directions of the bottleneck), with what became of it. Not kept by `all`: ask for `arrival`.",
    columns: &[
        col!("time", "s", "simulated time", |t| secs_of(&t.time)),
        col!("channel", "", "channel number", |t| u32s(t.channel.iter().copied())),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("seq", "bytes", "the packet's sequence number (ACK number for ACKs)", |t| u64s(t.seq.iter().copied())),
        col!("kind", "", "data, ack or quench", |t| coded(&t.kind, &PACKET_KIND_NAMES)),
        col!("queue", "", "packets in the queue right after it decided on the arrival (the arrival included if queued, before an idle link takes it): what a threshold router compares with τ", |t| u32s(
            t.queue.iter().copied()
        )),
        col!("verdict", "", "enqueued, marked or dropped", |t| coded(&t.verdict, &VERDICT_NAMES)),
        col!("dropped", "", "the queue refused the arrival (overflow or AQM)", |t| bools(
            t.verdict.iter().map(|&v| VERDICT_NAMES[v as usize] == "dropped")
        )),
    ],
};

pub static QUENCH: Table<QuenchTrace> = Table {
    name: "quench",
    doc: "Every source-quench signal a router sent about one of its queues. Not kept by `all`: ask for `quench`.",
    columns: &[
        col!("time", "s", "simulated time (the arrival that caused it)", |t| secs_of(&t.time)),
        col!("channel", "", "the queue's channel number", |t| u32s(t.channel.iter().copied())),
        col!("flow", "", "the flow whose sender the signal goes to", |t| u32s(t.flow.iter().copied())),
        col!("seq", "bytes", "sequence number of the arrival that caused it", |t| u64s(t.seq.iter().copied())),
        col!("queue", "", "the occupancy the signal reports", |t| u32s(t.queue.iter().copied())),
    ],
};

pub static RECEIVE: Table<ReceiveTrace> = Table {
    name: "receive",
    doc: "Every data packet that reached its receiver, for receiver-side loss discriminators. Per packet, so kept only when named (`--traces all,receive`).",
    columns: &[
        col!("time", "s", "arrival at the receiver", |t| secs_of(&t.time)),
        col!("flow", "", "flow number", |t| u32s(t.flow.iter().copied())),
        col!("seq", "bytes", "the packet's first sequence number", |t| u64s(t.seq.iter().copied())),
        col!("len", "bytes", "payload bytes", |t| u32s(t.len.iter().copied())),
        col!("tx", "", "transmission number of the copy (0 = original; a gateway's local retransmission keeps its cached copy's)", |t| Arc::new(UInt8Array::from(t.tx.clone()))),
        col!("sent", "s", "when the sender sent this copy (its timestamp clock); time − sent is the one-way trip time", |t| secs_of(&t.sent)),
    ],
};

/// Every table's name and schema, in the order results list them: flows, channels, then the
/// traces in the order of [`TraceSet::NAMES`].
pub fn schemas() -> Vec<(&'static str, Schema)> {
    vec![
        (FLOWS.name, FLOWS.schema()),
        (CHANNELS.name, CHANNELS.schema()),
        (WINDOW.name, WINDOW.schema()),
        (RTT.name, RTT.schema()),
        (RETRANSMISSIONS.name, RETRANSMISSIONS.schema()),
        (DROPS.name, DROPS.schema()),
        (MARKS.name, MARKS.schema()),
        (QUEUE.name, QUEUE.schema()),
        (ARRIVAL.name, ARRIVAL.schema()),
        (QUENCH.name, QUENCH.schema()),
        (RECEIVE.name, RECEIVE.schema()),
    ]
}

/// The record batches of a run: flows, channels and the traces the run kept.
pub fn batches(r: &SimResult) -> Vec<(&'static str, RecordBatch)> {
    let mut out = vec![
        (FLOWS.name, FLOWS.batch(&r.flows)),
        (CHANNELS.name, CHANNELS.batch(&r.channels)),
    ];
    out.extend(trace_batches(&r.trace));
    out
}

/// The record batches of the traces kept (`trace.keep`).
pub fn trace_batches(t: &Trace) -> Vec<(&'static str, RecordBatch)> {
    let k: TraceSet = t.keep;
    let mut out = Vec::new();
    if k.window {
        out.push((WINDOW.name, WINDOW.batch(&t.window)));
    }
    if k.rtt {
        out.push((RTT.name, RTT.batch(&t.rtt)));
    }
    if k.retx {
        out.push((RETRANSMISSIONS.name, RETRANSMISSIONS.batch(&t.retx)));
    }
    if k.drops {
        out.push((DROPS.name, DROPS.batch(&t.drops)));
    }
    if k.marks {
        out.push((MARKS.name, MARKS.batch(&t.marks)));
    }
    if k.queue {
        out.push((QUEUE.name, QUEUE.batch(&t.queue)));
    }
    if k.arrival {
        out.push((ARRIVAL.name, ARRIVAL.batch(&t.arrival)));
    }
    if k.quench {
        out.push((QUENCH.name, QUENCH.batch(&t.quench)));
    }
    if k.receive {
        out.push((RECEIVE.name, RECEIVE.batch(&t.receive)));
    }
    out
}

/// The Markdown column tables of docs/schema.md, between its `<!-- tables -->` markers.
pub fn markdown() -> String {
    let mut out = String::new();
    for (name, schema) in schemas() {
        let doc = schema.metadata().get("doc").map_or("", String::as_str);
        out.push_str(&format!(
            "\n### `{name}`\n\n{doc}\n\n| column | type | unit | meaning |\n|---|---|---|---|\n"
        ));
        for f in schema.fields() {
            let meta = f.metadata();
            let ty = match f.data_type() {
                arrow_schema::DataType::Dictionary(_, _) => "dictionary (categorical)".to_owned(),
                t => t.to_string(),
            };
            out.push_str(&format!(
                "| `{}` | {ty} | {} | {} |\n",
                f.name(),
                meta["unit"],
                meta["doc"]
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::run_toml;

    const DUMBBELL: &str = r#"
        [simulation]
        duration = "3s"
        seed = 2
        [topology]
        kind = "dumbbell"
        [topology.bottleneck]
        bandwidth = "2Mbps"
        delay = "20ms"
        queue = { kind = "red", limit = "20p" }
        [topology.access]
        bandwidth = "100Mbps"
        delay = "1ms"
        [[flows]]
        count = 3
    "#;

    #[test]
    fn every_table_of_a_run_has_its_schema_and_one_row_per_record() {
        let s = crate::sim::config::Scenario::from_toml(DUMBBELL, &[]).unwrap();
        let every = TraceSet::parse(&TraceSet::NAMES.join(",")).unwrap();
        let r = crate::sim::run_with(&s, every, 1 << 12, |_| std::ops::ControlFlow::Continue(()))
            .unwrap();
        let batches = batches(&r);
        let schemas: HashMap<_, _> = schemas().into_iter().collect();
        assert_eq!(batches.len(), 2 + TraceSet::NAMES.len());
        for (name, b) in &batches {
            assert_eq!(b.schema().as_ref(), &schemas[name], "{name}");
        }
        let rows: HashMap<_, _> = batches.iter().map(|(n, b)| (*n, b.num_rows())).collect();
        assert_eq!(rows["flows"], 3);
        assert_eq!(rows["channels"], r.channels.len());
        assert_eq!(rows["rtt"], r.trace.rtt.time.len());
        assert_eq!(rows["drops"], r.trace.drops.time.len());
        assert_eq!(rows["arrival"], r.trace.arrival.time.len());
        assert!(rows["rtt"] > 0 && rows["queue"] > 0 && rows["arrival"] > 0);
    }

    #[test]
    fn the_receive_trace_has_one_row_per_data_packet_that_reached_a_receiver() {
        let s = crate::sim::config::Scenario::from_toml(DUMBBELL, &[]).unwrap();
        let r = crate::sim::run_with(&s, TraceSet::EVERY, u64::MAX, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        let b = RECEIVE.batch(&r.trace.receive);
        let bytes: u64 = r.flows.iter().map(|f| f.bytes_received).sum();
        assert_eq!(
            r.trace.receive.len.iter().map(|&l| l as u64).sum::<u64>(),
            bytes,
            "every payload byte that reached a receiver, once"
        );
        assert_eq!(b.num_rows(), r.trace.receive.time.len());
        let one_way = r
            .trace
            .receive
            .time
            .iter()
            .zip(&r.trace.receive.sent)
            .map(|(t, s)| t - s)
            .min()
            .unwrap();
        assert!(
            one_way >= 22_000_000,
            "at least the three links' delays: {one_way}"
        );
    }

    #[test]
    fn trace_names_are_the_trace_tables_in_order() {
        let names: Vec<_> = schemas().into_iter().skip(2).map(|(n, _)| n).collect();
        assert_eq!(names, TraceSet::NAMES);
    }

    #[test]
    fn times_are_seconds_and_missing_values_are_null() {
        let r = run_toml(DUMBBELL, &[]).unwrap();
        let rtt = RTT.batch(&r.trace.rtt);
        let prediction = rtt.column_by_name("prediction").unwrap();
        // Each flow's first sample has no prediction; the others do.
        assert_eq!(prediction.null_count(), 3);
        let sample = rtt
            .column_by_name("sample")
            .unwrap()
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap();
        assert_eq!(sample.value(0), r.trace.rtt.sample[0] as f64 / 1e9);
        let flows = FLOWS.batch(&r.flows);
        assert_eq!(
            flows.column_by_name("offered_bps").unwrap().null_count(),
            3,
            "bulk flows offer no measured load"
        );
    }

    #[test]
    fn an_enumeration_column_names_its_codes() {
        let mut t = Trace::new(TraceSet::ALL);
        t.drop(
            5,
            1,
            0,
            super::super::packet::Kind::Data,
            7,
            super::super::queue::DropCause::Corruption,
        );
        let b = DROPS.batch(&t.drops);
        let cause = b
            .column_by_name("cause")
            .unwrap()
            .as_any()
            .downcast_ref::<DictionaryArray<UInt8Type>>()
            .unwrap();
        let values = cause
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(values.value(cause.keys().value(0) as usize), "corruption");
        let congestion = b
            .column_by_name("congestion")
            .unwrap()
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap();
        assert!(!congestion.value(0), "corruption is the link's own loss");
    }

    /// docs/schema.md lists these tables between `<!-- tables -->` and `<!-- /tables -->`;
    /// `RTTLAB_BLESS=1 cargo test docs_list` rewrites that block from the definitions above.
    #[test]
    fn a_senders_rows_are_the_flow_and_the_sender_marked_columns_of_the_simulators_rows() {
        let s = crate::sim::config::Scenario::from_toml(DUMBBELL, &[]).unwrap();
        let r = crate::sim::run_with(&s, TraceSet::NONE, 1 << 12, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        let full = FLOWS.batch(&r.flows);
        let own = FLOWS.sender_batch(&r.flows);
        let (schema, full_schema) = (own.schema(), full.schema());
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let marked: Vec<&str> = std::iter::once("flow")
            .chain(
                FLOWS
                    .columns
                    .iter()
                    .filter(|c| c.from_sender)
                    .map(|c| c.name),
            )
            .collect();
        assert_eq!(
            names, marked,
            "the flow first, then the marked columns in the table's order"
        );
        for c in [
            "retx_timeout",
            "timeouts",
            "rtt_mean",
            "pred_error_before",
            "mean_cwnd",
            "final_ssthresh",
            "recovery",
            "estimator",
        ] {
            assert!(names.contains(&c), "{c} is the sender's own");
        }
        for c in [
            "bytes_delivered",
            "goodput_bps",
            "retx_spurious",
            "detect_tp",
            "stack",
            "cc",
        ] {
            assert!(
                !names.contains(&c),
                "{c} is measured elsewhere (receiver, wire, oracle) or by the testbed"
            );
        }
        for (i, field) in schema.fields().iter().enumerate() {
            let j = full_schema.index_of(field.name()).unwrap();
            assert_eq!(
                field,
                &full_schema.fields()[j],
                "same type and metadata as the flows table's"
            );
            assert_eq!(
                own.column(i),
                full.column(j),
                "{}: the same values",
                field.name()
            );
        }
        assert_eq!(FLOWS.sender_batch(&Vec::new()).num_rows(), 0);
    }

    #[test]
    fn docs_list_every_column_of_every_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (open, close) = ("<!-- tables -->\n", "<!-- /tables -->");
        let start = text
            .find(open)
            .expect("docs/schema.md has a <!-- tables --> marker")
            + open.len();
        let end = text
            .find(close)
            .expect("docs/schema.md has a <!-- /tables --> marker");
        let want = markdown();
        if std::env::var_os("RTTLAB_BLESS").is_some() {
            std::fs::write(&path, format!("{}{}{}", &text[..start], want, &text[end..])).unwrap();
            return;
        }
        assert!(
            text[start..end] == want,
            "docs/schema.md's column tables differ from src/sim/tables.rs; run RTTLAB_BLESS=1 cargo test docs_list to regenerate them"
        );
    }
}
