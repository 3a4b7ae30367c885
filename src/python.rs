//! The Python bindings, all in this one file (docs/architecture.md). Data crosses as NumPy columns or Arrow
//! tables (the simulator's results, through the Arrow PyCapsule interface); errors
//! become the exceptions defined here, whose message is the one line the CLI prints.

use crate::eval::{replay_all, ReplayConfig, Streams, TimerConfig};
use crate::io::series;
use crate::params::{ParamError, ParamSpec};
use crate::rtt;
use crate::time::Nanos;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _core,
    InputError,
    PyValueError,
    "An input file cannot be read; the message names file, line and field."
);
create_exception!(_core, ParameterError, PyValueError, "A component (estimator, RTO policy, congestion control, ...) name or parameter is unknown or out of range.");

fn param_error(e: ParamError) -> PyErr {
    ParameterError::new_err(e.to_string())
}

type Spec = (String, Vec<(String, String)>);

fn build_all(specs: &[Spec]) -> PyResult<Vec<rtt::Estimator>> {
    specs
        .iter()
        .map(|(name, params)| rtt::build(name, params).map_err(param_error))
        .collect()
}

/// Two `uint64` nanosecond columns (times, RTTs).
type NanosColumns<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>);

/// How to read a series: the unit (`s`, `ms`, `us`, `ns`) and the columns chosen by name.
fn series_options(
    unit: Option<&str>,
    time_column: Option<String>,
    rtt_column: Option<String>,
) -> PyResult<series::Options> {
    let unit = unit
        .map(|u| {
            series::Unit::parse(u).ok_or_else(|| {
                ParameterError::new_err(format!("unknown unit '{u}' (use s, ms, us or ns)"))
            })
        })
        .transpose()?;
    Ok(series::Options {
        unit,
        columns: series::ColumnNames {
            time: time_column,
            rtt: rtt_column,
        },
    })
}

/// Read an RTT series file → (times_ns, rtts_ns) as uint64 arrays.
#[pyfunction]
#[pyo3(signature = (path, unit=None, time_column=None, rtt_column=None))]
fn read_series<'py>(
    py: Python<'py>,
    path: &str,
    unit: Option<&str>,
    time_column: Option<String>,
    rtt_column: Option<String>,
) -> PyResult<NanosColumns<'py>> {
    let options = series_options(unit, time_column, rtt_column)?;
    let path_buf = std::path::PathBuf::from(path);
    let s = py
        .detach(|| series::read_with(&path_buf, &options))
        .map_err(|e| InputError::new_err(e.to_string()))?;
    Ok((s.times.into_pyarray(py), s.rtts.into_pyarray(py)))
}

/// An RTT series held in Rust as the reader left it, so that replaying it needs no NumPy (whose
/// import alone costs a fifth of the time a plain Python loop takes to read and replay a
/// million-line series): `rttlab.read_series` keeps one, and the columns become uint64 arrays
/// only when asked for.
#[pyclass(frozen, module = "rttlab._core")]
struct SeriesData {
    times: Vec<Nanos>,
    rtts: Vec<Nanos>,
    /// The unit the RTTs were read in (`s`, `ms`, `us`, `ns`) and who chose it (`default`,
    /// `given`, `header`); the header's name of the RTT column (None without a header).
    #[pyo3(get)]
    unit: &'static str,
    #[pyo3(get)]
    unit_from: &'static str,
    #[pyo3(get)]
    rtt_column: Option<String>,
}

#[pymethods]
impl SeriesData {
    fn __len__(&self) -> usize {
        self.rtts.len()
    }

    /// Arrival times, ns (a new uint64 array).
    fn times_ns<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.times)
    }

    /// RTTs, ns (a new uint64 array).
    fn rtts_ns<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.rtts)
    }

    /// The number of RTTs strictly above `ns` (no array made).
    fn count_above(&self, ns: f64) -> usize {
        self.rtts.iter().filter(|&&r| r as f64 > ns).count()
    }

    /// The median RTT in ns (of at most 10,001 evenly spaced samples: `series::median_rtt`).
    fn median_ns(&self) -> Option<Nanos> {
        series::median_rtt(&self.rtts)
    }
}

/// As [`read_series`], kept in Rust ([`SeriesData`]).
#[pyfunction]
#[pyo3(signature = (path, unit=None, time_column=None, rtt_column=None))]
fn read_series_data(
    py: Python<'_>,
    path: &str,
    unit: Option<&str>,
    time_column: Option<String>,
    rtt_column: Option<String>,
) -> PyResult<SeriesData> {
    let options = series_options(unit, time_column, rtt_column)?;
    let path_buf = std::path::PathBuf::from(path);
    let s = py
        .detach(|| series::read_with(&path_buf, &options))
        .map_err(|e| InputError::new_err(e.to_string()))?;
    Ok(SeriesData {
        times: s.times,
        rtts: s.rtts,
        unit: s.unit.name(),
        unit_from: s.unit_from.name(),
        rtt_column: s.rtt_column,
    })
}

/// `time=COL,rtt=COL` → (time column, RTT column), either None; ParameterError naming what is
/// wrong (without the option's name: the caller adds it).
#[pyfunction]
fn parse_columns(spec: &str) -> PyResult<(Option<String>, Option<String>)> {
    series::ColumnNames::parse(spec)
        .map(|c| (c.time, c.rtt))
        .map_err(ParameterError::new_err)
}

/// (the plausible range of a median RTT in ns, the likely unit or None): see [`unit_doubt`].
type UnitDoubt = ((Nanos, Nanos), Option<&'static str>);

/// None when a median RTT of `median_ns` read in `unit` is plausible for a network path
/// (`series::PLAUSIBLE_NS`); else (the plausible range in ns, the unit the values were likely
/// written in or None).
#[pyfunction]
fn unit_doubt(median_ns: Nanos, unit: &str) -> PyResult<Option<UnitDoubt>> {
    let unit = series::Unit::parse(unit).ok_or_else(|| {
        ParameterError::new_err(format!("unknown unit '{unit}' (use s, ms, us or ns)"))
    })?;
    Ok(series::unit_doubt(median_ns, unit)
        .map(|likely| (series::PLAUSIBLE_NS, likely.map(series::Unit::name))))
}

fn spec_dict<'py>(py: Python<'py>, spec: &ParamSpec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", spec.name)?;
    d.set_item(
        "kind",
        match spec.kind {
            crate::params::Kind::Duration => "duration",
            crate::params::Kind::Float => "float",
            crate::params::Kind::Int => "int",
            crate::params::Kind::Choice(_) => "choice",
            crate::params::Kind::Quantity(_) => "quantity",
        },
    )?;
    d.set_item("default", spec.default)?;
    d.set_item("range", spec.range_text())?;
    d.set_item("unit", spec.unit())?;
    d.set_item("doc", spec.doc)?;
    Ok(d)
}

/// A duration as users write it (`10ms`, `1.5s`, a bare number of seconds) → ns, or None.
#[pyfunction]
fn parse_duration(text: &str) -> Option<u64> {
    crate::time::parse_duration(text)
}

/// A quantity written with its unit (`20Mbps`, `1500B`, `100p`, `20ms`) in SI base units, by the
/// scenario files' own parsers (`sim::units::parse_quantity`); None for a bare number or a name.
#[pyfunction]
fn parse_quantity(text: &str) -> Option<f64> {
    crate::sim::units::parse_quantity(text)
}

/// Every component of every family ([`crate::catalogue`]), one dict each: family, name, aliases,
/// summary, source, params (name, kind, default, range, unit, doc) and defaults. The one listing:
/// `rttlab.estimators.catalog()` and `rttlab.sim.components()` are views of it.
#[pyfunction]
fn catalogue(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    crate::catalogue::catalogue()
        .iter()
        .map(|e| {
            let d = PyDict::new(py);
            d.set_item("family", e.family)?;
            d.set_item("name", e.decl.name)?;
            d.set_item("aliases", e.decl.aliases.to_vec())?;
            d.set_item("summary", e.decl.summary)?;
            d.set_item("source", e.decl.source)?;
            d.set_item(
                "params",
                e.decl
                    .params
                    .iter()
                    .map(|s| spec_dict(py, s))
                    .collect::<PyResult<Vec<_>>>()?,
            )?;
            let defaults = PyDict::new(py);
            for (k, v) in e.decl.defaults {
                defaults.set_item(k, v)?;
            }
            d.set_item("defaults", defaults)?;
            Ok(d)
        })
        .collect()
}

/// Validate an estimator name and its parameters (raises ParameterError).
#[pyfunction]
fn check_estimator(name: &str, params: Vec<(String, String)>) -> PyResult<()> {
    rtt::build(name, &params).map(|_| ()).map_err(param_error)
}

