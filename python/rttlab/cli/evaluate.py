"""``rttlab evaluate``: print what :func:`rttlab.evaluate` returns (the scoring lives there)."""

from __future__ import annotations

import math
from contextlib import nullcontext
from pathlib import Path

from rttlab import InputError, ParameterError
from rttlab.cli.common import (
    COLUMNS_HELP,
    UNIT_HELP,
    check_columns,
    check_unit,
    console,
    fail,
    parse_duration,
    parse_params,
    print_csv,
    print_json,
    stderr,
)
from rttlab.trace.capture import is_capture
from rttlab.trace.estimators import NAMES, spec
from rttlab.trace.evaluate import PARETO_MIN_SAMPLES, SCHEMA, Evaluation
from rttlab.trace.evaluate import evaluate as run_evaluation
from rttlab.trace.replay import COUNTS, METRICS
from rttlab.trace.series import sample_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import typer

# (column, header, kind, priority): kind "s" is a duration shown in the unit its column's range
# calls for, "%" a fraction shown in percent, None a count or plain number. Priority 0 is always
# shown (the column --sort names is too); higher numbers are left out first in a narrow terminal.
COLUMNS = [
    ("mae_s", "MAE", "s", 0),
    ("mae_after_s", "MAE after", "s", 2),
    ("mae_ticks", "MAE ticks", None, 4),
    ("mape", "MAPE %", None, 3),
    ("under_prediction_rate", "under %", "%", 3),
    ("bad_timeouts", "bad TOs", None, 1),
    ("bad_timeout_rate", "bad TO %", "%", 0),
    ("wait_mean_s", "W", "s", 0),
    ("wait_p99_s", "W p99", "s", 2),
]
#: Shown for a capture: W on the segments it shows were really lost.
LOST_COLUMNS = [("lost_segments", "lost", None, 2), ("lost_wait_mean_s", "W lost", "s", 1)]


def evaluate(
    inputs: list[Path] | tuple[Path, ...] | None = None,
    sample: bool = False,
    estimators: str = ",".join(NAMES),
    param: list[str] | tuple[str, ...] = (),
    unit: str | None = None,
    columns: str | None = None,
    tick: str | None = None,
    min_rto: str | None = None,
    timer_granularity: str = "0",
    timestamps: bool | None = None,
    sort: str = "mae_s",
    as_json: bool = False,
    as_csv: bool = False,
    plot: Path | None = None,
    flow: int | None = None,
) -> None:
    """Replay estimators over RTT samples: prediction error and the retransmission timer their sender would have run.

    The timer is replayed as Allman & Paxson (SIGCOMM 1999) did: restarted at each ACK, backed off
    on expiry, Karn's rule after a timeout. It counts bad (spurious) timeouts and the wait W a loss
    would have cost; rows on the Pareto front of the two are marked. A capture is scored per
    connection on the samples that measure its path RTT from the capture's vantage point
    (docs/capture.md), and on all connections pooled. Every metric is defined in docs/metrics.md.
    The first sample of each series warms the estimator up and is not scored.

    Several inputs are scored together, as tune takes them: the table pools every scored sample
    of every input (each series and each capture connection replayed from a fresh estimator and
    timer; a long input weighs more), and a second table gives each input's sample count, best
    MAE and Pareto front. Each input's own rows are in --json and --csv; --plot draws one figure
    per input and the pooled front."""
    from rttlab.cli.common import one_format

    one_format(as_json, as_csv)
    given = list(inputs or [])
    if sample == bool(given):
        fail("give one or more INPUTS, or --sample (the bundled synthetic series)")
    paths = [sample_path()] if sample else given
    seen: dict[Path, Path] = {}
    for p in paths:
        if p.resolve() in seen:
            fail(f"{p}: given twice (as {seen[p.resolve()]}); each input is scored once")
        seen[p.resolve()] = p
    check_unit(unit)
    check_columns(columns)
    if sort not in METRICS + COUNTS:
        fail(f"--sort: '{sort}' is not one of {', '.join(METRICS + COUNTS)}")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: '{plot}' must end in .png, .svg or .pdf")
    if flow is not None and plot is None:
        fail("--flow: only with --plot (it chooses the connection drawn)")
    if flow is not None and not (len(paths) == 1 and is_capture(paths[0])):
        fail("--flow: applies to one capture (a connection id of `rttlab flows CAPTURE`)")
    tick_s = parse_duration(tick, "--tick") if tick is not None else None
    min_rto_s = parse_duration(min_rto, "--min-rto") if min_rto is not None else None
    granularity_s = (
        0.0
        if timer_granularity.strip() in ("0", "0s")
        else parse_duration(timer_granularity, "--timer-granularity")
    )
    names = [n.strip() for n in estimators.split(",") if n.strip()]
    if not names:
        fail("--estimators: no estimator named")
    if len(set(names)) != len(names):
        fail("--estimators: an estimator is listed twice")
    params = parse_params(list(param))
    for name in params:
        if name not in names:
            fail(f"--param: '{name}' is not among the selected estimators ({', '.join(names)})")
    specs = [spec(n, **params.get(n, {})) for n in names]
    for option, value, what in (("--unit", unit, "times"), ("--columns", columns, "columns")):
        capture = next((p for p in paths if value is not None and is_capture(p)), None)
        if capture is not None:
            fail(
                f"{option} applies to RTT series; {capture} is a capture, whose {what} are its own"
            )

    size = sum(p.stat().st_size for p in paths if p.is_file())
    busy = not (as_json or as_csv) and size >= 20_000_000
    over = paths[0] if len(paths) == 1 else f"{len(paths)} inputs"
    status = (
        console.status(f"replaying {len(specs)} estimators over {over}") if busy else nullcontext()
    )
    try:
        with status:
            result = run_evaluation(
                paths[0] if len(paths) == 1 else paths,
                specs,
                by="conn",
                tick=tick_s,
                min_rto=min_rto_s,
                timer_granularity=granularity_s,
                timestamps=timestamps,
                unit=unit,
                columns=columns,
                sort=sort,
                trace=plot is not None,
                trace_conn=flow,
            )
    except ValueError as e:
        if isinstance(e, (InputError, ParameterError)):
            raise
        fail(str(e))
    for warning in result.warnings:
        stderr.print(f"rttlab: warning: {warning}", highlight=False, markup=False, soft_wrap=True)
    drawn = result.plot(plot) if plot is not None else []
    if as_json:
        print_json(result.to_json())
        return
    if as_csv:
        print_csv(csv_rows(result))
        return
    render(result, sort)
    if plot is not None and result.inputs is not None:
        console.print(
            f"plots written to {', '.join(map(str, drawn[:-1]))} (one per input) and {drawn[-1]} (Pareto front, pooled)",
            highlight=False,
        )
    elif plot is not None:
        console.print(
            f"plots written to {drawn[0]}"
            + (f" (connection {result.connections[0]['conn']})" if result.connections else "")
            + f" and {drawn[1]} (Pareto front)",
            highlight=False,
        )


