//! RTT series files: one RTT per line (`../shared/rtt-series/*.csv` style, milliseconds by
//! default), or a CSV whose header names the columns: the RTT column `rtt`, the time column
//! `time`, `timestamp` or `t`, each in seconds unless its name carries a unit (`rtt_ms`,
//! `time_us`, `rtt (ms)`), or chosen by name ([`ColumnNames`]: `--columns time=COL,rtt=COL`).
//! Headerless series get arrival times as the running sum of the RTTs: each request leaves when
//! the previous reply arrives, as in the request/response series they come from.

use crate::time::{Nanos, MS, SEC, US};
use std::fmt;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    Seconds,
    #[default]
    Milliseconds,
    Microseconds,
    Nanoseconds,
}

impl Unit {
    /// Largest first: the order [`unit_doubt`] walks to find a plausible reading.
    const ALL: [Unit; 4] = [
        Self::Seconds,
        Self::Milliseconds,
        Self::Microseconds,
        Self::Nanoseconds,
    ];

    /// A unit as `--unit` takes it: `s`, `ms`, `us` (or `µs`), `ns`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "s" => Some(Self::Seconds),
            "ms" => Some(Self::Milliseconds),
            "us" | "µs" | "μs" => Some(Self::Microseconds),
            "ns" => Some(Self::Nanoseconds),
            _ => None,
        }
    }

    /// A unit as a column name spells it after the name (`rtt_ms`, `rtt (msec)`), lower case.
    fn from_suffix(text: &str) -> Option<Self> {
        match text {
            "s" | "sec" | "secs" | "second" | "seconds" => Some(Self::Seconds),
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => Some(Self::Milliseconds),
            "us" | "µs" | "μs" | "usec" | "usecs" | "microsecond" | "microseconds" => {
                Some(Self::Microseconds)
            }
            "ns" | "nsec" | "nsecs" | "nanosecond" | "nanoseconds" => Some(Self::Nanoseconds),
            _ => None,
        }
    }

    /// As `--unit` takes it (and [`Unit::parse`] reads it back).
    pub fn name(self) -> &'static str {
        match self {
            Self::Seconds => "s",
            Self::Milliseconds => "ms",
            Self::Microseconds => "us",
            Self::Nanoseconds => "ns",
        }
    }

    /// As a value is written with it in a message: `0.5 s`, `3 µs`.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Microseconds => "µs",
            other => other.name(),
        }
    }

    /// ns per unit as a power of ten: 10^9, 10^6, 10^3, 10^0.
    fn exponent(self) -> u32 {
        match self {
            Self::Seconds => 9,
            Self::Milliseconds => 6,
            Self::Microseconds => 3,
            Self::Nanoseconds => 0,
        }
    }

    fn nanos(self) -> f64 {
        match self {
            Self::Seconds => SEC as f64,
            Self::Milliseconds => MS as f64,
            Self::Microseconds => US as f64,
            Self::Nanoseconds => 1.0,
        }
    }
}

/// Where the unit the RTTs were read in came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnitFrom {
    /// Nobody said: milliseconds for one RTT per line, seconds under a header.
    #[default]
    Default,
    /// The caller (`--unit`, `unit=`).
    Given,
    /// The RTT column's name (`rtt_ms`).
    Header,
}

impl UnitFrom {
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Given => "given",
            Self::Header => "header",
        }
    }
}

/// Header columns chosen by name (`--columns time=COL,rtt=COL`); None: found by their usual names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnNames {
    pub time: Option<String>,
    pub rtt: Option<String>,
}

