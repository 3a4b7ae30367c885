//! RTT series files: one RTT per line (`../shared/rtt-series/*.csv` style, milliseconds by
//! default), or a CSV with a header naming `time` and `rtt` columns (seconds by default).
//! Headerless series get arrival times as the running sum of the RTTs: each request leaves when
//! the previous reply arrives, as in the request/response series they come from.

use crate::time::{Nanos, MS, SEC, US};
use std::fmt;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Milliseconds,
    Microseconds,
}

impl Unit {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "s" => Some(Self::Seconds),
            "ms" => Some(Self::Milliseconds),
            "us" | "µs" => Some(Self::Microseconds),
            _ => None,
        }
    }

    /// ns per unit as a power of ten: 10^9, 10^6, 10^3.
    fn exponent(self) -> u32 {
        match self {
            Self::Seconds => 9,
            Self::Milliseconds => 6,
            Self::Microseconds => 3,
        }
    }

    fn nanos(self) -> f64 {
        match self {
            Self::Seconds => SEC as f64,
            Self::Milliseconds => MS as f64,
            Self::Microseconds => US as f64,
        }
    }
}

/// Samples as parallel columns: arrival time and RTT, both in ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub times: Vec<Nanos>,
    pub rtts: Vec<Nanos>,
}

/// One clear line: `path:line: field 'rtt': reason`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct SeriesError {
    pub path: String,
    pub line: Option<u64>,
    pub field: Option<String>,
    pub reason: String,
}

impl fmt::Display for SeriesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field '{field}'")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Largest time or RTT accepted, in ns (2^62 ns ≈ 146 years): far beyond any real value, and
/// sums of two still fit in `u64`.
pub const MAX_NS: Nanos = 1 << 62;

/// Longest piece of a bad cell echoed in an error (a 10 MB cell must not make a 10 MB line).
const ECHO_MAX: usize = 40;

/// `text` quoted for an error message, cut to [`ECHO_MAX`] characters with its full length noted.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(ECHO_MAX) {
        None => format!("'{text}'"),
        Some((cut, _)) => format!("'{}…' ({} bytes)", &text[..cut], text.len()),
    }
}

pub fn read(path: &Path, unit: Option<Unit>) -> Result<Series, SeriesError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| SeriesError {
        path: name.clone(),
        line: None,
        field: None,
        reason: io_reason(&e),
    })?;
    parse(&bytes, &name, unit)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ if e.raw_os_error() == Some(21) => "is a directory, not a file".into(),
        _ => e.to_string(),
    }
}

/// Largest value [`plain_ns_line`] reads itself: below 2^51 ns (26 days) the float path's
/// `round(parse(x) · 10^e)` is the exact decimal value, which this computes in integers.
const PLAIN_MAX_NS: u64 = 1 << 51;

/// [`plain_ns_line`] of one whole line.
#[cfg(test)]
fn plain_ns(line: &[u8], exponent: u32) -> Option<u64> {
    plain_ns_line(line, 0, exponent)
        .filter(|&(_, next)| next >= line.len())
        .map(|(ns, _)| ns)
}

/// The fast path for the common line of a one-column series, a plain decimal such as `58.123`
/// (ASCII digits, at most one `.`, at most `exponent` fractional digits, spaces around): its
/// value in ns (10^`exponent` ns per unit), exactly. None for anything else — signs, exponents,
/// comments, more fractional digits, zero, values from 2^51 ns — which the general parser then
/// reads (and reports) as before. Both give the same integer: with at most `exponent`
/// fractional digits the value is a whole number N of ns, and for N < 2^51 the float product
/// parse(x)·10^e is within N·2^-52 < 0.5 of N, so rounding it gives N.
///
/// The line is the one of `bytes` that starts at `start`, read up to its `\n` (or `\r\n`, or
/// the end); returns the value and where the next line starts.
#[inline]
fn plain_ns_line(bytes: &[u8], start: usize, exponent: u32) -> Option<(u64, usize)> {
    let mut i = start;
    let n = bytes.len();
    let line = bytes;
    while i < n && (line[i] == b' ' || line[i] == b'\t') {
        i += 1;
    }
    let mut whole: u64 = 0;
    let mut digits = 0;
    while i < n && line[i].is_ascii_digit() {
        whole = whole
            .checked_mul(10)?
            .checked_add(u64::from(line[i] - b'0'))?;
        digits += 1;
        i += 1;
    }
    let mut frac: u64 = 0;
    let mut frac_digits = 0;
    if i < n && line[i] == b'.' {
        i += 1;
        while i < n && line[i].is_ascii_digit() {
            frac_digits += 1;
            if frac_digits > exponent {
                return None;
            }
            frac = frac * 10 + u64::from(line[i] - b'0');
            i += 1;
        }
    }
    while i < n && (line[i] == b' ' || line[i] == b'\t') {
        i += 1;
    }
    if i < n && line[i] == b'\r' && i + 1 < n && line[i + 1] == b'\n' {
        i += 1;
    }
    let next = match line.get(i) {
        None => n,
        Some(b'\n') => i + 1,
        Some(_) => return None,
    };
    if digits + frac_digits == 0 {
        return None;
    }
    let ns = whole
        .checked_mul(10u64.pow(exponent))?
        .checked_add(frac * 10u64.pow(exponent - frac_digits))?;
    (ns > 0 && ns < PLAIN_MAX_NS).then_some((ns, next))
}

