"""``rttlab estimators``: every estimator/RTO policy with its parameters and defaults."""

from __future__ import annotations

import typer
from rich.table import Table

from rttlab.cli.common import console, print_json
from rttlab.trace.estimators import catalog


def estimators(
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
    name: str = typer.Argument(None, help="Show only this estimator."),
) -> None:
    """List the estimators (names as used by --estimators and scenario files) with every
    parameter's default, accepted range and meaning. Set parameters with --param NAME.KEY=VALUE."""
    entries = [e for e in catalog() if name is None or e["name"] == name]
    if name is not None and not entries:
        from rttlab.cli.common import fail

        fail(f"unknown estimator '{name}' (known: {', '.join(e['name'] for e in catalog())})")
    if as_json:
        print_json({"schema": "rttlab.estimators/1", "estimators": entries})
        return
    for e in entries:
        table = Table(title=f"[bold]{e['name']}[/] — {e['summary']}", caption=f"source: {e['source']}", title_justify="left", caption_justify="left", expand=False)
        table.add_column("parameter", style="cyan", no_wrap=True)
        table.add_column("default", no_wrap=True)
        table.add_column("range", no_wrap=True)
        table.add_column("meaning")
        for p in e["params"]:
            table.add_row(p["name"], p["default"], p["range"], p["doc"])
        console.print(table)
        console.print()


def register(app: typer.Typer) -> None:
    app.command("estimators")(estimators)
