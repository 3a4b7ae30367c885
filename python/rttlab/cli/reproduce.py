"""``rttlab reproduce NAME``: run a shipped reproduction and print ours beside the published numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from rttlab.cli.common import clean, console, fail, print_json, stderr
from rttlab.experiments.reproduce import Reproduction, available

#: Every shipped reproduction, read once for the help text (its paper, whether it draws figures).
_SHIPPED = [Reproduction.load(n) for n in available()]


def reproduce(
    name: str = typer.Argument(..., help="A reproduction the package ships: " + "; ".join(f"{r.name} ({r.paper})" for r in _SHIPPED) + ".", show_default=False),
    quick: bool = typer.Option(False, "--quick", help="The CI-sized version (fewer points, seeds and seconds)."),
    scale: str = typer.Option("full", "--scale", help="full (the paper's runs) or a smaller scale the reproduction defines (e.g. medium)."),
    workers: int = typer.Option(None, "--workers", "-w", min=1, help="Worker processes of the local cluster (default: one per core)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address or file instead of a local cluster."),
    out: Path = typer.Option(None, "--out", help="Directory for results.duckdb, comparison.json and figure.svg (default: reproduce-NAME[-quick])."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    figures: Path = typer.Option(None, "--figures", help="Also draw the paper's own figures from the stored runs into this directory (reproductions that define them: " + ", ".join(r.name for r in _SHIPPED if r.has_figures) + ").", show_default=False),
) -> None:
    """Run a reproduction's sweep (resuming what its store already holds), then print each point's
    result with its confidence interval beside the published number, the difference, and whether
    it matched within the reproduction's stated tolerance."""
    from rttlab.cli.sweep import run_sweep
    from rttlab.experiments.reproduce import ReproductionError, figure_svg
    from rttlab.experiments.store import Store

    if scheduler and workers:
        fail("--scheduler and --workers: give one")
    try:
        rep = Reproduction.load(name, quick=quick, scale=scale)
        reps = [rep, *rep.parts]
        sweeps = [r.sweep() for r in reps]
    except ReproductionError as e:
        fail(str(e))
    if figures is not None and not rep.has_figures:
        fail(f"--figures: reproduction {name} draws no figures of its own (its comparison is always written as figure.svg)")
    out = out or Path(f"reproduce-{rep.sweep_name}")
    out.mkdir(parents=True, exist_ok=True)
    # A reproduction and its parts (a table measured on a set-up of its own): one store, one
    # sweep each, each compared and printed on its own.
    results = []
    for r, sweep in zip(reps, sweeps):
        outcome = run_sweep(sweep, out / "results.duckdb", scheduler, workers, quiet=as_json)
        if outcome.interrupted:
            stderr.print("rttlab: interrupted; rerun the same command to resume")
            raise typer.Exit(130)
        with Store(out / "results.duckdb") as store:
            runs, flows = store.runs(sweep.name), store.flows(sweep.name)
            try:
                rows = r.compare(runs, flows, store.series)
                reports = r.reports(runs, flows, store.series)
            except ReproductionError as e:
                fail(str(e))
            store.write_comparison(r.sweep_name, rows)
        models = r.models()
        results.append({"reproduction": r.sweep_name, "meta": r.meta, "published": {k: v for k, v in r.doc["published"].items() if k != "values"}, "rows": rows, "reports": reports, **({"models": models} if models else {})})
        (out / ("figure.svg" if r is rep else f"figure-{r.name}.svg")).write_text(figure_svg(r, rows))
    drawn: list[Path] = []
    if figures is not None:
        with Store(out / "results.duckdb", read_only=True) as store:
            try:
                drawn = rep.figures(store, figures)
            except ReproductionError as e:
                fail(str(e))
    main_result, parts = results[0], results[1:]
    (out / "comparison.json").write_text(json.dumps(clean({**main_result, **({"parts": parts} if parts else {})}), indent=1) + "\n")
    if as_json:
        print_json(clean({"schema": "rttlab.reproduce/1", **{k: v for k, v in main_result.items() if k not in ("meta", "published")}, **({"parts": [{k: v for k, v in p.items() if k not in ("meta", "published")} for p in parts]} if parts else {}), **({"figures": [str(p) for p in drawn]} if drawn else {})}))
        return
    for r, res in zip(reps, results):
        show(r, res["rows"])
        show_reports(r, res["reports"])
        show_models(res.get("models", []))
    console.print(f"written: {out}/results.duckdb, {out}/comparison.json, {out}/figure*.svg", highlight=False)
    if drawn:
        console.print(f"figures: {', '.join(str(p) for p in drawn)}", highlight=False)


