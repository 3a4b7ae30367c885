"""``rttlab results``: SQL over the store, and summaries per parameter point with paired differences."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from rttlab.cli.common import console, fail, print_json, stderr

app = typer.Typer(
    help="Query a results store (DuckDB) written by `rttlab sweep`, `rttlab reproduce` or `rttlab tune --store`.",
    no_args_is_help=True,
)

STORE = typer.Option(Path("results.duckdb"), "--store", help="The DuckDB results file.")


def open_store(path: Path) -> Any:
    from rttlab.experiments.store import Store, StoreError

    try:
        return Store(path, read_only=True)
    except StoreError as e:
        fail(str(e))


#: Columns of a summary that carry the unit of the row's metric; with their priority in a narrow
#: terminal (0: always shown).
VALUE_COLUMNS = {"mean": 0, "std": 2, "half_width": 3, "ci_low": 1, "ci_high": 1}
PRIORITY = {"n": 1, "level": 4, "interval": 1, **VALUE_COLUMNS}


def unit_of(name: str) -> str | None:
    """The unit a column or metric's name says it is in (the store's naming: docs/schema.md)."""
    if name.endswith("_s"):
        return "s"
    if name.endswith("_bps"):
        return "b/s"
    if name.endswith("_bytes"):
        return "B"
    return None


def fmt(v: Any, unit: str | None = None) -> str:
    """A cell: a number in the unit its range calls for (s/ms/µs, b/s…Gb/s, B…GB), ∞ for the
    core's no-limit sentinels, never an exponent for an ordinary value."""
    from rich.markup import escape

    from rttlab.units import duration, number, rate, size

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if unit is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
        return {"s": duration, "b/s": rate, "B": size}[unit](float(v))
    if isinstance(v, str):
        return escape(v)
    return number(v)


def show(frame: Any, title: str | None = None, numeric: set[str] = frozenset()) -> None:
    """A frame as a table fitted to the terminal. In a summary (a ``metric`` column) the value
    columns take the unit of the row's metric; elsewhere a column's unit is its name's. Columns
    in ``numeric`` (numbers already written as text) are right-aligned like numbers."""
    from rich.markup import escape

    from rttlab.cli.table import Col
    from rttlab.cli.table import show as show_table

    summary = "metric" in frame.columns and "mean" in frame.columns
    columns = [str(c) for c in frame.columns]
    cols = [
        Col(
            escape(c),
            "right" if frame[c].dtype.kind in "iufb" or c in numeric else "left",
            _priority(c, i, summary),
        )
        for i, c in enumerate(columns)
    ]
    rows = []
    for row in frame.itertuples(index=False):
        metric_unit = unit_of(str(getattr(row, "metric", ""))) if summary else None
        rows.append(
            [
                fmt(v, metric_unit if (summary and c in VALUE_COLUMNS) else unit_of(c))
                for c, v in zip(columns, row)
            ]
        )
    show_table(cols, rows, title=title)


def _priority(column: str, index: int, summary: bool) -> int:
    """Which columns go first when the terminal is too narrow (cli/table.py): a query's from the
    right (the first is always shown); a summary's spread (n, interval, std) before its grouping
    keys, which tell its rows apart; the first key, the metric and the mean never."""
    if not summary:
        return index
    if column in ("metric", "mean") or index == 0:
        return 0
    if column in PRIORITY:  # after every grouping key: a row must say which point it is
        return 100 + PRIORITY[column]
    return index


def show_csv(frame: Any) -> None:
    """Every column and row in full (numbers in the store's units), for a spreadsheet or a script."""
    import sys

    frame.to_csv(sys.stdout, index=False)


def records(frame: Any) -> list[dict[str, Any]]:
    import json

    # pandas' own JSON writer turns timestamps, NaN and NumPy scalars into standard JSON; its
    # default 10 significant digits would round the numbers, 15 is its most.
    return json.loads(frame.to_json(orient="records", date_format="iso", double_precision=15))


