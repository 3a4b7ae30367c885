"""``rttlab live``: the kernel's RTT samples and timeouts, per connection, streamed from a BPF
sock_ops program to every estimator, in a table that refreshes (docs/live.md)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import typer

from rttlab.cli.common import console, fail, parse_duration, parse_params, stderr


def _ms(v: Any) -> str:
    return "—" if v is None else f"{v * 1e3:.1f}"


def _table(session: Any, title: str, max_conns: int = 6) -> Any:
    from rich.console import Group
    from rich.table import Table

    def one(rows: list[dict[str, Any]], caption: str) -> Table:
        t = Table(title=caption, title_justify="left", show_edge=False, pad_edge=False)
        for col, just in [
            ("estimator", "left"),
            ("samples", "right"),
            ("MAE ms", "right"),
            ("bad timeouts", "right"),
            ("W ms", "right"),
            ("fires ≤ kernel RTO", "right"),
            ("spurious with kernel", "right"),
            ("W on kernel's losses ms", "right"),
        ]:
            t.add_column(col, justify=just)  # type: ignore[arg-type]
        for r in rows:
            t.add_row(
                r["estimator"],
                str(r.get("samples", 0)),
                _ms(r.get("mae_s")),
                str(r.get("bad_timeouts", 0)),
                _ms(r.get("wait_mean_s")),
                str(r.get("fired_too", 0)),
                str(r.get("spurious_too", 0)),
                _ms(r.get("wait_on_kernel_losses_s")),
            )
        return t

    s = session.summary()
    k = s["kernel"]
    head = (
        f"{title} — {s['events']} events, {len(s['connections'])} connections with samples (taken {s['samples_from']}), ring-buffer overruns {s['overruns']}, merged samples {s['merged']}; "
        f"kernel RTOs {k['kernel_rtos']} (spurious {k['kernel_spurious']}, needed {k['kernel_needed']}, unknown {k['kernel_unknown']})"
    )
    parts: list[Any] = [one(s["pooled"], head + "\npooled over connections")]
    conns = sorted(s["connections"], key=lambda c: -c["samples"])
    for c in conns[:max_conns]:
        parts.append(
            one(
                c["rows"],
                f"{c['local']} → {c['remote']} ({c['state']}, {c['samples']} samples, {c['retransmissions']} retransmissions, "
                f"{c['rto_events']} RTO callbacks, timestamps {'on' if c['timestamps'] else 'off'})",
            )
        )
    if len(conns) > max_conns:
        parts.append(f"… {len(conns) - max_conns} more connections (--json lists all)")
    return Group(*parts)


def live(
    cgroup: Path = typer.Option(
        None,
        "--cgroup",
        help="cgroup v2 directory whose connections to watch [default: the whole cgroup v2 hierarchy: every new connection of the host]; monitoring only.",
        show_default=False,
    ),
    testbed: Path = typer.Option(
        None,
        "--testbed",
        help="Run this testbed scenario (TOML) with the program on a cgroup of its own, and watch its flows; ends with the run.",
        show_default=False,
    ),
    set_: list[str] = typer.Option(
        [], "--set", "-s", help="Override KEY.PATH=VALUE in the --testbed scenario, repeatable."
    ),
    duration: str = typer.Option(
        None,
        "--duration",
        "-d",
        help="Stop after this long (e.g. 30s) [default: until Ctrl-C, or the testbed run's end].",
        show_default=False,
    ),
    estimators: str = typer.Option(
        None,
        "--estimators",
        "-e",
        metavar="NAMES",
        help="Comma-separated estimator names [default: every estimator].",
        show_default=False,
    ),
    param: list[str] = typer.Option(
        [],
        "--param",
        "-p",
        metavar="NAME.KEY=VALUE",
        help="Estimator parameter, repeatable, e.g. rfc6298.min_rto=200ms.",
    ),
    min_rto: str = typer.Option(
        None,
        "--min-rto",
        metavar="DURATION",
        help="Raise every estimator's RTO in force to at least this (as in `rttlab evaluate`).",
        show_default=False,
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print JSON lines (one per RTT sample, kernel RTO and verdict; a summary line at the end) instead of the live table.",
    ),
) -> None:
    """Stream the kernel's RTT samples and timeouts from a BPF sock_ops program to every estimator, live.

    Needs root, cgroup v2, BPF with BTF, clang and libbpf (the program is compiled at first use).
    Only connections established after the start are seen. Ctrl-C ends with the final table."""
    from rttlab.live import Session, Unavailable, Watch, bpf
    from rttlab.live import cgroup as cg
    from rttlab.trace.estimators import NAMES

    names = [n.strip() for n in (estimators or ",".join(NAMES)).split(",") if n.strip()]
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        fail(f"--estimators: unknown estimator '{unknown[0]}' (known: {', '.join(NAMES)})")
    params = parse_params(param)
    for name in params:
        if name not in names:
            fail(f"--param: '{name}' is not among the selected estimators ({', '.join(names)})")
    limit = parse_duration(duration, "--duration") if duration else None
    floor_ns = int(parse_duration(min_rto, "--min-rto") * 1e9) if min_rto else 0
    if testbed is not None and cgroup is not None:
        fail("--testbed and --cgroup: give one (a testbed run watches a cgroup of its own)")
    if testbed is not None and not testbed.is_file():
        fail(f"{testbed}: no such scenario file")

    from rttlab import _core

    try:
        bpf.check_root()
        path = cg.check(cgroup) if cgroup is not None else cg.mount_point()
        bpf.build()  # clang and libbpf's headers, before anything is shown
        hz = bpf.kernel_hz()
        session = Session(
            [(n, sorted(params.get(n, {}).items())) for n in names], hz=hz, min_rto_ns=floor_ns
        )
    except Unavailable as e:
        fail(str(e))
    except _core.ParameterError as e:
        fail(str(e))

    def emit(records: list[dict[str, Any]]) -> None:
        for r in records:
            sys.stdout.write(json.dumps(r) + "\n")

    on_records = emit if as_json else None
    title = f"rttlab live on {testbed or path}"
    last = [0.0]

    def refresh(view: Any) -> None:
        if view is not None and time.monotonic() - last[0] > 0.25:
            last[0] = time.monotonic()
            view.update(_table(session, title))

    import signal
    from contextlib import nullcontext

    from rich.live import Live

    def stop(_sig: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # `kill` ends a run as Ctrl-C does: the final table
    watch = None
    if testbed is None:
        try:
            watch = Watch(path, session, on_records)  # attached before the table shows
        except Unavailable as e:
            fail(str(e))
    interrupted = False
    # From here on an interrupt, wherever it lands, ends the run with its summary.
    try:
        start = time.monotonic()
        display = (
            nullcontext()
            if as_json
            else Live(
                _table(session, title), console=console, refresh_per_second=4, transient=False
            )
        )
        with display as view:
            if testbed is not None:
                from rttlab.live.watch import run_testbed
                from rttlab.testbed import TestbedError
                from rttlab.testbed import Unavailable as NoTestbed

                overrides = list(set_) + ([f"simulation.duration={limit:g}s"] if limit else [])
                try:
                    run_testbed(
                        testbed,
                        session,
                        overrides,
                        on_records,
                        on_tick=lambda _n, _t: refresh(view),
                    )
                except (NoTestbed, TestbedError) as e:
                    fail(str(e))
            else:
                assert watch is not None
                try:
                    while limit is None or time.monotonic() - start < limit:
                        watch.pump(100)
                        refresh(view)
                except KeyboardInterrupt:
                    interrupted = True
                watch.pump(0)
            if view is not None:
                view.update(_table(session, title))
    except KeyboardInterrupt:
        interrupted = True
    except Unavailable as e:
        fail(str(e))
    finally:
        if watch is not None:
            watch.close()
    if as_json:
        emit([session.summary()])
    if interrupted:
        stderr.print("rttlab: live stopped (Ctrl-C); programs detached", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("live")(live)
