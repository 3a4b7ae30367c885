//! The capture's tables, declared once: every column's name, Arrow type, unit, meaning and how it
//! is made. From these declarations come
//!
//! - samples ([`sample_columns!`]): the CSV header and rows ([`super::export`]), the Arrow schema
//!   and record batches written to Parquet with each column's declared [`Storage`]
//!   ([`super::parquet_file`]) and handed to Python (`_core`), the table of docs/capture.md;
//! - connections ([`CONN_COLUMNS`]): `rttlab flows --json`'s records ([`super::flows_json`]), the
//!   Arrow batch handed to Python (whose DataFrame gives `rttlab flows --csv`), docs/capture.md;
//! - retransmissions ([`RTX_COLUMNS`]): the Arrow batch handed to Python, docs/capture.md.
//!
//! docs/capture.md's three tables are checked against these (`docs_list_every_*`).
//!
//! The sample writers stay straight-line code: the macro unrolls one row into its cells, each a
//! [`Cell`] of a variant known where it is made, so the per-cell `match` folds away once inlined —
//! no per-cell dispatch or allocation in the CSV/Parquet loops measured against tcptrace.

use std::sync::Arc;

use arrow_array::types::Int8Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, Int8Array, LargeStringArray,
    RecordBatch, StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};

use super::flows_json::endpoint;
use super::{ConnSummary, Evidence, Method, Retransmission, Samples};
use crate::time::Nanos;

/// A column's Arrow type: the types the pandas DataFrame of `rttlab.read_capture` had when
/// pyarrow wrote it, kept so files read back with the same dtypes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Int64,
    Float64,
    Boolean,
    /// Int8 codes into a list of names (a pandas categorical).
    Category,
    LargeUtf8,
}

impl Type {
    pub fn data_type(self) -> DataType {
        match self {
            Type::Int64 => DataType::Int64,
            Type::Float64 => DataType::Float64,
            Type::Boolean => DataType::Boolean,
            Type::Category => {
                DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
            }
            Type::LargeUtf8 => DataType::LargeUtf8,
        }
    }
}

/// One column's declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub ty: Type,
    /// `""` for ids, codes, flags and sequence numbers.
    pub unit: &'static str,
    pub doc: &'static str,
    /// No value is ever missing, but every field is nullable as pyarrow made them from pandas:
    /// the Parquet footer's schema, and so the file's bytes, depend on it.
    pub nullable: bool,
    /// How `rttlab samples -o FILE.parquet` stores the column.
    pub storage: Storage,
}

/// How a sample column is stored in Parquet ([`super::parquet_file`] applies it). Measured on
/// the 916,476 rows of one 1 GB benchmark capture's batch stream:
/// - `DELTA_BINARY_PACKED` for integers that rise in small steps (connection ids, sequence and
///   frame numbers): 168 → 150 ms and 18.5 → 17.7 MB against plain encoding; dictionaries tried
///   on times, RTTs and sequence numbers cost 3× the whole write for a larger file;
/// - no Snappy on pages already dense (bit-packed deltas, dictionary indices): Snappy shrank them
///   by 0–10 % (5 % together: 17.7 → 18.2 MB) for ≈ 6 % of the write's CPU time (median of 15
///   interleaved writes, one core: 145 → 136 CPU-ms); uncompressed pages are also quicker to read;
/// - no min/max statistics where every row group spans the whole range (both directions and,
///   nearly always, two or three methods on the benchmark capture and every shared capture), so
///   the range excludes no row group from a reader's filter, while computing it compares every
///   row's text (≈ 20 of the write's ≈ 180 CPU-ms, `perf`: `compute_min_max` → memcmp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Plain pages, Snappy (pyarrow's default), statistics: times, RTTs, flags.
    Snappy,
    /// `DELTA_BINARY_PACKED`, uncompressed, statistics.
    Delta,
    /// Dictionary pages, uncompressed, no statistics: few-valued text whose every row group holds
    /// nearly every value.
    Codes,
    /// Dictionary pages, Snappy, statistics: `capture`, whose rows are contiguous per file, so
    /// its range does prune.
    Names,
}

impl Storage {
    pub fn dictionary(self) -> bool {
        matches!(self, Storage::Codes | Storage::Names)
    }

    pub fn delta(self) -> bool {
        self == Storage::Delta
    }

    pub fn compressed(self) -> bool {
        matches!(self, Storage::Snappy | Storage::Names)
    }

    pub fn statistics(self) -> bool {
        self != Storage::Codes
    }
}

/// One value of a row, as the text writers format it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Int(u64),
    /// Nanoseconds, written as seconds with nine decimals ([`push_secs`]).
    Secs(i128),
    /// A category's name (no character needs quoting or escaping).
    Name(&'static str),
    Bool(bool),
}