def csv_rows(result: Evaluation) -> list[dict]:
    """The pooled rows (conn empty), then each connection's, every metric in base units. With
    several inputs an ``input`` column comes first: the pooled rows (input empty), then each
    input's own rows and its connections'."""
    if result.inputs is not None:
        out = [{"input": None, "conn": None, **row} for row in result.rows]
        for e in result.inputs:
            out.extend({"input": e.input, **row} for row in csv_rows(e))
        return out
    out = [{"conn": None, **row} for row in result.rows]
    for e in result.connections or []:
        out.extend({"conn": e["conn"], **row} for row in e["rows"])
    return out


def _column_unit(values: list[float]) -> tuple[str, float]:
    """The unit a column of durations (s) is shown in, chosen for its median value (a column
    of 60 ms errors with one 1 s outlier reads in ms: 67.2 … 1,008)."""
    from statistics import median

    from rttlab.units import duration

    top = median(abs(v) for v in values) if values else 0.0
    unit = duration(top).split(" ")[-1] if top else "ms"
    return unit, {"h": 3600.0, "min": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]


def _cell(v: float, scale: float) -> str:
    x = v / scale
    # Three significant figures, at least one decimal below 100: 0.512, 12.3, 1,008.
    return (
        f"{x:,.0f}"
        if abs(x) >= 100
        else f"{x:.3g}"
        if abs(x) >= 1
        else f"{x:.3f}".rstrip("0").rstrip(".")
        if x
        else "0"
    )


