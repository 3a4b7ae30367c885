"""``rttlab report STORE -o report.html``: a self-contained HTML report of a results store."""

from __future__ import annotations

from pathlib import Path

import typer

from rttlab.cli.common import console, fail


def report(
    store: Path = typer.Argument(..., help="The DuckDB results file (from rttlab sweep / rttlab reproduce).", show_default=False),
    out: Path = typer.Option(..., "--out", "-o", help="The HTML file to write.", show_default=False),
    sweep: str = typer.Option(None, "--sweep", help="Only this sweep (default: every sweep in the store)."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Confidence level of the Student-t intervals."),
    title: str = typer.Option(None, "--title", help="Heading of the report."),
) -> None:
    """Write a results store as one self-contained HTML file to read or send to a colleague.

    No external resources: per sweep the parameters, versions, a table of means with confidence
    intervals per point, a figure (inline SVG) and the failed runs; per reproduction the
    published-vs-ours table and figure."""
    from rttlab.experiments.report import render
    from rttlab.experiments.store import Store, StoreError

    try:
        s = Store(store, read_only=True)
    except StoreError as e:
        fail(str(e))
    with s:
        if sweep is not None and sweep not in s.sweeps():
            fail(f"--sweep {sweep}: no such sweep in {store} (have: {', '.join(s.sweeps()) or 'none'})")
        text = render(s, sweep, level, title)
    out.write_text(text)
    console.print(f"report written to {out} ({len(text) / 1024:.0f} KiB)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
