"""``rttlab components``: every simulator component (queue, error model, application, agent,
congestion control, loss recovery, RTO policy, spurious-timeout detector and response, loss
discriminator) with its parameters, defaults, ranges and meaning — the keys of a scenario's tagged tables."""

from __future__ import annotations

import typer

from rttlab.cli.common import console, fail, one_format, print_csv, print_json
from rttlab.sim.run import components as catalog

#: Families as named on the command line, and where their tables go in a scenario file.
FAMILIES = {
    "queue": "topology.<link>.queue = { kind = ..., ... }",
    "error": "topology.<link>.error = { kind = ..., ... }",
    "app": "flows[].app = { kind = ..., ... }",
    "agent": "topology.<link>.agent = { kind = ..., ... }",
    "cc": 'tcp.cc = "name" or { name = ..., ... }',
    "recovery": 'tcp.recovery = "name"',
    "rto-policy": 'tcp.rto.policy = "name" or { name = ..., ... }',
    "spurious-detection": 'tcp.spurious_detection = "name"',
    "spurious-response": 'tcp.spurious_response = "name"',
    "discriminator-sender": "scored together by rttlab.trace.discriminators (not chosen in a scenario)",
    "discriminator-receiver": "scored together by rttlab.trace.discriminators and on captures (not chosen in a scenario)",
}


def components(
    kind: str = typer.Argument(
        None,
        help=f"Only this family ({', '.join(FAMILIES)}) or component name.",
        show_default=False,
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
    as_csv: bool = typer.Option(
        False,
        "--csv",
        help="Print CSV, one row per parameter (family, name, summary, source, parameter, default, range, unit, meaning).",
    ),
) -> None:
    """List the simulator's components by family with every parameter's default, range and meaning.

    Families: queues, error models, applications, agents, congestion controls, loss recovery,
    RTO policies, spurious-timeout detection and response, loss discriminators."""
    one_format(as_json, as_csv)
    entries = catalog()
    if kind is not None:
        chosen = [e for e in entries if e["family"] == kind or e["name"] == kind]
        if not chosen:
            names = sorted({e["name"] for e in entries})
            fail(
                f"unknown component or family '{kind}' (families: {', '.join(FAMILIES)}; components: {', '.join(names)})"
            )
        entries = chosen
    if as_json:
        print_json({"schema": "rttlab.components/1", "components": entries})
        return
    if as_csv:
        print_csv(param_rows(entries))
        return
    from rich.markup import escape

    from rttlab.cli.table import show

    for e in entries:
        where = FAMILIES.get(e["family"], e["family"])
        title = (
            f"[bold]{e['family']} {e['name']}[/] — {escape(e['summary'])}"
            if e["summary"]
            else f"[bold]{e['family']} {e['name']}[/]"
        )
        caption = escape(f"{where}" + (f"; source: {e['source']}" if e["source"] else ""))
        rows = [
            [escape(p["name"]), escape(p["default"]), escape(p["range"]), escape(p["doc"])]
            for p in e["params"]
        ] or [["—", "", "", "no parameters"]]
        show(_param_columns(), rows, title=title, caption=caption)
        console.print()


def param_rows(entries: list[dict]) -> list[dict]:
    """One CSV row per parameter (a component without parameters: one row, parameter empty)."""
    out = []
    for e in entries:
        head = {
            "family": e.get("family", "estimator"),
            "name": e["name"],
            "summary": e.get("summary"),
            "source": e.get("source"),
        }
        params = e["params"] or [{}]
        out.extend(
            {
                **head,
                "parameter": p.get("name"),
                "default": p.get("default"),
                "range": p.get("range"),
                "unit": p.get("unit"),
                "meaning": p.get("doc"),
            }
            for p in params
        )
    return out


def _param_columns() -> list:
    from rttlab.cli.table import Col

    return [
        Col("parameter", style="cyan"),
        Col("default", priority=1),
        Col("range", priority=2),
        Col("meaning", prose=True),
    ]


def register(app: typer.Typer) -> None:
    app.command("components")(components)