def render(result: Evaluation, sort: str = "mae_s") -> None:
    """The pooled table, then per connection for a capture, then the notes."""
    from rich.markup import escape

    from rttlab.cli.table import Col, show
    from rttlab.units import count, duration

    scored = result.rows[0]["samples"] if result.rows else 0
    captures = result.input_kind == "capture" or any(
        e.input_kind == "capture" for e in result.inputs or []
    )
    if result.inputs is not None:
        each = "each series and each capture connection" if captures else "each input"
        title = f"{count(len(result.inputs), 'input')} — {count(result.samples_read, 'sample')}, {scored:,} scored ({each} replayed from a fresh estimator and timer, scores pooled)"
    elif result.input_kind == "capture":
        n = len(result.connections or [])
        title = f"{escape(str(result.input))} — path RTT of {count(n, 'connection')}, {count(result.samples_read, 'sample')}, {scored:,} scored (each connection replayed from a fresh estimator and timer, scores pooled)"
    else:
        title = f"{escape(str(result.input))} — {count(result.samples_read, 'sample')}, {scored:,} scored"
    settings = result.settings
    extra = [f"MAE ticks of {duration(settings['tick_s'])}"]
    if settings["min_rto_s"] is not None:
        extra.append(f"floors equalised at {duration(settings['min_rto_s'])}")
    if settings["timer_granularity_s"]:
        extra.append(f"timer heartbeat {duration(settings['timer_granularity_s'])}")
    extra.append(
        {
            True: "timestamps: samples of timed-out segments kept",
            False: "Karn: samples of timed-out segments withheld",
            "auto": "Karn: samples of timed-out segments withheld unless the connection uses timestamps",
        }[settings["timestamps"]]
    )
    columns = COLUMNS + (LOST_COLUMNS if captures else [])
    # The mark's column only when a row is marked (too few samples: none is, and a warning says why).
    marked = any(row["pareto"] for row in result.rows)
    cols = [Col("")] * marked + [Col("estimator", style="cyan"), Col("floor", priority=3)]
    formats = []
    for column, header, kind, priority in columns:
        values = [
            r[column]
            for r in result.rows
            if r[column] is not None
            and not (isinstance(r[column], float) and math.isnan(r[column]))
        ]
        if kind == "s":
            unit, scale = _column_unit(values)
            header = f"{header} {unit}"
        else:
            scale = 0.01 if kind == "%" else 1.0
        cols.append(Col(header, "right", 0 if column == sort else priority))
        formats.append((column, kind, scale))
    rows = []
    for row in result.rows:
        cells = []
        for column, kind, scale in formats:
            v = row[column]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("[dim]—[/]")
            elif kind is None and isinstance(v, int):
                cells.append(f"{v:,}")
            else:
                cells.append(_cell(v, scale))
        mark = ["[bold green]◆[/]" if row["pareto"] else ""] * marked
        rows.append([*mark, row["estimator"], escape(row["floor"]), *cells])
    show(cols, rows, title=f"{title}\n[dim]{'; '.join(extra)}[/]")
    if marked:
        console.print(
            "[dim]◆ = no other row beats it on both bad TO % and W: a trade-off, not a winner[/]"
        )
    console.print(
        "[dim]MAE: forecast before the sample; MAE after: estimate once the sample is absorbed. "
        + ("W lost: W on the segments the capture shows were really lost. " if captures else "")
        + "— = not defined. Definitions: docs/metrics.md[/]"
    )
    if result.inputs is not None:
        per_input(result.inputs)
    if result.connections:
        per_cols = [
            Col("conn", "right"),
            Col("src → dst"),
            Col("vantage", priority=3),
            Col("path RTT from", priority=2),
            Col("samples", "right", 1),
            Col("retx", "right", 2),
            Col("lost", "right", 2),
            Col("best MAE"),
            Col("Pareto front (bad TO vs W)", priority=1),
        ]
        per_rows = [
            [
                str(e["conn"]),
                escape(f"{e['src']} → {e['dst']}"),
                e["vantage"],
                e["method"],
                f"{e['samples']:,}",
                f"{e['retransmissions']:,}",
                f"{e['lost']:,}",
                winners(e["rows"], "mae_s"),
                front(e["rows"]),
            ]
            for e in result.connections[:30]
        ]
        show(per_cols, per_rows, title="per connection (largest first)")
        if len(result.connections) > 30:
            console.print(
                f"[dim]{len(result.connections) - 30} more connections in --json and --csv[/]"
            )
    for note in result.notes:
        console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)


def per_input(inputs: list[Evaluation]) -> None:
    """One row per input of a pooled evaluation: what it holds, its best MAE, its front."""
    from rich.markup import escape

    from rttlab.cli.table import Col, show
    from rttlab.units import count

    cols = [
        Col("input"),
        Col("kind", priority=3),
        Col("samples", "right", 2),
        Col("scored", "right", 1),
        Col("best MAE"),
        Col("fewest bad TOs", priority=2),
        Col("Pareto front (bad TO vs W)", priority=1),
    ]
    rows = [
        [
            escape(e.input),
            f"capture, {count(len(e.connections or []), 'connection')}"
            if e.input_kind == "capture"
            else e.input_kind,
            f"{e.samples_read:,}",
            f"{e.rows[0]['samples']:,}" if e.rows else "0",
            winners(e.rows, "mae_s"),
            winners(e.rows, "bad_timeout_rate"),
            front(e.rows),
        ]
        for e in inputs
    ]
    show(cols, rows, title="per input (each alone; its rows in --json and --csv)")


def winners(rows: list[dict], key: str) -> str:
    """The estimator(s) with the lowest value of `key` (ties listed, at most three named)."""
    values = [r[key] for r in rows if r[key] is not None]
    if not values:
        return "—"
    names = [r["estimator"] for r in rows if r[key] == min(values)]
    return ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")