impl Cell {
    /// As pandas' `to_csv(float_format="%.9f")` writes it: booleans `True`/`False`.
    #[inline(always)]
    pub fn csv(self, out: &mut Vec<u8>) {
        match self {
            Cell::Int(v) => push_int(out, v),
            Cell::Secs(ns) => push_secs(out, ns),
            Cell::Name(n) => out.extend_from_slice(n.as_bytes()),
            Cell::Bool(b) => out.extend_from_slice(if b { b"True" } else { b"False" }),
        }
    }
}

/// Every field nullable (see [`Column::nullable`]).
const NULLABLE: bool = true;

/// `$name: Type / Storage, "unit", "meaning", cell |s, i| Cell, arrow |s| ArrayRef;` per column,
/// in order.
macro_rules! sample_columns {
    ($( $name:ident: $ty:ident / $storage:ident, $unit:literal, $doc:literal, cell $cell:expr, arrow $arrow:expr; )*) => {
        /// The sample columns, in order (after the leading [`CAPTURE`] when several files are
        /// written together).
        pub const SAMPLE_COLUMNS: &[Column] = &[$( Column { name: stringify!($name), ty: Type::$ty, unit: $unit, doc: $doc, nullable: NULLABLE, storage: Storage::$storage } ),*];

        /// Row `i`'s cells in column order, each handed to `f` with its column's index (the
        /// tests' view of a row).
        #[cfg(test)]
        pub fn for_each_cell(s: &Samples, i: usize, mut f: impl FnMut(usize, Cell)) {
            let mut k = 0;
            $(
                f(k, cell_of($cell, s, i));
                k += 1;
            )*
            let _ = k;
        }

        /// Row `i` as CSV, after whatever `line` already holds (the quoted capture name and a
        /// comma). Written out cell by cell, not through a callback: a closure called per cell
        /// was not inlined (a call and a `match` per cell; 5–15 % more CPU for `rttlab samples
        /// -o FILE.csv` on the 1 GB benchmark capture).
        #[inline(always)]
        pub fn push_csv_row(line: &mut Vec<u8>, s: &Samples, i: usize) {
            let mut first = true;
            $(
                if !first {
                    line.push(b',');
                }
                first = false;
                cell_of($cell, s, i).csv(line);
            )*
            let _ = first;
            line.push(b'\n');
        }

        /// The columns of `s` as Arrow arrays, in order.
        pub fn arrays(s: &Samples) -> Vec<ArrayRef> {
            vec![$( array_of($arrow, s) ),*]
        }
    };
}

// Closures are passed through these so their parameter types are inferred and each call is
// static (and inlined).
#[inline(always)]
fn cell_of(f: impl Fn(&Samples, usize) -> Cell, s: &Samples, i: usize) -> Cell {
    f(s, i)
}

fn array_of(f: impl Fn(&Samples) -> ArrayRef, s: &Samples) -> ArrayRef {
    f(s)
}

/// The names of `direction`'s codes (`Samples::dir`).
pub const DIRECTIONS: [&str; 2] = ["fwd", "rev"];

sample_columns! {
    conn: Int64 / Delta, "", "connection id (row of `flows`)",
        cell |s, i| Cell::Int(u64::from(s.conn[i])),
        arrow |s| int64(s.conn.iter().map(|&c| i64::from(c)));
    direction: Category / Codes, "", "`fwd`/`rev`: direction of the *timed* packet (`fwd`: sent by the connection's `src`)",
        // `& 1`: codes are 0 or 1; the mask spares a bounds check in the hot loop.
        cell |s, i| Cell::Name(DIRECTIONS[usize::from(s.dir[i] & 1)]),
        arrow |s| codes(s.dir.iter().copied(), &DIRECTIONS);
    time: Float64 / Snappy, "s", "time of the packet that completed the sample, from the file's first packet",
        cell |s, i| Cell::Secs(i128::from(s.time[i])),
        arrow |s| seconds(s.time.iter().map(|&t| t as f64));
    rtt: Float64 / Snappy, "s", "round-trip time from the capture point: timed packet to the packet that completed the sample",
        cell |s, i| Cell::Secs(i128::from(s.rtt[i])),
        arrow |s| seconds(s.rtt.iter().map(|&r| r as f64));
    method: Category / Codes, "", "`seq`, `ts` or `syn` (below)",
        cell |s, i| Cell::Name(s.method[i].name()),
        arrow |s| codes(s.method.iter().map(|&m| m as u8), &Method::ALL.map(Method::name));
    ambiguous: Boolean / Snappy, "", "Karn's rule (RFC 6298 §3) rejects it; present only with `--include-ambiguous`",
        cell |s, i| Cell::Bool(s.ambiguous[i]),
        arrow |s| Arc::new(BooleanArray::from(s.ambiguous.clone()));
    seq_start: Int64 / Delta, "", "first sequence number of the timed segment (`ts`: of the packet whose TSval was echoed; `syn`: the SYN's or SYN/ACK's)",
        cell |s, i| Cell::Int(u64::from(s.seq_start[i])),
        arrow |s| int64(s.seq_start.iter().map(|&x| i64::from(x)));
    seq_end: Int64 / Delta, "", "sequence number just past the timed segment: it covers `[seq_start, seq_end)`",
        cell |s, i| Cell::Int(u64::from(s.seq_end[i])),
        arrow |s| int64(s.seq_end.iter().map(|&x| i64::from(x)));
    frame: Int64 / Delta, "", "1-based frame number (as in Wireshark) of the packet that completed the sample",
        cell |s, i| Cell::Int(s.frame[i]),
        arrow |s| int64(s.frame.iter().map(|&x| x as i64));
    ref_frame: Int64 / Delta, "", "1-based frame number of the timed packet",
        cell |s, i| Cell::Int(s.ref_frame[i]),
        arrow |s| int64(s.ref_frame.iter().map(|&x| x as i64));
    idle_echo: Boolean / Snappy, "", "`ts` only: RFC 7323 §4's RTTM rule does not accept the echo as a path measurement (below); kept, but never in a path series",
        cell |s, i| Cell::Bool(s.idle_echo[i]),
        arrow |s| Arc::new(BooleanArray::from(s.idle_echo.clone()));
}