@app.command("query")
def query(
    sql: str = typer.Argument(
        ...,
        help="SQL over the tables runs, sweep_runs, flows, channels, scores (evaluate and tuning points), comparisons, reproductions, tunings (docs/experiments.md).",
        show_default=False,
    ),
    store: Path = STORE,
    as_json: bool = typer.Option(
        False, "--json", help="Print JSON (schema rttlab.results/1): the rows as a list of objects."
    ),
    as_csv: bool = typer.Option(
        False, "--csv", help="Print the rows as CSV (every column, numbers in full)."
    ),
) -> None:
    """Run one SQL statement (DuckDB dialect) on the store, read-only, and print the rows."""
    import duckdb

    from rttlab.cli.common import one_format

    one_format(as_json, as_csv)
    with open_store(store) as s:
        try:
            frame = s.query(sql)
        except duckdb.Error as e:
            fail(f"query: {str(e).splitlines()[0]}")
    if as_json:
        print_json({"schema": "rttlab.results/1", "rows": records(frame)})
    elif as_csv:
        show_csv(frame)
    else:
        show(frame)


@app.command("summary")
def summary(
    by: list[str] = typer.Option(
        [],
        "--by",
        help="Group by this column (a swept parameter such as topology.bottleneck.bandwidth, or simulator, ...); repeatable. Default: every parameter the selection varies. Varied parameters left out are pooled, and the output says so.",
        show_default=False,
    ),
    metric: list[str] = typer.Option(
        [],
        "--metric",
        "-m",
        help="A numeric column of runs (goodput_bps, jain_index, utilisation, drops, timeouts, cpu_s, ...) or of scores (mae_s, bad_timeout_rate, wait_mean_s, ...); repeatable. Default: goodput_bps, or for evaluate and tuning runs mae_s, bad_timeout_rate and wait_mean_s.",
        show_default=False,
    ),
    sweep: str = typer.Option(
        None,
        "--sweep",
        help="The runs of this sweep; `all`: every run in the store. Default: the latest sweep (the one whose last run finished last); the others are listed.",
        show_default=False,
    ),
    level: float = typer.Option(
        0.95, "--level", min=0.5, max=0.999, help="Confidence level of the intervals."
    ),
    interval: str = typer.Option(
        None,
        "--interval",
        help="Per-point interval: t (Student-t) or bootstrap (percentile; stays within the values, so never below 0 for a non-negative metric). Default: t over seeds, bootstrap over an evaluate sweep's input files.",
        show_default=False,
    ),
    baseline: list[str] = typer.Option(
        [],
        "--baseline",
        help="KEY=VALUE: the point the paired table compares every other point with, per seed (or per input file); repeatable; a bare VALUE names a value of a grouped key. Default: estimator=rfc6298 for evaluate runs, else the first value of the first grouped key.",
        show_default=False,
    ),
    store: Path = STORE,
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print JSON (schema rttlab.summary/1): one object per point and metric, and the paired differences.",
    ),
    as_csv: bool = typer.Option(
        False,
        "--csv",
        help="Print CSV: one row per point and metric (table = summary), then the paired differences (table = paired); every column, values in the metric's unit (s, b/s, ...).",
    ),
) -> None:
    """Print each metric's mean, standard deviation and confidence interval per parameter point, and each point's paired difference from a baseline.

    The successful runs are grouped by every parameter they vary (or by --by; the varied
    parameters left out are pooled, and the output names them). The replications are the seeds,
    or an evaluate sweep's input files; a tuning's points (rttlab tune --store) are one run each. Where the design is paired — every point run on the same
    seeds or the same input files — a second table gives each point minus the baseline point,
    pair by pair, with the Student-t interval of those differences."""
    from rttlab.cli.common import one_format
    from rttlab.experiments.stats import paired, summarise, summarise_bootstrap
    from rttlab.experiments.store import RUN_COLUMNS

    one_format(as_json, as_csv)
    with open_store(store) as s:
        sweeps = s.sweeps()
        if sweep is not None and sweep != "all" and sweep not in sweeps:
            fail(
                f"--sweep {sweep}: no such sweep in {store} (have: {', '.join(sweeps) or 'none'}; or all)"
            )
        # One experiment at a time: pooling a tuning with a sweep groups by every parameter of
        # both and prints a table of dashes (issue 42).
        chosen = sweep if sweep is not None else s.latest_sweep() if len(sweeps) > 1 else None
        runs = s.runs(None if chosen == "all" else chosen, scores=True)
        cols = s.columns("runs")
    others = [w for w in sweeps if w != chosen] if chosen not in (None, "all") else []
    if sweep is None and chosen is not None:
        stderr.print(
            f"sweep {chosen}: the latest of {len(sweeps)} in {store}; the others: {', '.join(others)} (--sweep NAME for one, --sweep all for every run)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    sweep = None if chosen == "all" else chosen
    runs = runs[runs["status"] == "ok"]
    params = [c for c in cols if c not in RUN_COLUMNS]
    # Evaluate runs (replays of trace files) are scored, not simulated; their files replicate.
    # A tuning's points (rttlab tune --store) are scored too, each once over all its data.
    replays = len(runs) > 0 and bool(runs["simulator"].isin(["replay", "tune"]).all())
    tuning = replays and bool((runs["simulator"] == "tune").any())
    pair_on = "name" if replays else "seed"
    if not metric:
        metric = ["mae_s", "bad_timeout_rate", "wait_mean_s"] if replays else ["goodput_bps"]
    varied = [c for c in params if runs[c].nunique(dropna=True) > 1]
    if runs["simulator"].nunique() > 1:
        varied.append("simulator")
    told = bool(by)
    if not by:
        by = list(varied)
    for k in by:
        if k not in runs.columns:
            fail(f"--by {k}: no such column (parameters: {', '.join(params) or 'none'})")
    for m in metric:
        if m not in runs.columns:
            fail(f"--metric {m}: no such column of runs or scores")
        if runs[m].dtype.kind not in "iufb":
            fail(f"--metric {m}: not a numeric column")
    if interval is None:
        interval = "bootstrap" if replays else "t"
    if interval not in ("t", "bootstrap"):
        fail(f"--interval: '{interval}' is not t or bootstrap")
    pooled = [c for c in varied if c not in by]
    table = (summarise_bootstrap if interval == "bootstrap" else summarise)(runs, by, metric, level)
    # Paired table: each point against the baseline, pair by pair (the pooled parameters are
    # part of the pair, so a pooled point is never compared with another pooled point's run).
    base = parse_baseline(baseline, by, runs, replays)
    pairs = None
    if base is not None:
        pairs = paired(runs, by, metric, base, [pair_on, *pooled], level)
    what = "tuning data" if tuning else "input file" if replays else "seed"
    whats = what if tuning else f"{what}s"
    how = (
        f"{level:.0%} percentile bootstrap of the mean over the {whats} (10 000 resamples, seeded)"
        if interval == "bootstrap"
        else f"{level:.0%} Student-t over the {whats}"
    )
    if as_json:
        doc = {
            "schema": "rttlab.summary/1",
            "sweep": sweep,
            "other_sweeps": others,
            "level": level,
            "by": by,
            "pooled": pooled,
            "replications": what,
            "interval": "bootstrap-percentile" if interval == "bootstrap" else "student-t",
            "rows": records(table),
        }
        if pairs is not None:
            doc["paired"] = {
                "baseline": base,
                "pair_on": [what, *pooled],
                "interval": "student-t",
                "rows": records(pairs),
            }
        print_json(doc)
        return
    if as_csv:
        import pandas as pd

        show_csv(
            pd.concat(
                [
                    table.assign(table="summary"),
                    *([pairs.assign(table="paired")] if pairs is not None else []),
                ],
                ignore_index=True,
            )
        )
        return
    grouped = ", ".join(by) if by else "nothing (every run one group)"
    console.print(
        f"{len(runs)} successful runs{f' of sweep {sweep}' if sweep else ''}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"grouped by: {grouped}" + ("" if told else " (every varied parameter)"),
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"pooled over: {', '.join(pooled)} (varied, not grouped: their runs are averaged together)"
        if pooled
        else "pooled over: nothing",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"intervals: {how}", highlight=False, soft_wrap=True)
    if tuning:
        console.print(
            "a tuning point is replayed once over all of its data (n = 1 per point: no interval); group by estimator and default to compare the defaults, or see `rttlab tune --store` / `rttlab report` for the fronts",
            highlight=False,
            soft_wrap=True,
        )
    show(readable(table, by, ["baseline"]), numeric={"n", "mean", "std", "interval"})
    if pairs is not None and len(pairs):
        console.print(
            f"paired: each point minus {', '.join(f'{k}={v}' for k, v in base.items())}, per {what}"
            + (f" and pooled value ({', '.join(pooled)})" if pooled else "")
            + f"; {level:.0%} Student-t over the pairs",
            highlight=False,
            soft_wrap=True,
        )
        show(readable(pairs, by, ["baseline"]), numeric={"n", "mean", "std", "interval"})


def parse_baseline(
    items: list[str], by: list[str], runs: Any, replays: bool
) -> dict[str, Any] | None:
    """The baseline point as {key: value}: from --baseline (KEY=VALUE, or a bare VALUE of the
    first grouped key that has it), else estimator=rfc6298 for evaluate
    runs, else the first value (numerically sorted) of the first grouped key; None when nothing
    is grouped."""
    from rttlab.trace.labels import numeric

    if not by:
        if items:
            fail("--baseline: nothing is grouped, so there is no other point to compare")
        return None
    base: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:  # a bare value: the first grouped key that has it
            value = item
            key = next((k for k in by if runs[k].astype(str).eq(item).any()), by[0])
        if key not in by:
            fail(f"--baseline {item}: {key} is not grouped (grouped: {', '.join(by)})")
        if not runs[key].astype(str).eq(value).any() and not any(
            numeric(v) is not None and numeric(v) == numeric(value)
            for v in runs[key].dropna().unique()
        ):
            fail(f"--baseline {item}: no run has {key}={value}")
        base[key] = value
    if base:
        return base
    if replays and "estimator" in by and (runs["estimator"] == "rfc6298").any():
        return {"estimator": "rfc6298"}
    values = [v for v in runs[by[0]].dropna().unique()]
    nums = [numeric(v) for v in values]
    first = (
        min(zip(nums, values), key=lambda p: p[0])[1]
        if all(n is not None for n in nums)
        else sorted(values, key=str)[0]
    )
    return {by[0]: first.item() if hasattr(first, "item") else first}


def metric_text(metric: str, v: Any) -> str:
    """A metric's value with its unit chosen for its range (:mod:`rttlab.units`, the one
    formatter of durations and rates): 18925600 b/s → 18.9 Mb/s, 300 s → 5 min."""
    from rttlab.trace.labels import sig
    from rttlab.units import duration, rate

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if metric.endswith("_bps"):
        return rate(float(v))
    if metric.endswith("_s"):
        return duration(float(v))
    return sig(float(v))


def readable(frame: Any, by: list[str], drop: list[str]) -> Any:
    """A summary as the terminal shows it: mean, std and the interval (low … high) in each
    metric's unit; the exact numbers are in --json."""
    import pandas as pd

    from rttlab.trace.labels import sort_key

    out = []
    # Points in numeric order of their parameters (5Mbps before 20Mbps), metrics as asked.
    records = sorted(frame.to_dict("records"), key=lambda r: tuple(sort_key(r[k]) for k in by))
    for r in records:
        m = r["metric"]
        lo, hi = r["ci_low"], r["ci_high"]
        ci = (
            "—"
            if lo is None or (isinstance(lo, float) and math.isnan(lo))
            else f"{metric_text(m, lo)} … {metric_text(m, hi)}"
        )
        out.append(
            {
                **{k: r[k] for k in by},
                "metric": m,
                "n": str(int(r["n"])),
                "mean": metric_text(m, r["mean"]),
                "std": metric_text(m, r["std"]),
                "interval": ci,
            }
        )
    return pd.DataFrame(out, columns=[*by, "metric", "n", "mean", "std", "interval"])


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="results")