/// Replay estimators over (times_ns, rtts_ns) — two uint64 arrays, or a [`SeriesData`] as
/// `times_ns` and None as `rtts_ns` (no NumPy then) — one dict of metrics per estimator, in
/// order, with `prediction_s`/`rto_s` arrays when `trace` is true.
#[pyfunction]
#[pyo3(signature = (times_ns, rtts_ns, specs, tick_ns, trace=false, threads=1, starts=None, timer_granularity_ns=0, min_rto_ns=0, timestamps=false, stream_timestamps=None, losses=None, per_stream=false))]
#[allow(clippy::too_many_arguments)]
fn replay<'py>(
    py: Python<'py>,
    times_ns: &Bound<'py, PyAny>,
    rtts_ns: Option<&Bound<'py, PyAny>>,
    specs: Vec<Spec>,
    tick_ns: u64,
    trace: bool,
    threads: usize,
    starts: Option<Vec<usize>>,
    timer_granularity_ns: u64,
    min_rto_ns: u64,
    timestamps: bool,
    stream_timestamps: Option<Vec<bool>>,
    losses: Option<Vec<(usize, u64)>>,
    per_stream: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    // Either the columns of a SeriesData (checked first: no NumPy import) or two arrays, kept
    // borrowed while the replay runs.
    let held: Bound<'py, SeriesData>;
    let arrays: (PyReadonlyArray1<'py, u64>, PyReadonlyArray1<'py, u64>);
    let (times, rtts): (&[u64], &[u64]) = if let Ok(data) = times_ns.cast::<SeriesData>() {
        if rtts_ns.is_some_and(|r| !r.is_none()) {
            return Err(PyValueError::new_err(
                "a SeriesData holds both columns: pass None as rtts_ns",
            ));
        }
        held = data.clone();
        let d = held.get();
        (&d.times, &d.rtts)
    } else {
        let rtts_ns = rtts_ns.ok_or_else(|| PyValueError::new_err("rtts_ns is missing"))?;
        arrays = (times_ns.extract()?, rtts_ns.extract()?);
        (arrays.0.as_slice()?, arrays.1.as_slice()?)
    };
    let starts = starts.unwrap_or_default();
    if starts.windows(2).any(|w| w[0] >= w[1]) || starts.last().is_some_and(|&s| s > times.len()) {
        return Err(PyValueError::new_err(
            "stream starts must be strictly increasing indices within the samples",
        ));
    }
    if times.len() != rtts.len() {
        return Err(PyValueError::new_err(format!(
            "{} times but {} RTTs",
            times.len(),
            rtts.len()
        )));
    }
    if tick_ns == 0 {
        return Err(ParameterError::new_err("tick must be positive"));
    }
    let estimators = build_all(&specs)?;
    let cfg = ReplayConfig {
        tick: tick_ns,
        timer: TimerConfig {
            granularity: timer_granularity_ns,
            min_rto: min_rto_ns,
            timestamps,
        },
        trace,
        per_stream,
    };
    let stream_timestamps = stream_timestamps.unwrap_or_default();
    // Really lost segments: (stream index, timer start in ns), scored with W (docs/metrics.md).
    let mut losses = losses.unwrap_or_default();
    losses.sort_unstable();
    let streams = Streams {
        starts: &starts,
        timestamps: &stream_timestamps,
        losses: &losses,
    };
    let results = py.detach(|| replay_all(estimators, times, rtts, &streams, &cfg, threads));
    let secs = |ns: Nanos| ns as f64 / 1e9;
    specs
        .iter()
        .zip(results)
        .map(|((name, _), (m, tr, each))| {
            let d = metrics_dict(py, name, &m)?;
            if per_stream {
                d.set_item(
                    "streams",
                    each.iter()
                        .map(|m| metrics_dict(py, name, m))
                        .collect::<PyResult<Vec<_>>>()?,
                )?;
            }
            if let Some(tr) = tr {
                let pred: Vec<f64> = tr
                    .prediction
                    .iter()
                    .map(|p| p.map_or(f64::NAN, secs))
                    .collect();
                let after: Vec<f64> = tr
                    .prediction_after
                    .iter()
                    .map(|p| p.map_or(f64::NAN, secs))
                    .collect();
                let rto: Vec<f64> = tr.rto.iter().map(|&r| secs(r)).collect();
                let wait: Vec<f64> = tr.wait.iter().map(|&r| secs(r)).collect();
                d.set_item("prediction_s", pred.into_pyarray(py))?;
                d.set_item("prediction_after_s", after.into_pyarray(py))?;
                d.set_item("rto_s", rto.into_pyarray(py))?;
                d.set_item("wait_s", wait.into_pyarray(py))?;
                d.set_item("expiries_each", tr.expiries.clone().into_pyarray(py))?;
            }
            Ok(d)
        })
        .collect()
}

/// One estimator's metrics as a dict (keys: docs/metrics.md).
fn metrics_dict<'py>(
    py: Python<'py>,
    name: &str,
    m: &crate::eval::Metrics,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("estimator", name)?;
    d.set_item("samples", m.samples)?;
    d.set_item("predicted", m.predicted)?;
    d.set_item("mae_s", m.mae_s)?;
    d.set_item("mae_after_s", m.mae_after_s)?;
    d.set_item("mae_ticks", m.mae_ticks)?;
    d.set_item("mape", m.mape)?;
    d.set_item("under_prediction_rate", m.under_prediction_rate)?;
    d.set_item("bad_timeouts", m.bad_timeouts)?;
    d.set_item("bad_timeout_rate", m.bad_timeout_rate)?;
    d.set_item("expiries", m.expiries)?;
    d.set_item("karn_withheld", m.karn_withheld)?;
    d.set_item("wait_mean_s", m.wait_mean_s)?;
    d.set_item("wait_p99_s", m.wait_p99_s)?;
    d.set_item("rto_mean_s", m.rto_mean_s)?;
    d.set_item("lost_segments", m.lost_segments)?;
    d.set_item("lost_wait_mean_s", m.lost_wait_mean_s)?;
    d.set_item("lost_wait_max_s", m.lost_wait_max_s)?;
    Ok(d)
}

/// Least-squares fit of the regression estimator: features (n × 4: hops, min_rtt, max_rtt, ttl)
/// and targets (n) → [b0, b1, b2, b3, b4].
#[pyfunction]
fn fit_regression(
    features: PyReadonlyArray2<'_, f64>,
    targets: PyReadonlyArray1<'_, f64>,
) -> PyResult<[f64; 5]> {
    let view = features.as_array();
    if view.ncols() != 4 {
        return Err(PyValueError::new_err(format!(
            "features must have 4 columns (hops, min_rtt, max_rtt, ttl), got {}",
            view.ncols()
        )));
    }
    let rows: Vec<[f64; 4]> = view
        .rows()
        .into_iter()
        .map(|r| [r[0], r[1], r[2], r[3]])
        .collect();
    let targets = targets.as_slice()?;
    rtt::regression::fit(&rows, targets).map_err(|e| PyValueError::new_err(e.to_string()))
}

// ---- capture ----

use crate::capture::{self, Analysis, Method};

/// Read and analyse a pcap/pcapng capture → dict (see `rttlab.capture`): `samples`,
/// `connections` and `retransmissions` as Arrow tables in the columns `capture::tables` declares,
/// `counters`, `read` and `warnings`.
#[pyfunction]
#[pyo3(signature = (path, include_ambiguous=false, sack_samples=true))]
fn analyze_capture<'py>(
    py: Python<'py>,
    path: &str,
    include_ambiguous: bool,
    sack_samples: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = capture::Config {
        include_ambiguous,
        sack_samples,
        ..capture::Config::default()
    };
    let path_buf = std::path::PathBuf::from(path);
    let a = py
        .detach(|| capture::analyze_file(&path_buf, &cfg))
        .map_err(|e| capture_error(path, e))?;
    capture_dict(py, path, a)
}

/// A file's capture format from its first bytes: "pcap" or "pcapng", or None when it is no
/// capture (e.g. an RTT series, or unreadable: the caller's reader then reports why). A
/// compressed file raises InputError saying so. The one file-type check of every command.
#[pyfunction]
fn capture_format(path: &str) -> PyResult<Option<&'static str>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4);
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    if file.take(4).read_to_end(&mut head).is_err() {
        return Ok(None);
    }
    match capture::reader::sniff(&head) {
        Ok(capture::Format::Pcap) => Ok(Some("pcap")),
        Ok(capture::Format::PcapNg) => Ok(Some("pcapng")),
        Err(e @ capture::CaptureError::Compressed { .. }) => {
            Err(InputError::new_err(format!("{path}: {e}")))
        }
        Err(_) => Ok(None),
    }
}

fn capture_error(path: &str, e: capture::CaptureError) -> PyErr {
    match e {
        // The Io variant already names the file.
        capture::CaptureError::Io { .. } => InputError::new_err(e.to_string()),
        _ => InputError::new_err(format!("{path}: {e}")),
    }
}

