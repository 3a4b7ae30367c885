"""``rttlab tune``: print what :func:`rttlab.trace.tune.tune` returns (the search lives there)."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from rttlab.cli.common import (
    COLUMNS_HELP,
    UNIT_HELP,
    check_columns,
    check_unit,
    console,
    fail,
    parse_params,
    print_json,
    stderr,
)
from rttlab.trace.tune import DEFAULT_ESTIMATORS, SCHEMA, Interrupted, TuneError, Tuning


def parse_rate(text: str) -> float:
    """'1%' or '0.01' → 0.01."""
    t = text.strip()
    try:
        return float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        fail(f"--target-bad-timeouts: cannot read '{text}' as a rate such as 1% or 0.01")


def tune(
    traces: list[Path] = typer.Argument(
        ...,
        help="RTT series and/or pcap/pcapng captures (a capture's path-RTT series per connection, as `rttlab evaluate` reads it).",
        show_default=False,
    ),
    estimators: str = typer.Option(
        None,
        "--estimators",
        "-e",
        help="Comma-separated estimators to tune (see `rttlab estimators`). Default: every estimator but ca-rto (in a replay it is RFC 6298).",
        show_default=False,
    ),
    target: str = typer.Option(
        "1%",
        "--target-bad-timeouts",
        "-t",
        help="Bad-timeout rate the recommendation must meet (e.g. 1% or 0.01).",
    ),
    param: list[str] = typer.Option(
        [],
        "--param",
        "-p",
        help="Hold a parameter fixed: NAME.KEY=VALUE, repeatable (it is then not searched).",
    ),
    range_: list[str] = typer.Option(
        [],
        "--range",
        "-r",
        help="Search a parameter over LOW:HIGH instead of the default range: NAME.KEY=LOW:HIGH, repeatable (KEY timer_min_rto: the timer's floor).",
    ),
    budget: int = typer.Option(
        300,
        "--budget",
        help="Points per estimator: a grid of about this many for 1–2 parameters, the evaluations of differential evolution (with --search halving: a Sobol sample) for more.",
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the search and of the bootstrap (same seed, same result)."
    ),
    confidence: float = typer.Option(
        None,
        "--confidence",
        help="Recommend only points meeting the target at this one-sided confidence (Clopper–Pearson upper bound of the bad-timeout rate), e.g. 0.95 [default: the rate itself].",
    ),
    validate: bool = typer.Option(
        False,
        "--validate",
        help="Also score the recommendation on data it was not tuned on (leave one trace out; one trace: split by time), with bootstrap intervals.",
    ),
    unit: str = typer.Option(
        None,
        "--unit",
        metavar="s|ms|us|ns",
        help=UNIT_HELP,
    ),
    columns: str = typer.Option(
        None,
        "--columns",
        metavar="time=COL,rtt=COL",
        help=COLUMNS_HELP,
        show_default=False,
    ),
    out: Path = typer.Option(
        None,
        "--out",
        "-o",
        help="Write every point searched with its metrics to FILE (.parquet, .csv, or .duckdb: appended to its table tune_points).",
    ),
    plot: Path = typer.Option(
        None,
        "--plot",
        help="Draw the fronts (log W vs bad-timeout rate) to FILE (.png, .svg or .pdf), and each fold's held-out bad-timeout rate against the target to FILE-folds.",
    ),
    store: Path = typer.Option(
        None,
        "--store",
        help="Run the tuning as a sweep in this DuckDB results store: every point is a stored run (a rerun replays only what is missing), read by `rttlab results` and `rttlab report`.",
        show_default=False,
    ),
    sweep_name: str = typer.Option(
        None,
        "--name",
        help="The sweep's name in --store [default: tune-HASH, from the inputs, estimators, target, budget and seed].",
    ),
    workers: int = typer.Option(
        None,
        "--workers",
        "-w",
        min=1,
        help="With --store: replay the points on a local Dask cluster of this many processes [default: in this process, on Dask only for batches of many points × samples].",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        help="With --store: replay the points on this Dask scheduler (address or scheduler file).",
    ),
    folds: int = typer.Option(
        5,
        "--folds",
        help="Choose the recommendation by time-ordered cross-validation over this many contiguous blocks of each trace (docs/tuning.md).",
    ),
    shared_folds: bool = typer.Option(
        False,
        "--shared-folds",
        help="Faster folds: reuse the points of the search on all data, replayed once per block, instead of searching again in each fold (docs/tuning.md says what it gives up).",
    ),
    search: str = typer.Option(
        "auto",
        "--search",
        help="How points are searched: exhaustive (every point on all the data, again in every fold), halving (successive halving: screened on subsamples, the best replayed on more; docs/tuning.md), auto (halving above 250,000 samples).",
    ),
    stack: str = typer.Option(
        "any",
        "--stack",
        help="Search only the knobs this stack exposes: linux (rto_min in jiffies), freebsd (rexmit_min and rexmit_slop in ticks of kern.hz=1000), quic (timer granularity, initial RTT), any (every estimator, the research view).",
    ),
    hz: int = typer.Option(
        1000,
        "--hz",
        help="With --stack linux: the kernel's tick rate (CONFIG_HZ), e.g. 250. --stack freebsd takes kern.hz=1000.",
    ),
    max_ack_delay: str = typer.Option(
        None,
        "--max-ack-delay",
        help="With --stack quic: the peer's max_ack_delay, an input, not a knob [default: 25ms, RFC 9000 §18.2].",
    ),
    as_json: bool = typer.Option(
        False, "--json", help=f"Print JSON (schema {SCHEMA}) instead of tables."
    ),
) -> None:
    """Tune every estimator's parameters on your traces; recommend what holds on traffic it was not tuned on, and how to apply it.

    The first line is the answer: `recommend SETTING` or `keep the default X`. It is chosen by
    time-ordered cross-validation: each trace cut into --folds blocks by time, each block held
    out in turn and the search run on the others; a setting must meet the target in every
    held-out block, and more knobs must cut W by more than 5 % (docs/tuning.md). Then the folds,
    the candidates, and the lines to apply it (--stack linux: the sysctl or route; --stack
    freebsd: the sysctls and their /etc/sysctl.conf lines). Below, the research view: each
    estimator's Pareto front on all data. Each point is replayed and scored exactly as `rttlab
    evaluate` does (docs/metrics.md). Search: a grid for 1–2 parameters, SciPy's differential
    evolution for more; above 250,000 samples, successive halving (points screened on
    subsamples, the best replayed on more: a day of traffic in under a minute)."""
    from rttlab.trace.tune import tune as run

    rate = parse_rate(target)
    check_unit(unit)
    check_columns(columns)
    if out is not None and out.suffix.lower() not in (".parquet", ".csv", ".duckdb"):
        fail(f"--out: '{out}' must end in .parquet, .csv or .duckdb")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: '{plot}' must end in .png, .svg or .pdf")
    for p in traces:
        if not p.is_file():
            fail(f"{p}: no such file")
    names = (
        (list(DEFAULT_ESTIMATORS) if stack == "any" else None)
        if estimators is None
        else [n.strip() for n in estimators.split(",") if n.strip()]
    )
    if names is not None and not names:
        fail("--estimators: no estimator named")
    if stack not in ("linux", "freebsd", "quic", "any"):
        fail(f"--stack: unknown stack '{stack}' (known: linux, freebsd, quic, any)")
    fixed = parse_params(param)
    ranges: dict[str, dict[str, str]] = {}
    for item in range_:
        key, sep, value = item.partition("=")
        name, dot, k = key.strip().rpartition(".")
        if not sep or not dot or not name or not k or ":" not in value:
            fail(f"--range '{item}': expected ESTIMATOR.KEY=LOW:HIGH, e.g. rfc6298.min_rto=50ms:1s")
        ranges.setdefault(name, {})[k] = value.strip()
    if store is None and (sweep_name or workers or scheduler):
        fail(
            f"{'--name' if sweep_name else '--workers' if workers else '--scheduler'}: only with --store (a tuning run as a stored sweep)"
        )
    if workers and scheduler:
        fail("--scheduler and --workers: give one")
    if store is not None and store.suffix.lower() != ".duckdb":
        fail(f"--store: '{store}' must end in .duckdb")
    busy = not as_json
    kwargs = dict(
        target=rate,
        budget=budget,
        seed=seed,
        fixed=fixed,
        ranges=ranges,
        validate=validate,
        confidence=confidence,
        unit=unit,
        # Only when given: the default sweep name hashes these (a rerun must find its sweep).
        **({"columns": columns} if columns is not None else {}),
        folds=folds,
        shared_folds=shared_folds,
        search=search,
        stack=stack,
        hz=hz,
        max_ack_delay=max_ack_delay,
    )
    replay = None
    try:
        if store is not None:
            replay, sweep_name = stored_replay(
                store, sweep_name, traces, names, kwargs, scheduler, workers
            )
        try:
            if busy:
                from rich.progress import (
                    BarColumn,
                    Progress,
                    TaskProgressColumn,
                    TextColumn,
                    TimeElapsedColumn,
                    TimeRemainingColumn,
                )

                what = f"tuning {'the ' + stack + ' stack' if names is None else str(len(names)) + ' estimator' + ('s' if len(names) != 1 else '')} on {len(traces)} trace{'s' if len(traces) != 1 else ''}"
                # Progress in estimator searches (each one estimator's grid or evolution on one
                # fold's data), or with --search halving in sample replays (points weighted by
                # the samples each is replayed on); the ETA assumes the rest goes as fast.
                with Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    TaskProgressColumn(),
                    TextColumn("{task.fields[count]}"),
                    TimeElapsedColumn(),
                    TextColumn("ETA"),
                    TimeRemainingColumn(),
                    console=stderr,
                    transient=True,
                ) as bar:
                    task = bar.add_task(what, total=None, count="")

                    def progress(text: str, done: int, planned: int, count: str = "") -> None:
                        bar.update(
                            task,
                            description=f"{what}: {text}",
                            completed=done,
                            total=planned,
                            count=count or f"{done}/{planned} searches",
                        )

                    result = run(traces, names, replay=replay, progress=progress, **kwargs)
            else:
                result = run(traces, names, replay=replay, **kwargs)
            if replay is not None:
                from rttlab.experiments.tune_job import write_tuning

                write_tuning(replay.store, sweep_name, result)
        finally:
            if replay is not None:
                replay.close()
                replay.store.close()
    except TuneError as e:
        fail(str(e))
    except Interrupted as stop:
        part = stop.tuning
        fit = part.fit
        stderr.print(
            f"rttlab: interrupted after {stop.done:,} of {stop.planned:,} {stop.unit}; PARTIAL: cross-validation did not finish, so there is no recommendation. "
            + (
                f"Best so far, in-sample (not checked on held-out blocks): {fit['setting']} — bad-timeout rate {_pct(fit['bad_timeout_rate'])}, W {_ms(fit['wait_mean_s'])}"
                if fit is not None
                else "No point met the target on all data."
            ),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        if as_json:
            print_json(part.to_json())
        _exit_now(replay)
    except KeyboardInterrupt:
        if replay is None:
            stderr.print("rttlab: interrupted during the search on all data; no result yet")
            _exit_now(replay)
        stderr.print(
            "rttlab: interrupted; the points replayed so far are stored: rerun the same command to resume"
            if replay is not None
            else "rttlab: interrupted"
        )
        raise typer.Exit(130) from None
    for warning in result.warnings:
        stderr.print(f"rttlab: warning: {warning}", highlight=False, markup=False, soft_wrap=True)
    if out is not None:
        result.write(out)
    if plot is not None:
        result.plot(plot)
    if as_json:
        print_json(result.to_json())
        return
    render(result)
    if out is not None:
        console.print(f"every point ({len(result.table):,}) written to {out}")
    if replay is not None:
        console.print(
            f"stored as sweep {sweep_name} in {store}: {replay.replayed:,} points replayed"
            + (f" on Dask ({replay.tasks:,} tasks)" if replay.used_dask else "")
            + f", {replay.found:,} found stored; `rttlab results summary --store {store} --sweep {sweep_name}`, `rttlab report {store}`",
            highlight=False,
            soft_wrap=True,
        )
    if plot is not None:
        from rttlab.trace.tune_plot import folds_path

        console.print(f"fronts drawn to {plot}; each fold's held-out point to {folds_path(plot)}")


def _exit_now(replay) -> None:
    """Exit 130 at once after Ctrl-C: without a store, without waiting for a core replay still
    running in a worker thread (its result is not needed); with a store, the normal way, so the
    database closes cleanly (the replay in flight finishes first)."""
    if replay is None:
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    raise typer.Exit(130) from None


def stored_replay(
    store: Path,
    name: str | None,
    traces: list[Path],
    estimators: list[str],
    kwargs: dict,
    scheduler: str | None,
    workers: int | None,
):
    """The store-backed replay of ``--store`` and the sweep's name (default: ``tune-`` and a hash
    of what decides the search, so a rerun of the same command resumes the same sweep)."""
    import hashlib
    import json

    from rttlab.experiments.store import Store, StoreError
    from rttlab.experiments.tune_job import StoredReplay

    if name is None:
        what = {
            "inputs": [str(p.resolve()) for p in traces],
            "estimators": estimators or kwargs.get("stack"),
            **{k: v for k, v in kwargs.items() if k != "validate"},
        }
        name = (
            "tune-"
            + hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:8]
        )
    try:
        s = Store(store)
    except StoreError as e:
        fail(str(e))
    return StoredReplay(s, name, scheduler=scheduler, workers=workers), name


def _pct(x: float | None) -> str:
    """A rate in per cent, with its sign: 0.42 %."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 100:.2f} %"


def _ms(x: float | None) -> str:
    """A time in the unit its range calls for (ms, s, µs)."""
    from rttlab.units import duration

    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else duration(float(x))


def render(result: Tuning) -> None:
    """The fronts, the joint front, the defaults, the recommendation and the validation as
    tables fitted to the terminal (rttlab.cli.table: a setting wraps between its words, a
    number is never cut; low-priority columns are left out first and named)."""
    import pandas as pd
    from rich.markup import escape

    from rttlab.cli.table import Col, num, show

    target = result.settings.target
    t = result.table
    if result.cv is not None:
        render_cv(result)
    rows = []
    for name in result.methods:
        # Points with the same scores (e.g. a floor below every RTO) read as one: the first kept.
        front = result.front(name).drop_duplicates(["bad_timeout_rate", "wait_mean_s"])
        # Long fronts: the points around the target are the ones to read; all are in --out/--json.
        if len(front) > 8:
            below = front[front["bad_timeout_rate"] <= target]
            above = front[front["bad_timeout_rate"] > target]
            front = pd.concat([below.tail(4), above.head(4)])
        for i, (_, r) in enumerate(front.iterrows()):
            rows.append(
                [
                    escape(name) if i == 0 else "",
                    escape(r["setting"].removeprefix(name + " ") or "(defaults)"),
                    _pct(r["bad_timeout_rate"]),
                    _ms(r["wait_mean_s"]),
                    _ms(r["wait_p99_s"]),
                    _ms(r["mae_s"]),
                    "◆" if r["joint_front"] else "",
                ]
            )
    cols = [
        Col("estimator"),
        Col("setting", prose=True),
        num("bad-timeout\nrate"),  # two lines: the table fits 60 columns
        num("W"),
        num("W p99", 2),
        num("MAE", 3),
        Col("joint front", "center", 1),
    ]
    show(
        cols,
        rows,
        title=escape(
            f"{' + '.join(result.inputs)} — {result.samples:,} scored samples, {len(t):,} points; each estimator's Pareto front (bad-timeout rate vs mean wait W after a loss)"
        ),
        formats="--json or --out",
    )
    joint = result.front().drop_duplicates(["bad_timeout_rate", "wait_mean_s"])
    below, above = (
        joint[joint["bad_timeout_rate"] <= target],
        joint[joint["bad_timeout_rate"] > target],
    )
    jrows = [
        [escape(r["setting"]), _pct(r["bad_timeout_rate"]), _ms(r["wait_mean_s"]), _ms(r["mae_s"])]
        for _, r in list(below.tail(6).iterrows()) + list(above.head(4).iterrows())
    ]
    show(
        [Col("setting", prose=True), num("bad-timeout\nrate"), num("W"), num("MAE", 2)],
        jrows,
        title=f"joint front across estimators ({len(joint)} points; those near the {target:.2%} target)",
        formats="--json or --out",
    )
    defaults = t[t["default"]].sort_values("bad_timeout_rate")
    console.print(
        "defaults: "
        + "; ".join(
            f"{r['estimator']} {_pct(r['bad_timeout_rate'])} / {_ms(r['wait_mean_s'])}"
            for _, r in defaults.iterrows()
        ),
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    rec = result.fit
    conf = (
        f" at {result.settings.confidence:.0%} confidence"
        if result.settings.confidence is not None
        else ""
    )
    if rec is None:
        console.print(
            f"[bold]fit on all data:[/] no point meets a bad-timeout rate of {target:.2%}{conf}"
        )
    else:
        console.print(
            f"[bold]fit on all data[/] (in-sample, not the recommendation; bad-timeout rate ≤ {target:.2%}{conf}, smallest W): [bold cyan]{escape(rec['setting'])}[/] — "
            f"bad-timeout rate {_pct(rec['bad_timeout_rate'])} ({rec['bad_timeouts']:,} of {rec['samples']:,}), W {_ms(rec['wait_mean_s'])} (p99 {_ms(rec['wait_p99_s'])}), "
            f"MAE {_ms(rec['mae_s'])}",
            highlight=False,
            soft_wrap=True,
        )
        console.print(
            f"[dim]reproduce{' on each trace' if len(result.inputs) > 1 else ''}: {escape(rec['command'])}[/]",
            highlight=False,
            soft_wrap=True,
        )
    v = result.validation
    if v is not None:
        vrows = []
        for f in v["folds"]:
            if f.get("recommendation") is None:
                vrows.append(
                    [
                        escape(f["held_out"]),
                        "—",
                        f"{f['samples']:,}",
                        "—",
                        "—",
                        escape(f["verdict"]),
                    ]
                )
                continue
            vrows.append(
                [
                    escape(f["held_out"]),
                    escape(f["recommendation"]),
                    f"{f['samples']:,}",
                    f"{_pct(f['bad_timeout_rate'])} [{_pct(f['bad_timeout_rate_ci'][0])}, {_pct(f['bad_timeout_rate_ci'][1])}]",
                    f"{_ms(f['wait_mean_s'])} [{_ms(f['wait_mean_s_ci'][0])}, {_ms(f['wait_mean_s_ci'][1])}]",
                    escape(f["verdict"]),
                ]
            )
        vcols = [
            Col("held out", prose=True),
            Col("recommendation (tuned on the rest)", prose=True, priority=2),
            num("samples", 3),
            num("bad-timeout rate [95 % CI]"),
            num("W [95 % CI]", 1),
            Col("verdict", prose=True),
        ]
        show(vcols, vrows, title=escape(f"held-out validation: {v['method']}"), formats="--json")
        h = v.get("held_out")
        if h is not None:
            line = (
                f"[bold]held out, pooled[/]: bad-timeout rate {_pct(h['bad_timeout_rate'])} [{_pct(h['bad_timeout_rate_ci'][0])}, {_pct(h['bad_timeout_rate_ci'][1])}] "
                f"against the {target:.2%} target — {escape(v['verdict'])}; W {_ms(h['wait_mean_s'])} [{_ms(h['wait_mean_s_ci'][0])}, {_ms(h['wait_mean_s_ci'][1])}] "
                f"({h['samples']:,} samples, bootstrap over {h['units']} {h['unit']}s)"
            )
            b = v.get("best_default")
            if b is not None:
                line += (
                    f"; best default at that bad-timeout rate: {b['estimator']} ({_pct(b['bad_timeout_rate'])}, W {_ms(b['wait_mean_s'])}"
                    + (
                        f", the recommendation's W is {b['wait_ratio']:.2f}×)"
                        if b.get("wait_ratio")
                        else f"; {escape(b.get('note', ''))})"
                    )
                )
            console.print(line, highlight=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)


def render_cv(result: Tuning) -> None:
    """The answer first: its headline (first line), the folds (each held-out block with its
    verdict), the candidates that cross-validation compared, the calibration check and the
    lines that apply the recommendation."""
    from rich.markup import escape

    from rttlab.cli.table import Col, num, show

    cv, rec = result.cv, result.recommendation
    target = result.settings.target
    partial = " [PARTIAL: stopped before the end; best so far]" if result.partial else ""
    console.print(f"[bold]{escape(cv['headline'])}[/]{partial}", highlight=False, soft_wrap=True)
    several = len(result.inputs) > 1
    rows = []
    for f in cv["fold_table"]:
        rate = f.get("bad_timeout_rate")
        rows.append(
            [
                str(f["fold"]),
                escape(f["held_out"]),
                escape(f["tuned"] or "—"),
                f"{f['samples']:,}",
                "—"
                if rate is None
                else f"{_pct(rate)} [{_pct(f['bad_timeout_rate_ci'][0])}, {_pct(f['bad_timeout_rate_ci'][1])}]",
                _ms(f.get("wait_mean_s")),
                escape(f["verdict"]),
            ]
        )
    cols = [
        num("fold"),
        Col("held out", prose=True, priority=0 if several else 3),
        Col("tuned on the other blocks", prose=True, priority=2),
        num("samples", 4),
        num("bad-timeout rate [95 % CI]"),
        num("W", 1),
        Col("verdict", prose=True),
    ]
    held = sum(f.get("holds", False) for f in cv["fold_table"])
    show(
        cols,
        rows,
        title=escape(
            f"folds: {cv['method']} (target {target:.2%}); the tuned point held in {held} of {len(cv['fold_table'])}"
        ),
        formats="--json",
    )
    crows = []
    for c in cv["candidates"][:10]:
        crows.append(
            [
                escape(c["kind"]),
                escape(c["setting"]),
                str(c["knobs"]),
                f"{c['cells_held']}/{c['cells']}",
                _pct(c["worst_bad_timeout_rate"]),
                _pct(c["bad_timeout_rate"]),
                _ms(c["wait_mean_s"]),
            ]
        )
    show(
        [
            Col("kind", priority=2),
            Col("candidate", prose=True),
            num("knobs", 3),
            num("blocks held"),
            num("worst block", 4),
            num("bad-timeout rate", 1),
            num("W"),
        ],
        crows,
        title=f"candidates scored on every held-out block (eligible: held in every block; fewer knobs win within {cv['tie_margin']:.0%} of the best W)",
        formats="--json",
    )
    for name, c in cv["calibration"].items():
        rates = ", ".join(_pct(r) for r in c["rates"])
        console.print(
            f"calibration of {name} (target fixed at {target:.2%}, only eta searched): "
            + (
                "carried over to every held-out block"
                if c["carried_over"]
                else f"did not carry over: held in {c['cells_held']} of {c['cells']} held-out blocks"
            )
            + f" (held-out rates {rates})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    b = cv.get("best_floor")
    if b is not None:
        console.print(
            f"one-knob floor tuned the same way: {b['setting']} — held in {b['cells_held']}/{b['cells']} blocks, W {_ms(b['wait_mean_s'])}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if rec["apply"]:
        console.print(
            f"[bold]apply[/] ({escape(rec['apply_note'])}):", highlight=False, soft_wrap=True
        )
        for line in rec["apply"]:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    else:
        console.print(f"apply: {rec['apply_note']}", highlight=False, markup=False, soft_wrap=True)
    console.print(
        f"[dim]reproduce{' on each trace' if len(result.inputs) > 1 else ''}: {escape(rec['command'])}[/]",
        highlight=False,
        soft_wrap=True,
    )
    console.print("")
    console.print("[bold]research view[/]: the search on all data (in-sample)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