/// A one-column series longer than this is read by two threads: the second half's lines on
/// the fast path ([`plain_column`]) while the first thread reads the first half.
const PARALLEL_MIN: usize = 1 << 20;

/// The RTTs of `tail` (whole lines of a one-column series) if every line is a plain decimal
/// ([`plain_ns_line`]) and their sum stays within [`MAX_NS`]; None otherwise — the caller then
/// reads those lines itself, so errors name their line exactly as a sequential read does.
fn plain_column(tail: &[u8], exponent: u32) -> Option<Vec<Nanos>> {
    let mut rtts = Vec::with_capacity(tail.iter().filter(|&&b| b == b'\n').count() + 1);
    let (mut pos, mut sum) = (0usize, 0u64);
    while pos < tail.len() {
        let (ns, next) = plain_ns_line(tail, pos, exponent)?;
        sum = sum.checked_add(ns).filter(|&s| s <= MAX_NS)?;
        rtts.push(ns);
        pos = next;
    }
    Some(rtts)
}

/// Parse series text. `name` labels errors.
pub fn parse(bytes: &[u8], name: &str, unit: Option<Unit>) -> Result<Series, SeriesError> {
    parse_with(bytes, name, unit, PARALLEL_MIN)
}

/// [`parse`], reading the second half on another thread when more than `parallel_min` bytes of
/// a one-column series remain (the result is the same either way: tests compare them).
fn parse_with(
    bytes: &[u8],
    name: &str,
    unit: Option<Unit>,
    parallel_min: usize,
) -> Result<Series, SeriesError> {
    let err = |line: Option<u64>, field: Option<&str>, reason: String| SeriesError {
        path: name.into(),
        line,
        field: field.map(Into::into),
        reason,
    };
    // A UTF-8 byte-order mark, as spreadsheets write it, is not part of the first header name.
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    // Two numeric columns at most: a line splitter gives exact line numbers for errors, which
    // is all a CSV library would add here.
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64
            + 1;
        err(Some(line), None, "not a text file (invalid UTF-8)".into())
    })?;
    let mut columns: Option<(Option<usize>, usize)> = None; // (time column, rtt column)
    let mut unit_scale = unit.unwrap_or(Unit::Milliseconds).nanos();
    let mut series = Series::default();
    let mut clock: Nanos = 0;
    let plain_exponent = unit.unwrap_or(Unit::Milliseconds).exponent();
    // At most one sample per line: reserved once, so the columns never move while they grow.
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    series.times.reserve(lines);
    series.rtts.reserve(lines);
    // Lines as `str::lines` gives them (split at '\n', a trailing '\r' dropped), walked by byte
    // offset so that the fast path reads a line and finds its end in one pass.
    let all = text.as_bytes();
    let (mut pos, mut next_index) = (0usize, 0usize);
    std::thread::scope(|scope| -> Result<(), SeriesError> {
        // Lines are read up to `stop`: the end, or where the second thread's half begins.
        let mut stop = all.len();
        let mut second: Option<(usize, std::thread::ScopedJoinHandle<'_, Option<Vec<Nanos>>>)> =
            None;
        loop {
            while pos < stop {
                if second.is_none()
                    && stop == all.len()
                    && columns == Some((None, 0))
                    && all.len() - pos > parallel_min
                {
                    // Split at the line end nearest the middle of what remains.
                    let middle = pos + (all.len() - pos) / 2;
                    if let Some(k) = all[middle..].iter().position(|&b| b == b'\n') {
                        let mid = middle + k + 1;
                        let tail = &all[mid..];
                        second =
                            Some((mid, scope.spawn(move || plain_column(tail, plain_exponent))));
                        stop = mid;
                    }
                }
                // One RTT per line, as most lines of a long series are: read in integers (the
                // same values as the general path below, see `plain_ns_line`).
                if columns == Some((None, 0)) {
                    if let Some((rtt_ns, next)) = plain_ns_line(all, pos, plain_exponent) {
                        if let Some(c) = clock.checked_add(rtt_ns).filter(|&c| c <= MAX_NS) {
                            clock = c;
                            series.times.push(clock);
                            series.rtts.push(rtt_ns);
                            pos = next;
                            next_index += 1;
                            continue;
                        }
                    }
                }
                let end = all[pos..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(all.len(), |k| pos + k);
                let raw = text[pos..end].strip_suffix('\r').unwrap_or(&text[pos..end]);
                let index = next_index;
                pos = end + 1;
                next_index += 1;
                let line = Some(index as u64 + 1);
                let content = raw.split('#').next().unwrap_or("").trim();
                if content.is_empty() {
                    continue;
                }
                // Fields are looked up in place (no per-line allocation: parsing is most of the cost of
                // reading a million-line series).
                let field = |col: usize| content.split(',').nth(col).map(str::trim);
                let (time_col, rtt_col) = match columns {
                    Some(c) => c,
                    None => {
                        let record: Vec<&str> = content.split(',').map(str::trim).collect();
                        let first = record[0];
                        if first.parse::<f64>().is_ok()
                            || record.len() == 1 && !first.chars().any(|c| c.is_ascii_alphabetic())
                        {
                            columns = Some((None, 0));
                            (None, 0)
                        } else {
                            // A header: find the columns by name.
                            let find = |want: &str| {
                                record.iter().position(|h| h.eq_ignore_ascii_case(want))
                            };
                            let rtt = find("rtt").ok_or_else(|| err(line, None, format!("header {} has no 'rtt' column (expected 'time,rtt', or one RTT per line)", quoted(&record.join(",")))))?;
                            let time = find("time");
                            columns = Some((time, rtt));
                            unit_scale = unit.unwrap_or(Unit::Seconds).nanos();
                            continue;
                        }
                    }
                };
                let cell = |col: usize, name: &str| -> Result<f64, SeriesError> {
                    let text = field(col).ok_or_else(|| err(line, Some(name), "missing".into()))?;
                    let x: f64 = text.parse().map_err(|_| {
                        err(
                            line,
                            Some(name),
                            format!("{} is not a number", quoted(text)),
                        )
                    })?;
                    if !x.is_finite() {
                        return Err(err(
                            line,
                            Some(name),
                            format!("{} is not a finite number", quoted(text)),
                        ));
                    }
                    Ok(x)
                };
                let rtt = cell(rtt_col, "rtt")?;
                if rtt <= 0.0 {
                    return Err(err(
                        line,
                        Some("rtt"),
                        format!("an RTT must be positive, got {rtt}"),
                    ));
                }
                let rtt_ns = (rtt * unit_scale).round();
                if rtt_ns < 1.0 || rtt_ns > MAX_NS as f64 {
                    return Err(err(
                        line,
                        Some("rtt"),
                        format!("{rtt:e} is outside the representable range (1 ns .. 146 years)"),
                    ));
                }
                let rtt_ns = rtt_ns as Nanos;
                let time_ns = match time_col {
                    Some(col) => {
                        let t = cell(col, "time")?;
                        if t < 0.0 {
                            return Err(err(
                                line,
                                Some("time"),
                                format!("a time must not be negative, got {t}"),
                            ));
                        }
                        let t_ns = (t * SEC as f64).round();
                        // Checked, not clamped: `as` saturates, so 1e300 s would silently become 584 years.
                        if t_ns > MAX_NS as f64 {
                            return Err(err(
                                line,
                                Some("time"),
                                format!(
                                    "{t:e} s is outside the representable range (0 .. 146 years)"
                                ),
                            ));
                        }
                        let t_ns = t_ns as Nanos;
                        if series.times.last().is_some_and(|&prev| t_ns < prev) {
                            return Err(err(
                                line,
                                Some("time"),
                                format!("times must not decrease ({t} s comes after a later time)"),
                            ));
                        }
                        t_ns
                    }
                    None => {
                        clock = clock.checked_add(rtt_ns).filter(|&c| c <= MAX_NS).ok_or_else(|| err(line, Some("rtt"), "the running sum of RTTs (the implied arrival time) exceeds 146 years".into()))?;
                        clock
                    }
                };
                series.times.push(time_ns);
                series.rtts.push(rtt_ns);
            }
            // The first half is read: take the second thread's lines, or read them here.
            let Some((mid, handle)) = second.take() else {
                break;
            };
            let sum_fits = |r: &Vec<Nanos>| {
                clock
                    .checked_add(r.iter().sum())
                    .is_some_and(|end| end <= MAX_NS)
            };
            if let Some(rtts) = handle.join().ok().flatten().filter(sum_fits) {
                for &rtt in &rtts {
                    clock += rtt;
                    series.times.push(clock);
                }
                series.rtts.extend_from_slice(&rtts);
                break;
            }
            (pos, stop) = (mid, all.len());
        }
        Ok(())
    })?;
    if series.rtts.is_empty() {
        return Err(err(
            None,
            None,
            "no RTT samples (the file is empty or holds only a header/comments)".into(),
        ));
    }
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Series {
        parse(text.as_bytes(), "t.csv", None).unwrap()
    }

    fn fails(text: &str) -> String {
        parse(text.as_bytes(), "t.csv", None)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn one_column_is_milliseconds_with_times_as_running_sums() {
        let s = ok("100\n200.5\n\n50\n");
        assert_eq!(s.rtts, vec![100 * MS, 200_500_000, 50 * MS]);
        assert_eq!(s.times, vec![100 * MS, 300_500_000, 350_500_000]);
    }

    #[test]
    fn a_time_rtt_header_means_seconds() {
        let s = ok("time,rtt\n0.5,0.1\n1.0,0.25\n");
        assert_eq!(s.times, vec![500 * MS, SEC]);
        assert_eq!(s.rtts, vec![100 * MS, 250 * MS]);
        let s = ok("rtt,time\n0.1,2\n");
        assert_eq!((s.times[0], s.rtts[0]), (2 * SEC, 100 * MS));
    }

    proptest::proptest! {
        /// The integer fast path reads every plain decimal exactly as the float path does.
        #[test]
        fn plain_decimals_read_the_same_on_both_paths(whole in 0u64..100_000_000, frac in 0u64..1_000_000_000, digits in 0u32..10, unit in 0usize..3) {
            let unit = [Unit::Seconds, Unit::Milliseconds, Unit::Microseconds][unit];
            let text = if digits == 0 { format!("{whole}") } else { format!("{whole}.{:0width$}", frac % 10u64.pow(digits), width = digits as usize) };
            let float = (text.parse::<f64>().unwrap() * unit.nanos()).round();
            match plain_ns(text.as_bytes(), unit.exponent()) {
                Some(ns) => proptest::prop_assert_eq!(ns as f64, float, "{}", text),
                None => proptest::prop_assert!(float < 1.0 || float >= PLAIN_MAX_NS as f64 || digits > unit.exponent(), "{} fell back", text),
            }
        }
    }

    #[test]
    fn the_fast_path_leaves_everything_unusual_to_the_general_one() {
        for text in [
            "",
            ".",
            "-1",
            "+1",
            "1e3",
            "1.2.3",
            "1,2",
            "0",
            "0.000",
            "12 # c",
            "nan",
            "1.1234567",
        ] {
            assert_eq!(plain_ns(text.as_bytes(), 6), None, "{text:?}");
        }
        assert_eq!(plain_ns(b" 58.123 ", 6), Some(58_123_000));
        assert_eq!(plain_ns(b".5", 6), Some(500_000));
        assert_eq!(plain_ns(b"7.", 3), Some(7_000));
        // A series mixing both paths: the running sum continues across them.
        let s = ok("1.5\n2e0\n3\n");
        assert_eq!(s.rtts, vec![1_500_000, 2 * MS, 3 * MS]);
        assert_eq!(s.times, vec![1_500_000, 3_500_000, 6_500_000]);
    }

    #[test]
    fn the_unit_can_be_chosen() {
        let s = parse(b"1.5\n", "t", Some(Unit::Seconds)).unwrap();
        assert_eq!(s.rtts, vec![1500 * MS]);
    }

    #[test]
    fn bad_cells_are_named_by_line_and_field() {
        assert_eq!(
            fails("100\nabc\n"),
            "t.csv:2: field 'rtt': 'abc' is not a number"
        );
        assert_eq!(
            fails("100\n\n-3\n"),
            "t.csv:3: field 'rtt': an RTT must be positive, got -3"
        );
        assert_eq!(
            fails("100\n0\n"),
            "t.csv:2: field 'rtt': an RTT must be positive, got 0"
        );
        assert_eq!(
            fails("NaN\n"),
            "t.csv:1: field 'rtt': 'NaN' is not a finite number"
        );
        assert_eq!(
            fails("time,rtt\n1,0.1\n0.5,0.1\n"),
            "t.csv:3: field 'time': times must not decrease (0.5 s comes after a later time)"
        );
        assert_eq!(fails("time,rtt\n1\n"), "t.csv:2: field 'rtt': missing");
    }

    #[test]
    fn empty_files_and_foreign_headers_are_rejected() {
        assert!(fails("").contains("no RTT samples"));
        assert!(fails("# only a comment\n").contains("no RTT samples"));
        assert!(fails("time,rtt\n").contains("no RTT samples"));
        assert!(fails("a,b\n1,2\n").contains("has no 'rtt' column"));
    }

    #[test]
    fn binary_garbage_is_an_error_not_a_panic() {
        let e = parse(&[0xff, 0xfe, 0x00, 0x41, b'\n'], "g.bin", None).unwrap_err();
        assert!(e.to_string().starts_with("g.bin:1"), "{e}");
    }

    proptest::proptest! {
        /// Fuzzing in miniature: arbitrary bytes never panic, and whatever parses is valid.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            if let Ok(s) = parse(&bytes, "f", None) {
                proptest::prop_assert!(!s.rtts.is_empty() && s.rtts.iter().all(|&r| r > 0));
                proptest::prop_assert!(s.times.windows(2).all(|w| w[0] <= w[1]));
            }
        }

        #[test]
        fn numeric_text_never_panics(lines in proptest::collection::vec("[-+0-9.eE, a-z#]{0,12}", 0..40)) {
            let text = lines.join("\n");
            let _ = parse(text.as_bytes(), "f", None);
        }
    }

    #[test]
    fn a_utf8_byte_order_mark_does_not_hide_the_first_header() {
        let s = parse(b"\xef\xbb\xbftime,rtt\n1,0.1\n2,0.2\n", "bom.csv", None).unwrap();
        assert_eq!(s.times, vec![SEC, 2 * SEC]);
        let s = parse(b"\xef\xbb\xbf100\n", "bom.csv", None).unwrap();
        assert_eq!(s.rtts, vec![100 * MS]);
    }

    #[test]
    fn huge_times_and_rtts_are_errors_not_clamped() {
        assert_eq!(
            fails("time,rtt\n1e300,0.1\n"),
            "t.csv:2: field 'time': 1e300 s is outside the representable range (0 .. 146 years)"
        );
        assert_eq!(
            fails("time,rtt\n1,1e11\n"),
            "t.csv:2: field 'rtt': 1e11 is outside the representable range (1 ns .. 146 years)"
        );
        let many = "2e12\n".repeat(3);
        assert!(
            fails(&many).contains("running sum of RTTs"),
            "{}",
            fails(&many)
        );
    }

    #[test]
    fn a_huge_bad_cell_is_echoed_cut() {
        let cell = "x".repeat(10_000_000);
        let e = fails(&format!("100\n{cell}\n"));
        assert_eq!(
            e,
            format!(
                "t.csv:2: field 'rtt': '{}…' (10000000 bytes) is not a number",
                "x".repeat(40)
            )
        );
        let e = fails(&format!("{},b\n1,2\n", "h".repeat(1000)));
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn missing_files_say_so() {
        let e = read(Path::new("/nonexistent/x.csv"), None).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/x.csv: no such file");
    }
}