def front(rows: list[dict]) -> str:
    """The estimators on the Pareto front (at most four named), or why there is none."""
    names = [r["estimator"] for r in rows if r["pareto"]]
    if rows and min(r["samples"] for r in rows) < PARETO_MIN_SAMPLES:
        return f"— (< {PARETO_MIN_SAMPLES:,} samples)"
    if not names:
        return "—"
    return ", ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else "")


def register(app: typer.Typer) -> None:
    """The command as typer sees it: each option with its help, calling the plain function (whose
    docstring is the command's help; `rttlab.cli.direct` calls it for plain argument lists
    without importing typer)."""
    import typer

    def evaluate_command(
        inputs: list[Path] = typer.Argument(
            None,
            metavar="INPUTS",
            help="RTT series (one RTT per line in ms, or a CSV with a header such as time,rtt in s or timestamp,rtt_ms) or pcap/pcapng captures; several are scored pooled, and each alone in a second table.",
            show_default=False,
        ),
        sample: bool = typer.Option(
            False, "--sample", help="Use the bundled synthetic series instead of INPUTS."
        ),
        estimators: str = typer.Option(
            ",".join(NAMES),
            "--estimators",
            "-e",
            metavar="NAMES",
            show_default=False,
            help="Comma-separated estimator names (see `rttlab estimators`). Default: every estimator.",
        ),
        param: list[str] = typer.Option(
            [],
            "--param",
            "-p",
            metavar="NAME.KEY=VALUE",
            show_default=False,
            help="Estimator parameter NAME.KEY=VALUE, repeatable, e.g. fixed-share.clamp=top.",
        ),
        unit: str = typer.Option(
            None,
            "--unit",
            metavar="s|ms|us|ns",
            show_default=False,
            help=UNIT_HELP,
        ),
        columns: str = typer.Option(
            None,
            "--columns",
            metavar="time=COL,rtt=COL",
            show_default=False,
            help=COLUMNS_HELP,
        ),
        tick: str = typer.Option(
            None,
            "--tick",
            metavar="DURATION",
            show_default=False,
            help="Tick of every tick-based estimator (fixed-share.tick, linux.hz = 1/tick, the clock granularity G of the others) and unit of 'MAE ticks' [default: estimators keep theirs; MAE ticks in 4 ms, one jiffy of Nunes et al. 2011's Linux 2.6.28].",
        ),
        min_rto: str = typer.Option(
            None,
            "--min-rto",
            metavar="DURATION",
            show_default=False,
            help="Equalise floors (a duration such as 200ms): set every estimator's own floor to this and raise every RTO in force to it, to compare the estimators themselves.",
        ),
        timer_granularity: str = typer.Option(
            "0",
            "--timer-granularity",
            metavar="DURATION",
            help="The sender's timer fires on this heartbeat (a duration, e.g. 500ms for BSD's slow timer); 0 = exactly at its deadline.",
        ),
        timestamps: bool = typer.Option(
            None,
            "--timestamps/--no-timestamps",
            help="Whether the sender took RTTs from TCP timestamps, so a timed-out segment's sample still reaches its estimator (else Karn's rule withholds it) [default: per connection for a capture (did it negotiate timestamps?), no for a series].",
            show_default=False,
        ),
        sort: str = typer.Option(
            "mae_s",
            "--sort",
            metavar="METRIC",
            help=f"Sort rows by one of: {', '.join(METRICS + COUNTS)}.",
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help=f"Print JSON (schema {SCHEMA}, docs/schema.md) instead of a table.",
        ),
        as_csv: bool = typer.Option(
            False,
            "--csv",
            help="Print CSV instead of a table: one row per estimator, pooled (conn empty) then per connection, every metric (durations in s, rates as fractions).",
        ),
        plot: Path = typer.Option(
            None,
            "--plot",
            metavar="FILE",
            show_default=False,
            help="Draw samples, predictions and RTOs over time to FILE (.png, .svg or .pdf), and the Pareto front to FILE-front; with several inputs, one figure per input (FILE-INPUT).",
        ),
        flow: int = typer.Option(
            None,
            "--flow",
            metavar="ID",
            show_default=False,
            help="With --plot on a capture: draw this connection (its id in `rttlab flows`) instead of the one with the most samples.",
        ),
    ) -> None:
        evaluate(
            inputs=list(inputs or []),
            sample=sample,
            estimators=estimators,
            param=param,
            unit=unit,
            columns=columns,
            tick=tick,
            min_rto=min_rto,
            timer_granularity=timer_granularity,
            timestamps=timestamps,
            sort=sort,
            as_json=as_json,
            as_csv=as_csv,
            plot=plot,
            flow=flow,
        )

    evaluate_command.__doc__ = evaluate.__doc__
    app.command("evaluate")(evaluate_command)