/// A capture read in batches (`rttlab.capture.CaptureReader`): `next_batch(rows)` returns the
/// next dict of sample columns (None at the end), `finish()` the rest as `analyze_capture` does.
#[pyclass(module = "rttlab._core")]
struct CaptureStream {
    path: String,
    stream: Option<capture::Stream>,
    /// Threads asked for: with two or more, CSV text is also formatted on a writer thread.
    threads: usize,
}

#[pymethods]
impl CaptureStream {
    /// `threads`: analyse the file on this many threads (`capture::Stream::open_threads`;
    /// identical results).
    #[new]
    #[pyo3(signature = (path, include_ambiguous=false, sack_samples=true, threads=1))]
    fn new(
        path: &str,
        include_ambiguous: bool,
        sack_samples: bool,
        threads: usize,
    ) -> PyResult<Self> {
        let cfg = capture::Config {
            include_ambiguous,
            sack_samples,
            ..capture::Config::default()
        };
        let stream = capture::Stream::open_threads(std::path::Path::new(path), &cfg, threads);
        Ok(Self {
            path: path.to_owned(),
            stream: Some(stream.map_err(|e| capture_error(path, e))?),
            threads,
        })
    }

    /// The next batch of at least `rows` samples that pass the filter (`methods`: names, None
    /// for all; `conns`: ids, empty for all) as an Arrow table in the samples schema
    /// (`capture::export`; a first column `capture` holding `capture` when given), or None
    /// when done. No NumPy or pandas on the way: `pa.table(t)` takes it as it is.
    #[pyo3(signature = (rows, methods=None, conns=Vec::new(), capture=None))]
    fn next_arrow(
        &mut self,
        py: Python<'_>,
        rows: usize,
        methods: Option<Vec<String>>,
        conns: Vec<i64>,
        capture: Option<String>,
    ) -> PyResult<Option<ArrowTable>> {
        let filter = sample_filter(methods, &conns)?;
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        loop {
            let batch = py
                .detach(|| stream.next_batch(rows))
                .map_err(|e| capture_error(&self.path, e))?;
            let Some(batch) = batch else { return Ok(None) };
            let batch = filter.apply(batch);
            if !batch.is_empty() {
                return Ok(Some(ArrowTable {
                    batch: capture::export::record_batch(&batch, capture.as_deref()),
                }));
            }
            py.check_signals()?;
        }
    }

    /// Write every remaining sample that passes the filter (as for `next_arrow`) as CSV rows,
    /// exactly as pandas writes the samples DataFrame with `float_format="%.9f"`, to `path`
    /// (appended to when `append`) or to standard output (None; flush Python's buffer first),
    /// the header line first when `header`. Returns the number of rows written. Write errors
    /// are OSErrors with errno and strerror, as Python's own writes raise them.
    #[pyo3(signature = (path, header, append=false, rows=1 << 16, methods=None, conns=Vec::new(), capture=None))]
    #[allow(clippy::too_many_arguments)]
    fn write_csv(
        &mut self,
        py: Python<'_>,
        path: Option<String>,
        header: bool,
        append: bool,
        rows: usize,
        methods: Option<Vec<String>>,
        conns: Vec<i64>,
        capture: Option<String>,
    ) -> PyResult<u64> {
        use std::io::Write;
        let filter = sample_filter(methods, &conns)?;
        let threads = self.threads;
        let Some(stream) = self.stream.as_mut() else {
            return Ok(0);
        };
        let sink: Box<dyn Write + Send> = match &path {
            Some(p) => Box::new(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .append(append)
                    .truncate(!append)
                    .open(p)
                    .map_err(os_error)?,
            ),
            None => Box::new(std::io::stdout()),
        };
        let mut out = std::io::BufWriter::with_capacity(1 << 18, sink);
        if header {
            out.write_all(capture::export::csv_header(capture.is_some()).as_bytes())
                .map_err(os_error)?;
        }
        // With a second thread the rows are formatted and written beside the analysis.
        let mut csv = capture::background::SampleSink::new(
            capture::export::CsvRows(out),
            threads >= 2,
            "rttlab-csv",
        )
        .map_err(os_error)?;
        let mut written = 0u64;
        loop {
            let step = py.detach(|| -> PyResult<bool> {
                let Some(batch) = stream
                    .next_batch(rows)
                    .map_err(|e| capture_error(&self.path, e))?
                else {
                    return Ok(false);
                };
                let batch = filter.apply(batch);
                written += batch.len() as u64;
                csv.write(batch, capture.as_deref()).map_err(os_error)?;
                while let Some(spare) = csv.spare() {
                    stream.recycle(spare);
                }
                Ok(true)
            })?;
            if !step {
                break;
            }
            py.check_signals()?;
        }
        py.detach(|| csv.finish()).map_err(os_error)?;
        Ok(written)
    }

    /// Write every remaining sample that passes the filter (as for `next_arrow`) into the
    /// Parquet file `sink` (`capture::parquet_file`: one row group per batch of `rows`), with a
    /// first column `capture` holding `capture` when given. Returns the rows written. Write errors
    /// are OSErrors, as for `write_csv`.
    #[pyo3(signature = (sink, rows=1 << 16, methods=None, conns=Vec::new(), capture=None))]
    fn write_parquet(
        &mut self,
        py: Python<'_>,
        mut sink: PyRefMut<'_, ParquetSink>,
        rows: usize,
        methods: Option<Vec<String>>,
        conns: Vec<i64>,
        capture: Option<String>,
    ) -> PyResult<u64> {
        let filter = sample_filter(methods, &conns)?;
        let Some(stream) = self.stream.as_mut() else {
            return Ok(0);
        };
        let file = sink
            .file
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut();
        let file =
            file.ok_or_else(|| PyValueError::new_err("the Parquet file was already closed"))?;
        let mut written = 0u64;
        loop {
            let step = py.detach(|| -> PyResult<bool> {
                let Some(batch) = stream
                    .next_batch(rows)
                    .map_err(|e| capture_error(&self.path, e))?
                else {
                    return Ok(false);
                };
                let batch = filter.apply(batch);
                if !batch.is_empty() {
                    written += batch.len() as u64;
                    file.write(batch, capture.as_deref()).map_err(os_error)?;
                    while let Some(spare) = file.spare() {
                        stream.recycle(spare);
                    }
                }
                Ok(true)
            })?;
            if !step {
                break;
            }
            py.check_signals()?;
        }
        Ok(written)
    }

    /// Read to the end (dropping the samples inside the core) and finish: the connections,
    /// counters and warnings as a `CaptureSummary`, no NumPy array or dict built (what `rttlab
    /// flows --json` and `rttlab samples` need).
    fn summary(&mut self, py: Python<'_>) -> PyResult<CaptureSummary> {
        let mut stream = self
            .stream
            .take()
            .ok_or_else(|| PyValueError::new_err("finish() was already called"))?;
        let a = py
            .detach(|| -> Result<Analysis, capture::CaptureError> {
                stream.drain()?;
                Ok(stream.finish())
            })
            .map_err(|e| capture_error(&self.path, e))?;
        Ok(CaptureSummary {
            path: self.path.clone(),
            analysis: Some(a),
        })
    }

    /// The next batch of at least `rows` samples as an Arrow table in the samples schema, or
    /// None when done.
    fn next_batch(&mut self, py: Python<'_>, rows: usize) -> PyResult<Option<ArrowTable>> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        let batch = py
            .detach(|| stream.next_batch(rows))
            .map_err(|e| capture_error(&self.path, e))?;
        Ok(batch.map(|s| ArrowTable {
            batch: capture::tables::record_batch(&s, None),
        }))
    }

    /// Read to the end, dropping the samples inside the core (no Python objects are built: what
    /// `rttlab flows` needs); returns how many were dropped.
    fn drain(&mut self, py: Python<'_>) -> PyResult<u64> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(0);
        };
        py.detach(|| stream.drain())
            .map_err(|e| capture_error(&self.path, e))
    }

    /// Connections, counters, read statistics and warnings (and any samples not yet taken), once
    /// `next_batch` returned None.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stream = self
            .stream
            .take()
            .ok_or_else(|| PyValueError::new_err("finish() was already called"))?;
        let a = py.detach(|| stream.finish());
        capture_dict(py, &self.path, a)
    }
}

/// A Parquet file of samples being written (`capture::parquet_file`), shared by the streams of
/// several captures written into one file. `close()` writes the footer.
#[pyclass(module = "rttlab._core")]
struct ParquetSink {
    // A Mutex only to make the class Sync (the writer's encoders are Send, not Sync); Python's
    // calls come one at a time.
    file: std::sync::Mutex<Option<capture::parquet_file::SampleParquet>>,
}