impl ColumnNames {
    /// `time=COL,rtt=COL` (either or both; names as the header writes them, any case). The
    /// reason it cannot be read otherwise.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut out = Self::default();
        for item in spec.split(',') {
            let (role, name) = item.split_once('=').ok_or_else(|| {
                format!(
                    "{} is not ROLE=COLUMN (e.g. time=timestamp,rtt=rtt_ms)",
                    quoted(item.trim())
                )
            })?;
            let (role, name) = (role.trim(), name.trim());
            let slot = match role.to_ascii_lowercase().as_str() {
                "time" => &mut out.time,
                "rtt" => &mut out.rtt,
                _ => {
                    return Err(format!(
                        "unknown role {} (the roles are time and rtt)",
                        quoted(role)
                    ))
                }
            };
            if name.is_empty() {
                return Err(format!("{role}= names no column"));
            }
            if slot.is_some() {
                return Err(format!("{role} is named twice"));
            }
            *slot = Some(name.to_string());
        }
        Ok(out)
    }

    fn is_empty(&self) -> bool {
        self.time.is_none() && self.rtt.is_none()
    }
}

/// How to read a series: the RTT unit (None: as the file says, else the default) and the columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    pub unit: Option<Unit>,
    pub columns: ColumnNames,
}

/// Samples as parallel columns: arrival time and RTT, both in ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub times: Vec<Nanos>,
    pub rtts: Vec<Nanos>,
    /// The unit the RTTs were read in, and who chose it.
    pub unit: Unit,
    pub unit_from: UnitFrom,
    /// The header's name of the RTT column; None for one RTT per line.
    pub rtt_column: Option<String>,
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
    read_with(
        path,
        &Options {
            unit,
            ..Options::default()
        },
    )
}

/// [`read`] with the columns chosen by name.
pub fn read_with(path: &Path, options: &Options) -> Result<Series, SeriesError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| SeriesError {
        path: name.clone(),
        line: None,
        field: None,
        reason: io_reason(&e),
    })?;
    parse_with(&bytes, &name, options, PARALLEL_MIN)
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
    parse_options(
        bytes,
        name,
        &Options {
            unit,
            ..Options::default()
        },
    )
}

/// [`parse`] with the columns chosen by name.
pub fn parse_options(bytes: &[u8], name: &str, options: &Options) -> Result<Series, SeriesError> {
    parse_with(bytes, name, options, PARALLEL_MIN)
}

/// What the header (or its absence) says: where the columns are, their names and units.
#[derive(Debug, Clone, PartialEq)]
struct Layout {
    rtt: usize,
    /// The RTT column as the header writes it ("rtt" without a header): errors name it.
    rtt_name: String,
    rtt_unit: Unit,
    unit_from: UnitFrom,
    /// (column, name, unit) of the time column, if any.
    time: Option<(usize, String, Unit)>,
    header: bool,
}

impl Layout {
    fn headerless(unit: Option<Unit>) -> Self {
        Self {
            rtt: 0,
            rtt_name: "rtt".into(),
            rtt_unit: unit.unwrap_or(Unit::Milliseconds),
            unit_from: if unit.is_some() {
                UnitFrom::Given
            } else {
                UnitFrom::Default
            },
            time: None,
            header: false,
        }
    }

    /// The exponent of the one-RTT-per-line fast path, when lines hold the RTT alone.
    fn fast(&self) -> Option<u32> {
        (self.time.is_none() && self.rtt == 0).then(|| self.rtt_unit.exponent())
    }
}

/// Names of the time column when none is chosen (a name's unit suffix aside).
const TIME_NAMES: [&str; 3] = ["time", "timestamp", "t"];
/// Longest list of header columns an error spells out (characters, before the last name).
const LIST_MAX: usize = 100;

/// A header cell as a name: trimmed, one pair of double quotes removed.
fn unquote(cell: &str) -> &str {
    let c = cell.trim();
    c.strip_prefix('"')
        .and_then(|c| c.strip_suffix('"'))
        .map_or(c, str::trim)
}

