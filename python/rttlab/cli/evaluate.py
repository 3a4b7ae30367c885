"""``rttlab evaluate``: replay every estimator over an RTT series and score them."""

from __future__ import annotations

import math
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import typer
from rich.table import Table

from rttlab.cli.common import console, fail, parse_duration, parse_params, print_json
from rttlab.estimators import NAMES, spec
from rttlab.replay import METRICS, score
from rttlab.series import read_series_ns, sample_path

SCHEMA = "rttlab.evaluate/1"

# (column, header, scale, lower-is-better?) — under-prediction is reported, not ranked.
COLUMNS = [
    ("mae_s", "MAE ms", 1e3, True),
    ("mae_ticks", "MAE ticks", 1.0, True),
    ("mape", "MAPE %", 1.0, True),
    ("under_prediction_rate", "under %", 100.0, None),
    ("premature_timeout_rate", "premature %", 100.0, True),
    ("wait_mean_s", "wait ms", 1e3, True),
    ("wait_p99_s", "wait p99 ms", 1e3, True),
    ("rto_mean_s", "RTO ms", 1e3, True),
]


def load_samples(path: Path, unit: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(times_ns, rtts_ns) of one input file. Series files only for now; captures plug in here."""
    return read_series_ns(path, unit)


def evaluate(
    input: Path = typer.Argument(None, help="RTT series: one RTT per line (ms), or CSV with header time,rtt (s).", show_default=False),
    sample: bool = typer.Option(False, "--sample", help="Use the bundled synthetic series instead of INPUT."),
    estimators: str = typer.Option(",".join(NAMES), "--estimators", "-e", help="Comma-separated estimator names (see `rttlab estimators`)."),
    param: list[str] = typer.Option([], "--param", "-p", help="Estimator parameter NAME.KEY=VALUE, repeatable, e.g. fixed-share.tick=4ms."),
    unit: str = typer.Option(None, "--unit", help="Unit of RTT values: s, ms or us [default: ms for one column, s with a header]."),
    tick: str = typer.Option("10ms", "--tick", help="Tick length for the MAE in ticks (seed 000 Table II)."),
    sort: str = typer.Option("mae_s", "--sort", help=f"Sort rows by one of: {', '.join(METRICS)}."),
    as_json: bool = typer.Option(False, "--json", help=f"Print JSON (schema {SCHEMA}, docs/schema.md) instead of a table."),
    plot: Path = typer.Option(None, "--plot", help="Draw samples, predictions and RTOs over time to FILE (.png, .svg or .pdf)."),
) -> None:
    """Replay estimators over RTT samples and score prediction error, premature timeouts and wait cost.

    Every metric is defined in docs/metrics.md. The first sample warms every estimator up and is not scored."""
    if sample == (input is not None):
        fail("give either INPUT or --sample (the bundled synthetic series)")
    path = sample_path() if sample else input
    if unit is not None and unit not in ("s", "ms", "us"):
        fail(f"--unit: '{unit}' is not one of s, ms, us")
    if sort not in METRICS:
        fail(f"--sort: '{sort}' is not one of {', '.join(METRICS)}")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: '{plot}' must end in .png, .svg or .pdf")
    tick_s = parse_duration(tick, "--tick")
    names = [n.strip() for n in estimators.split(",") if n.strip()]
    if not names:
        fail("--estimators: no estimator named")
    if len(set(names)) != len(names):
        fail("--estimators: an estimator is listed twice")
    params = parse_params(param)
    for name in params:
        if name not in names:
            fail(f"--param: '{name}' is not among the selected estimators ({', '.join(names)})")
    specs = [spec(n, **params.get(n, {})) for n in names]

    times_ns, rtts_ns = load_samples(path, unit)
    n = len(rtts_ns)
    busy = not as_json and n >= 2_000_000
    status = console.status(f"replaying {len(specs)} estimators over {n:,} samples") if busy else nullcontext()
    with status:
        result = score(times_ns, rtts_ns, specs, tick=tick_s, trace=plot is not None)
    rows = sorted(result.rows, key=lambda r: (r[sort] is None, r[sort] if r[sort] is not None else 0.0))

    if plot is not None:
        from rttlab.plot import plot_replay

        plot_replay(result, plot, title=f"{path.name}: samples, predictions and RTOs")
    if as_json:
        print_json(
            {
                "schema": SCHEMA,
                "input": str(path),
                "samples_read": n,
                "tick_s": tick_s,
                "rows": rows,
                "params": {s.name: s.params for s in specs if s.params},
            }
        )
        return
    render(rows, title=f"{path} — {n:,} samples, {rows[0]['samples']:,} scored")
    if plot is not None:
        console.print(f"plot written to {plot}")


def render(rows: list[dict], title: str) -> None:
    out = Table(title=title, title_justify="left")
    out.add_column("estimator", style="cyan", no_wrap=True)
    for _, header, _, _ in COLUMNS:
        out.add_column(header, justify="right")
    best = {}
    for column, _, _, lower in COLUMNS:
        values = [r[column] for r in rows if r[column] is not None]
        if lower is not None and values:
            best[column] = min(values) if lower else max(values)
    for row in rows:
        cells = []
        for column, _, scale, _ in COLUMNS:
            v = row[column]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("[dim]—[/]")
                continue
            text = f"{v * scale:,.2f}"
            cells.append(f"[bold green]{text}[/]" if column in best and v == best[column] else text)
        out.add_row(row["estimator"], *cells)
    console.print(out)
    console.print("[dim]best per column in green; — = not defined (the estimator predicts no RTT). Definitions: docs/metrics.md[/]")


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate)