#[pymethods]
impl ParquetSink {
    /// Create (truncate) `path`, with a first column `capture` when `with_capture`; `background`
    /// encodes and writes on a thread of its own while the analysis goes on (the same file).
    /// Errors are OSErrors naming the file's problem (errno and strerror).
    #[new]
    #[pyo3(signature = (path, with_capture=false, background=false))]
    fn new(path: &str, with_capture: bool, background: bool) -> PyResult<Self> {
        let file = capture::parquet_file::SampleParquet::create(
            std::path::Path::new(path),
            with_capture,
            background,
        )
        .map_err(os_error)?;
        Ok(Self {
            file: std::sync::Mutex::new(Some(file)),
        })
    }

    /// Write the footer; returns the rows the file holds. A file with no rows still has the
    /// columns.
    fn close(&mut self, py: Python<'_>) -> PyResult<u64> {
        let file = self
            .file
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let file =
            file.ok_or_else(|| PyValueError::new_err("the Parquet file was already closed"))?;
        py.detach(|| file.close()).map_err(os_error)
    }
}

/// A capture's result without its samples (`CaptureStream.summary()`): connections, counters,
/// warnings, read statistics, kept in Rust until asked for.
#[pyclass(module = "rttlab._core")]
struct CaptureSummary {
    path: String,
    analysis: Option<Analysis>,
}

impl CaptureSummary {
    fn analysis(&self) -> PyResult<&Analysis> {
        self.analysis
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("the summary was already turned into a dict"))
    }
}

#[pymethods]
impl CaptureSummary {
    /// How many connections the capture has.
    fn connection_count(&self) -> PyResult<usize> {
        Ok(self.analysis()?.connections.len())
    }

    /// The counters dict (as `analyze_capture`'s `counters`).
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters_dict(py, &self.analysis()?.counters)
    }

    /// The warnings (as `analyze_capture`'s `warnings`).
    fn warnings(&self) -> PyResult<Vec<String>> {
        Ok(capture_warnings(&self.path, self.analysis()?))
    }

    /// Write the connection records of `rttlab flows --json` (`capture::flows_json`: the
    /// `"flows"` list's body and the object's end, after `indent`) to `out`, a text file object,
    /// by `out.write` of pieces of about 1 MB.
    fn write_flows_json(
        &self,
        py: Python<'_>,
        out: Bound<'_, PyAny>,
        indent: &str,
    ) -> PyResult<()> {
        let conns = &self.analysis()?.connections;
        capture::flows_json::write_records(conns, indent, 1 << 20, |piece| {
            out.call_method1("write", (piece,)).map(|_| ())
        })?;
        let _ = py;
        Ok(())
    }

    /// The dict `analyze_capture` returns (samples empty); the summary is used up.
    #[allow(clippy::wrong_self_convention)] // Python's name; `&mut self` because it is consumed
    fn to_dict<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let a = self
            .analysis
            .take()
            .ok_or_else(|| PyValueError::new_err("the summary was already turned into a dict"))?;
        capture_dict(py, &self.path, a)
    }
}

fn sample_filter(methods: Option<Vec<String>>, conns: &[i64]) -> PyResult<capture::export::Filter> {
    let methods = methods
        .map(|names| {
            names
                .iter()
                .map(|n| {
                    Method::from_name(n).ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "unknown sample method '{n}' (seq, ts or syn)"
                        ))
                    })
                })
                .collect::<PyResult<Vec<_>>>()
        })
        .transpose()?;
    Ok(capture::export::Filter::new(methods.as_deref(), conns))
}

/// An I/O error as Python's own OSError (errno and strerror set, so `BrokenPipeError`,
/// `e.strerror` and the CLI's one-line messages work as for writes made in Python).
fn os_error(e: std::io::Error) -> PyErr {
    match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            let strerror = text
                .strip_suffix(&format!(" (os error {code})"))
                .unwrap_or(&text)
                .to_owned();
            pyo3::exceptions::PyOSError::new_err((code, strerror))
        }
        None => PyErr::from(e),
    }
}

/// The connection columns as `capture::tables::CONN_COLUMNS` declares them: (name, kind, unit,
/// meaning), kind one of `count`, `opt_int`, `seconds`, `opt_seconds`, `flag`, `text`.
#[pyfunction]
fn connection_columns() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    capture::tables::CONN_COLUMNS
        .iter()
        .map(|c| (c.name, c.ty.key(), c.unit, c.doc))
        .collect()
}

/// The samples table's Arrow schema (`capture::tables::schema`), for an empty Parquet file.
#[pyfunction]
#[pyo3(signature = (with_capture=false))]
fn sample_schema(with_capture: bool) -> ArrowSchema {
    ArrowSchema {
        schema: std::sync::Arc::new(capture::tables::schema(with_capture)),
    }
}

fn capture_dict<'py>(py: Python<'py>, path: &str, a: Analysis) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let warnings = capture_warnings(path, &a);
    // The three tables as Arrow, in the columns `capture::tables` declares (pyarrow, pandas and
    // DuckDB take them without a copy); retransmissions carry the evidence on whether each was
    // needed (capture::loss).
    out.set_item(
        "samples",
        ArrowTable {
            batch: capture::tables::record_batch(&a.samples, None),
        },
    )?;
    out.set_item(
        "connections",
        ArrowTable {
            batch: capture::tables::conn_batch(&a.connections),
        },
    )?;
    out.set_item(
        "retransmissions",
        ArrowTable {
            batch: capture::tables::rtx_batch(&a.retransmissions),
        },
    )?;

    out.set_item("counters", counters_dict(py, &a.counters)?)?;

    let read = PyDict::new(py);
    read.set_item(
        "format",
        match a.read.format {
            capture::Format::Pcap => "pcap",
            capture::Format::PcapNg => "pcapng",
        },
    )?;
    read.set_item("frames", a.read.frames)?;
    read.set_item("interfaces", a.read.interfaces)?;
    read.set_item("snaplens", a.read.snaplens.clone())?;
    read.set_item("start_ns", a.start_ns)?;
    if let Some(d) = &a.read.damage {
        read.set_item("damage_packet", d.packet)?;
        read.set_item("damage_offset", d.offset)?;
    }
    out.set_item("read", read)?;
    out.set_item("warnings", warnings)?;
    Ok(out)
}

fn counters_dict<'py>(py: Python<'py>, k: &capture::Counters) -> PyResult<Bound<'py, PyDict>> {
    let counters = PyDict::new(py);
    for (name, v) in [
        ("frames", k.frames),
        ("tcp", k.tcp),
        ("not_tcp", k.not_tcp),
        ("unsupported_link", k.unsupported_link),
        ("non_first_fragments", k.non_first_fragments),
        ("malformed", k.malformed),
        ("options_cut", k.options_cut),
        ("negative_rtt", k.negative_rtt),
        ("outstanding_dropped", k.outstanding_dropped),
        ("ambiguous", k.ambiguous),
        ("idle_echoes", k.idle_echoes),
    ] {
        counters.set_item(name, v)?;
    }
    Ok(counters)
}

/// The capture's warnings, each naming the file.
fn capture_warnings(path: &str, a: &Analysis) -> Vec<String> {
    let k = &a.counters;
    let mut warnings = Vec::new();
    if let Some(d) = &a.read.damage {
        warnings.push(format!(
            "{path}: {d}; the {} packets before it were analysed",
            d.packet - 1
        ));
    }
    if a.read.orphan_packets > 0 {
        warnings.push(format!(
            "{path}: {} packets name an undescribed interface and were skipped",
            a.read.orphan_packets
        ));
    }
    if let Some(lt) = k.first_unsupported_link {
        warnings.push(format!(
            "{path}: {} frames of link type {lt} were skipped: rttlab reads Ethernet, Linux cooked (v1, v2), raw IP, PPP and BSD/OpenBSD loopback frames",
            k.unsupported_link
        ));
    }
    warnings
}

fn register_capture(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_capture, m)?)?;
    m.add_function(wrap_pyfunction!(capture_format, m)?)?;
    m.add_function(wrap_pyfunction!(sample_schema, m)?)?;
    m.add_function(wrap_pyfunction!(connection_columns, m)?)?;
    m.add_class::<CaptureStream>()?;
    m.add_class::<CaptureSummary>()?;
    m.add_class::<ParquetSink>()?;
    Ok(())
}
// ---- end capture ----

// ---- sim ----
// The simulator: a scenario in, summaries and traces out, all as NumPy columns.

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario file or override is invalid; the message names the key."
);

/// One result table as Arrow: pyarrow (`pa.table(t)`), polars and DuckDB import it through the
/// Arrow PyCapsule interface (`__arrow_c_stream__`) without copying the columns.
#[pyclass(frozen, module = "rttlab._core")]
struct ArrowTable {
    batch: arrow_array::RecordBatch,
}

#[pymethods]
impl ArrowTable {
    /// A capsule holding an `ArrowArrayStream` of this table's one batch. The requested schema
    /// is ignored (allowed by the protocol): the table has one schema.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        use arrow_array::ffi_stream::FFI_ArrowArrayStream;
        let _ = requested_schema;
        let schema = self.batch.schema();
        let reader = arrow_array::RecordBatchIterator::new([Ok(self.batch.clone())], schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        pyo3::types::PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    fn __arrow_c_schema__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        schema_capsule(py, &self.batch.schema())
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }
}

