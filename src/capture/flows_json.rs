//! `rttlab flows --json`'s connection records, written by the core: one compact JSON object per
//! connection, byte for byte what Python's `json.dumps(record)` printed for the connection
//! columns before (docs/capture.md, schema `rttlab.flows/1`), without a Python object per value.
//!
//! Python's conventions, kept exactly: `", "` and `": "` separators; floats as `repr(float)`
//! (the shortest digits that read back, fixed notation for decimal exponents −4 … 15, else
//! `1e-05`/`1e+16`, `.0` on whole numbers); strings with `ensure_ascii` (every character outside
//! space … `~` escaped, astral ones as surrogate pairs); a missing value as `null`.

use std::fmt::Write;
use std::net::IpAddr;

use super::ConnSummary;

/// `repr(x)` of a Python float (CPython's `float_repr_style = 'short'`: `format_float_short`
/// with mode 'r'). Rust's `{:e}` gives the same shortest round-trip digits; only the layout
/// differs. Non-finite values are the caller's business (JSON has none).
pub fn py_float(out: &mut String, x: f64) {
    let sci = format!("{x:e}"); // "-1.2345e-7", "5e0"
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let (sign, mantissa) = mantissa
        .strip_prefix('-')
        .map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    // CPython's decpt: the value is 0.DIGITS × 10^decpt.
    let decpt = exp + 1;
    out.push_str(sign);
    if x == 0.0 {
        out.push_str("0.0");
    } else if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(
            out,
            "e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.unsigned_abs()
        );
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', decpt.unsigned_abs() as usize));
        out.push_str(&digits);
    } else {
        let point = decpt as usize;
        if digits.len() <= point {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
}

/// A JSON string as `json.dumps` writes it (`ensure_ascii=True`).
pub fn py_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// An endpoint as the connection table shows it: `1.2.3.4:80`, `[::1]:80`.
pub fn endpoint(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(v) => format!("{v}:{port}"),
        IpAddr::V6(v) => format!("[{v}]:{port}"),
    }
}

struct Record<'a> {
    out: &'a mut String,
    first: bool,
}

impl Record<'_> {
    fn key(&mut self, name: &str) {
        self.out.push_str(if self.first { "{\"" } else { ", \"" });
        self.first = false;
        self.out.push_str(name);
        self.out.push_str("\": ");
    }
    fn int(&mut self, name: &str, v: u64) {
        self.key(name);
        let _ = write!(self.out, "{v}");
    }
    fn opt_int(&mut self, name: &str, v: Option<u64>) {
        match v {
            Some(v) => self.int(name, v),
            None => self.null(name),
        }
    }
    fn null(&mut self, name: &str) {
        self.key(name);
        self.out.push_str("null");
    }
    fn float(&mut self, name: &str, v: f64) {
        if !v.is_finite() {
            return self.null(name); // as clean() made NaN and infinities
        }
        self.key(name);
        py_float(self.out, v);
    }
    fn boolean(&mut self, name: &str, v: bool) {
        self.key(name);
        self.out.push_str(if v { "true" } else { "false" });
    }
    fn string(&mut self, name: &str, v: &str) {
        self.key(name);
        py_str(self.out, v);
    }
}

/// One connection's record, in the columns' order ([`super::tables::CONN_COLUMNS`]).
pub fn record(out: &mut String, c: &ConnSummary) {
    use super::tables::{Value, CONN_COLUMNS};
    let mut r = Record { out, first: true };
    for col in CONN_COLUMNS {
        match (col.value)(c) {
            Value::Count(v) => r.int(col.name, v),
            Value::OptInt(v) => r.opt_int(col.name, v),
            Value::Seconds(v) => r.float(col.name, v),
            Value::OptSeconds(Some(v)) => r.float(col.name, v),
            Value::OptSeconds(None) => r.null(col.name),
            Value::Flag(v) => r.boolean(col.name, v),
            Value::Text(v) => r.string(col.name, &v),
        }
    }
    r.out.push('}');
}

/// The `"flows": [...]` list's body and end as `rttlab flows --json` lays it out (one record per
/// line after `indent + "    "`, then `]` and the object's closing brace), handed to `sink` in
/// pieces of about `chunk` bytes so a capture with 300,000 connections never becomes one string.
pub fn write_records<E>(
    conns: &[ConnSummary],
    indent: &str,
    chunk: usize,
    mut sink: impl FnMut(&str) -> Result<(), E>,
) -> Result<(), E> {
    let mut buf = String::with_capacity(chunk + 4096);
    for (n, c) in conns.iter().enumerate() {
        if n > 0 {
            buf.push(',');
        }
        buf.push('\n');
        buf.push_str(indent);
        buf.push_str("    ");
        record(&mut buf, c);
        if buf.len() >= chunk {
            sink(&buf)?;
            buf.clear();
        }
    }
    if !conns.is_empty() {
        buf.push('\n');
        buf.push_str(indent);
        buf.push_str("  ");
    }
    buf.push_str("]\n");
    buf.push_str(indent);
    buf.push('}');
    sink(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(x: f64) -> String {
        let mut s = String::new();
        py_float(&mut s, x);
        s
    }

    #[test]
    fn floats_read_as_pythons_repr() {
        // Each right-hand side is what CPython 3.11 prints for repr(left).
        for (x, want) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.063986, "0.063986"),
            (427.137083, "427.137083"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (1e-5, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1e-9, "1e-09"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (1e16, "1e+16"),
            (1.2345e17, "1.2345e+17"),
            (1e100, "1e+100"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123.0, "123.0"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(repr(x), want, "{x:e}");
        }
    }

    #[test]
    fn strings_are_escaped_as_json_dumps_does_with_ensure_ascii() {
        let mut s = String::new();
        py_str(&mut s, "a\"b\\c\n\u{1}\u{7f}é€😀 ~");
        assert_eq!(s, r#""a\"b\\c\n\u0001\u007f\u00e9\u20ac\ud83d\ude00 ~""#);
    }

    #[test]
    fn an_empty_list_closes_on_the_same_line() {
        let mut out = String::new();
        write_records::<()>(&[], "  ", 1 << 16, |s| {
            out.push_str(s);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, "]\n  }");
    }
}