/// The leading column naming the file when several captures are written to one output.
pub const CAPTURE: Column = Column {
    name: "capture",
    ty: Type::LargeUtf8,
    unit: "",
    doc: "the capture file's name; only when several files are written together",
    nullable: NULLABLE,
    storage: Storage::Names,
};

fn int64(values: impl Iterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

/// Nanoseconds (as f64) as seconds, as the DataFrame has them: ns / 1e9.
fn seconds(ns: impl Iterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(ns.map(|ns| ns / 1e9)))
}

fn codes(codes: impl Iterator<Item = u8>, names: &[&str]) -> ArrayRef {
    let keys = Int8Array::from_iter_values(codes.map(|c| c as i8));
    let values = Arc::new(StringArray::from(names.to_vec()));
    Arc::new(
        DictionaryArray::<Int8Type>::try_new(keys, values).expect("codes index their name list"),
    )
}

/// The columns written: [`CAPTURE`] first when `with_capture`, then [`SAMPLE_COLUMNS`].
pub fn columns(with_capture: bool) -> impl Iterator<Item = &'static Column> {
    with_capture
        .then_some(&CAPTURE)
        .into_iter()
        .chain(SAMPLE_COLUMNS)
}

/// The samples table's Arrow schema. Fields carry no metadata: the schema is stored in every
/// Parquet file's footer, whose bytes stay those pyarrow's schema gave.
pub fn schema(with_capture: bool) -> Schema {
    Schema::new(
        columns(with_capture)
            .map(|c| Field::new(c.name, c.ty.data_type(), c.nullable))
            .collect::<Vec<_>>(),
    )
}

/// One batch of samples as Arrow, in [`schema`] (with `capture` in every row when given).
pub fn record_batch(s: &Samples, capture: Option<&str>) -> RecordBatch {
    let mut out: Vec<ArrayRef> = Vec::with_capacity(SAMPLE_COLUMNS.len() + 1);
    if let Some(name) = capture {
        out.push(Arc::new(LargeStringArray::from_iter_values(
            std::iter::repeat_n(name, s.len()),
        )));
    }
    out.extend(arrays(s));
    RecordBatch::try_new(Arc::new(schema(capture.is_some())), out)
        .expect("columns match the schema")
}

/// The CSV header line (pandas' `to_csv(index=False)`).
pub fn csv_header(with_capture: bool) -> String {
    columns(with_capture)
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

/// Below this many nanoseconds (2^52 ns ≈ 52 days) `%.9f` of `ns as f64 / 1e9` is exactly the
/// integer's digits with the point moved: the quotient is the double nearest ns·10⁻⁹ (ns is exact
/// in f64, division rounds correctly), so it lies within half an ulp — below 2²³ s at most
/// 2⁻³¹ s ≈ 0.47 ns < 0.5 ns — of a number with nine decimals, and rounding to nine decimals
/// returns that number. Larger values format the double.
const EXACT_NS: u64 = 1 << 52;

/// `{:.9}` of `ns as f64 / 1e9` (C's `%.9f`, pandas' `float_format="%.9f"`), from the integer
/// where that is provably the same text (≈ 10× faster than formatting the double).
#[inline(always)]
pub fn push_secs(line: &mut Vec<u8>, ns: i128) {
    use std::io::Write;
    let magnitude = ns.unsigned_abs();
    if magnitude >= u128::from(EXACT_NS) {
        let _ = write!(line, "{:.9}", ns as f64 / 1e9);
        return;
    }
    if ns < 0 {
        line.push(b'-');
    }
    // Below 2^52 both parts fit u64.
    let (whole, frac) = (
        (magnitude / 1_000_000_000) as u64,
        (magnitude % 1_000_000_000) as u32,
    );
    push_int(line, whole);
    line.push(b'.');
    let mut digits = [b'0'; 9];
    let mut rest = frac;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    line.extend_from_slice(&digits);
}

/// An integer's decimal digits (`itoa`: the text of `{}` without the formatting machinery,
/// which was most of the CSV writer's time).
pub fn push_int(line: &mut Vec<u8>, v: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// The Markdown column table of docs/capture.md, between its `<!-- sample columns -->` markers.
pub fn markdown() -> String {
    let mut out = String::from("| column | type | unit | meaning |\n|---|---|---|---|\n");
    for c in columns(true) {
        let ty = match c.ty {
            Type::Category => "dictionary (categorical)".to_owned(),
            t => t.data_type().to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {ty} | {} | {} |\n",
            c.name, c.unit, c.doc
        ));
    }
    out
}

// ---- the connections table ------------------------------------------------------------------

/// A connection column's kind: how its values are typed in Python's DataFrame and in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnType {
    /// A count or id (uint64).
    Count,
    /// An integer that may be unknown (a nullable `Int64` in the DataFrame, `null` in JSON).
    OptInt,
    /// Seconds (float64).
    Seconds,
    /// Seconds that may be unknown (NaN in the DataFrame, `null` in JSON).
    OptSeconds,
    Flag,
    Text,
}

