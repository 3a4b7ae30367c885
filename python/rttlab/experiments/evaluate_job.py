"""Evaluate jobs as sweeps: estimators × parameters × trace files, one Dask task per run.

A sweep file with an ``[evaluate]`` table instead of a scenario (docs/experiments.md)::

    [sweep]
    name = "tyrell"

    [evaluate]
    inputs = ["../shared/rtt-series/*.csv"]   # RTT series or captures; globs; relative to this file
    estimators = ["rfc6298", "linux", "quic"] # registry names (default: every estimator)
    tick = "4ms"                              # rttlab.evaluate's settings: tick, min_rto,
                                              # timer_granularity (durations), timestamps, unit

    [set]                                     # estimator parameters for every run
    "linux.rto_min" = "5ms"

    [grid]                                    # estimator parameters, settings or `estimator`
    "fixed-share.eta" = [1.5, 2.0]
    min_rto = ["200ms", "1s"]

A run is one input file replayed through one estimator at one parameter point
(:func:`rttlab.evaluate` with that estimator, ``by=None``): its row in ``runs`` carries the
point's parameters — a key ``NAME.PARAM`` only on the runs of estimator ``NAME`` — and its
scores go to the ``scores`` table. The input files are the replications: summaries over a
point average its files. The run's key hashes the input file's *content*, the estimator, its
parameters, the settings and the rttlab version, so an edited file is scored again and a moved
one is not.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rttlab import __version__
from rttlab.experiments.runs import RunSpec
from rttlab.trace.estimators import NAMES, Spec, catalog

#: The result layout of an evaluate run: the rows of rttlab.evaluate's schema (docs/schema.md),
#: named once in rttlab/trace/evaluate.py; this module stays importable without numpy, so it is spelled
#: here and a test checks the two agree.
SCHEMA = "rttlab.evaluate/3"
#: rttlab.evaluate's keyword settings a job may fix or sweep; durations in seconds or as text.
DURATIONS = ("tick", "min_rto", "timer_granularity")
SETTINGS = (*DURATIONS, "timestamps", "unit")


def file_digest(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _setting(key: str, value: Any, bad: Any) -> Any:
    """A setting's value as rttlab.evaluate takes it (durations in seconds)."""
    if key in DURATIONS:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise bad(key, f'expected a duration ("4ms") or a number of seconds, got {value!r}')
        if isinstance(value, str):
            from rttlab import _core

            ns = _core.parse_duration(value)
            if ns is None:
                raise bad(key, f"cannot read the duration {value!r}")
            return ns / 1e9
        return float(value)
    if key == "timestamps" and not isinstance(value, bool):
        raise bad(key, f"expected true or false, got {value!r}")
    if key == "unit" and value not in ("s", "ms", "us", "ns"):
        raise bad(key, f"expected s, ms, us or ns, got {value!r}")
    return value


