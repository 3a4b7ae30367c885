"""``rttlab estimators``: every estimator/RTO policy with its parameters and defaults."""

from __future__ import annotations

import typer

from rttlab.cli.common import console, print_json
from rttlab.trace.estimators import catalog


def estimators(
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
    name: str = typer.Argument(None, help="Show only this estimator.", show_default=False),
    as_csv: bool = typer.Option(
        False,
        "--csv",
        help="Print CSV, one row per parameter (family, name, summary, source, parameter, default, range, unit, meaning).",
    ),
) -> None:
    """List the RTT estimators with every parameter's default, accepted range and meaning.

    Names are as --estimators and scenario files use them; set parameters with --param
    NAME.KEY=VALUE (durations such as 200ms, 1s, 2min)."""
    from rttlab.cli.common import one_format

    one_format(as_json, as_csv)
    entries = [e for e in catalog() if name is None or e["name"] == name]
    if name is not None and not entries:
        from rttlab.cli.common import fail

        fail(f"unknown estimator '{name}' (known: {', '.join(e['name'] for e in catalog())})")
    if as_json:
        print_json({"schema": "rttlab.estimators/1", "estimators": entries})
        return
    if as_csv:
        from rttlab.cli.common import print_csv
        from rttlab.cli.components import param_rows

        print_csv(param_rows(entries))
        return
    from rich.markup import escape

    from rttlab.cli.components import _param_columns
    from rttlab.cli.table import show

    for e in entries:
        rows = [
            [escape(p["name"]), escape(p["default"]), escape(p["range"]), escape(p["doc"])]
            for p in e["params"]
        ] or [["—", "", "", "no parameters"]]
        show(
            _param_columns(),
            rows,
            title=f"[bold]{e['name']}[/] — {escape(e['summary'])}",
            caption=escape(f"source: {e['source']}"),
        )
        console.print()


def register(app: typer.Typer) -> None:
    app.command("estimators")(estimators)
