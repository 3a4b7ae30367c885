"""``rttlab report STORE -o report.html``: a self-contained HTML report of a results store."""

from __future__ import annotations

from pathlib import Path

import typer

from rttlab.cli.common import console, fail


def report(
    store: Path = typer.Argument(
        ...,
        help="The DuckDB results file (from rttlab sweep, rttlab reproduce or rttlab tune --store).",
        show_default=False,
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="The HTML file to write.", show_default=False
    ),
    sweep: str = typer.Option(
        None, "--sweep", help="Only this sweep (default: every sweep in the store)."
    ),
    level: float = typer.Option(
        0.95, "--level", min=0.5, max=0.999, help="Confidence level of the Student-t intervals."
    ),
    title: str = typer.Option(None, "--title", help="Heading of the report."),
) -> None:
    """Write a results store as one self-contained HTML file to read or send to a colleague.

    No external resources (figures are inline SVG). Per sweep: what was varied and measured, a
    figure per metric, means with their intervals per point, the paired differences where every
    point ran on the same seeds or input files, an evaluate sweep's Pareto front, and the failed
    runs. Per tuning (rttlab tune --store): the recommendation, the fronts figure and each
    estimator's defaults beside its best point. Per reproduction: the paper and its readings,
    published beside ours for every claim with the verdict."""
    from rttlab.experiments.report import render
    from rttlab.experiments.store import Store, StoreError

    try:
        s = Store(store, read_only=True)
    except StoreError as e:
        fail(str(e))
    with s:
        if sweep is not None and sweep not in s.sweeps():
            fail(
                f"--sweep {sweep}: no such sweep in {store} (have: {', '.join(s.sweeps()) or 'none'})"
            )
        text = render(s, sweep, level, title)
    out.write_text(text)
    console.print(f"report written to {out} ({len(text) / 1024:.0f} KiB)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