/// An Arrow schema wrapped for `pa.schema(obj)` (the PyCapsule interface's `__arrow_c_schema__`).
#[pyclass(frozen, module = "rttlab._core")]
struct ArrowSchema {
    schema: arrow_schema::SchemaRef,
}

#[pymethods]
impl ArrowSchema {
    fn __arrow_c_schema__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        schema_capsule(py, &self.schema)
    }
}

fn schema_capsule<'py>(
    py: Python<'py>,
    schema: &arrow_schema::Schema,
) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
    let ffi = arrow_schema::ffi::FFI_ArrowSchema::try_from(schema)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    pyo3::types::PyCapsule::new_with_value(py, ffi, c"arrow_schema")
}

/// The result tables' names and Arrow schemas (`src/sim/tables.rs`): flows, channels, then the
/// traces.
#[pyfunction]
fn result_schemas(py: Python<'_>) -> PyResult<Vec<(&'static str, Py<ArrowSchema>)>> {
    crate::sim::tables::schemas()
        .into_iter()
        .map(|(name, schema)| {
            Ok((
                name,
                Py::new(
                    py,
                    ArrowSchema {
                        schema: std::sync::Arc::new(schema),
                    },
                )?,
            ))
        })
        .collect()
}

/// Events between two checks for Ctrl-C and progress reports: a few milliseconds of work.
const CHECK_EVERY: u64 = 1 << 14;

/// Run a scenario given as TOML text, with `key.path=value` overrides applied first. Returns a
/// dict: scalars (`schema_version`, `name`, `seed`, `duration_ns`, `events`, `event_hash`,
/// `aggregate_goodput_bps`, `jain_index`, `bottleneck`), `flows` and `channels` (Arrow tables,
/// one row per flow / channel), and `traces` (dict of trace name → Arrow table, only the traces
/// asked for: `traces` is "all", "none" or a comma-separated list). Tables are [`ArrowTable`]s
/// in the schemas of `sim::tables`.
///
/// The run releases the GIL; every few thousand events it takes it back to let Python handle
/// signals (Ctrl-C ends the run within milliseconds) and to call
/// `progress(simulated_ns, end_ns)` if given. An exception from either ends the run: the dict
/// then holds what was simulated up to there and `interrupted` = {`error`: the exception,
/// `at_ns`, `end_ns`}, for the caller to raise once it has kept the partial result.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), traces="all", progress=None))]
fn simulate<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    traces: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    use crate::sim::trace::TraceSet;
    use std::ops::ControlFlow;
    let keep =
        TraceSet::parse(traces).map_err(|e| ScenarioError::new_err(format!("traces: {e}")))?;
    let text = text.to_owned();
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let scenario = crate::sim::config::Scenario::from_toml(&text, &overrides)?;
        crate::sim::run_with(&scenario, keep, CHECK_EVERY, |p| {
            Python::attach(|py| {
                let answer = py.check_signals().and_then(|()| match &progress {
                    Some(f) => f.call1(py, (p.now, p.end)).map(|_| ()),
                    None => Ok(()),
                });
                match answer {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        raised = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })
        })
    });
    // A cancelled run (Ctrl-C, an exception from `progress`) still returns what it simulated,
    // summarised as a run that ended where it stopped; `interrupted` carries the exception and
    // where the run was, for the caller to raise once it has kept the partial result.
    let (r, interrupted) = match result {
        Ok(r) => (r, None),
        Err(crate::sim::RunError::Cancelled { at, end, partial }) => {
            let error = raised.unwrap_or_else(|| {
                pyo3::exceptions::PyKeyboardInterrupt::new_err("simulation cancelled")
            });
            (*partial, Some((error, at, end)))
        }
        Err(e) => return Err(ScenarioError::new_err(e.to_string())),
    };
    let out = PyDict::new(py);
    if let Some((error, at, end)) = interrupted {
        let info = PyDict::new(py);
        info.set_item("error", error.into_value(py))?;
        info.set_item("at_ns", at)?;
        info.set_item("end_ns", end)?;
        out.set_item("interrupted", info)?;
    }
    out.set_item("schema_version", crate::sim::RESULT_SCHEMA_VERSION)?;
    out.set_item("name", r.name.clone())?;
    out.set_item("seed", r.seed)?;
    out.set_item("duration_ns", r.duration)?;
    out.set_item("warmup_ns", r.warmup)?;
    out.set_item("events", r.events)?;
    out.set_item("event_hash", format!("{:016x}", r.event_hash))?;
    out.set_item("aggregate_goodput_bps", r.aggregate_goodput_bps)?;
    out.set_item("jain_index", r.jain_index)?;
    out.set_item("bottleneck", r.bottleneck)?;

    // Every table as Arrow, in the schemas of `sim::tables` (defined there once).
    let traces = PyDict::new(py);
    for (name, batch) in crate::sim::tables::batches(&r) {
        let table = ArrowTable { batch };
        match name {
            "flows" | "channels" => out.set_item(name, table)?,
            _ => traces.set_item(name, table)?,
        }
    }
    out.set_item("traces", traces)?;
    Ok(out)
}

/// The scenario (TOML text, `key.path=value` overrides applied first) with every default filled
/// in, as canonical TOML: what `rttlab.Scenario` hashes. Raises ScenarioError naming the key.
/// `form` picks the canonical form's version (1: what stores written before version 2 are keyed
/// by; 2: the current one, docs/experiments.md "Canonical form").
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), form=2))]
fn resolve_scenario(text: &str, overrides: Vec<String>, form: u32) -> PyResult<String> {
    use crate::sim::config::CanonicalForm;
    let form = CanonicalForm::numbered(form).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!("canonical form {form} is not 1 or 2"))
    })?;
    crate::sim::config::Scenario::from_toml(text, &overrides)
        .and_then(|s| s.to_canonical_toml_as(form))
        .map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// [`resolve_scenario`]'s text and the same canonical form as Python data — what `tomllib.loads`
/// of the text gives, read here by the core's TOML parser (several times faster; `rttlab.Scenario`
/// hashes it for every run a sweep plans).
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), form=2))]
fn resolve_scenario_table<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    form: u32,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let canonical = resolve_scenario(text, overrides, form)?;
    let table: toml::Table = canonical.parse().map_err(|e: toml::de::Error| {
        ScenarioError::new_err(format!(
            "canonical form does not read back: {}",
            e.message()
        ))
    })?;
    let data = toml_table(py, &table)?;
    Ok((canonical, data))
}

fn toml_table<'py>(py: Python<'py>, t: &toml::Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in t {
        d.set_item(k, toml_value(py, v)?)?;
    }
    Ok(d)
}

fn toml_value<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    match v {
        toml::Value::String(s) => s.into_bound_py_any(py),
        toml::Value::Integer(i) => i.into_bound_py_any(py),
        toml::Value::Float(f) => f.into_bound_py_any(py),
        toml::Value::Boolean(b) => b.into_bound_py_any(py),
        toml::Value::Datetime(d) => d.to_string().into_bound_py_any(py),
        toml::Value::Array(a) => {
            let list = pyo3::types::PyList::empty(py);
            for x in a {
                list.append(toml_value(py, x)?)?;
            }
            Ok(list.into_any())
        }
        toml::Value::Table(t) => Ok(toml_table(py, t)?.into_any()),
    }
}

// ---- receiver-side loss discriminators (Biaz, mBiaz, Spike, ZigZag, ZBS) ----

/// The gaps `classify_arrivals` finds, as columns: time (ns), from, seq, missing, and one list of
/// "congestion"/"corruption" per discriminator.
fn gaps_dict<'py>(
    py: Python<'py>,
    arrivals: &[crate::discriminator::score::Arrival],
) -> PyResult<Bound<'py, PyDict>> {
    use crate::discriminator::{receiver_side, score::classify_arrivals, LossClass};
    let mut ds = receiver_side();
    let names: Vec<&'static str> = ds.iter().map(|d| d.name()).collect();
    let gaps = classify_arrivals(arrivals, &mut ds);
    let d = PyDict::new(py);
    d.set_item("time", gaps.iter().map(|g| g.time).collect::<Vec<_>>())?;
    d.set_item("from", gaps.iter().map(|g| g.from).collect::<Vec<_>>())?;
    d.set_item("seq", gaps.iter().map(|g| g.seq).collect::<Vec<_>>())?;
    d.set_item(
        "missing",
        gaps.iter().map(|g| g.missing).collect::<Vec<_>>(),
    )?;
    for (i, name) in names.iter().enumerate() {
        let v: Vec<&str> = gaps
            .iter()
            .map(|g| {
                if g.verdicts[i] == LossClass::Congestion {
                    "congestion"
                } else {
                    "corruption"
                }
            })
            .collect();
        d.set_item(*name, v)?;
    }
    Ok(d)
}

