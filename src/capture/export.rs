//! Sample batches on their way out of the core: filtered by method and connection, then as an
//! Arrow record batch (`rttlab samples -o FILE.parquet`, written by pyarrow) or as CSV text
//! (`rttlab samples`, `-o FILE.csv`). Columns, types and text are those of `rttlab.capture`'s
//! samples DataFrame written by pandas (docs/capture.md), built here so the command line never
//! goes through pandas: one pass over the columns instead of NumPy → pandas → Arrow per batch.

use super::{tables, Method, Samples};
use std::io::{self, Write};

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
        Self {
            methods: [true; 3],
            conns: None,
        }
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
            let mut v: Vec<u32> = conns
                .iter()
                .filter_map(|&c| u32::try_from(c).ok())
                .collect();
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
        self.methods[s.method[i] as usize]
            && self
                .conns
                .as_ref()
                .is_none_or(|c| c.binary_search(&s.conn[i]).is_ok())
    }

    /// The rows of `s` this filter keeps, in order.
    pub fn apply(&self, s: Samples) -> Samples {
        if self.keeps_all() {
            return s;
        }
        let mut out = Samples::default();
        for i in (0..s.len()).filter(|&i| self.keeps(&s, i)) {
            out.push(
                s.conn[i],
                s.dir[i],
                s.time[i],
                s.rtt[i],
                s.method[i],
                s.ambiguous[i],
                s.idle_echo[i],
                (s.seq_start[i], s.seq_end[i]),
                s.frame[i],
                s.ref_frame[i],
            );
        }
        out
    }
}

pub use super::tables::{csv_header, record_batch, schema};

/// A text field as Python's csv module writes it (QUOTE_MINIMAL): quoted, quotes doubled, when
/// it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
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
/// correctly, so the digits agree; [`tables::push_secs`] takes the integer shortcut where it is exact).
pub fn write_csv(out: &mut impl Write, s: &Samples, capture: Option<&str>) -> io::Result<()> {
    let prefix = capture.map(|c| csv_field(c) + ",").unwrap_or_default();
    // Rows are gathered into one buffer per batch and handed over in one write.
    let mut text: Vec<u8> = Vec::with_capacity(s.len() * (prefix.len() + 80));
    for i in 0..s.len() {
        text.extend_from_slice(prefix.as_bytes());
        tables::push_csv_row(&mut text, s, i);
    }
    out.write_all(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::testutil::two_sample_rows;

    #[test]
    fn csv_rows_read_as_pandas_writes_them() {
        let mut out = Vec::new();
        out.extend(csv_header(false).as_bytes());
        write_csv(&mut out, &two_sample_rows(), None).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "conn,direction,time,rtt,method,ambiguous,seq_start,seq_end,frame,ref_frame,idle_echo\n\
             0,fwd,1.500000000,0.012345678,seq,False,1,1449,3,2,False\n\
             7,rev,-0.000000002,0.000000001,ts,True,4294967295,5,9,4,True\n"
        );
    }

    #[test]
    fn csv_rows_equal_rusts_formatting_of_the_same_values() {
        use proptest::prelude::*;
        proptest!(ProptestConfig::with_cases(5_000), |(conn: u32, dir in 0u8..2, time: i64, rtt: u64, m in 0usize..3, amb: bool, idle: bool, seq: (u32, u32), frame: u64, ref_frame: u64)| {
            let mut s = Samples::default();
            s.push(conn, dir, time, rtt, Method::ALL[m], amb, idle, seq, frame, ref_frame);
            let mut out = Vec::new();
            write_csv(&mut out, &s, None).unwrap();
            // Spelt out independently of the declaration in tables.rs.
            let secs = |ns: i128| format!("{:.9}", ns as f64 / 1e9);
            let py_bool = |b: bool| if b { "True" } else { "False" };
            let want = format!(
                "{conn},{},{},{},{},{},{},{},{frame},{ref_frame},{}\n",
                ["fwd", "rev"][usize::from(dir)], secs(i128::from(time)), secs(i128::from(rtt)), Method::ALL[m].name(), py_bool(amb), seq.0, seq.1, py_bool(idle)
            );
            prop_assert_eq!(String::from_utf8(out).unwrap(), want);
        });
    }

    #[test]
    fn a_capture_name_with_a_comma_is_quoted_like_pythons_csv_module() {
        let mut out = Vec::new();
        write_csv(&mut out, &two_sample_rows(), Some("a,\"b\".pcap")).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .starts_with("\"a,\"\"b\"\".pcap\",0,fwd,"));
        assert!(csv_header(true).starts_with("capture,conn,"));
    }

    #[test]
    fn the_filter_keeps_the_methods_and_connections_asked_for_in_order() {
        let s = two_sample_rows();
        assert_eq!(Filter::new(None, &[]).apply(s.clone()), s);
        let ts = Filter::new(Some(&[Method::Ts]), &[]).apply(s.clone());
        assert_eq!(ts.conn, vec![7]);
        let conn0 = Filter::new(None, &[0, -1, 1 << 40]).apply(s.clone());
        assert_eq!(conn0.conn, vec![0]);
        assert!(Filter::new(Some(&[Method::Syn]), &[]).apply(s).is_empty());
    }

    #[test]
    fn the_record_batch_has_the_dataframes_types_and_values() {
        use arrow_array::types::Int8Type;
        use arrow_array::{Array, DictionaryArray, Float64Array};
        let b = record_batch(&two_sample_rows(), Some("x.pcap"));
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.schema().field(0).name(), "capture");
        assert_eq!(
            b.schema().field(2).data_type(),
            &tables::Type::Category.data_type()
        );
        let time = b
            .column_by_name("time")
            .unwrap()
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap();
        assert_eq!(time.values().to_vec(), vec![1.5, -2e-9]);
        let method = b
            .column_by_name("method")
            .unwrap()
            .as_any()
            .downcast_ref::<DictionaryArray<Int8Type>>()
            .unwrap();
        assert_eq!(method.keys().values().to_vec(), vec![0, 1]);
        assert_eq!(b.column_by_name("seq_start").unwrap().len(), 2);
    }
}
