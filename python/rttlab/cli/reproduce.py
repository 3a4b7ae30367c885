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
    name: str = typer.Argument(
        ...,
        help="A reproduction the package ships: "
        + "; ".join(f"{r.name} ({r.paper})" for r in _SHIPPED)
        + ".",
        show_default=False,
    ),
    quick: bool = typer.Option(
        False, "--quick", help="The CI-sized version (fewer points, seeds and seconds)."
    ),
    scale: str = typer.Option(
        "full",
        "--scale",
        help="full (the paper's runs) or a smaller scale the reproduction defines (e.g. medium).",
    ),
    workers: int = typer.Option(
        None,
        "--workers",
        "-w",
        min=1,
        help="Worker processes of the local cluster (default: one per core).",
    ),
    scheduler: str = typer.Option(
        None, "--scheduler", help="Dask scheduler address or file instead of a local cluster."
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="Directory for results.duckdb, comparison.json and figure.svg (default: reproduce-NAME[-quick]).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    as_csv: bool = typer.Option(
        False,
        "--csv",
        help="Print the comparison as CSV: one row per point of every table (ours, CI, n, published, diff, matched, source).",
    ),
    figures: Path = typer.Option(
        None,
        "--figures",
        help="Also draw the paper's own figures from the stored runs into this directory (reproductions that define them: "
        + ", ".join(r.name for r in _SHIPPED if r.has_figures)
        + ").",
        show_default=False,
    ),
) -> None:
    """Run a shipped reproduction of a paper and print our results beside the published numbers.

    The reproduction's sweep resumes what its store already holds; each point's result is shown
    with its confidence interval beside the published number, the difference, and whether it
    matched within the reproduction's stated tolerance. Where the paper can be read more than one
    way, the reproduction declares its readings and every claim is compared under each (the
    primary reading, chosen from the paper's text, marked ★; when it was declared is in its file's git history, not asserted here)."""
    from rttlab.cli.common import one_format
    from rttlab.cli.sweep import exit_if_runs_failed, run_sweep
    from rttlab.experiments.reproduce import ReproductionError, figure_svg
    from rttlab.experiments.store import Store

    one_format(as_json, as_csv)
    if scheduler and workers:
        fail("--scheduler and --workers: give one")
    as_json_or_csv = as_json or as_csv
    try:
        rep = Reproduction.load(name, quick=quick, scale=scale)
        if rep.models_only:
            return show_models_only(rep, out, as_json, as_csv)
        reps = [rep, *rep.parts]
        # Every reading of each (the file's [[reading]]s; one when it declares none), and the
        # sweeps they need: readings that only read the runs differently share their sweep.
        readings = [r.readings for r in reps]
        sweeps = {x.sweep_name: x.sweep() for rs in readings for x in rs}
    except ReproductionError as e:
        fail(str(e))
    if figures is not None and not rep.has_figures:
        fail(
            f"--figures: reproduction {name} draws no figures of its own (its comparison is always written as figure.svg)"
        )
    out = out or Path(f"reproduce-{rep.sweep_name}")
    out.mkdir(parents=True, exist_ok=True)
    # A reproduction and its parts (a table measured on a set-up of its own): one store, one
    # sweep each, each compared and printed on its own.
    results = []
    done: set[str] = set()
    for r, rs in zip(reps, readings):
        rows, reports, reading_reports = [], [], []
        for x in rs:
            sweep = sweeps[x.sweep_name]
            if sweep.name not in done:
                # Runs stored as failed are run again: a failure from the environment (a missing
                # extra, ns-3's library search) is gone once it is fixed, a deterministic one comes back.
                outcome = run_sweep(
                    sweep,
                    out / "results.duckdb",
                    scheduler,
                    workers,
                    retry_failed=True,
                    quiet=as_json_or_csv,
                )
                if outcome.interrupted:
                    stderr.print("rttlab: interrupted; rerun the same command to resume")
                    raise typer.Exit(130)
                done.add(sweep.name)
            with Store(out / "results.duckdb") as store:
                runs, flows = x.stored(store, sweep)
                try:
                    mine = x.compare(runs, flows, store.series)
                    if x.primary:  # ours alone, from the primary reading's runs
                        reports = x.reports(runs, flows, store.series)
                    elif x.own_runs:  # and from each other reading's own runs
                        reading_reports.append(
                            {"reading": x.reading, "reports": x.reports(runs, flows, store.series)}
                        )
                except ReproductionError as e:
                    # Nothing to compare because the runs failed: say that, with the count.
                    exit_if_runs_failed(sweep, store, f"; no comparison: {e}")
                    fail(str(e))
                if x.reading is not None:
                    mine = [{**row, "reading": x.reading, "primary": x.primary} for row in mine]
                store.write_comparison(x.comparison_name, mine)
                store.write_reproduction(
                    x.record(reports if x.primary else [], x.models() if x.primary else [])
                )
            rows += mine
        models = r.models()
        declared = [
            {
                "name": x.reading,
                "primary": x.primary,
                "what": x.reading_spec.get("what", ""),
                "says": x.reading_spec["says"],
                "sweep": x.sweep_name,
            }
            for x in rs
            if x.reading is not None
        ]
        elsewhere = [{"name": n, "scales": sc} for n, sc in r.elsewhere_readings]
        results.append(
            {
                "reproduction": r.sweep_name,
                "meta": r.meta,
                "published": {k: v for k, v in r.doc["published"].items() if k != "values"},
                "rows": rows,
                "reports": reports,
                **({"reading_reports": reading_reports} if reading_reports else {}),
                **({"readings": declared} if declared else {}),
                **({"readings_elsewhere": elsewhere} if elsewhere else {}),
                **({"models": models} if models else {}),
            }
        )
        # The figure shows the primary reading (the table and comparison.json hold every reading).
        primary = next(x for x in rs if x.primary)
        (out / ("figure.svg" if r is rep else f"figure-{r.name}.svg")).write_text(
            figure_svg(primary, [row for row in rows if row.get("primary", True)])
        )
    # Another reproduction of the same published values (beside = "NAME"), read from this store
    # now that every sweep (its own too, when it is one of the parts) has run.
    beside_note = ""
    if rep.besides:
        with Store(out / "results.duckdb", read_only=True) as store:
            beside_note = rep.attach_beside(results[0]["rows"], store)
        results[0]["beside"] = beside_note
    # A figure that cannot be drawn is reported after the comparison is written and shown.
    drawn: list[Path] = []
    figure_error = None
    if figures is not None:
        with Store(out / "results.duckdb", read_only=True) as store:
            try:
                drawn = rep.figures(store, figures)
            except ReproductionError as e:
                figure_error = str(e)
    main_result, parts = results[0], results[1:]
    (out / "comparison.json").write_text(
        json.dumps(clean({**main_result, **({"parts": parts} if parts else {})}), indent=1) + "\n"
    )
    if as_csv:
        from rttlab.cli.common import print_csv

        print_csv(
            [
                {"reproduction": res["reproduction"], "table": table, **row}
                for res in results
                for table, rows in [
                    ("comparison", res["rows"]),
                    *((rpt["title"], rpt["rows"]) for rpt in res["reports"]),
                    *((m["title"], m["rows"]) for m in res.get("models", [])),
                ]
                for row in rows
            ]
        )
        if figure_error:
            fail(figure_error)
        return
    if as_json:
        print_json(
            clean(
                {
                    "schema": "rttlab.reproduce/1",
                    **{k: v for k, v in main_result.items() if k not in ("meta", "published")},
                    **(
                        {
                            "parts": [
                                {k: v for k, v in p.items() if k not in ("meta", "published")}
                                for p in parts
                            ]
                        }
                        if parts
                        else {}
                    ),
                    **({"figures": [str(p) for p in drawn]} if drawn else {}),
                }
            )
        )
        for sweep in sweeps.values():
            exit_if_runs_failed(sweep, out / "results.duckdb", "")
        if figure_error:
            fail(figure_error)
        return
    for r, res in zip(reps, results):
        show(r, res["rows"], res.get("readings", []))
        if res.get("beside"):
            console.print(res["beside"], highlight=False, markup=False)
        for d in res.get("readings_elsewhere", []):
            console.print(
                f"reading {d['name']} is run at --scale {' / '.join(d['scales'])} (not at this scale)",
                highlight=False,
            )
        show_reports(r, res["reports"])
        for rr in res.get("reading_reports", []):
            show_reports(r, rr["reports"], f"reading {rr['reading']}: ")
        show_models(res.get("models", []))
    console.print(
        f"written: {out}/results.duckdb, {out}/comparison.json, {out}/figure*.svg", highlight=False
    )
    if drawn:
        console.print(f"figures: {', '.join(str(p) for p in drawn)}", highlight=False)
    # What was compared is written; a comparison missing runs must not read as a success.
    for sweep in sweeps.values():
        exit_if_runs_failed(sweep, out / "results.duckdb", "")
    if figure_error:
        fail(figure_error)


