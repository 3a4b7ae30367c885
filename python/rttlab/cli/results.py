"""``rttlab results``: SQL over the store, and Student-t summaries per parameter point."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from rttlab.cli.common import console, fail, print_json

app = typer.Typer(help="Query a results store (DuckDB) written by `rttlab sweep` / `rttlab reproduce`.", no_args_is_help=True)

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
PRIORITY = {"n": 1, "level": 4, **VALUE_COLUMNS}


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


def show(frame: Any, title: str | None = None) -> None:
    """A frame as a table fitted to the terminal. In a summary (a ``metric`` column) the value
    columns take the unit of the row's metric; elsewhere a column's unit is its name's."""
    from rich.markup import escape

    from rttlab.cli.table import Col, show as show_table

    summary = "metric" in frame.columns and "mean" in frame.columns
    columns = [str(c) for c in frame.columns]
    cols = [Col(escape(c), "right" if frame[c].dtype.kind in "iufb" else "left", PRIORITY.get(c, 0) if summary else 0) for c in columns]
    rows = []
    for row in frame.itertuples(index=False):
        metric_unit = unit_of(str(getattr(row, "metric", ""))) if summary else None
        rows.append([fmt(v, metric_unit if (summary and c in VALUE_COLUMNS) else unit_of(c)) for c, v in zip(columns, row)])
    show_table(cols, rows, title=title)


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
    sql: str = typer.Argument(..., help="SQL over the tables runs, sweep_runs, flows, channels, comparisons.", show_default=False),
    store: Path = STORE,
    as_json: bool = typer.Option(False, "--json", help="Print JSON (schema rttlab.results/1): the rows as a list of objects."),
    as_csv: bool = typer.Option(False, "--csv", help="Print the rows as CSV (every column, numbers in full)."),
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
    by: list[str] = typer.Option([], "--by", help="Group by this column (a swept parameter such as topology.bottleneck.bandwidth, or simulator, ...); repeatable. Default: the sweep's parameters."),
    metric: list[str] = typer.Option([], "--metric", "-m", help="A numeric column of runs (goodput_bps, jain_index, utilisation, drops, timeouts, cpu_s, ...) or of scores (mae_s, bad_timeout_rate, wait_mean_s, ...); repeatable. Default: goodput_bps, or for evaluate runs mae_s, bad_timeout_rate and wait_mean_s."),
    sweep: str = typer.Option(None, "--sweep", help="Only the runs of this sweep (default: every run in the store)."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Confidence level of the Student-t interval."),
    store: Path = STORE,
    as_json: bool = typer.Option(False, "--json", help="Print JSON (schema rttlab.summary/1): one object per point and metric."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV: one row per point and metric, every column (values in the metric's unit: s, b/s, ...)."),
) -> None:
    """Print each metric's mean, standard deviation and confidence interval per parameter point.

    Over the successful runs (seeds, or an evaluate job's input files, are the replications);
    Student-t intervals at --level."""
    from rttlab.cli.common import one_format
    from rttlab.experiments.stats import summarise
    from rttlab.experiments.store import RUN_COLUMNS

    one_format(as_json, as_csv)
    with open_store(store) as s:
        if sweep is not None and sweep not in s.sweeps():
            fail(f"--sweep {sweep}: no such sweep in {store} (have: {', '.join(s.sweeps()) or 'none'})")
        runs = s.runs(sweep, scores=True)
        cols = s.columns("runs")
    runs = runs[runs["status"] == "ok"]
    params = [c for c in cols if c not in RUN_COLUMNS]
    if not metric:
        # Evaluate runs (replays of trace files) are scored, not simulated.
        replays = len(runs) > 0 and bool((runs["simulator"] == "replay").all())
        metric = ["mae_s", "bad_timeout_rate", "wait_mean_s"] if replays else ["goodput_bps"]
    if not by:
        # The parameters this selection varies, plus the simulator where more than one ran.
        by = [c for c in params if runs[c].nunique(dropna=True) > 1]
        if runs["simulator"].nunique() > 1:
            by.append("simulator")
    for k in by:
        if k not in runs.columns:
            fail(f"--by {k}: no such column (parameters: {', '.join(params) or 'none'})")
    for m in metric:
        if m not in runs.columns:
            fail(f"--metric {m}: no such column of runs or scores")
        if runs[m].dtype.kind not in "iufb":
            fail(f"--metric {m}: not a numeric column")
    table = summarise(runs, by, metric, level)
    if as_json:
        print_json({"schema": "rttlab.summary/1", "level": level, "by": by, "rows": records(table)})
        return
    if as_csv:
        show_csv(table)
        return
    show(table, title=f"{len(runs)} successful runs{f' of sweep {sweep}' if sweep else ''}; {level:.0%} Student-t intervals")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="results")