/// Receiver-side discriminators on one flow's arrivals, in arrival order: arrival time and
/// send time (ns, any clock offset), sequence number, payload bytes.
#[pyfunction]
fn classify_arrivals<'py>(
    py: Python<'py>,
    time: Vec<u64>,
    seq: Vec<u64>,
    len: Vec<u32>,
    sent: Vec<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    use crate::discriminator::score::Arrival;
    if time.len() != seq.len() || time.len() != len.len() || time.len() != sent.len() {
        return Err(PyValueError::new_err(
            "time, seq, len and sent must have one length",
        ));
    }
    let arrivals: Vec<Arrival> = (0..time.len())
        .map(|i| Arrival {
            time: time[i],
            seq: seq[i],
            len: len[i],
            sent: sent[i],
        })
        .collect();
    gaps_dict(py, &arrivals)
}

/// Receiver-side discriminators on every direction of every TCP connection in a capture
/// (classification only): a list of {src, dst, ts_hz, packets, gaps}.
#[pyfunction]
fn capture_loss_classes<'py>(py: Python<'py>, path: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let p = std::path::PathBuf::from(path);
    let dirs = py
        .detach(|| capture::arrivals::from_file(&p))
        .map_err(|e| capture_error(path, e))?;
    dirs.iter()
        .map(|dir| {
            let d = PyDict::new(py);
            d.set_item("src", &dir.src)?;
            d.set_item("dst", &dir.dst)?;
            d.set_item("ts_hz", dir.ts_hz)?;
            d.set_item("packets", dir.arrivals.len())?;
            d.set_item("gaps", gaps_dict(py, &dir.arrivals)?)?;
            Ok(d)
        })
        .collect()
}

/// Every loss discriminator, sender and receiver side, scored open loop on one simulated run
/// against its ground truth (`discriminator::score`; docs/reproductions/spectcp.md, Fig. 8): per
/// flow, one row per discriminator with the four counts of truth × verdict. The run keeps every
/// trace it needs; the sender-side ones see the flow's RTT samples and window, the receiver-side
/// ones its arrivals.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new()))]
fn score_discriminators<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    use crate::discriminator::score::{score, score_receiver, Confusion};
    use crate::discriminator::{receiver_side, sender_side};
    use crate::sim::trace::TraceSet;
    let text = text.to_owned();
    let rows: Vec<(u32, &'static str, &'static str, Confusion)> = py
        .detach(|| -> Result<_, String> {
            let sc = crate::sim::config::Scenario::from_toml(&text, &overrides)
                .map_err(|e| e.to_string())?;
            let mut e = crate::sim::build_with(&sc, TraceSet::EVERY).map_err(|e| e.to_string())?;
            e.run();
            let mut rows = Vec::new();
            for (f, flow) in e.flows.iter().enumerate() {
                let f = f as u32;
                // The Bernoulli predictor's stream, as in the discriminators example: the run's seed.
                let mut senders = sender_side(sc.simulation.seed);
                let names: Vec<&'static str> = senders.iter().map(|d| d.name()).collect();
                for (name, c) in names.into_iter().zip(score(
                    &e.trace,
                    f,
                    flow.sender.mss() as u64,
                    &mut senders,
                )) {
                    rows.push((f, "sender", name, c));
                }
                let mut receivers = receiver_side();
                let names: Vec<&'static str> = receivers.iter().map(|d| d.name()).collect();
                for (name, c) in names
                    .into_iter()
                    .zip(score_receiver(&e.trace, f, &mut receivers))
                {
                    rows.push((f, "receiver", name, c));
                }
            }
            Ok(rows)
        })
        .map_err(ScenarioError::new_err)?;
    let d = PyDict::new(py);
    d.set_item("flow", rows.iter().map(|r| r.0).collect::<Vec<_>>())?;
    d.set_item("side", rows.iter().map(|r| r.1).collect::<Vec<_>>())?;
    d.set_item(
        "discriminator",
        rows.iter().map(|r| r.2).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "congestion_as_congestion",
        rows.iter()
            .map(|r| r.3.congestion_as_congestion)
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "congestion_as_corruption",
        rows.iter()
            .map(|r| r.3.congestion_as_corruption)
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "corruption_as_corruption",
        rows.iter()
            .map(|r| r.3.corruption_as_corruption)
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "corruption_as_congestion",
        rows.iter()
            .map(|r| r.3.corruption_as_congestion)
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// Each flow's TCP settings a real stack is given (the testbed's Linux, ns-3), as the simulator
/// builds them from the scenario's typed `[tcp]` (a group's merged over it), in flow order:
/// `mss` (bytes), `init_cwnd` (segments), `sack`, `timestamps`, `ecn`, `receiver_ecn`, and
/// `delayed_ack_ns` (None: every segment is ACKed at once, whichever of "off"/"none"/"false"
/// the scenario wrote) and `rtt_sampling` (`"timed"` or `"every-ack"`, used without timestamps).
fn flow_tcp_of<'py>(
    py: Python<'py>,
    scenario: &crate::sim::config::Scenario,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut out = Vec::new();
    for (g, group) in scenario.flows.iter().enumerate() {
        let t = crate::sim::build_tcp(
            group.tcp.as_ref().unwrap_or(&scenario.tcp),
            &format!("flows[{g}].tcp"),
        )
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        for _ in 0..group.count {
            let d = PyDict::new(py);
            d.set_item("mss", t.mss)?;
            d.set_item("init_cwnd", t.init_cwnd)?;
            d.set_item("sack", t.sack)?;
            d.set_item("timestamps", t.timestamps)?;
            d.set_item("ecn", t.ecn)?;
            d.set_item("receiver_ecn", t.receiver_ecn)?;
            d.set_item("delayed_ack_ns", t.delayed_ack.map(|a| a.timeout))?;
            // How the sender's meter samples RTTs without timestamps (the testbed applies the
            // same rule to the pcap's samples, python/rttlab/testbed/run.py `_meter_rule`).
            d.set_item(
                "rtt_sampling",
                match t.sampling {
                    crate::sim::tcp::Sampling::Timed => "timed",
                    crate::sim::tcp::Sampling::EveryAck => "every-ack",
                },
            )?;
            out.push(d);
        }
    }
    Ok(out)
}

/// [`flow_tcp_of`] for a scenario's TOML text; `ScenarioError` naming the key for a bad one.
#[pyfunction]
fn flow_tcp<'py>(py: Python<'py>, text: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let scenario = crate::sim::config::Scenario::from_toml(text, &[])
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    flow_tcp_of(py, &scenario)
}

fn register_sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(score_discriminators, m)?)?;
    m.add_function(wrap_pyfunction!(classify_arrivals, m)?)?;
    m.add_function(wrap_pyfunction!(capture_loss_classes, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(flow_tcp, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_scenario_table, m)?)?;
    m.add_function(wrap_pyfunction!(result_schemas, m)?)?;
    m.add_class::<ArrowTable>()?;
    m.add_class::<ArrowSchema>()?;
    Ok(())
}
// ---- end sim ----

// ---- testbed ----
// The real-time emulator: the scenario's network on real packets through TUN devices.

/// A scenario's network as a real-time emulator. `Testbed(text, overrides)` builds and checks it
/// (no privileges needed); `open(names, pcaps)` creates one TUN device per host (root); then
/// `run_until(ns)` runs it in real time, releasing the GIL, returning early on a signal.
#[cfg(target_os = "linux")]
#[pyclass(module = "rttlab._core")]
struct Testbed {
    emu: Option<crate::testbed::Emulator>,
    rt: Option<crate::testbed::realtime::Realtime>,
    scenario: crate::sim::config::Scenario,
}

#[cfg(target_os = "linux")]
impl Testbed {
    fn emu(&self) -> &crate::testbed::Emulator {
        match (&self.rt, &self.emu) {
            (Some(rt), _) => &rt.emu,
            (None, Some(e)) => e,
            (None, None) => unreachable!("an emulator is always held"),
        }
    }
    fn rt(&mut self) -> PyResult<&mut crate::testbed::realtime::Realtime> {
        self.rt.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "the testbed's devices are not open yet (call open first)",
            )
        })
    }
}

#[cfg(target_os = "linux")]
#[pymethods]
impl Testbed {
    #[new]
    #[pyo3(signature = (text, overrides=Vec::new()))]
    fn new(text: &str, overrides: Vec<String>) -> PyResult<Self> {
        let scenario = crate::sim::config::Scenario::from_toml(text, &overrides)
            .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let emu = crate::testbed::Emulator::new(&scenario)
            .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        Ok(Self {
            emu: Some(emu),
            rt: None,
            scenario,
        })
    }

    /// The host node behind each port, in port order.
    #[getter]
    fn hosts(&self) -> Vec<u32> {
        self.emu().hosts.clone()
    }