impl ConnType {
    /// The kind's name for Python (`_core.connection_columns`).
    pub fn key(self) -> &'static str {
        match self {
            ConnType::Count => "count",
            ConnType::OptInt => "opt_int",
            ConnType::Seconds => "seconds",
            ConnType::OptSeconds => "opt_seconds",
            ConnType::Flag => "flag",
            ConnType::Text => "text",
        }
    }

    /// The Arrow type of the column's array ([`ConnColumn::array`]); a missing value is null.
    pub fn data_type(self) -> DataType {
        match self {
            ConnType::Count => DataType::UInt64,
            ConnType::OptInt => DataType::Int64,
            ConnType::Seconds | ConnType::OptSeconds => DataType::Float64,
            ConnType::Flag => DataType::Boolean,
            ConnType::Text => DataType::Utf8,
        }
    }

    fn nullable(self) -> bool {
        matches!(self, ConnType::OptInt | ConnType::OptSeconds)
    }

    fn name(self) -> String {
        format!(
            "{}{}",
            self.data_type(),
            if self.nullable() { " (nullable)" } else { "" }
        )
    }
}

/// One connection's value in a column, of its column's [`ConnType`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Count(u64),
    OptInt(Option<u64>),
    Seconds(f64),
    OptSeconds(Option<f64>),
    Flag(bool),
    Text(std::borrow::Cow<'static, str>),
}

/// One column of the connections table (`rttlab flows`, `read_capture`'s second frame).
pub struct ConnColumn {
    pub name: &'static str,
    pub ty: ConnType,
    pub unit: &'static str,
    pub doc: &'static str,
    /// One connection's value (`rttlab flows --json`).
    pub value: fn(&ConnSummary) -> Value,
    /// Every connection's value as an Arrow array of [`ConnType::data_type`] (Python's frame).
    pub array: fn(&[ConnSummary]) -> ArrayRef,
}

