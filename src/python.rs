//! The Python bindings, all in this one file (DESIGN.md). Data crosses as NumPy columns; errors
//! become the exceptions defined here, whose message is the one line the CLI prints.

use crate::eval::replay_all;
use crate::io::series;
use crate::rtt::{self, ParamError, ParamSpec};
use crate::time::Nanos;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(_core, InputError, PyValueError, "An input file cannot be read; the message names file, line and field.");
create_exception!(_core, ParameterError, PyValueError, "An estimator name or parameter is unknown or out of range.");

fn param_error(e: ParamError) -> PyErr {
    ParameterError::new_err(e.to_string())
}

type Spec = (String, Vec<(String, String)>);

fn build_all(specs: &[Spec]) -> PyResult<Vec<rtt::Estimator>> {
    specs.iter().map(|(name, params)| rtt::build(name, params).map_err(param_error)).collect()
}

/// Read an RTT series file → (times_ns, rtts_ns) as uint64 arrays.
#[pyfunction]
#[pyo3(signature = (path, unit=None))]
fn read_series<'py>(py: Python<'py>, path: &str, unit: Option<&str>) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>)> {
    let unit = unit
        .map(|u| series::Unit::parse(u).ok_or_else(|| ParameterError::new_err(format!("unknown unit '{u}' (use s, ms or us)"))))
        .transpose()?;
    let path_buf = std::path::PathBuf::from(path);
    let s = py.detach(|| series::read(&path_buf, unit)).map_err(|e| InputError::new_err(e.to_string()))?;
    Ok((s.times.into_pyarray(py), s.rtts.into_pyarray(py)))
}

fn spec_dict<'py>(py: Python<'py>, spec: &ParamSpec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", spec.name)?;
    d.set_item(
        "kind",
        match spec.kind {
            rtt::params::Kind::Duration => "duration",
            rtt::params::Kind::Float => "float",
            rtt::params::Kind::Int => "int",
            rtt::params::Kind::Choice(_) => "choice",
        },
    )?;
    d.set_item("default", spec.default)?;
    d.set_item("range", spec.range_text())?;
    d.set_item("doc", spec.doc)?;
    Ok(d)
}

/// Every registered estimator: name, summary, source and parameter specs.
#[pyfunction]
fn estimators(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    rtt::registry()
        .iter()
        .map(|info| {
            let d = PyDict::new(py);
            d.set_item("name", info.name)?;
            d.set_item("summary", info.summary)?;
            d.set_item("source", info.source)?;
            let params = info.params.iter().map(|s| spec_dict(py, s)).collect::<PyResult<Vec<_>>>()?;
            d.set_item("params", params)?;
            Ok(d)
        })
        .collect()
}

/// Validate an estimator name and its parameters (raises ParameterError).
#[pyfunction]
fn check_estimator(name: &str, params: Vec<(String, String)>) -> PyResult<()> {
    rtt::build(name, &params).map(|_| ()).map_err(param_error)
}

/// Replay estimators over (times_ns, rtts_ns); one dict of metrics per estimator, in order, with
/// `prediction_s`/`rto_s` arrays when `trace` is true.
#[pyfunction]
#[pyo3(signature = (times_ns, rtts_ns, specs, tick_ns, trace=false, threads=1))]
fn replay<'py>(
    py: Python<'py>,
    times_ns: PyReadonlyArray1<'py, u64>,
    rtts_ns: PyReadonlyArray1<'py, u64>,
    specs: Vec<Spec>,
    tick_ns: u64,
    trace: bool,
    threads: usize,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let times = times_ns.as_slice()?;
    let rtts = rtts_ns.as_slice()?;
    if times.len() != rtts.len() {
        return Err(PyValueError::new_err(format!("{} times but {} RTTs", times.len(), rtts.len())));
    }
    if tick_ns == 0 {
        return Err(ParameterError::new_err("tick must be positive"));
    }
    let estimators = build_all(&specs)?;
    let results = py.detach(|| replay_all(estimators, times, rtts, tick_ns, trace, threads));
    let secs = |ns: Nanos| ns as f64 / 1e9;
    specs
        .iter()
        .zip(results)
        .map(|((name, _), (m, tr))| {
            let d = PyDict::new(py);
            d.set_item("estimator", name)?;
            d.set_item("samples", m.samples)?;
            d.set_item("predicted", m.predicted)?;
            d.set_item("mae_s", m.mae_s)?;
            d.set_item("mae_ticks", m.mae_ticks)?;
            d.set_item("mape", m.mape)?;
            d.set_item("under_prediction_rate", m.under_prediction_rate)?;
            d.set_item("premature_timeout_rate", m.premature_timeout_rate)?;
            d.set_item("wait_mean_s", m.wait_mean_s)?;
            d.set_item("wait_p99_s", m.wait_p99_s)?;
            d.set_item("rto_mean_s", m.rto_mean_s)?;
            if let Some(tr) = tr {
                let pred: Vec<f64> = tr.prediction.iter().map(|p| p.map_or(f64::NAN, secs)).collect();
                let rto: Vec<f64> = tr.rto.iter().map(|&r| secs(r)).collect();
                d.set_item("prediction_s", pred.into_pyarray(py))?;
                d.set_item("rto_s", rto.into_pyarray(py))?;
            }
            Ok(d)
        })
        .collect()
}

/// Least-squares fit of the regression estimator: features (n × 4: hops, min_rtt, max_rtt, ttl)
/// and targets (n) → [b0, b1, b2, b3, b4].
#[pyfunction]
fn fit_regression(features: PyReadonlyArray2<'_, f64>, targets: PyReadonlyArray1<'_, f64>) -> PyResult<[f64; 5]> {
    let view = features.as_array();
    if view.ncols() != 4 {
        return Err(PyValueError::new_err(format!("features must have 4 columns (hops, min_rtt, max_rtt, ttl), got {}", view.ncols())));
    }
    let rows: Vec<[f64; 4]> = view.rows().into_iter().map(|r| [r[0], r[1], r[2], r[3]]).collect();
    let targets = targets.as_slice()?;
    rtt::regression::fit(&rows, targets).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("ParameterError", m.py().get_type::<ParameterError>())?;
    m.add_function(wrap_pyfunction!(read_series, m)?)?;
    m.add_function(wrap_pyfunction!(estimators, m)?)?;
    m.add_function(wrap_pyfunction!(check_estimator, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(fit_regression, m)?)?;
    Ok(())
}