    /// Each flow's (sender node, receiver node).
    #[getter]
    fn endpoints(&self) -> Vec<(u32, u32)> {
        self.emu().endpoints.clone()
    }

    /// Each flow's plan as (start ns, stop ns or None, bytes or None for bulk, group, cc name).
    #[getter]
    fn plans(&self) -> Vec<FlowPlanRow> {
        self.emu()
            .plans
            .iter()
            .map(|p| (p.start, p.stop, p.bytes, p.group, p.cc.clone()))
            .collect()
    }

    /// Each flow's TCP settings the testbed gives Linux (per namespace and per socket): the
    /// module's `flow_tcp` of this scenario.
    #[getter]
    fn flow_tcp<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        flow_tcp_of(py, &self.scenario)
    }

    /// Flow `flow`'s on/off application writes as (scenario time ns, bytes); empty for bulk.
    fn app_writes(&self, flow: usize) -> PyResult<Vec<(u64, u64)>> {
        let plans = &self.emu().plans;
        plans
            .get(flow)
            .map(|p| p.writes.clone())
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("no flow {flow}")))
    }

    /// Every channel as (name, from node, to node, bandwidth bit/s, delay ns).
    #[getter]
    fn links(&self) -> Vec<(String, u32, u32, u64, u64)> {
        self.emu()
            .net
            .channels
            .iter()
            .map(|c| (c.name.clone(), c.from, c.to, c.bandwidth, c.delay))
            .collect()
    }

    /// Each flow's stack: "kernel" (Linux's, in the sender's namespace) or "rttlab" (rttlab's
    /// sender at its host's port of the emulator), from `[[flows]] stack`.
    #[getter]
    fn stacks(&self) -> Vec<String> {
        let mut out = Vec::new();
        for g in &self.scenario.flows {
            out.extend((0..g.count).map(|_| g.stack.unwrap_or_default().name().to_string()));
        }
        out
    }

    /// Create TUN device `names[i]` for host port i, and a pcap at `pcaps[i]` ("" for none). Every
    /// `stack = "rttlab"` flow gets rttlab's sender at its host's port; a host with no namespace
    /// (one that only sends rttlab flows) gets the name "" and no TUN.
    fn open(&mut self, names: Vec<String>, pcaps: Vec<String>) -> PyResult<()> {
        let emu = self
            .emu
            .take()
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("already open"))?;
        if names.len() != emu.hosts.len() || pcaps.len() != emu.hosts.len() {
            let n = emu.hosts.len();
            self.emu = Some(emu);
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "need {n} device names and pcap paths, one per host"
            )));
        }
        let stacks = match wire_senders(&self.scenario, &emu, &names) {
            Ok(s) => s,
            Err(e) => {
                self.emu = Some(emu);
                return Err(ScenarioError::new_err(e.to_string()));
            }
        };
        use crate::testbed::realtime::{open_pcaps, open_tun, Realtime};
        let opened = names
            .iter()
            .map(|n| {
                if n.is_empty() {
                    Ok(None)
                } else {
                    open_tun(n).map(Some)
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|t| Ok((t, open_pcaps(&pcaps)?)));
        match opened {
            Ok((tuns, writers)) => {
                self.rt = Some(Realtime::new(emu, tuns, writers, stacks));
                Ok(())
            }
            Err(e) => {
                self.emu = Some(emu);
                Err(os_error(e))
            }
        }
    }

    /// Start the emulator's clock at zero now; returns that instant on `CLOCK_MONOTONIC` (ns).
    fn restart_clock(&mut self) -> PyResult<u64> {
        let rt = self.rt()?;
        rt.restart_clock();
        Ok(rt.origin)
    }

    /// The emulator's time (ns since its clock started).
    fn now(&mut self) -> PyResult<u64> {
        Ok(self.rt()?.now())
    }

    /// Run in real time until the emulator's clock reads `until` ns, or a signal arrives.
    fn run_until(&mut self, py: Python<'_>, until: u64) -> PyResult<u64> {
        let rt = self.rt()?;
        py.detach(|| rt.run_until(until)).map_err(os_error)?;
        let now = rt.now();
        py.check_signals()?;
        Ok(now)
    }

    /// What rttlab's senders (`stack = "rttlab"` flows) did on the wire, per flow number: the
    /// handshake's outcome, the options it settled, what was sent. Their counters and running
    /// measurements are in their flows-table rows ([`Self::stack_flows`]).
    fn stack_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let Some(rt) = &self.rt else { return Ok(out) };
        for w in rt.stacks.iter().flatten() {
            let d = PyDict::new(py);
            let st = &w.sender.stats;
            d.set_item("connected", w.connected())?;
            d.set_item("error", w.error.clone())?;
            d.set_item("syns", w.stats.syns)?;
            d.set_item("established_ns", w.stats.established_at)?;
            d.set_item("acks", w.stats.acks)?;
            d.set_item("undecodable", w.stats.undecodable)?;
            d.set_item("resets_sent", w.stats.resets_sent)?;
            d.set_item("resets_received", w.stats.resets_received)?;
            d.set_item("quench_received", w.stats.quenches)?;
            d.set_item("sent_at_warmup", w.stats.sent_at_warmup)?;
            if let Some(o) = w.options() {
                d.set_item("mss", o.mss)?;
                d.set_item("peer_wscale", o.wscale)?;
                d.set_item("sack", o.sack_permitted)?;
                d.set_item("timestamps", o.timestamps.is_some())?;
            }
            d.set_item("bytes_sent", st.bytes_sent)?;
            d.set_item("segments_sent", st.segments_sent)?;
            d.set_item("completed_ns", w.completed_at)?;
            out.set_item(w.flow, d)?;
        }
        Ok(out)
    }

    /// rttlab's senders' rows of the flows table (`flow` and every column the sender knows by
    /// itself, `from_sender` in src/sim/tables.rs: counters, running measurements, what it ran)
    /// as an Arrow table in the flows schema's order and types, one row per `stack = "rttlab"`
    /// flow; empty without such flows.
    fn stack_flows(&self) -> ArrowTable {
        let end = self
            .rt
            .as_ref()
            .map_or(0, |rt| rt.now().min(self.scenario.simulation.duration.0));
        let rows: Vec<_> = self
            .rt
            .iter()
            .flat_map(|rt| rt.stacks.iter().flatten())
            .map(|w| w.summary(end))
            .collect();
        ArrowTable {
            batch: crate::sim::tables::FLOWS.sender_batch(&rows),
        }
    }

    /// rttlab's senders' traces (`rtt` with prediction and RTO, `window`, `retransmissions`) as
    /// Arrow tables in the simulator's schemas; empty without such flows.
    fn stack_traces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(rt) = &self.rt {
            for (name, batch) in crate::sim::tables::trace_batches(&rt.stack_trace) {
                out.set_item(name, ArrowTable { batch })?;
            }
        }
        Ok(out)
    }

    /// The traces the emulator kept (drops, marks, queue samples, per-packet arrivals at
    /// monitored queues) as Arrow tables in the simulator's schemas.
    fn traces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (name, batch) in crate::sim::tables::trace_batches(&self.emu().trace) {
            out.set_item(name, ArrowTable { batch })?;
        }
        Ok(out)
    }

    /// Everything counted so far: per channel, per flow, the emulator's own fidelity.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let emu = self.emu();
        let out = PyDict::new(py);
        let channels = pyo3::types::PyList::empty(py);
        for c in &emu.net.channels {
            let d = PyDict::new(py);
            d.set_item("name", &c.name)?;
            d.set_item("from", c.from)?;
            d.set_item("to", c.to)?;
            d.set_item("bandwidth_bps", c.bandwidth)?;
            d.set_item("delay_ns", c.delay)?;
            let s = &c.stats;
            d.set_item("arrivals", s.arrivals)?;
            d.set_item("departures", s.departures)?;
            d.set_item("bytes_sent", s.bytes_sent)?;
            d.set_item("busy_ns", s.busy_time)?;
            d.set_item("drops_overflow", s.drops[0])?;
            d.set_item("drops_aqm", s.drops[1])?;
            d.set_item("drops_corruption", s.drops[2])?;
            d.set_item("drops_scheduled", s.drops[3])?;
            d.set_item("marks", s.marks)?;
            d.set_item("quench", s.quench)?;
            channels.append(d)?;
        }
        out.set_item("channels", channels)?;
        let flows = pyo3::types::PyList::empty(py);
        for w in &emu.flows {
            let d = PyDict::new(py);
            d.set_item("data_packets", w.data_packets)?;
            d.set_item("bytes_sent", w.bytes_sent)?;
            d.set_item("retransmissions", w.retransmissions)?;
            d.set_item("retransmitted_bytes", w.retransmitted_bytes)?;
            d.set_item("bytes_received", w.bytes_received)?;
            d.set_item("ce_received", w.ce_received)?;
            d.set_item("ece_acks", w.ece_acks)?;
            d.set_item("cwr_sent", w.cwr_sent)?;
            d.set_item("syns", w.syns)?;
            d.set_item("drops", w.drops.to_vec())?;
            flows.append(d)?;
        }
        out.set_item("flows", flows)?;
        let e = &emu.stats;
        out.set_item("received", e.received)?;
        out.set_item("ignored", e.ignored)?;
        out.set_item("delivered", e.delivered)?;
        out.set_item("mismatched", e.mismatched)?;
        out.set_item("quenches_sent", e.quenches_sent)?;
        out.set_item("in_flight", emu.in_flight())?;
        if let Some(rt) = &self.rt {
            let f = &rt.fidelity;
            let mut late = f.lateness.clone();
            late.sort_unstable();
            let q = |p: f64| {
                late.get(((late.len() as f64 - 1.0) * p).round() as usize)
                    .copied()
            };
            let fid = PyDict::new(py);
            fid.set_item("samples", late.len())?;
            fid.set_item("lateness_p50_ns", q(0.5))?;
            fid.set_item("lateness_p90_ns", q(0.9))?;
            fid.set_item("lateness_p99_ns", q(0.99))?;
            fid.set_item("lateness_max_ns", late.last().copied())?;
            fid.set_item("cpu_ns", f.cpu_ns)?;
            fid.set_item("wakeups", f.wakeups)?;
            fid.set_item("sched_fifo", f.fifo)?;
            fid.set_item("read_errors", f.read_errors)?;
            fid.set_item("write_errors", f.write_errors)?;
            out.set_item("fidelity", fid)?;
            out.set_item("epoch_origin_ns", rt.epoch_origin)?;
        }
        Ok(out)
    }
}

