//! Sample rows as text (CSV, JSON lines), written straight from the columns: `rttlab samples`
//! streams a capture's samples to a file or a pipe without building any table in Python.

use super::{export, tables, Method, Samples};
use std::io::Write;

/// Text formats of [`write_rows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Csv,
    JsonLines,
}

/// Which rows to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub methods: Option<Vec<Method>>,
    pub conns: Option<Vec<u32>>,
}

impl Filter {
    fn keep(&self, s: &Samples, i: usize) -> bool {
        self.methods.as_ref().is_none_or(|m| m.contains(&s.method[i])) && self.conns.as_ref().is_none_or(|c| c.contains(&s.conn[i]))
    }
}

/// CSV header line (with a leading `capture` column when `capture` is given).
pub fn csv_header(out: &mut Vec<u8>, capture: Option<&str>) {
    out.extend_from_slice(tables::csv_header(capture.is_some()).as_bytes());
}

/// A JSON string (quotes, backslashes and control characters escaped).
fn json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Append the rows of `s` that `filter` keeps; returns how many. Cells are written as
/// [`tables::Cell`] says: CSV booleans `True`/`False` (as pandas writes them), JSON ones
/// `true`/`false`, seconds with nine decimals in both.
pub fn write_rows(out: &mut Vec<u8>, s: &Samples, format: TextFormat, filter: &Filter, capture: Option<&str>) -> usize {
    let csv_prefix = capture.map(|c| export::csv_field(c) + ",").unwrap_or_default();
    let mut json_prefix = b"{".to_vec();
    if let Some(c) = capture {
        json_prefix.extend_from_slice(b"\"capture\":");
        json_string(&mut json_prefix, c);
        json_prefix.push(b',');
    }
    let mut n = 0;
    for i in 0..s.len() {
        if !filter.keep(s, i) {
            continue;
        }
        n += 1;
        match format {
            TextFormat::Csv => {
                out.extend_from_slice(csv_prefix.as_bytes());
                tables::push_csv_row(out, s, i);
            }
            TextFormat::JsonLines => {
                out.extend_from_slice(&json_prefix);
                tables::push_json_fields(out, s, i);
                out.extend_from_slice(b"}\n");
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> Samples {
        let mut s = Samples::default();
        s.push(0, 0, 1_500_000_000, 120_000_000, Method::Seq, false, false, (1, 1001), 6, 5);
        s.push(3, 1, -1_500, 7, Method::Ts, true, true, (9, 9), 8, 7);
        s
    }

    #[test]
    fn csv_rows_are_exact_to_the_nanosecond_and_filtered() {
        let mut out = Vec::new();
        csv_header(&mut out, None);
        assert_eq!(write_rows(&mut out, &two(), TextFormat::Csv, &Filter::default(), None), 2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "conn,direction,time,rtt,method,ambiguous,seq_start,seq_end,frame,ref_frame,idle_echo\n0,fwd,1.500000000,0.120000000,seq,False,1,1001,6,5,False\n3,rev,-0.000001500,0.000000007,ts,True,9,9,8,7,True\n"
        );
        let mut out = Vec::new();
        let only_ts = Filter { methods: Some(vec![Method::Ts]), conns: None };
        assert_eq!(write_rows(&mut out, &two(), TextFormat::Csv, &only_ts, Some("a,b.pcap")), 1);
        assert!(out.starts_with(b"\"a,b.pcap\",3,rev,"));
    }

    #[test]
    fn json_lines_are_one_object_per_row() {
        let mut out = Vec::new();
        write_rows(&mut out, &two(), TextFormat::JsonLines, &Filter { methods: None, conns: Some(vec![0]) }, Some("x\"y"));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"capture\":\"x\\\"y\",\"conn\":0,\"direction\":\"fwd\",\"time\":1.500000000,\"rtt\":0.120000000,\"method\":\"seq\",\"ambiguous\":false,\"seq_start\":1,\"seq_end\":1001,\"frame\":6,\"ref_frame\":5,\"idle_echo\":false}\n"
        );
    }
}