def value(v: float, metric: str | None) -> str:
    """A number in its metric's unit (goodput in Mb/s, times in ms/s), never an exponent."""
    from rttlab.cli.results import fmt, unit_of

    return fmt(v, unit_of(metric or ""))


def ci_text(r: dict[str, Any], metric: str | None) -> str:
    return (
        "—"
        if math.isnan(r["ci_low"])
        else f"{value(r['ci_low'], metric)} … {value(r['ci_high'], metric)}"
    )


def show(rep: Any, rows: list[dict[str, Any]], readings: list[dict[str, Any]] = ()) -> None:
    """The comparison table; with readings, one row per claim × reading (the primary marked ★),
    the readings listed with what each changes, and the verdict said per reading."""
    from rich.markup import escape

    from rttlab.cli.table import Col, num
    from rttlab.cli.table import show as show_table

    if readings:
        console.print(
            f"readings of {rep.meta['source']} (★ primary, chosen from the paper's text; when it was declared: `git log` of the reproduction's file):",
            highlight=False,
        )
        for d in readings:
            console.print(
                escape(
                    f"  {'★' if d['primary'] else ' '} {d['name']}: {d.get('what') or ''} — the paper: {d['says']}"
                ),
                highlight=False,
            )
    peer = rep.doc["published"]["kind"] == "peer"
    # Ratio rows also say whether ours lies on the published side of 1 (their "direction").
    direction = any("direction" in r for r in rows)
    # A ratio computed again in another engine (simulated = "ENGINE") and another reproduction's
    # stored answers (beside = "NAME" or a list: a column each), when the rows carry them.
    simulated = next((r["simulated"]["engine"] for r in rows if "simulated" in r), None)
    beside = list(dict.fromkeys(b["name"] for r in rows for b in r.get("beside", [])))
    cols = [
        Col("point", prose=True),
        *((Col("reading"),) if readings else ()),
        num("ours (mean)"),
        num(f"{rep.level:.0%} CI", 2),
        num("n", 3),
        num(rep.doc["published"].get("simulator", "published") if peer else "published"),
        num("diff", 1),
        Col("matched", "right"),
        *((Col("direction", priority=3),) if direction else ()),
        *(
            (num(f"{simulated} (same points)"), Col(f"{simulated} direction", priority=3))
            if simulated
            else ()
        ),
        *(c for name in beside for c in (num(name), Col(f"{name} direction", priority=3))),
        Col("source", priority=4, prose=True),
    ]
    order = {d["name"]: i for i, d in enumerate(readings)}
    # Claim by claim, each under every reading (the rows' own order within a reading is kept).
    shown = (
        sorted(
            enumerate(rows),
            key=lambda ir: (_claim_rank(rows, ir[1]), order.get(ir[1].get("reading"), 0), ir[0]),
        )
        if readings
        else list(enumerate(rows))
    )
    table_rows = []
    for _, r in shown:
        metric = r.get("metric", rep.metric)
        verdict = (
            "—"
            if math.isnan(r["published"])
            else "[green]yes[/]"
            if r["matched"]
            else "[bold red]NO[/]"
        )
        reading = (escape(("★ " if r["primary"] else "") + r["reading"]),) if readings else ()
        table_rows.append(
            [
                escape(r["point"]),
                *reading,
                value(r["ours"], metric),
                ci_text(r, metric),
                str(r["n"]),
                value(r["published"], metric),
                pct(r["diff"]),
                verdict,
                *((escape(str(r.get("direction", "—"))),) if direction else ()),
                *(_other(r.get("simulated"), metric, r["published"]) if simulated else ()),
                *(
                    c
                    for name in beside
                    for c in _other(
                        next((b for b in r.get("beside", []) if b["name"] == name), None),
                        metric,
                        r["published"],
                    )
                ),
                escape(str(r["source"])),
            ]
        )
    show_table(
        cols,
        table_rows,
        title=f"{escape(rep.meta['title'])}\n{escape(rep.meta['source'])}",
        formats="--json or --csv",
    )
    if readings:
        for d in readings:
            mine = [r for r in rows if r["reading"] == d["name"]]
            missed = [
                r["point"] for r in mine if not r["matched"] and not math.isnan(r["published"])
            ]
            matched = sum(r["matched"] for r in mine if not math.isnan(r["published"]))
            judged = sum(not math.isnan(r["published"]) for r in mine)
            console.print(
                escape(
                    f"{'★ ' if d['primary'] else ''}{d['name']}: {matched} of {judged} matched"
                    + (f"; not matched: {'; '.join(missed)}" if missed else "")
                ),
                highlight=False,
            )
        rows = [r for r in rows if r["primary"]]  # the verdict line below is the primary reading's
    missed = [r for r in rows if not r["matched"] and not math.isnan(r["published"])]
    metric = rep.metric if len(rep.metrics) == 1 else "each row's metric"
    if rep.doc["published"]["kind"] == "claims":
        verdicts = [r for r in rows if r["point"].startswith("claim: ")]
        held = [r["point"].removeprefix("claim: ") for r in verdicts if r["matched"]]
        console.print(
            f"claims held in our runs: {len(held)} of {len(verdicts)}"
            + (f" ({', '.join(held)})" if held else ""),
            highlight=False,
        )
    elif not rows:
        console.print("nothing published to compare (ours: the reports below)", highlight=False)
    elif missed:
        console.print(
            f"[bold red]not matched[/] ({'beyond the row’s tolerance' if rep.doc['published'].get('values') and any('abs_tolerance' in v or 'tolerance' in v for v in rep.doc['published']['values']) else f'|ours/published − 1| > {rep.tolerance:.0%}'} on {metric}): "
            + "; ".join(f"{r['point']} ({pct(r['diff'])})" for r in missed),
            highlight=False,
        )
    else:
        console.print(
            f"every point matched within {rep.tolerance:.0%} on {metric}", highlight=False
        )
    if rep.meta.get("note"):
        console.print(rep.meta["note"], highlight=False)