/// rttlab's senders for the `stack = "rttlab"` flows, per port (in port order) as many as its host
/// sends: each the sender the simulator builds for that flow, so it runs the scenario's
/// congestion control, recovery and RTO exactly as in simulation; each has its own handshake and
/// source port (`SPORT_BASE` + flow), which is how the port's packets are told apart.
#[cfg(target_os = "linux")]
fn wire_senders(
    s: &crate::sim::config::Scenario,
    emu: &crate::testbed::Emulator,
    names: &[String],
) -> Result<Vec<Vec<crate::testbed::stack::WireSender>>, crate::sim::config::ConfigError> {
    use crate::sim::config::{invalid, Stack};
    use crate::testbed::handshake::Want;
    use crate::testbed::stack::WireSender;
    let mut engine = crate::sim::build_with(s, crate::sim::trace::TraceSet::NONE)?;
    let mut out: Vec<Vec<WireSender>> = vec![Vec::new(); emu.hosts.len()];
    let mut f = 0usize;
    for (g, group) in s.flows.iter().enumerate() {
        let tcp = crate::sim::build_tcp(
            group.tcp.as_ref().unwrap_or(&s.tcp),
            &format!("flows[{g}].tcp"),
        )?;
        for _ in 0..group.count {
            let (src, dst) = emu.endpoints[f];
            let port_of = |n: u32| {
                emu.hosts
                    .iter()
                    .position(|&h| h == n)
                    .expect("every endpoint is a host")
            };
            let (sp, dp) = (port_of(src), port_of(dst));
            let rttlab = match group.stack.unwrap_or_default() {
                Stack::Kernel => false,
                Stack::Rttlab => true,
            };
            if !rttlab && names[sp].is_empty() {
                return Err(invalid(
                    format!("flows[{g}].stack"),
                    format!("node {src} sends flow {f} with Linux's TCP but has no namespace"),
                ));
            }
            if names[dp].is_empty() {
                return Err(invalid(format!("flows[{g}]"), format!("node {dst} receives flow {f} but has no namespace (the device list gives it none)")));
            }
            if rttlab {
                if engine.flows[f].app.is_some() {
                    return Err(invalid(format!("flows[{g}].app"), "on/off applications with stack = \"rttlab\" have no testbed form yet (bulk transfers only)"));
                }
                let plan = &emu.plans[f];
                let sender = engine.flows[f].sender.clone();
                let want = Want {
                    mss: tcp.mss.min(u16::MAX as u32) as u16,
                    sack: tcp.sack,
                    timestamps: tcp.timestamps,
                    ecn: tcp.ecn && tcp.receiver_ecn,
                    syn_retries: 2,
                };
                // Any ISN works (the sender counts from 0 above it); one that differs per flow and seed.
                let isn = (s.simulation.seed as u32)
                    .wrapping_mul(2_654_435_761)
                    .wrapping_add(f as u32 * 7919 + 1);
                let mut w = WireSender::new(
                    f as u32,
                    src,
                    dst,
                    sender,
                    want,
                    isn,
                    plan.start,
                    plan.stop,
                    s.simulation.duration.0,
                    s.simulation.warmup.0,
                );
                w.label = engine.flows[f].label.clone();
                w.rwnd_cap = tcp.rwnd;
                out[sp].push(w);
            }
            f += 1;
        }
    }
    engine.flows.clear();
    Ok(out)
}

#[cfg(target_os = "linux")]
fn register_testbed(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Testbed>()
}
#[cfg(not(target_os = "linux"))]
fn register_testbed(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
// ---- end testbed ----

// ---- live (one sample at a time: rttlab live, docs/live.md) ----

/// One estimator scored over live streams (connections), one sample at a time: the replay of
/// `replay()` fed incrementally (`eval::live`). Sans-IO: the caller passes times in ns.
#[pyclass(module = "rttlab._core")]
struct LiveEstimator {
    name: String,
    inner: crate::eval::LiveEval,
}

#[pymethods]
impl LiveEstimator {
    #[new]
    #[pyo3(signature = (name, params, tick_ns, timer_granularity_ns=0, min_rto_ns=0, timestamps=false))]
    fn new(
        name: String,
        params: Vec<(String, String)>,
        tick_ns: u64,
        timer_granularity_ns: u64,
        min_rto_ns: u64,
        timestamps: bool,
    ) -> PyResult<Self> {
        if tick_ns == 0 {
            return Err(ParameterError::new_err("tick must be positive"));
        }
        let est = rtt::build(&name, &params).map_err(param_error)?;
        let timer = TimerConfig {
            granularity: timer_granularity_ns,
            min_rto: min_rto_ns,
            timestamps,
        };
        Ok(Self {
            name,
            inner: crate::eval::LiveEval::new(est, timer, tick_ns),
        })
    }

    /// Feed one sample → (forecast before | None, estimate after | None, base RTO, W, expiries),
    /// all ns. `timestamps` sets Karn's rule for a stream's first sample (default: the
    /// constructor's).
    #[pyo3(signature = (stream, now_ns, rtt_ns, timestamps=None))]
    fn sample(
        &mut self,
        stream: u64,
        now_ns: u64,
        rtt_ns: u64,
        timestamps: Option<bool>,
    ) -> (Option<u64>, Option<u64>, u64, u64, u32) {
        let s = self.inner.sample(stream, now_ns, rtt_ns, timestamps);
        (s.before, s.after, s.rto, s.timer.wait, s.timer.expiries)
    }

    /// W (ns) had a segment of `stream` been lost with its timer started at `armed_ns`; None
    /// before the stream's first sample.
    fn wait_if_lost(&self, stream: u64, armed_ns: u64) -> Option<u64> {
        self.inner.wait_if_lost(stream, armed_ns)
    }

    /// Count a really lost segment of `stream` with wait W (ns) in the `lost_*` metrics.
    fn record_loss(&mut self, stream: u64, wait_ns: u64) {
        self.inner.record_loss(stream, wait_ns)
    }

    /// Metrics so far (keys: docs/metrics.md) of one stream, or pooled (None).
    #[pyo3(signature = (stream=None))]
    fn metrics<'py>(
        &self,
        py: Python<'py>,
        stream: Option<u64>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner
            .metrics(stream)
            .map(|m| metrics_dict(py, &self.name, &m))
            .transpose()
    }

    fn streams(&self) -> Vec<u64> {
        self.inner.streams().collect()
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("ParameterError", m.py().get_type::<ParameterError>())?;
    m.add_function(wrap_pyfunction!(read_series, m)?)?;
    m.add_function(wrap_pyfunction!(read_series_data, m)?)?;
    m.add_function(wrap_pyfunction!(parse_columns, m)?)?;
    m.add_function(wrap_pyfunction!(unit_doubt, m)?)?;
    m.add_class::<SeriesData>()?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(check_estimator, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(fit_regression, m)?)?;
    register_capture(m)?;
    register_sim(m)?;
    register_testbed(m)?;
    m.add_class::<LiveEstimator>()?;
    Ok(())
}

/// A flow's plan as Python sees it: (start ns, stop ns, bytes or None for bulk, group, cc name).
type FlowPlanRow = (u64, Option<u64>, Option<u64>, u32, String);
