"""``rttlab simulate``: run a scenario in the closed-loop simulator and summarise it."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from rttlab.cli.common import console, fail, print_json, stderr
from rttlab.sim.run import PER_PACKET_TRACES, SCHEMA, TRACES, Interrupted
from rttlab.sim.run import simulate as run_scenario


class _Progress:
    """A progress bar of simulated time with an ETA on stderr, shown once a run has taken more
    than a second; remembers how far the run got for the Ctrl-C message."""

    def __init__(self, label: str, show: bool) -> None:
        self.label, self.show = label, show
        self.started = time.monotonic()
        self.now = self.end = 0.0
        self.bar = None
        self.task = None

    def __call__(self, now: float, end: float) -> None:
        self.now, self.end = now, end
        if not self.show:
            return
        if self.bar is None:
            if time.monotonic() - self.started < 1.0:
                return
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(bar_width=20),
                TextColumn("{task.completed:.1f}/{task.total:g} s simulated"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=stderr,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=end)
        self.bar.update(self.task, completed=now)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def simulate(
    scenario: Path = typer.Argument(
        ...,
        help="Scenario file (TOML), e.g. examples/scenarios/dumbbell-n10-droptail.toml.",
        show_default=False,
    ),
    set_: list[str] = typer.Option(
        [],
        "--set",
        "-s",
        metavar="KEY.PATH=VALUE",
        show_default=False,
        help="Override a scenario key before parsing, e.g. topology.bottleneck.bandwidth=20Mbps or simulation.duration=1h (durations: ns, us, ms, s, min, h).",
    ),
    seed: int = typer.Option(
        None, "--seed", help="Random seed (overrides simulation.seed).", min=0
    ),
    as_json: bool = typer.Option(
        False, "--json", help=f"Print JSON (schema {SCHEMA}) instead of a table."
    ),
    as_csv: bool = typer.Option(
        False,
        "--csv",
        help="Print the per-flow table as CSV (every column of the flows table, docs/schema.md: goodput in b/s, times in s).",
    ),
    out: Path = typer.Option(
        None,
        "--out",
        metavar="DIR",
        show_default=False,
        help="Write summary.json, flows/channels and every trace as Parquet into DIR.",
    ),
    plot: Path = typer.Option(
        None,
        "--plot",
        metavar="FILE",
        show_default=False,
        help="Draw cwnd, RTT/RTO and the bottleneck queue over time to FILE (.png, .svg or .pdf).",
    ),
    traces: str = typer.Option(
        "all",
        "--traces",
        help=f"Traces to keep: all, none, or a comma-separated list of {', '.join(TRACES)} (cwnd, retx accepted); all leaves out the per-packet {', '.join(PER_PACKET_TRACES)}: name them to keep them (all,arrival,quench or all,receive). With none, memory stays bounded however long the run.",
    ),
) -> None:
    """Simulate TCP flows over a dumbbell or graph with the scenario's estimator, queues and error models.

    Prints per-flow goodput, retransmissions (timeout / fast, spurious) and timeouts, the
    bottleneck's utilisation, drops and marks, and Jain's fairness index."""
    from rttlab.cli.common import one_format

    one_format(as_json, as_csv)
    if not scenario.is_file():
        fail(f"{scenario}: no such scenario file")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: '{plot}' must end in .png, .svg or .pdf")
    named = [t.strip() for t in traces.replace("cwnd", "window").split(",")]
    if plot is not None and "all" not in named:  # "all,arrival,quench" keeps what --plot needs
        missing = [t for t in ("window", "rtt", "queue") if t not in named]
        if missing:
            fail(f"--plot needs the {', '.join(missing)} trace(s): add them to --traces")
    progress = _Progress(scenario.stem, show=not (as_json or as_csv))
    interrupted = False
    try:
        result = run_scenario(scenario, set=set_, seed=seed, traces=traces, progress=progress)
    except Interrupted as stop:
        # Keep what was simulated: it is written and printed as a run that ended there.
        progress.stop()
        result, interrupted = stop.result, True
        stderr.print(
            f"rttlab: simulation interrupted at {result.duration:.3f} s of {result.interrupted_end:g} s; "
            "its partial result covers only that much"
            + (f" and is written to {out}" if out is not None else ""),
            highlight=False,
            soft_wrap=True,
        )
    except KeyboardInterrupt:  # before the run started: nothing simulated
        progress.stop()
        stderr.print(
            "rttlab: simulation interrupted; nothing simulated, nothing written",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    finally:
        progress.stop()
    _report(result, scenario, out, plot, as_json, as_csv)
    if interrupted:
        raise typer.Exit(130)


def _report(
    result, scenario: Path, out: Path | None, plot: Path | None, as_json: bool, as_csv: bool = False
) -> None:
    if out is not None:
        result.write(out)
    if plot is not None:
        result.plot(plot)
    if as_csv:
        import sys

        result.flows.to_csv(sys.stdout, index=False)
        return
    if as_json:
        doc = result.summary()
        doc["scenario"] = str(scenario)
        print_json(doc)
        return
    from rich.markup import escape

    from rttlab.cli.table import num, show
    from rttlab.units import count, duration, rate

    rows = [
        [
            str(row.flow),
            rate(row.goodput_bps),
            f"{row.retransmissions:,}",
            f"{row.retx_timeout:,}",
            f"{row.retx_fast:,}",
            f"{row.retx_spurious:,}",
            f"{row.timeouts:,}",
            f"{row.ecn_reductions:,}",
        ]
        for row in result.flows.itertuples()
    ]
    cols = [
        num("flow"),
        num("goodput"),
        # Resends by cause, then the timer's expiries: two counts that "timeout"/"timeouts"
        # headers side by side made look like one (issue 42).
        num("retx"),
        num("RTO retx", 2),
        num("fast retx", 2),
        num("spurious retx", 1),
        num("RTO expiries", 0),
        num("ECN cuts", 3),
    ]
    show(
        cols,
        rows,
        title=f"{escape(result.name or scenario.name)} — {duration(result.duration)} simulated{' (interrupted: partial)' if result.interrupted_end is not None else ''}, seed {result.seed}, {count(result.events, 'event')}",
    )
    from rttlab.cli.summary import bottleneck_line

    console.print(bottleneck_line(result.summary()), highlight=False, soft_wrap=True)
    if out is not None:
        console.print(f"traces written to {out}/")
    if plot is not None:
        console.print(f"plot written to {plot}")


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
