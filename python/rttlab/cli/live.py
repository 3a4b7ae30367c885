"""``rttlab live``: the kernel's RTT samples and timeouts, per connection, streamed from a BPF
sock_ops program to every estimator, in a table that refreshes (docs/live.md)."""

from __future__ import annotations

import json
import re
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
        help="Raise every replayed estimator's RTO in force to at least this (as in `rttlab evaluate`); the kernel's own floor is --rto-min.",
        show_default=False,
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print JSON lines (one per RTT sample, kernel RTO and verdict; a summary line at the end) instead of the live table.",
    ),
    rto_min: str = typer.Option(
        None,
        "--rto-min",
        metavar="DURATION",
        help="With --testbed: set Linux's own rto_min (e.g. 50ms) for the scenario's kernel senders, run the scenario with the kernel default and with it on the same seeds, and print measured beside predicted (docs/live.md). Not --min-rto, which floors the replayed estimators.",
        show_default=False,
    ),
    recommendation: Path = typer.Option(
        None,
        "--recommendation",
        metavar="FILE",
        help="As --rto-min, from `rttlab tune --stack linux --json`'s recommendation.knobs.rto_min_us.",
        show_default=False,
    ),
    apply_as: str = typer.Option(
        "sysctl",
        "--apply-as",
        metavar="sysctl|route",
        help="How --rto-min is set in each kernel sender's namespace: the sysctl net.ipv4.tcp_rto_min_us, or the testbed route's rto_min (ip route change).",
    ),
    seeds: str = typer.Option(
        None,
        "--seeds",
        metavar="LIST",
        help="With --rto-min/--recommendation: the seeds to run, e.g. 1,2,3 or 1-3 [default: the scenario's].",
        show_default=False,
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
    setting = None
    if rto_min is not None or recommendation is not None:
        setting = _setting(rto_min, recommendation, apply_as, testbed)
    elif seeds is not None:
        fail(
            "--seeds: runs seeds with --rto-min or --recommendation (use --set simulation.seed=N for one run)"
        )

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
    if setting is not None:
        assert testbed is not None
        _compare(
            testbed,
            setting,
            _seeds(seeds, testbed, list(set_)),
            session,
            hz,
            params,
            names if estimators else ["linux"],
            list(set_) + ([f"simulation.duration={limit:g}s"] if limit else []),
            as_json,
        )
        return

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


def _setting(
    rto_min: str | None, recommendation: Path | None, apply_as: str, testbed: Path | None
) -> Any:
    from rttlab.live import apply

    if rto_min is not None and recommendation is not None:
        fail("--rto-min and --recommendation: give one")
    what = "--rto-min" if rto_min is not None else "--recommendation"
    if testbed is None:
        fail(
            f"{what}: applies to a testbed scenario's kernel flows; give --testbed SCENARIO.toml (the host's own setting is left alone)"
        )
    try:
        if rto_min is not None:
            return apply.parse_rto_min(rto_min, apply_as)
        assert recommendation is not None
        return apply.from_recommendation(recommendation, apply_as)
    except apply.BadSetting as e:
        fail(str(e))


def _seeds(text: str | None, testbed: Path, overrides: list[str]) -> list[int]:
    if text is None:
        from rttlab.sim import Scenario

        try:
            s = Scenario.load(testbed)
            if overrides:
                s = s.with_(overrides)
            return [int(s.resolved()["simulation"]["seed"])]
        except Exception as e:  # the scenario's own error names the key
            fail(f"{testbed}: {e}")
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            fail(f"--seeds: cannot read '{part}' (give seeds as 1,2,3 or 1-3)")
        out += list(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    if len(set(out)) != len(out):
        fail(f"--seeds: a seed is given twice in '{text}'")
    return out


def _compare_table(cmp: Any) -> Any:
    """One table: per seed and pooled, the default and the applied setting, predicted / measured.
    Eight columns in 80 terminal columns (the sample counts are in --json)."""
    from rich import box
    from rich.console import Group
    from rich.table import Table

    def ms(v: Any) -> str:
        return "—" if v is None else f"{v * 1e3:.0f}"

    def n(v: Any) -> str:
        return "—" if v is None else str(v)

    t = Table(
        title=f"Linux rto_min: kernel default against `{cmp.setting.command()}` (HZ {cmp.hz})"
        + (" — PARTIAL: interrupted" if cmp.partial else ""),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    for col in (
        "seed",
        "setting",
        "rto_min",
        "RTOs",
        "spurious\npred/meas",
        "needed\ngiven/meas",
        "W ms\npred/meas",
        "W on needed\nms pred/meas",
    ):
        t.add_column(col, justify="left" if col == "setting" else "right")
    for r in cmp.rows():
        t.add_row(
            "all" if r["seed"] is None else str(r["seed"]),
            r["setting"],
            f"{r['rto_min_us'] / 1000:g} ms",
            f"{r['kernel_rtos']} ({r['measured_unknown']}?)"
            if r["measured_unknown"]
            else str(r["kernel_rtos"]),
            f"{n(r['predicted_bad_timeouts'])}/{r['measured_spurious']}",
            f"{n(r['given_needed'])}/{r['measured_needed']}",
            f"{ms(r['predicted_wait_mean_s'])}/{ms(r['measured_wait_mean_s'])}",
            f"{ms(r['predicted_wait_on_needed_s'])}/{ms(r['measured_wait_on_needed_s'])}",
        )
    note = (
        f"setting from {cmp.setting.source}; rto_min as the senders' namespaces read it back. "
        "pred: the default run's kernel samples of that seed replayed through `linux` with that "
        "rto_min (docs/metrics.md); meas: the kernel's own RTOs judged from its BPF events "
        "(docs/live.md). RTOs: the kernel's timeout episodes (n? unjudged); needed given: the "
        "default run's needed timeouts, handed to the replay as losses (a replay cannot predict "
        "how many there would be); W: mean RTO at each sample."
    )
    return Group(t, note)


def _compare(
    testbed: Path,
    setting: Any,
    seeds: list[int],
    session: Any,
    hz: int,
    params: dict[str, dict[str, str]],
    names: list[str],
    overrides: list[str],
    as_json: bool,
) -> None:
    """--rto-min / --recommendation: default and applied, seed by seed, in one table."""
    import signal

    from rttlab.live import Unavailable, apply
    from rttlab.testbed import TestbedError
    from rttlab.testbed import Unavailable as NoTestbed

    del session  # each run has its own
    cmp = apply.Comparison(setting, hz, seeds)

    def stop(_sig: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)

    def on_run(label: str, run: Any) -> None:
        if run is None:
            stderr.print(f"rttlab live: {label} …", highlight=False)
        elif as_json:
            sys.stdout.write(
                json.dumps(
                    {
                        "event": "rto_run",
                        "seed": run.seed,
                        "setting": run.setting,
                        "rto_min_us": run.rto_min_us,
                        "applied": run.applied,
                        "kernel": run.kernel,
                        "predicted": run.predicted,
                        "warnings": run.warnings,
                    }
                )
                + "\n"
            )
        for w in run.warnings if run is not None else []:
            stderr.print(f"rttlab live: {label}: {w}", highlight=False)

    try:
        apply.compare(
            testbed,
            setting,
            seeds,
            hz=hz,
            estimators=[(n, sorted(params.get(n, {}).items())) for n in names],
            overrides=overrides,
            on_run=on_run,
            result=cmp,
        )
    except KeyboardInterrupt:
        cmp.partial = True
    except (NoTestbed, TestbedError, Unavailable, apply.NotApplied) as e:
        fail(str(e))
    except _core_parameter_error() as e:  # the replay's linux estimator refused the value
        fail(f"{setting.source}: {e}")
    if as_json:
        sys.stdout.write(json.dumps(cmp.to_json()) + "\n")
    else:
        console.print(_compare_table(cmp))
    if cmp.partial:
        stderr.print(
            f"rttlab live: stopped (Ctrl-C) after {len(cmp.runs)} of {2 * len(seeds)} runs; the table holds those",
            highlight=False,
        )


def _core_parameter_error() -> type[Exception]:
    from rttlab import _core

    return _core.ParameterError


def register(app: typer.Typer) -> None:
    app.command("live")(live)