/// A lower-case column name split into its base and unit: `rtt_ms`, `rtt-ms`, `rtt ms`,
/// `rtt (ms)`, `rtt [ms]` → ("rtt", ms); `rtt` → ("rtt", None).
fn split_unit(name: &str) -> (&str, Option<Unit>) {
    let n = name.trim();
    for (open, close) in [('(', ')'), ('[', ']')] {
        if let Some(inner) = n.strip_suffix(close) {
            if let Some(k) = inner.rfind(open) {
                if let Some(unit) = Unit::from_suffix(inner[k + 1..].trim()) {
                    return (inner[..k].trim_end_matches([' ', '_', '-']), Some(unit));
                }
            }
        }
    }
    if let Some(k) = n.rfind(['_', '-', ' ']) {
        if let Some(unit) = Unit::from_suffix(&n[k + 1..]) {
            return (n[..k].trim_end(), Some(unit));
        }
    }
    (n, None)
}

/// The header's columns for an error: `'time', 'rtt_ms'`, as many as fit in [`LIST_MAX`]
/// characters (each cut as [`quoted`] cuts it), then how many more.
fn listing(names: &[&str]) -> String {
    let mut out = String::new();
    for (k, name) in names.iter().enumerate() {
        let q = quoted(name);
        if k > 0 && out.len() + q.len() > LIST_MAX {
            return format!("{out}, and {} more", names.len() - k);
        }
        if k > 0 {
            out.push_str(", ");
        }
        out.push_str(&q);
    }
    out
}

/// Where the time and RTT columns of a header are: chosen by name, else by their usual names.
/// The reason as text when they cannot be told.
fn header_layout(record: &[&str], options: &Options) -> Result<Layout, String> {
    let names: Vec<&str> = record.iter().map(|c| unquote(c)).collect();
    let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let columns = || listing(&names);
    // Several columns for one role: by name if their names differ, else renamed.
    let ambiguous = |role: &str, hits: &[usize]| {
        let at = hits
            .iter()
            .map(|&k| format!("{} (column {})", quoted(names[k]), k + 1))
            .collect::<Vec<_>>()
            .join(", ");
        if hits.iter().all(|&k| lower[k] == lower[hits[0]]) {
            format!(
                "the header names {role} column {} {} times ({at}): rename all but one",
                quoted(names[hits[0]]),
                hits.len()
            )
        } else {
            format!(
                "the header has {} {role} columns, {at}: choose one with --columns {role}=NAME",
                hits.len()
            )
        }
    };
    let find =
        |role: &str, chosen: Option<&String>, usual: &[&str]| -> Result<Option<usize>, String> {
            let hits: Vec<usize> = match chosen {
                Some(want) => {
                    let want = unquote(want).to_lowercase();
                    let hits: Vec<usize> = (0..names.len()).filter(|&k| lower[k] == want).collect();
                    if hits.is_empty() {
                        return Err(format!(
                            "column {} (named for {role}) is not in the header; its columns: {}",
                            quoted(&want),
                            columns()
                        ));
                    }
                    hits
                }
                None => (0..names.len())
                    .filter(|&k| usual.contains(&split_unit(&lower[k]).0))
                    .collect(),
            };
            match hits.len() {
                0 => Ok(None),
                1 => Ok(Some(hits[0])),
                _ => Err(ambiguous(role, &hits)),
            }
        };
    let rtt = find("rtt", options.columns.rtt.as_ref(), &["rtt"])?.ok_or_else(|| {
        format!(
            "the header has no 'rtt' column (its columns: {}); call it rtt (rtt_ms, rtt_us: with its unit) or choose it with --columns rtt=NAME",
            columns()
        )
    })?;
    let time = find("time", options.columns.time.as_ref(), &TIME_NAMES)?;
    if time == Some(rtt) {
        return Err(format!(
            "time and rtt name the same column {}",
            quoted(names[rtt])
        ));
    }
    let (rtt_unit, unit_from) = match (split_unit(&lower[rtt]).1, options.unit) {
        (Some(named), Some(given)) if named != given => {
            return Err(format!(
                "column {} is in {} by its name, but the unit given is {}: drop the unit (--unit) or rename the column",
                quoted(names[rtt]),
                named.symbol(),
                given.symbol()
            ))
        }
        (Some(named), _) => (named, UnitFrom::Header),
        (None, Some(given)) => (given, UnitFrom::Given),
        (None, None) => (Unit::Seconds, UnitFrom::Default),
    };
    Ok(Layout {
        rtt,
        rtt_name: names[rtt].to_string(),
        rtt_unit,
        unit_from,
        time: time.map(|k| {
            (
                k,
                names[k].to_string(),
                split_unit(&lower[k]).1.unwrap_or(Unit::Seconds),
            )
        }),
        header: true,
    })
}

