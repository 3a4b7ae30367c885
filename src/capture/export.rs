//! Sample batches on their way out of the core: filtered by method and connection, then as an
//! Arrow record batch (`rttlab samples -o FILE.parquet`, written by pyarrow) or as CSV text
//! (`rttlab samples`, `-o FILE.csv`). Columns, types and text are those of `rttlab.capture`'s
//! samples DataFrame written by pandas (docs/capture.md), built here so the command line never
//! goes through pandas: one pass over the columns instead of NumPy → pandas → Arrow per batch.

use std::io::{self, Write};
use std::sync::Arc;

use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, Int8Array, LargeStringArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use super::{Method, Samples};

/// Which rows to keep: a set of methods and, optionally, of connection ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// Indexed by `Method as usize`.
    pub methods: [bool; 3],
    /// Sorted connection ids; `None` keeps every connection.
    pub conns: Option<Vec<u32>>,
}

impl Default for Filter {
    fn default() -> Self {
        Self { methods: [true; 3], conns: None }
    }
}

impl Filter {
    /// Only `methods` (every method when `None`) of the connections `conns` (every one when
    /// empty; ids outside u32 match nothing).
    pub fn new(methods: Option<&[Method]>, conns: &[i64]) -> Self {
        let mut m = [methods.is_none(); 3];
        for &x in methods.unwrap_or_default() {
            m[x as usize] = true;
        }
        let conns = (!conns.is_empty()).then(|| {
            let mut v: Vec<u32> = conns.iter().filter_map(|&c| u32::try_from(c).ok()).collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        Self { methods: m, conns }
    }

    fn keeps_all(&self) -> bool {
        self.methods == [true; 3] && self.conns.is_none()
    }

    fn keeps(&self, s: &Samples, i: usize) -> bool {
        self.methods[s.method[i] as usize] && self.conns.as_ref().is_none_or(|c| c.binary_search(&s.conn[i]).is_ok())
    }

    /// The rows of `s` this filter keeps, in order.
    pub fn apply(&self, s: Samples) -> Samples {
        if self.keeps_all() {
            return s;
        }
        let mut out = Samples::default();
        for i in (0..s.len()).filter(|&i| self.keeps(&s, i)) {
            out.push(s.conn[i], s.dir[i], s.time[i], s.rtt[i], s.method[i], s.ambiguous[i], s.idle_echo[i], (s.seq_start[i], s.seq_end[i]), s.frame[i], s.ref_frame[i]);
        }
        out
    }
}

const DIRECTIONS: [&str; 2] = ["fwd", "rev"];

fn category() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}

/// The samples table's schema (with a leading `capture` column naming the file when several
/// are written together). Every field is nullable, as pyarrow makes them from pandas.
pub fn schema(with_capture: bool) -> Schema {
    let mut fields = Vec::with_capacity(12);
    if with_capture {
        fields.push(Field::new("capture", DataType::LargeUtf8, true));
    }
    fields.extend([
        Field::new("conn", DataType::Int64, true),
        Field::new("direction", category(), true),
        Field::new("time", DataType::Float64, true),
        Field::new("rtt", DataType::Float64, true),
        Field::new("method", category(), true),
        Field::new("ambiguous", DataType::Boolean, true),
        Field::new("seq_start", DataType::Int64, true),
        Field::new("seq_end", DataType::Int64, true),
        Field::new("frame", DataType::Int64, true),
        Field::new("ref_frame", DataType::Int64, true),
        Field::new("idle_echo", DataType::Boolean, true),
    ]);
    Schema::new(fields)
}

/// Seconds as the DataFrame has them: ns / 1e9 in f64.
fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

fn codes(codes: impl Iterator<Item = u8>, names: &[&str]) -> ArrayRef {
    let keys = Int8Array::from_iter_values(codes.map(|c| c as i8));
    let values = Arc::new(StringArray::from(names.to_vec()));
    Arc::new(DictionaryArray::<Int8Type>::try_new(keys, values).expect("codes index their name list"))
}

/// One batch of samples as Arrow, in [`schema`].
pub fn record_batch(s: &Samples, capture: Option<&str>) -> RecordBatch {
    let int64 = |v: &mut dyn Iterator<Item = i64>| -> ArrayRef { Arc::new(Int64Array::from_iter_values(v)) };
    let methods: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(12);
    if let Some(name) = capture {
        columns.push(Arc::new(LargeStringArray::from_iter_values(std::iter::repeat_n(name, s.len()))));
    }
    columns.extend([
        int64(&mut s.conn.iter().map(|&c| i64::from(c))),
        codes(s.dir.iter().copied(), &DIRECTIONS),
        Arc::new(Float64Array::from_iter_values(s.time.iter().map(|&t| secs(t)))) as ArrayRef,
        Arc::new(Float64Array::from_iter_values(s.rtt.iter().map(|&r| r as f64 / 1e9))),
        codes(s.method.iter().map(|&m| m as u8), &methods),
        Arc::new(BooleanArray::from(s.ambiguous.clone())),
        int64(&mut s.seq_start.iter().map(|&x| i64::from(x))),
        int64(&mut s.seq_end.iter().map(|&x| i64::from(x))),
        int64(&mut s.frame.iter().map(|&x| x as i64)),
        int64(&mut s.ref_frame.iter().map(|&x| x as i64)),
        Arc::new(BooleanArray::from(s.idle_echo.clone())),
    ]);
    RecordBatch::try_new(Arc::new(schema(capture.is_some())), columns).expect("columns match the schema")
}

/// The CSV header line (pandas' `to_csv(index=False)`).
pub fn csv_header(with_capture: bool) -> String {
    let names: Vec<String> = schema(with_capture).fields().iter().map(|f| f.name().clone()).collect();
    names.join(",") + "\n"
}

/// A text field as Python's csv module writes it (QUOTE_MINIMAL): quoted, quotes doubled, when
/// it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// Below this many nanoseconds (2^52 ns ≈ 52 days) `%.9f` of `ns as f64 / 1e9` is exactly the
/// integer's digits with the point moved: the quotient is the double nearest ns·10⁻⁹ (ns is exact
/// in f64, division rounds correctly), so it lies within half an ulp — below 2²³ s at most
/// 2⁻³¹ s ≈ 0.47 ns < 0.5 ns — of a number with nine decimals, and rounding to nine decimals
/// returns that number. Larger values format the double.
const EXACT_NS: u64 = 1 << 52;

/// `{:.9}` of `ns as f64 / 1e9` (C's `%.9f`, pandas' `float_format="%.9f"`), from the integer
/// where that is provably the same text (≈ 10× faster than formatting the double).
fn push_secs(line: &mut Vec<u8>, ns: i128) {
    let magnitude = ns.unsigned_abs();
    if magnitude >= u128::from(EXACT_NS) {
        let _ = write!(line, "{:.9}", ns as f64 / 1e9);
        return;
    }
    if ns < 0 {
        line.push(b'-');
    }
    // Below 2^52 both parts fit u64.
    let (whole, frac) = ((magnitude / 1_000_000_000) as u64, (magnitude % 1_000_000_000) as u32);
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
fn push_int(line: &mut Vec<u8>, v: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// CSV text to a writer, batch by batch ([`write_csv`]), flushed at the end: what
/// `rttlab samples` writes, here or on a writer thread ([`super::background::SampleSink`]).
pub struct CsvRows<W: Write + Send + 'static>(pub W);

impl<W: Write + Send + 'static> super::background::SampleWriter for CsvRows<W> {
    fn write(&mut self, samples: &Samples, capture: Option<&str>) -> io::Result<()> {
        write_csv(&mut self.0, samples, capture)
    }

    fn finish(mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The rows of one batch as CSV, exactly as pandas writes the DataFrame with
/// `float_format="%.9f"` (Rust's `{:.9}` and C's `%.9f` both round the exact binary value
/// correctly, so the digits agree; [`push_secs`] takes the integer shortcut where it is exact).
pub fn write_csv(out: &mut impl Write, s: &Samples, capture: Option<&str>) -> io::Result<()> {
    let prefix = capture.map(|c| csv_field(c) + ",").unwrap_or_default();
    // Rows are gathered into one buffer per batch and handed over in one write.
    let mut text: Vec<u8> = Vec::with_capacity(s.len() * (prefix.len() + 80));
    for i in 0..s.len() {
        let line = &mut text;
        line.extend_from_slice(prefix.as_bytes());
        push_int(line, s.conn[i]);
        line.push(b',');
        line.extend_from_slice(DIRECTIONS[usize::from(s.dir[i] & 1)].as_bytes());
        line.push(b',');
        push_secs(line, i128::from(s.time[i]));
        line.push(b',');
        push_secs(line, i128::from(s.rtt[i]));
        for field in [s.method[i].name(), py_bool(s.ambiguous[i])] {
            line.push(b',');
            line.extend_from_slice(field.as_bytes());
        }
        for v in [u64::from(s.seq_start[i]), u64::from(s.seq_end[i]), s.frame[i], s.ref_frame[i]] {
            line.push(b',');
            push_int(line, v);
        }
        line.push(b',');
        line.extend_from_slice(py_bool(s.idle_echo[i]).as_bytes());
        line.push(b'\n');
    }
    out.write_all(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_rows() -> Samples {
        let mut s = Samples::default();
        s.push(0, 0, 1_500_000_000, 12_345_678, Method::Seq, false, false, (1, 1449), 3, 2);
        s.push(7, 1, -2, 1, Method::Ts, true, true, (u32::MAX, 5), 9, 4);
        s
    }

    #[test]
    fn csv_rows_read_as_pandas_writes_them() {
        let mut out = Vec::new();
        out.extend(csv_header(false).as_bytes());
        write_csv(&mut out, &two_rows(), None).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "conn,direction,time,rtt,method,ambiguous,seq_start,seq_end,frame,ref_frame,idle_echo\n\
             0,fwd,1.500000000,0.012345678,seq,False,1,1449,3,2,False\n\
             7,rev,-0.000000002,0.000000001,ts,True,4294967295,5,9,4,True\n"
        );
    }

    #[test]
    fn seconds_from_the_integer_equal_formatting_the_double() {
        use proptest::prelude::*;
        let check = |ns: i128| {
            let mut fast = Vec::new();
            push_secs(&mut fast, ns);
            assert_eq!(String::from_utf8(fast).unwrap(), format!("{:.9}", ns as f64 / 1e9), "{ns}");
        };
        for ns in [0, 1, -1, -2, 999_999_999, 1_000_000_000, -1_000_000_001, (1 << 52) - 1, 1 << 52, -(1 << 52), i128::from(u64::MAX), i128::from(i64::MIN)] {
            check(ns);
        }
        proptest!(ProptestConfig::with_cases(20_000), |(ns in -(1i64 << 53)..(1i64 << 53))| check(i128::from(ns)));
        proptest!(ProptestConfig::with_cases(20_000), |(ns in -10_000_000_000i64..10_000_000_000)| check(i128::from(ns)));
    }

    #[test]
    fn csv_rows_equal_rusts_formatting_of_the_same_values() {
        use proptest::prelude::*;
        proptest!(ProptestConfig::with_cases(5_000), |(conn: u32, dir in 0u8..2, time: i64, rtt: u64, m in 0usize..3, amb: bool, idle: bool, seq: (u32, u32), frame: u64, ref_frame: u64)| {
            let mut s = Samples::default();
            s.push(conn, dir, time, rtt, Method::ALL[m], amb, idle, seq, frame, ref_frame);
            let mut out = Vec::new();
            write_csv(&mut out, &s, None).unwrap();
            let secs = |ns: i128| format!("{:.9}", ns as f64 / 1e9);
            let want = format!(
                "{conn},{},{},{},{},{},{},{},{frame},{ref_frame},{}\n",
                DIRECTIONS[usize::from(dir)], secs(i128::from(time)), secs(i128::from(rtt)), Method::ALL[m].name(), py_bool(amb), seq.0, seq.1, py_bool(idle)
            );
            prop_assert_eq!(String::from_utf8(out).unwrap(), want);
        });
    }

    #[test]
    fn a_capture_name_with_a_comma_is_quoted_like_pythons_csv_module() {
        let mut out = Vec::new();
        write_csv(&mut out, &two_rows(), Some("a,\"b\".pcap")).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("\"a,\"\"b\"\".pcap\",0,fwd,"));
        assert!(csv_header(true).starts_with("capture,conn,"));
    }

    #[test]
    fn the_filter_keeps_the_methods_and_connections_asked_for_in_order() {
        let s = two_rows();
        assert_eq!(Filter::new(None, &[]).apply(s.clone()), s);
        let ts = Filter::new(Some(&[Method::Ts]), &[]).apply(s.clone());
        assert_eq!(ts.conn, vec![7]);
        let conn0 = Filter::new(None, &[0, -1, 1 << 40]).apply(s.clone());
        assert_eq!(conn0.conn, vec![0]);
        assert!(Filter::new(Some(&[Method::Syn]), &[]).apply(s).is_empty());
    }

    #[test]
    fn the_record_batch_has_the_dataframes_types_and_values() {
        use arrow_array::Array;
        let b = record_batch(&two_rows(), Some("x.pcap"));
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.schema().field(0).name(), "capture");
        assert_eq!(b.schema().field(2).data_type(), &category());
        let time = b.column_by_name("time").unwrap().as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(time.values().to_vec(), vec![1.5, -2e-9]);
        let method = b.column_by_name("method").unwrap().as_any().downcast_ref::<DictionaryArray<Int8Type>>().unwrap();
        assert_eq!(method.keys().values().to_vec(), vec![0, 1]);
        assert_eq!(b.column_by_name("seq_start").unwrap().len(), 2);
    }
}