def _other(o: dict[str, Any] | None, metric: str | None, published: float) -> tuple[str, str]:
    """Another answer to the same row (mean and interval; its direction against the published
    ratio: which side of 1 its whole interval lies)."""
    if not o or math.isnan(o["ours"]):
        return ("—", "—")
    lo, hi = (o["ci_low"], o["ci_high"]) if not math.isnan(o["ci_low"]) else (o["ours"], o["ours"])
    side = "below" if hi < 1 else "above" if lo > 1 else None
    direction = o.get("direction") or (
        "undecided"
        if side is None
        else "same"
        if (published < 1) == (side == "below")
        else "opposite"
    )
    interval = (
        ""
        if math.isnan(o["ci_low"])
        else f" ({value(o['ci_low'], metric)} … {value(o['ci_high'], metric)})"
    )
    return (f"{value(o['ours'], metric)}{interval}", direction)


def _claim_rank(rows: list[dict[str, Any]], row: dict[str, Any]) -> int:
    """Where a row's claim (its point and metric) first appears: rows of one claim stay together."""
    return next(
        i for i, r in enumerate(rows) if (r["point"], r["metric"]) == (row["point"], row["metric"])
    )


def show_reports(rep: Any, reports: list[dict[str, Any]], prefix: str = "") -> None:
    from rich.markup import escape

    from rttlab.cli.table import Col, num
    from rttlab.cli.table import show as show_table

    for rpt in reports:
        rows = [
            [
                escape(r["point"]),
                value(r["ours"], r.get("metric")),
                ci_text(r, r.get("metric")),
                str(r["n"]),
            ]
            for r in rpt["rows"]
        ]
        show_table(
            [
                Col("point", prose=True),
                num("ours (mean)"),
                num(f"{rep.level:.0%} CI", 1),
                num("n", 2),
            ],
            rows,
            title=f"{escape(prefix + rpt['title'])} (ours; nothing published to compare)",
        )


