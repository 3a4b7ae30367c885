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


# Capture or RTT series: decided by the Rust reader's own magic check (every pcap variant it
# reads; a compressed file is an error saying so).
from rttlab.capture import is_capture  # noqa: E402


def load_samples(path: Path, unit: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(times_ns, rtts_ns) of an RTT series file."""
    return read_series_ns(path, unit)


def evaluate(
    input: Path = typer.Argument(None, help="RTT series (one RTT per line in ms, or CSV with header time,rtt in s), or a pcap/pcapng capture.", show_default=False),
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

    A capture is scored per connection on the samples that measure its path RTT from the capture's
    vantage point (docs/capture.md), and on all connections pooled. Every metric is defined in
    docs/metrics.md. The first sample of each series warms the estimator up and is not scored."""
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

    if is_capture(path):
        if unit is not None:
            fail("--unit applies to RTT series; a capture's times are its own")
        evaluate_capture(path, specs, tick_s, sort, as_json, plot)
        return
    times_ns, rtts_ns = load_samples(path, unit)
    n = len(rtts_ns)
    busy = not as_json and n >= 2_000_000
    status = console.status(f"replaying {len(specs)} estimators over {n:,} samples") if busy else nullcontext()
    with status:
        result = score(times_ns, rtts_ns, specs, tick=tick_s, trace=plot is not None)
    rows = sort_rows(result.rows, sort)

    if plot is not None:
        from rttlab.plot import plot_replay

        plot_replay(result, plot, title=f"{path.name}: samples, predictions and RTOs")
    if as_json:
        print_json(json_doc(path, n, tick_s, rows, specs))
        return
    render(rows, title=f"{path} — {n:,} samples, {rows[0]['samples']:,} scored")
    if plot is not None:
        console.print(f"plot written to {plot}")


def json_doc(path: Path, samples_read: int, tick_s: float, rows: list[dict], specs: list, **extra) -> dict:
    """The `rttlab.evaluate/1` object (docs/schema.md)."""
    doc = {"schema": SCHEMA, "input": str(path), "samples_read": samples_read, "tick_s": tick_s, "rows": rows}
    return {**doc, **extra, "params": {s.name: s.params for s in specs if s.params}}


def sort_rows(rows: list[dict], key: str) -> list[dict]:
    return sorted(rows, key=lambda r: (r[key] is None, r[key] if r[key] is not None else 0.0))


def evaluate_capture(path: Path, specs: list, tick_s: float, sort: str, as_json: bool, plot: Path | None) -> None:
    """Score the estimators on each connection's path-RTT series (the sample method that measures
    the end-to-end RTT from where the capture sits, chosen per connection from its vantage point;
    docs/capture.md), one fresh estimator per connection, and on all connections pooled."""
    from rttlab.capture import path_samples, read_capture
    from rttlab.cli.common import stderr

    samples, connections = read_capture(path)
    for warning in samples.attrs.get("warnings", []):
        stderr.print(f"rttlab: warning: {warning}", highlight=False, markup=False)
    series = path_samples(samples, connections)
    if series.empty:
        fail(f"{path}: no connection has a path-RTT series to replay (see `rttlab flows {path}` for each connection's vantage point and method)")
    conn = series["conn"].to_numpy()
    starts = np.flatnonzero(np.r_[True, conn[1:] != conn[:-1]])
    ends = np.r_[starts[1:], len(conn)]
    times_ns = np.rint(series["time"].to_numpy() * 1e9).astype(np.uint64)
    rtts_ns = np.maximum(np.rint(series["rtt"].to_numpy() * 1e9), 1).astype(np.uint64)
    pooled = score(times_ns, rtts_ns, specs, tick=tick_s, starts=starts.tolist())
    rows = sort_rows(pooled.rows, sort)

    info = connections.set_index("conn")
    per_conn = []
    for a, b in zip(starts, ends):
        c = int(conn[a])
        entry = {
            "conn": c,
            "src": info.at[c, "src"],
            "dst": info.at[c, "dst"],
            "vantage": info.at[c, "vantage"],
            "method": info.at[c, "path_rtt_method"],
            "samples": int(b - a),
            "rows": sort_rows(score(times_ns[a:b], rtts_ns[a:b], specs, tick=tick_s).rows, sort) if b - a >= 2 else [],
        }
        per_conn.append(entry)
    per_conn.sort(key=lambda e: -e["samples"])

    if plot is not None:
        from rttlab.plot import plot_replay

        top = per_conn[0]
        a = int(starts[np.flatnonzero(conn[starts] == top["conn"])[0]])
        b = a + top["samples"]
        plot_replay(score(times_ns[a:b], rtts_ns[a:b], specs, tick=tick_s, trace=True), plot, title=f"{path.name}, connection {top['conn']} ({top['method']}): samples, predictions and RTOs")
    if as_json:
        print_json(json_doc(path, len(series), tick_s, rows, specs, input_kind="capture", connections=per_conn))
        return
    render(rows, title=f"{path} — path RTT of {len(per_conn)} connection{'s' if len(per_conn) != 1 else ''}, {len(series):,} samples, {rows[0]['samples']:,} scored (each connection replayed from a fresh estimator, scores pooled)")
    table = Table(title="per connection (largest first)", title_justify="left")
    for name in ("conn", "src → dst", "vantage", "path RTT from", "samples", "best MAE", "fewest premature", "least wait"):
        table.add_column(name, justify="right" if name in ("conn", "samples") else "left")
    for e in per_conn[:30]:
        table.add_row(
            str(e["conn"]), f"{e['src']} → {e['dst']}", e["vantage"], e["method"], f"{e['samples']:,}",
            *[winners(e["rows"], k) for k in ("mae_s", "premature_timeout_rate", "wait_mean_s")],
        )
    console.print(table)
    if len(per_conn) > 30:
        console.print(f"[dim]{len(per_conn) - 30} more connections in --json[/]")
    if plot is not None:
        console.print(f"plot written to {plot} (connection {per_conn[0]['conn']})")


def winners(rows: list[dict], key: str) -> str:
    """The estimator(s) with the lowest value of `key` (ties listed, at most three named)."""
    values = [r[key] for r in rows if r[key] is not None]
    if not values:
        return "—"
    names = [r["estimator"] for r in rows if r[key] == min(values)]
    return ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")


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