/// [`parse`], reading the second half on another thread when more than `parallel_min` bytes of
/// a one-column series remain (the result is the same either way: tests compare them).
fn parse_with(
    bytes: &[u8],
    name: &str,
    options: &Options,
    parallel_min: usize,
) -> Result<Series, SeriesError> {
    let unit = options.unit;
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
    let mut layout: Option<Layout> = None;
    // The fast path's exponent once the layout allows it (one RTT per line).
    let mut fast: Option<u32> = None;
    let mut series = Series::default();
    let mut clock: Nanos = 0;
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
                if let Some(exponent) = fast {
                    if second.is_none() && stop == all.len() && all.len() - pos > parallel_min {
                        // Split at the line end nearest the middle of what remains.
                        let middle = pos + (all.len() - pos) / 2;
                        if let Some(k) = all[middle..].iter().position(|&b| b == b'\n') {
                            let mid = middle + k + 1;
                            let tail = &all[mid..];
                            second = Some((mid, scope.spawn(move || plain_column(tail, exponent))));
                            stop = mid;
                        }
                    }
                    // One RTT per line, as most lines of a long series are: read in integers
                    // (the same values as the general path below, see `plain_ns_line`).
                    if let Some((rtt_ns, next)) = plain_ns_line(all, pos, exponent) {
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
                let l = match &layout {
                    Some(l) => l,
                    None => {
                        let record: Vec<&str> = content.split(',').map(str::trim).collect();
                        let first = record[0];
                        if first.parse::<f64>().is_ok()
                            || record.len() == 1 && !first.chars().any(|c| c.is_ascii_alphabetic())
                        {
                            if !options.columns.is_empty() {
                                return Err(err(line, None, "columns are chosen by name (--columns), but the file has no header: its first line is data".into()));
                            }
                            layout = Some(Layout::headerless(unit));
                        } else {
                            // A header: find the columns by name.
                            let l = header_layout(&record, options)
                                .map_err(|reason| err(line, None, reason))?;
                            layout = Some(l);
                            fast = layout.as_ref().and_then(Layout::fast);
                            continue;
                        }
                        fast = layout.as_ref().and_then(Layout::fast);
                        layout.as_ref().expect("set above")
                    }
                };
                if !l.header && content.split(',').skip(1).any(|f| !f.trim().is_empty()) {
                    return Err(err(
                        line,
                        None,
                        format!(
                            "{} fields but no header: without a header a line holds one RTT; name the columns in a first line such as time,rtt_ms",
                            content.split(',').count()
                        ),
                    ));
                }
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
                let rtt_name = l.rtt_name.as_str();
                let rtt = cell(l.rtt, rtt_name)?;
                if rtt <= 0.0 {
                    return Err(err(
                        line,
                        Some(rtt_name),
                        format!("an RTT must be positive, got {rtt}"),
                    ));
                }
                let rtt_ns = (rtt * l.rtt_unit.nanos()).round();
                if rtt_ns < 1.0 || rtt_ns > MAX_NS as f64 {
                    return Err(err(
                        line,
                        Some(rtt_name),
                        format!("{rtt:e} is outside the representable range (1 ns .. 146 years)"),
                    ));
                }
                let rtt_ns = rtt_ns as Nanos;
                let time_ns = match &l.time {
                    Some((col, time_name, time_unit)) => {
                        let time_name = time_name.as_str();
                        let symbol = time_unit.symbol();
                        let t = cell(*col, time_name)?;
                        if t < 0.0 {
                            return Err(err(
                                line,
                                Some(time_name),
                                format!("a time must not be negative, got {t}"),
                            ));
                        }
                        let t_ns = (t * time_unit.nanos()).round();
                        // Checked, not clamped: `as` saturates, so 1e300 s would silently become 584 years.
                        if t_ns > MAX_NS as f64 {
                            return Err(err(
                                line,
                                Some(time_name),
                                format!(
                                    "{t:e} {symbol} is outside the representable range (0 .. 146 years)"
                                ),
                            ));
                        }
                        let t_ns = t_ns as Nanos;
                        if series.times.last().is_some_and(|&prev| t_ns < prev) {
                            return Err(err(
                                line,
                                Some(time_name),
                                format!("times must not decrease ({t} {symbol} comes after a later time)"),
                            ));
                        }
                        t_ns
                    }
                    None => {
                        clock = clock.checked_add(rtt_ns).filter(|&c| c <= MAX_NS).ok_or_else(|| err(line, Some(rtt_name), "the running sum of RTTs (the implied arrival time) exceeds 146 years".into()))?;
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
    let layout = layout.expect("a sample was read, so the layout is known");
    series.unit = layout.rtt_unit;
    series.unit_from = layout.unit_from;
    series.rtt_column = layout.header.then_some(layout.rtt_name);
    Ok(series)
}

/// A median RTT outside this range (10 µs .. 30 s) is implausible for a network path: the
/// values were most likely written in another unit than the one they were read in.
pub const PLAUSIBLE_NS: (Nanos, Nanos) = (10 * US, 30 * SEC);

/// The median RTT, of at most 10,001 evenly spaced samples (enough to tell units apart, a
/// factor of 1,000, in microseconds however long the series).
pub fn median_rtt(rtts: &[Nanos]) -> Option<Nanos> {
    if rtts.is_empty() {
        return None;
    }
    let step = rtts.len().div_ceil(10_001);
    let mut picked: Vec<Nanos> = rtts.iter().step_by(step).copied().collect();
    let mid = picked.len() / 2;
    Some(*picked.select_nth_unstable(mid).1)
}

/// None when a median RTT of `median_ns` is plausible ([`PLAUSIBLE_NS`]); otherwise the unit the
/// values were likely written in — the nearest one (smaller units for a median too long,
/// larger for one too short) under which the median is plausible — or None if there is none.
pub fn unit_doubt(median_ns: Nanos, read_as: Unit) -> Option<Option<Unit>> {
    let (low, high) = PLAUSIBLE_NS;
    if (low..=high).contains(&median_ns) {
        return None;
    }
    let written = median_ns as f64 / read_as.nanos();
    let plausible = |u: &Unit| (low as f64..=high as f64).contains(&(written * u.nanos()));
    let at = Unit::ALL.iter().position(|&u| u == read_as).unwrap_or(0);
    Some(if median_ns > high {
        Unit::ALL[at + 1..].iter().copied().find(plausible)
    } else {
        Unit::ALL[..at].iter().rev().copied().find(plausible)
    })
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
        assert!(e.len() < 250, "{e}");
    }

    fn with(text: &str, unit: Option<Unit>, columns: &str) -> Result<Series, String> {
        let columns = if columns.is_empty() {
            ColumnNames::default()
        } else {
            ColumnNames::parse(columns).unwrap()
        };
        parse_options(text.as_bytes(), "t.csv", &Options { unit, columns })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_header_naming_only_rtt_means_seconds_too() {
        // It used to take the one-column fast path in milliseconds.
        let s = ok("rtt\n0.1\n0.2\n");
        assert_eq!(s.rtts, vec![100 * MS, 200 * MS]);
        assert_eq!((s.unit, s.unit_from), (Unit::Seconds, UnitFrom::Default));
        assert_eq!(s.rtt_column.as_deref(), Some("rtt"));
    }

    #[test]
    fn a_unit_suffix_in_the_header_gives_the_unit() {
        for header in [
            "rtt_ms",
            "RTT_ms",
            "rtt-ms",
            "rtt ms",
            "rtt (ms)",
            "rtt[msec]",
            "\"rtt_ms\"",
        ] {
            let s = ok(&format!("timestamp,{header}\n1.5,100\n2.5,250\n"));
            assert_eq!(s.rtts, vec![100 * MS, 250 * MS], "{header}");
            assert_eq!(s.times, vec![1500 * MS, 2500 * MS], "{header}");
            assert_eq!(
                (s.unit, s.unit_from),
                (Unit::Milliseconds, UnitFrom::Header)
            );
        }
        assert_eq!(ok("rtt_us\n250\n").rtts, vec![250 * US]);
        assert_eq!(ok("rtt_s\n0.25\n").rtts, vec![250 * MS]);
        assert_eq!(ok("rtt_ns\n2500\n").rtts, vec![2500]);
        // The fast path reads a lone suffixed column in its unit.
        assert_eq!(ok("rtt_ms\n1.5\n2\n").times, vec![1_500_000, 3_500_000]);
    }

    #[test]
    fn the_time_column_has_its_usual_names_and_units() {
        for header in ["time,rtt", "timestamp,rtt", "t,rtt", "Time,RTT", "rtt,t"] {
            let text = if header.starts_with("rtt") {
                "0.1,2\n"
            } else {
                "2,0.1\n"
            };
            let s = ok(&format!("{header}\n{text}"));
            assert_eq!((s.times[0], s.rtts[0]), (2 * SEC, 100 * MS), "{header}");
        }
        let s = ok("time_ms,rtt_ms\n1500,20\n");
        assert_eq!((s.times[0], s.rtts[0]), (1500 * MS, 20 * MS));
        assert_eq!(
            fails("time_ms,rtt\n2,0.1\n1,0.1\n"),
            "t.csv:3: field 'time_ms': times must not decrease (1 ms comes after a later time)"
        );
        // No time column: back to back, as without a header.
        assert_eq!(ok("seq,rtt_ms\n1,10\n2,20\n").times, vec![10 * MS, 30 * MS]);
    }

    #[test]
    fn columns_can_be_chosen_by_name() {
        let s = with(
            "when,latency_ms,rtt\n1,20,999\n",
            None,
            "time=when,rtt=latency_ms",
        )
        .unwrap();
        assert_eq!((s.times[0], s.rtts[0]), (SEC, 20 * MS));
        assert_eq!(s.rtt_column.as_deref(), Some("latency_ms"));
        let s = with("t,x,rtt\n1,5,0.2\n", None, "time=X").unwrap();
        assert_eq!(s.times[0], 5 * SEC);
        // Errors on a named column name it.
        assert_eq!(
            with("a,lat\n1,x\n", None, "rtt=lat").unwrap_err(),
            "t.csv:2: field 'lat': 'x' is not a number"
        );
    }

    #[test]
    fn an_unknown_column_is_named_with_the_headers_columns() {
        assert_eq!(
            with("time,rtt_ms\n1,2\n", None, "rtt=latency").unwrap_err(),
            "t.csv:1: column 'latency' (named for rtt) is not in the header; its columns: 'time', 'rtt_ms'"
        );
        let wide = (0..20)
            .map(|k| format!("c{k}"))
            .collect::<Vec<_>>()
            .join(",");
        let e = with(&format!("{wide}\n"), None, "rtt=x").unwrap_err();
        assert!(e.ends_with("'c15', and 4 more"), "{e}");
        assert_eq!(
            with("100\n", None, "rtt=rtt").unwrap_err(),
            "t.csv:1: columns are chosen by name (--columns), but the file has no header: its first line is data"
        );
    }

    #[test]
    fn duplicate_columns_are_refused_not_guessed() {
        assert_eq!(
            fails("rtt,rtt\n1,2\n"),
            "t.csv:1: the header names rtt column 'rtt' 2 times ('rtt' (column 1), 'rtt' (column 2)): rename all but one"
        );
        assert_eq!(
            fails("time,rtt,rtt_ms\n1,2,3\n"),
            "t.csv:1: the header has 2 rtt columns, 'rtt' (column 2), 'rtt_ms' (column 3): choose one with --columns rtt=NAME"
        );
        assert!(fails("t,time,rtt\n1,1,1\n").contains("2 time columns"));
        assert!(with("x,x,rtt\n1,2,3\n", None, "time=x")
            .unwrap_err()
            .contains("2 times"));
        // A duplicate nobody reads is no matter.
        assert_eq!(ok("x,x,rtt\n1,2,0.5\n").rtts, vec![500 * MS]);
        assert_eq!(
            with("time,rtt\n1,2\n", None, "time=rtt").unwrap_err(),
            "t.csv:1: time and rtt name the same column 'rtt'"
        );
    }

    #[test]
    fn an_empty_header_is_an_error_naming_it() {
        assert_eq!(
            fails(",\n1,2\n"),
            "t.csv:1: the header has no 'rtt' column (its columns: '', ''); call it rtt (rtt_ms, rtt_us: with its unit) or choose it with --columns rtt=NAME"
        );
        assert_eq!(ok("time,,rtt\n1,,0.1\n").rtts, vec![100 * MS]);
    }

    #[test]
    fn a_unit_given_against_the_headers_is_an_error_naming_both() {
        assert_eq!(
            with("time,rtt_ms\n1,2\n", Some(Unit::Seconds), "").unwrap_err(),
            "t.csv:1: column 'rtt_ms' is in ms by its name, but the unit given is s: drop the unit (--unit) or rename the column"
        );
        let s = with("time,rtt_ms\n1,2\n", Some(Unit::Milliseconds), "").unwrap();
        assert_eq!((s.rtts[0], s.unit_from), (2 * MS, UnitFrom::Header));
        let s = with("time,rtt\n1,2\n", Some(Unit::Microseconds), "").unwrap();
        assert_eq!((s.rtts[0], s.unit_from), (2 * US, UnitFrom::Given));
    }

    #[test]
    fn several_fields_without_a_header_are_an_error_not_the_first_one() {
        assert_eq!(
            fails("0.5,100\n1.0,120\n"),
            "t.csv:1: 2 fields but no header: without a header a line holds one RTT; name the columns in a first line such as time,rtt_ms"
        );
        // A trailing comma adds no field.
        assert_eq!(ok("100,\n").rtts, vec![100 * MS]);
    }

    #[test]
    fn column_choices_are_read_or_refused_in_one_line() {
        assert_eq!(
            ColumnNames::parse(" time = ts , RTT=lat ").unwrap(),
            ColumnNames {
                time: Some("ts".into()),
                rtt: Some("lat".into())
            }
        );
        assert_eq!(
            ColumnNames::parse("rtt").unwrap_err(),
            "'rtt' is not ROLE=COLUMN (e.g. time=timestamp,rtt=rtt_ms)"
        );
        assert_eq!(
            ColumnNames::parse("delay=x").unwrap_err(),
            "unknown role 'delay' (the roles are time and rtt)"
        );
        assert_eq!(
            ColumnNames::parse("rtt=").unwrap_err(),
            "rtt= names no column"
        );
        assert_eq!(
            ColumnNames::parse("rtt=a,rtt=b").unwrap_err(),
            "rtt is named twice"
        );
    }

    #[test]
    fn the_reader_says_which_unit_it_read() {
        let s = ok("100\n");
        assert_eq!(
            (s.unit, s.unit_from, s.rtt_column),
            (Unit::Milliseconds, UnitFrom::Default, None)
        );
        let s = parse(b"100\n", "t", Some(Unit::Microseconds)).unwrap();
        assert_eq!((s.unit, s.unit_from), (Unit::Microseconds, UnitFrom::Given));
    }

    #[test]
    fn a_one_column_header_reads_the_same_on_two_threads() {
        let body: String = (1..5000)
            .map(|k| format!("{}.{}\n", k % 97 + 1, k % 10))
            .collect();
        let text = format!("rtt_us\n{body}");
        let options = Options::default();
        let one = parse_with(text.as_bytes(), "t", &options, usize::MAX).unwrap();
        let two = parse_with(text.as_bytes(), "t", &options, 1000).unwrap();
        assert_eq!(one, two);
        assert_eq!(one.rtts[0], 2_100);
    }

    #[test]
    fn implausible_medians_name_the_likely_unit() {
        // 110 read as seconds: milliseconds.
        assert_eq!(
            unit_doubt(110 * SEC, Unit::Seconds),
            Some(Some(Unit::Milliseconds))
        );
        // 80,000 (µs) read as seconds: 80 ms only as µs.
        assert_eq!(
            unit_doubt(80_000 * SEC, Unit::Seconds),
            Some(Some(Unit::Microseconds))
        );
        // 50,000 µs read as ms: 50 s.
        assert_eq!(
            unit_doubt(50 * SEC, Unit::Milliseconds),
            Some(Some(Unit::Microseconds))
        );
        // 0.005 s read as ms: 5 µs.
        assert_eq!(
            unit_doubt(5 * US, Unit::Milliseconds),
            Some(Some(Unit::Seconds))
        );
        // Plausible: no doubt, however odd.
        assert_eq!(unit_doubt(30 * SEC, Unit::Seconds), None);
        assert_eq!(unit_doubt(10 * US, Unit::Milliseconds), None);
        // Nothing plausible either way.
        assert_eq!(unit_doubt(2 * US, Unit::Seconds), Some(None));
    }

    #[test]
    fn the_median_of_a_long_series_is_taken_from_a_spread_of_samples() {
        assert_eq!(median_rtt(&[]), None);
        assert_eq!(median_rtt(&[3, 1, 2]), Some(2));
        let long: Vec<Nanos> = (0..1_000_000).collect();
        let m = median_rtt(&long).unwrap();
        assert!((499_000..=501_000).contains(&m), "{m}");
    }

    proptest::proptest! {
        /// Headers of any names, with columns chosen or not, never panic; what parses is valid.
        #[test]
        fn any_header_and_column_choice_never_panics(
            header in proptest::collection::vec("[a-zA-Z_ ()\\[\\]µ\"-]{0,8}", 1..5),
            rows in proptest::collection::vec("[0-9.,e -]{0,12}", 0..6),
            time in proptest::option::of("[a-zA-Z_ µ]{0,6}"),
            rtt in proptest::option::of("[a-zA-Z_ µ]{0,6}"),
            unit in proptest::option::of(0usize..4),
        ) {
            let text = format!("{}\n{}", header.join(","), rows.join("\n"));
            let options = Options {
                unit: unit.map(|k| Unit::ALL[k]),
                columns: ColumnNames { time: time.filter(|t| !t.trim().is_empty()), rtt: rtt.filter(|r| !r.trim().is_empty()) },
            };
            match parse_options(text.as_bytes(), "f", &options) {
                Ok(s) => {
                    proptest::prop_assert!(!s.rtts.is_empty() && s.rtts.iter().all(|&r| r > 0));
                    proptest::prop_assert_eq!(s.times.len(), s.rtts.len());
                }
                Err(e) => proptest::prop_assert!(!e.to_string().contains('\n'), "{}", e),
            }
        }
    }

    #[test]
    fn missing_files_say_so() {
        let e = read(Path::new("/nonexistent/x.csv"), None).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/x.csv: no such file");
    }
}
