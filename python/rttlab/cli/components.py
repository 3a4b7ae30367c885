"""``rttlab components``: every simulator component (queue, error model, application, agent,
congestion control, loss recovery, RTO policy, spurious-timeout detector and response) with its parameters, defaults, ranges and meaning — the keys of a scenario's tagged tables."""

from __future__ import annotations

import typer
from rich.table import Table

from rttlab.cli.common import console, fail, print_json
from rttlab.sim.run import components as catalog

#: Families as named on the command line, and where their tables go in a scenario file.
FAMILIES = {
    "queue": "topology.<link>.queue = { kind = ..., ... }",
    "error": "topology.<link>.error = { kind = ..., ... }",
    "app": "flows[].app = { kind = ..., ... }",
    "agent": "topology.<link>.agent = { kind = ..., ... }",
    "cc": "tcp.cc = \"name\" or { name = ..., ... }",
    "recovery": "tcp.recovery = \"name\"",
    "rto-policy": "tcp.rto.policy = \"name\" or { name = ..., ... }",
    "spurious-detection": "tcp.spurious_detection = \"name\"",
    "spurious-response": "tcp.spurious_response = \"name\"",
}


def components(
    kind: str = typer.Argument(None, help=f"Only this family ({', '.join(FAMILIES)}) or component name.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List the simulator's components by family (queues, error models, applications, agents,
    congestion controls, loss recovery, RTO policies, spurious-timeout handling) with every parameter's default, accepted range and meaning."""
    entries = catalog()
    if kind is not None:
        chosen = [e for e in entries if e["family"] == kind or e["name"] == kind]
        if not chosen:
            names = sorted({e["name"] for e in entries})
            fail(f"unknown component or family '{kind}' (families: {', '.join(FAMILIES)}; components: {', '.join(names)})")
        entries = chosen
    if as_json:
        print_json({"schema": "rttlab.components/1", "components": entries})
        return
    for e in entries:
        where = FAMILIES.get(e["family"], e["family"])
        title = f"[bold]{e['family']} {e['name']}[/] — {e['summary']}" if e["summary"] else f"[bold]{e['family']} {e['name']}[/]"
        caption = f"{where}" + (f"; source: {e['source']}" if e["source"] else "")
        table = Table(title=title, caption=caption, title_justify="left", caption_justify="left", expand=False)
        table.add_column("parameter", style="cyan", no_wrap=True)
        table.add_column("default", no_wrap=True)
        table.add_column("range", no_wrap=True)
        table.add_column("meaning")
        for p in e["params"]:
            table.add_row(p["name"], p["default"], p["range"], p["doc"])
        if not e["params"]:
            table.add_row("—", "", "", "no parameters")
        console.print(table)
        console.print()


def register(app: typer.Typer) -> None:
    app.command("components")(components)