def show(rep: Any, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    peer = rep.doc["published"]["kind"] == "peer"
    table = Table(title=f"{rep.meta['title']}\n{rep.meta['source']}", title_justify="left")
    # Ratio rows also say whether ours lies on the published side of 1 (their "direction").
    direction = any("direction" in r for r in rows)
    heads = ("point", "ours (mean)", f"{rep.level:.0%} CI", "n", rep.doc["published"].get("simulator", "published") if peer else "published", "diff", "matched", *(("direction",) if direction else ()), "source")
    for h in heads:
        table.add_column(h, justify="left" if h in ("point", "source") else "right")
    for r in rows:
        ci = "—" if math.isnan(r["ci_low"]) else f"{r['ci_low']:.4g} … {r['ci_high']:.4g}"
        diff = pct(r["diff"])
        verdict = "—" if math.isnan(r["published"]) else "[green]yes[/]" if r["matched"] else "[bold red]NO[/]"
        table.add_row(r["point"], f"{r['ours']:.4g}", ci, str(r["n"]), f"{r['published']:.4g}", diff, verdict, *((r.get("direction", "—"),) if direction else ()), r["source"])
    console.print(table)
    missed = [r for r in rows if not r["matched"] and not math.isnan(r["published"])]
    metric = rep.metric if len(rep.metrics) == 1 else "each row's metric"
    if rep.doc["published"]["kind"] == "claims":
        verdicts = [r for r in rows if r["point"].startswith("claim: ")]
        held = [r["point"].removeprefix("claim: ") for r in verdicts if r["matched"]]
        console.print(f"claims held in our runs: {len(held)} of {len(verdicts)}" + (f" ({', '.join(held)})" if held else ""), highlight=False)
    elif not rows:
        console.print("nothing published to compare (ours: the reports below)", highlight=False)
    elif missed:
        console.print(
            f"[bold red]not matched[/] ({'beyond the row’s tolerance' if rep.doc['published'].get('values') and any('abs_tolerance' in v or 'tolerance' in v for v in rep.doc['published']['values']) else f'|ours/published − 1| > {rep.tolerance:.0%}'} on {metric}): "
            + "; ".join(f"{r['point']} ({pct(r['diff'])})" for r in missed),
            highlight=False,
        )
    else:
        console.print(f"every point matched within {rep.tolerance:.0%} on {metric}", highlight=False)
    if rep.meta.get("note"):
        console.print(rep.meta["note"], highlight=False)


def show_reports(rep: Any, reports: list[dict[str, Any]]) -> None:
    from rich.table import Table

    for rpt in reports:
        table = Table(title=f"{rpt['title']} (ours; nothing published to compare)", title_justify="left")
        for h in ("point", "ours (mean)", f"{rep.level:.0%} CI", "n"):
            table.add_column(h, justify="left" if h == "point" else "right")
        for r in rpt["rows"]:
            ci = "—" if math.isnan(r["ci_low"]) else f"{r['ci_low']:.4g} … {r['ci_high']:.4g}"
            table.add_row(r["point"], f"{r['ours']:.4g}", ci, str(r["n"]))
        console.print(table)


def show_models(models: list[dict[str, Any]]) -> None:
    from rich.table import Table

    for m in models:
        table = Table(title=f"{m['title']} (the paper's model beside ours: {m['formula']})", title_justify="left")
        for h in ("point", "ours", "published", "diff", "matched", "source"):
            table.add_column(h, justify="left" if h in ("point", "source") else "right")
        for r in m["rows"]:
            table.add_row(r["point"], f"{r['ours']:.4g}", f"{r['published']:.4g}", pct(r["diff"]), "[green]yes[/]" if r["matched"] else "[bold red]NO[/]", r["source"])
        console.print(table)


def pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:+.1%}"


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce)