/// `kind!(name, "unit", "meaning", |c| value)`: the kind names the column's type, the [`Value`]
/// its accessor's result is wrapped in and the Arrow array its values fill, so none of the three
/// can disagree with another.
macro_rules! count {
    ($name:literal, $unit:literal, $doc:literal, $get:expr) => {
        ConnColumn {
            name: $name,
            ty: ConnType::Count,
            unit: $unit,
            doc: $doc,
            value: |c| Value::Count(($get as fn(&ConnSummary) -> u64)(c)),
            array: |cs| {
                Arc::new(UInt64Array::from_iter_values(
                    cs.iter().map($get as fn(&ConnSummary) -> u64),
                ))
            },
        }
    };
}
macro_rules! opt_int {
    ($name:literal, $unit:literal, $doc:literal, $get:expr) => {
        ConnColumn {
            name: $name,
            ty: ConnType::OptInt,
            unit: $unit,
            doc: $doc,
            value: |c| Value::OptInt(($get as fn(&ConnSummary) -> Option<u64>)(c)),
            // The values are option fields of at most 16 bits: they fit i64.
            array: |cs| {
                Arc::new(Int64Array::from_iter(cs.iter().map(|c| {
                    ($get as fn(&ConnSummary) -> Option<u64>)(c).map(|v| v as i64)
                })))
            },
        }
    };
}
macro_rules! seconds {
    ($name:literal, $doc:literal, $get:expr) => {
        ConnColumn {
            name: $name,
            ty: ConnType::Seconds,
            unit: "s",
            doc: $doc,
            value: |c| Value::Seconds(ns_to_secs(($get as fn(&ConnSummary) -> i64)(c))),
            array: |cs| {
                Arc::new(Float64Array::from_iter_values(
                    cs.iter()
                        .map(|c| ns_to_secs(($get as fn(&ConnSummary) -> i64)(c))),
                ))
            },
        }
    };
}
macro_rules! opt_seconds {
    ($name:literal, $doc:literal, $get:expr) => {
        ConnColumn {
            name: $name,
            ty: ConnType::OptSeconds,
            unit: "s",
            doc: $doc,
            value: |c| {
                Value::OptSeconds(
                    ($get as fn(&ConnSummary) -> Option<Nanos>)(c).map(|ns| ns as f64 / 1e9),
                )
            },
            array: |cs| {
                Arc::new(Float64Array::from_iter(cs.iter().map(|c| {
                    ($get as fn(&ConnSummary) -> Option<Nanos>)(c).map(|ns| ns as f64 / 1e9)
                })))
            },
        }
    };
}
macro_rules! flag {
    ($name:literal, $doc:literal, $get:expr) => {
        ConnColumn {
            name: $name,
            ty: ConnType::Flag,
            unit: "",
            doc: $doc,
            value: |c| Value::Flag(($get as fn(&ConnSummary) -> bool)(c)),
            array: |cs| {
                Arc::new(BooleanArray::from(
                    cs.iter()
                        .map($get as fn(&ConnSummary) -> bool)
                        .collect::<Vec<bool>>(),
                ))
            },
        }
    };
}
macro_rules! text {
    ($name:literal, $doc:literal, $get:expr) => {
        ConnColumn {
            name: $name,
            ty: ConnType::Text,
            unit: "",
            doc: $doc,
            value: |c| Value::Text(($get as fn(&ConnSummary) -> std::borrow::Cow<'static, str>)(c)),
            array: |cs| {
                Arc::new(StringArray::from_iter_values(
                    cs.iter()
                        .map($get as fn(&ConnSummary) -> std::borrow::Cow<'static, str>),
                ))
            },
        }
    };
}

fn ns_to_secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// The connection columns, in order: `rttlab flows --json`'s records and Python's frame.
pub const CONN_COLUMNS: &[ConnColumn] = &[
    count!("conn", "", "connection id (the `conn` of its samples)", |c| u64::from(c.id)),
    text!("src", "initiator's ip:port when the SYN was captured, else the first packet's sender", |c| endpoint(c.a, c.a_port).into()),
    text!("dst", "the other endpoint, ip:port", |c| endpoint(c.b, c.b_port).into()),
    seconds!("start", "first packet, from the file's first packet", |c| c.first),
    seconds!("duration", "first to last packet", |c| c.last.saturating_sub(c.first)),
    count!("packets_fwd", "", "packets `src` → `dst`", |c| c.packets[0]),
    count!("bytes_fwd", "B", "payload bytes `src` → `dst`", |c| c.bytes[0]),
    count!("retransmissions_fwd", "", "retransmitted packets `src` → `dst` (keep-alives excluded)", |c| c.retransmissions[0]),
    flag!("ts_fwd", "`src` sent TCP timestamps (RFC 7323)", |c| c.ts[0]),
    opt_int!("mss_fwd", "B", "MSS option `src` sent; null when none was seen", |c| c.mss[0].map(u64::from)),
    opt_int!("ttl_fwd", "", "first IP TTL (hop limit) seen from `src`", |c| c.ttl[0].map(u64::from)),
    opt_int!("hops_fwd", "", "routers between `src` and the capture: the nearest common initial TTL (32/64/128/255) at or above `ttl_fwd`, minus it; null for TTL 0", |c| c.hops[0].map(u64::from)),
    count!("packets_rev", "", "packets `dst` → `src`", |c| c.packets[1]),
    count!("bytes_rev", "B", "payload bytes `dst` → `src`", |c| c.bytes[1]),
    count!("retransmissions_rev", "", "retransmitted packets `dst` → `src` (keep-alives excluded)", |c| c.retransmissions[1]),
    flag!("ts_rev", "`dst` sent TCP timestamps (RFC 7323)", |c| c.ts[1]),
    opt_int!("mss_rev", "B", "MSS option `dst` sent; null when none was seen", |c| c.mss[1].map(u64::from)),
    opt_int!("ttl_rev", "", "first IP TTL (hop limit) seen from `dst`", |c| c.ttl[1].map(u64::from)),
    opt_int!("hops_rev", "", "routers between `dst` and the capture, as `hops_fwd`", |c| c.hops[1].map(u64::from)),
    flag!("sack_permitted", "both SYNs offered SACK (RFC 2018)", |c| c.sack_permitted),
    count!("sack_packets", "", "packets carrying SACK blocks", |c| c.sack_packets),
    flag!("handshake_seen", "`src` sent a SYN (it is the initiator) and the handshake completed", |c| c.handshake_seen),
    opt_seconds!("handshake_rtt", "sum of the two `syn` legs; null when either leg is ambiguous", |c| c.handshake_rtt),
    flag!("handshake_ambiguous", "a retransmitted SYN or SYN/ACK that TSecr could not resolve (Karn)", |c| c.handshake_ambiguous),
    count!("syn_retransmissions", "", "retransmitted SYNs and SYN/ACKs", |c| u64::from(c.syn_retransmissions)),
    text!("vantage", "where the capture sits: near sender, near receiver, middle or unknown (vantage, below)", |c| c.vantage.name().into()),
    text!("path_rtt_method", "which series gives the path RTT there (`seq fwd`, `ts rev`, a sum of medians, ...)", |c| c.path_rtt.describe().into()),
    opt_seconds!("path_rtt", "median path RTT; null when unknown", |c| c.path_rtt_median),
    opt_seconds!("min_rtt", "smallest sample of the path-RTT series (the sum of medians when the path RTT is one)", |c| c.min_rtt),
    opt_seconds!("max_rtt", "largest sample of the path-RTT series (the sum of medians when the path RTT is one)", |c| c.max_rtt),
    count!("malformed", "", "packets of this connection with malformed TCP options", |c| c.malformed),
    count!("samples", "", "sample rows of this connection (every method and direction)", |c| c.samples),
    count!("path_samples", "", "samples of the path-RTT series: what `rttlab evaluate` replays (its first warms the estimator up and is not scored); 0 when the path RTT is a sum of partials or unknown", |c| c.path_samples),
    count!("ts_excluded", "", "`ts` samples flagged `idle_echo` (RFC 7323 §4's RTTM rule), left out of path series", |c| c.ts_excluded),
];

/// The connections table's Arrow schema (nullable where a value may be unknown).
pub fn conn_schema() -> Schema {
    Schema::new(
        CONN_COLUMNS
            .iter()
            .map(|c| Field::new(c.name, c.ty.data_type(), c.ty.nullable()))
            .collect::<Vec<_>>(),
    )
}

/// The connections as an Arrow record batch, one row per connection.
pub fn conn_batch(conns: &[ConnSummary]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(conn_schema()),
        CONN_COLUMNS.iter().map(|c| (c.array)(conns)).collect(),
    )
    .expect("each column's array has its declared type")
}

/// The Markdown column table of docs/capture.md, between its `<!-- connection columns -->` markers.
pub fn conn_markdown() -> String {
    let mut out = String::from("| column | type | unit | meaning |\n|---|---|---|---|\n");
    for c in CONN_COLUMNS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            c.name,
            c.ty.name(),
            c.unit,
            c.doc
        ));
    }
    out
}