def show_models(models: list[dict[str, Any]]) -> None:
    from rich.markup import escape

    from rttlab.cli.table import Col, num
    from rttlab.cli.table import show as show_table

    for m in models:
        rows = [
            [
                escape(r["point"]),
                value(r["ours"], r.get("metric")),
                value(r["published"], r.get("metric")),
                pct(r["diff"]),
                "[green]yes[/]" if r["matched"] else "[bold red]NO[/]",
                escape(str(r["source"])),
            ]
            for r in m["rows"]
        ]
        cols = [
            Col("point", prose=True),
            num("ours"),
            num("published"),
            num("diff", 1),
            Col("matched", "right"),
            Col("source", priority=3, prose=True),
        ]
        show_table(
            cols,
            rows,
            title=f"{escape(m['title'])} (the paper's model beside ours: {escape(m['formula'])})",
        )


def show_models_only(rep: Any, out: Path | None, as_json: bool, as_csv: bool) -> None:
    """A reproduction of ``[[model]]`` tables alone: computed, printed (each with how many rows
    matched) and written to DIR/comparison.json; no sweep, no store."""
    models = rep.models()
    out = out or Path(f"reproduce-{rep.name}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(
        json.dumps(
            clean({"reproduction": rep.name, "meta": rep.meta, "rows": [], "models": models}),
            indent=1,
        )
        + "\n"
    )
    if as_csv:
        from rttlab.cli.common import print_csv

        print_csv(
            [
                {"reproduction": rep.name, "table": m["title"], **row}
                for m in models
                for row in m["rows"]
            ]
        )
        return
    if as_json:
        print_json(
            clean(
                {
                    "schema": "rttlab.reproduce/1",
                    "reproduction": rep.name,
                    "rows": [],
                    "models": models,
                }
            )
        )
        return
    console.print(f"{rep.meta['title']}\n{rep.meta['source']}", highlight=False, markup=False)
    show_models(models)
    for m in models:
        console.print(
            f"{sum(r['matched'] for r in m['rows'])} of {len(m['rows'])} matched: {m['title']}",
            highlight=False,
            markup=False,
        )
    if rep.meta.get("note"):
        console.print(rep.meta["note"], highlight=False, markup=False)
    console.print(f"written: {out}/comparison.json (a computation: no runs)", highlight=False)


def pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:+.1%}"


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce)
