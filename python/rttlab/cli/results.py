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


def show(frame: Any, title: str | None = None) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for c in frame.columns:
        table.add_column(str(c), justify="right" if frame[c].dtype.kind in "iuf" else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(fmt(v) for v in row))
    console.print(table)


def fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


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
) -> None:
    """Run one SQL statement (DuckDB dialect) on the store, read-only, and print the rows."""
    import duckdb

    with open_store(store) as s:
        try:
            frame = s.query(sql)
        except duckdb.Error as e:
            fail(f"query: {str(e).splitlines()[0]}")
    if as_json:
        print_json({"schema": "rttlab.results/1", "rows": records(frame)})
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
) -> None:
    """Mean, standard deviation and Student-t confidence interval of each metric per parameter
    point, over the successful runs (seeds, or an evaluate job's input files, are the replications)."""
    from rttlab.experiments.stats import summarise
    from rttlab.experiments.store import RUN_COLUMNS

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
    show(table, title=f"{len(runs)} successful runs{f' of sweep {sweep}' if sweep else ''}; {level:.0%} Student-t intervals")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="results")