// ---- the retransmissions table --------------------------------------------------------------

/// One column of the retransmissions table (`read_capture(..., retransmissions=True)`), built
/// from the capture's retransmissions.
pub struct RtxColumn {
    pub name: &'static str,
    pub ty: Type,
    pub unit: &'static str,
    pub doc: &'static str,
    pub build: fn(&[Retransmission]) -> ArrayRef,
}

/// Seconds, NaN where the capture holds no time (as the DataFrame always had it).
fn opt_seconds(ns: impl Iterator<Item = Option<i64>>) -> ArrayRef {
    seconds(ns.map(|v| v.map_or(f64::NAN, |ns| ns as f64)))
}

/// The retransmission columns, in order.
pub const RTX_COLUMNS: &[RtxColumn] = &[
    RtxColumn { name: "conn", ty: Type::Int64, unit: "", doc: "connection of the resent data", build: |r| int64(r.iter().map(|x| i64::from(x.conn))) },
    RtxColumn { name: "direction", ty: Type::Category, unit: "", doc: "`fwd`/`rev`: direction of the resent data", build: |r| codes(r.iter().map(|x| x.dir), &DIRECTIONS) },
    RtxColumn { name: "seq_start", ty: Type::Int64, unit: "", doc: "first sequence number of the resent packet", build: |r| int64(r.iter().map(|x| i64::from(x.seq_start))) },
    RtxColumn { name: "seq_end", ty: Type::Int64, unit: "", doc: "sequence number just past the resent packet", build: |r| int64(r.iter().map(|x| i64::from(x.seq_end))) },
    RtxColumn {
        name: "sent",
        ty: Type::Float64,
        unit: "s",
        doc: "the transmission it repeats: the latest earlier one of the first outstanding, not SACKed segment it overlaps (NaN when the capture holds none)",
        build: |r| opt_seconds(r.iter().map(|x| x.sent)),
    },
    RtxColumn { name: "resent", ty: Type::Float64, unit: "s", doc: "the resend", build: |r| seconds(r.iter().map(|x| x.resent as f64)) },
    RtxColumn {
        name: "timer_start",
        ty: Type::Float64,
        unit: "s",
        doc: "when the sender's timer covering that data last started: the later of `sent` and the last ACK that advanced the cumulative ACK before the resend (RFC 6298 §5.1, §5.3)",
        build: |r| opt_seconds(r.iter().map(|x| x.timer_start)),
    },
    RtxColumn { name: "attempt", ty: Type::Int64, unit: "", doc: "1 for the first resend of that data, 2 when a resend is resent, ...", build: |r| int64(r.iter().map(|x| i64::from(x.attempt))) },
    RtxColumn {
        name: "dupacks",
        ty: Type::Int64,
        unit: "",
        doc: "duplicate ACKs (RFC 5681 §2) since the cumulative ACK last advanced: ≥ 3 suggests a fast retransmit",
        build: |r| int64(r.iter().map(|x| i64::from(x.dupacks))),
    },
    RtxColumn { name: "evidence", ty: Type::Category, unit: "", doc: "what the capture says of the earlier transmission (below)", build: |r| codes(r.iter().map(|x| x.evidence as u8), &Evidence::ALL.map(Evidence::name)) },
    RtxColumn { name: "needed", ty: Type::Boolean, unit: "", doc: "the earlier transmission was really lost: `evidence` is `ts-resend` or `unacked`", build: |r| Arc::new(BooleanArray::from(r.iter().map(|x| x.evidence.needed()).collect::<Vec<bool>>())) },
    RtxColumn { name: "frame", ty: Type::Int64, unit: "", doc: "1-based frame number of the resend", build: |r| int64(r.iter().map(|x| x.frame as i64)) },
    RtxColumn { name: "ref_frame", ty: Type::Int64, unit: "", doc: "1-based frame number of `sent`'s packet (0 when the capture holds none)", build: |r| int64(r.iter().map(|x| x.ref_frame as i64)) },
];