def runs_of(
    doc: Mapping[str, Any], base_dir: Path, source: str, bad: Any
) -> tuple[list[Any], list[str]]:
    """The runs of an evaluate sweep (``doc`` is the whole sweep file) and its swept keys.
    ``bad(key, reason)`` makes the SweepError to raise."""
    from rttlab.trace.evaluate import with_floor  # NumPy: only when a job is planned

    job = dict(doc["evaluate"])
    allowed = {"inputs", "estimators", *SETTINGS}
    for k in job:
        if k not in allowed:
            raise bad(
                f"evaluate.{k}", f"unknown key (expected one of {', '.join(sorted(allowed))})"
            )
    patterns = job.get("inputs")
    if isinstance(patterns, str):
        patterns = [patterns]
    if (
        not isinstance(patterns, list)
        or not patterns
        or not all(isinstance(p, str) for p in patterns)
    ):
        raise bad("evaluate.inputs", "expected a list of files or glob patterns")
    inputs: list[Path] = []
    for p in patterns:
        full = p if Path(p).is_absolute() else str(base_dir / p)
        found = (
            sorted(glob.glob(full))
            if glob.has_magic(p)
            else ([full] if Path(full).is_file() else [])
        )
        if not found:
            raise bad(
                "evaluate.inputs",
                f"{p}: no such file" if not glob.has_magic(p) else f"{p}: matches no file",
            )
        inputs.extend(Path(f).resolve() for f in found)
    inputs = list(dict.fromkeys(inputs))
    params_of = {e["name"]: {p["name"] for p in e["params"]} for e in catalog()}

    def check_key(table: str, key: str) -> None:
        if key == "estimator" or key in SETTINGS:
            return
        name, _, param = key.partition(".")
        if name not in params_of or param not in params_of[name]:
            raise bad(
                f"{table}.{key}",
                f"expected estimator, a setting ({', '.join(SETTINGS)}) or ESTIMATOR.PARAM (e.g. linux.rto_min)",
            )

    common = dict(doc.get("set", {}))
    grid = dict(doc.get("grid", {}))
    zipped = dict(doc.get("zip", {}))
    for table, values in (("set", common), ("grid", grid), ("zip", zipped)):
        for k in values:
            check_key(table, k)
    if "estimator" in common:
        raise bad("set.estimator", "give estimators in evaluate.estimators or [grid]")
    if "estimators" in job and ("estimator" in grid or "estimator" in zipped):
        raise bad("evaluate.estimators", "also swept as estimator in [grid]/[zip]: give one")
    estimators = job.get("estimators", NAMES)
    if (
        not isinstance(estimators, list)
        or not estimators
        or any(e not in NAMES for e in estimators)
    ):
        raise bad("evaluate.estimators", f"expected a list of estimator names ({', '.join(NAMES)})")
    base_settings = {
        k: _setting(k, v, lambda key, r: bad(f"evaluate.{key}", r))
        for k, v in job.items()
        if k in SETTINGS
    }

    zip_rows = [dict(zip(zipped, vals)) for vals in zip(*zipped.values())] if zipped else [{}]
    points = [
        {**dict(zip(grid, combo)), **z}
        for combo in (itertools.product(*grid.values()) if grid else [()])
        for z in zip_rows
    ]
    if "estimator" not in grid and "estimator" not in zipped:
        points = [{**p, "estimator": e} for e in estimators for p in points]
    digests = {p: file_digest(p) for p in inputs}
    runs, seen = [], set()
    for point in points:
        est = point["estimator"]
        if est not in NAMES:
            raise bad("estimator", f"unknown estimator {est!r} (known: {', '.join(NAMES)})")
        # A key NAME.PARAM belongs to the runs of NAME only; settings to every run.
        mine = {
            k: v
            for k, v in point.items()
            if k == "estimator" or k in SETTINGS or k.startswith(f"{est}.")
        }
        raw = {
            **{k: v for k, v in common.items() if k.startswith(f"{est}.")},
            **{k: v for k, v in mine.items() if "." in k},
        }
        params = {
            k.partition(".")[2]: (str(v) if not isinstance(v, str) else v) for k, v in raw.items()
        }
        where = ", ".join(f"{k}={v!r}" for k, v in mine.items())
        settings = {
            **base_settings,
            **{
                k: _setting(k, v, lambda key, r, where=where: bad(f"run ({where}) {key}", r))
                for k, v in {**common, **mine}.items()
                if k in SETTINGS
            },
        }
        try:
            spec = Spec(est, params)  # validated by the core: names and ranges
            if settings.get("min_rto") is not None:
                with_floor(
                    [spec], settings["min_rto"]
                )  # a floor given twice is refused here, not per run
        except Exception as e:  # noqa: BLE001 - the core's ParameterError or the floor conflict, with the point
            raise bad("run", f"({where}): {e}") from None
        for path in inputs:
            key = {
                "kind": "evaluate",
                "input_sha256": digests[path],
                "estimator": est,
                "params": dict(sorted(params.items())),
                "settings": dict(sorted(settings.items())),
                "rttlab": __version__,
                "result_schema": SCHEMA,
            }
            h = hashlib.sha256(
                json.dumps(key, sort_keys=True, separators=(",", ":")).encode()
            ).hexdigest()[:40]
            if h in seen:
                continue  # a point differing only in another estimator's parameters
            seen.add(h)
            job_doc = {**key, "input": str(path)}
            runs.append(
                RunSpec(params=mine, scenario=None, simulator="replay", hash=h, job=job_doc)
            )
    keys = [*grid, *zipped]
    if "estimator" not in keys:
        keys.insert(0, "estimator")
    return runs, keys


def run_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Replay one input through one estimator (on a worker): the ``scores`` row as an Arrow table
    of one row, plus what the ``runs`` row keeps. Raises on bad input (the caller stores the error)."""
    import pyarrow as pa

    from rttlab.trace.evaluate import evaluate
    from rttlab.trace.replay import COUNTS, METRICS

    ev = evaluate(
        job["input"], [Spec(job["estimator"], dict(job["params"]))], by=None, **job["settings"]
    )
    row = ev.rows[0]
    cols: dict[str, Any] = {
        "input": job["input"],
        "input_kind": ev.input_kind,
        "samples_read": ev.samples_read,
        "estimator": job["estimator"],
        "label": row["estimator"],
        "floor": row["floor"],
        "floor_s": row["floor_s"],
        "samples": row["samples"],
        "predicted": row["predicted"],
        **{m: row[m] for m in METRICS},
        **{c: row[c] for c in COUNTS},
    }
    types = {m: pa.float64() for m in (*METRICS, "floor_s")} | {
        c: pa.int64() for c in (*COUNTS, "samples", "predicted", "samples_read")
    }
    table = pa.table({k: pa.array([v], type=types.get(k, pa.string())) for k, v in cols.items()})
    return {"scores": table, "name": job["input"], "warnings": ev.warnings}