/// The retransmissions table's Arrow schema.
pub fn rtx_schema() -> Schema {
    Schema::new(
        RTX_COLUMNS
            .iter()
            .map(|c| Field::new(c.name, c.ty.data_type(), false))
            .collect::<Vec<_>>(),
    )
}

/// The retransmissions as an Arrow record batch, one row per resent packet.
pub fn rtx_batch(rtx: &[Retransmission]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(rtx_schema()),
        RTX_COLUMNS.iter().map(|c| (c.build)(rtx)).collect(),
    )
    .expect("each column's array has its declared type")
}

/// The Markdown column table of docs/capture.md, between its `<!-- retransmission columns -->` markers.
pub fn rtx_markdown() -> String {
    let mut out = String::from("| column | type | unit | meaning |\n|---|---|---|---|\n");
    for c in RTX_COLUMNS {
        let ty = match c.ty {
            Type::Category => "dictionary (categorical)".to_owned(),
            t => t.data_type().to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {ty} | {} | {} |\n",
            c.name, c.unit, c.doc
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::testutil::two_sample_rows;

    #[test]
    fn every_column_has_one_cell_one_array_and_one_json_key_in_declared_order() {
        let s = two_sample_rows();
        let mut seen = Vec::new();
        for_each_cell(&s, 1, |k, cell| seen.push((k, cell)));
        assert_eq!(seen.len(), SAMPLE_COLUMNS.len());
        assert!(seen.iter().enumerate().all(|(i, (k, _))| i == *k));
        assert_eq!(seen[1].1, Cell::Name("rev"));
        assert_eq!(seen[2].1, Cell::Secs(-2));
        let arrays = arrays(&s);
        for (c, a) in SAMPLE_COLUMNS.iter().zip(&arrays) {
            assert_eq!(a.data_type(), &c.ty.data_type(), "{}", c.name);
            assert_eq!(a.len(), 2, "{}", c.name);
        }
    }

    #[test]
    fn the_schema_is_the_one_pyarrow_made_from_the_dataframe() {
        let names: Vec<_> = schema(true)
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(
            names,
            [
                "capture",
                "conn",
                "direction",
                "time",
                "rtt",
                "method",
                "ambiguous",
                "seq_start",
                "seq_end",
                "frame",
                "ref_frame",
                "idle_echo"
            ]
        );
        assert!(schema(false)
            .fields()
            .iter()
            .all(|f| f.is_nullable() && f.metadata().is_empty()));
        assert!(schema(false).metadata().is_empty());
    }

    #[test]
    fn a_row_is_one_line_of_csv() {
        let s = two_sample_rows();
        let mut csv = Vec::new();
        push_csv_row(&mut csv, &s, 1);
        assert_eq!(
            csv,
            b"7,rev,-0.000000002,0.000000001,ts,True,4294967295,5,9,4,True\n"
        );
        assert_eq!(csv_header(true), "capture,conn,direction,time,rtt,method,ambiguous,seq_start,seq_end,frame,ref_frame,idle_echo\n");
    }

    #[test]
    fn seconds_from_the_integer_equal_formatting_the_double() {
        use proptest::prelude::*;
        let check = |ns: i128| {
            let mut fast = Vec::new();
            push_secs(&mut fast, ns);
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                format!("{:.9}", ns as f64 / 1e9),
                "{ns}"
            );
        };
        for ns in [
            0,
            1,
            -1,
            -2,
            999_999_999,
            1_000_000_000,
            -1_000_000_001,
            (1 << 52) - 1,
            1 << 52,
            -(1 << 52),
            i128::from(u64::MAX),
            i128::from(i64::MIN),
        ] {
            check(ns);
        }
        proptest!(ProptestConfig::with_cases(20_000), |(ns in -(1i64 << 53)..(1i64 << 53))| check(i128::from(ns)));
        proptest!(ProptestConfig::with_cases(20_000), |(ns in -10_000_000_000i64..10_000_000_000)| check(i128::from(ns)));
    }

    /// docs/capture.md's block between `<!-- {marker} -->` and `<!-- /{marker} -->` is `want`;
    /// `RTTLAB_BLESS=1 cargo test docs_list_every` rewrites it.
    fn docs_block_is(marker: &str, want: &str) {
        // One file, three tests: blessing is read-modify-write, so one at a time.
        static DOCS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = DOCS.lock().unwrap_or_else(|e| e.into_inner());
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/capture.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (open, close) = (
            format!("<!-- {marker} -->\n"),
            format!("<!-- /{marker} -->"),
        );
        let start = text
            .find(&open)
            .unwrap_or_else(|| panic!("docs/capture.md has a {open} marker"))
            + open.len();
        let end = text
            .find(&close)
            .unwrap_or_else(|| panic!("docs/capture.md has a {close} marker"));
        if std::env::var_os("RTTLAB_BLESS").is_some() {
            std::fs::write(&path, format!("{}{}{}", &text[..start], want, &text[end..])).unwrap();
            return;
        }
        assert!(text[start..end] == *want, "docs/capture.md's {marker} differ from src/capture/tables.rs; run RTTLAB_BLESS=1 cargo test docs_list_every to regenerate them");
    }

    #[test]
    fn docs_list_every_sample_column() {
        docs_block_is("sample columns", &markdown());
    }

    #[test]
    fn docs_list_every_connection_column() {
        docs_block_is("connection columns", &conn_markdown());
    }

    #[test]
    fn docs_list_every_retransmission_column() {
        docs_block_is("retransmission columns", &rtx_markdown());
    }

    #[test]
    fn each_retransmission_column_has_its_declared_type() {
        for c in RTX_COLUMNS {
            assert_eq!((c.build)(&[]).data_type(), &c.ty.data_type(), "{}", c.name);
        }
        assert_eq!(rtx_batch(&[]).num_columns(), RTX_COLUMNS.len());
    }

    #[test]
    fn each_connection_column_gives_the_same_values_as_json_and_as_arrow() {
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
        use arrow_array::Array;
        let conns = crate::capture::testutil::two_connections();
        let batch = conn_batch(&conns);
        assert_eq!(batch.num_rows(), 2);
        for (k, col) in CONN_COLUMNS.iter().enumerate() {
            let a = batch.column(k);
            assert_eq!(a.data_type(), &col.ty.data_type(), "{}", col.name);
            for (i, c) in conns.iter().enumerate() {
                let want = (col.value)(c);
                let got = match col.ty {
                    ConnType::Count => Value::Count(a.as_primitive::<UInt64Type>().value(i)),
                    ConnType::OptInt => Value::OptInt(
                        a.is_valid(i)
                            .then(|| a.as_primitive::<Int64Type>().value(i) as u64),
                    ),
                    ConnType::Seconds => Value::Seconds(a.as_primitive::<Float64Type>().value(i)),
                    ConnType::OptSeconds => Value::OptSeconds(
                        a.is_valid(i)
                            .then(|| a.as_primitive::<Float64Type>().value(i)),
                    ),
                    ConnType::Flag => Value::Flag(a.as_boolean().value(i)),
                    ConnType::Text => Value::Text(a.as_string::<i32>().value(i).to_owned().into()),
                };
                assert_eq!(got, want, "{} of connection {i}", col.name);
            }
        }
        // Both kinds of missing value occur in the fixture, as nulls.
        assert!(
            batch.column_by_name("mss_fwd").unwrap().null_count() > 0
                && batch.column_by_name("handshake_rtt").unwrap().null_count() > 0
        );
    }

    #[test]
    fn every_sample_column_declares_how_parquet_stores_it() {
        let storage = |name: &str| columns(true).find(|c| c.name == name).unwrap().storage;
        assert_eq!(storage("capture"), Storage::Names);
        // Integers that rise in small steps as deltas; categories as dictionary codes.
        assert!(columns(true)
            .filter(|c| c.ty == Type::Int64)
            .all(|c| c.storage == Storage::Delta));
        assert!(columns(true)
            .filter(|c| c.ty == Type::Category)
            .all(|c| c.storage == Storage::Codes));
        assert!(columns(true)
            .filter(|c| matches!(c.ty, Type::Float64 | Type::Boolean))
            .all(|c| c.storage == Storage::Snappy));
    }
}
