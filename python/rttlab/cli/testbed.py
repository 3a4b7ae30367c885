"""``rttlab testbed``: run a scenario in real time — real Linux TCP between network namespaces
through rttlab's own queues and error models — and, with ``--compare``, in the simulator too."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rttlab.cli.common import console, fail, print_json, stderr

#: Where ``--compare --out DIR`` writes the simulator's side (the testbed's is DIR itself).
SIM_DIR = "simulator"


def testbed(
    scenario: Path = typer.Argument(
        ...,
        help="Scenario file (TOML), e.g. examples/scenarios/dumbbell-n1-droptail.toml.",
        show_default=False,
    ),
    set_: list[str] = typer.Option(
        [],
        "--set",
        "-s",
        help="Override KEY.PATH=VALUE before parsing, repeatable, e.g. simulation.duration=5s.",
    ),
    cc: str = typer.Option(
        None,
        "--cc",
        help="The kernel's congestion control for every flow (reno, cubic, bbr, ...) instead of the scenario's, or FLOW=NAME,... per flow.",
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="Write each host's pcap, summary.json, flows/channels and each trace (Parquet) and run.json (emulator counters, fidelity, kernel settings) into DIR; with --compare, the simulator's summary.json and Parquet files into DIR/simulator.",
    ),
    sysctl: list[str] = typer.Option(
        [],
        "--sysctl",
        help="Set KEY=VALUE in every namespace after the scenario's settings, repeatable, e.g. net.ipv4.tcp_recovery=0 (RACK off).",
    ),
    compare: bool = typer.Option(
        False,
        "--compare",
        help="Also run the scenario in rttlab's simulator and print both side by side.",
    ),
    rtt_method: str = typer.Option(
        "meter",
        "--rtt-method",
        help="Which of the sender-side pcap's RTT samples the tables hold: meter (default: the simulated sender's rule — timestamps: one per ACK advancing the left edge; else tcp.rtt_sampling's, one timed segment per RTT or one per ACK), seq, ts (one capture method, as rttlab samples --method) or all.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Run a scenario in real time: Linux TCP between namespaces through rttlab's own queues and error models.

    Needs root, network namespaces and /dev/net/tun; a scenario beyond what the emulator holds
    on this machine is refused. Ctrl-C stops the run and removes everything it made."""
    from rttlab.testbed import TestbedError, Unavailable, run
    from rttlab.testbed.run import RTT_METHODS

    if not scenario.is_file():
        fail(f"{scenario}: no such scenario file")
    if rtt_method not in RTT_METHODS:
        fail(f"--rtt-method: '{rtt_method}' is not one of {', '.join(RTT_METHODS)}")
    kernel_cc: dict[int, str] | str | None = cc
    if cc and "=" in cc:
        try:
            kernel_cc = {int(k): v for k, v in (item.split("=", 1) for item in cc.split(","))}
        except ValueError:
            fail(f"--cc: cannot read '{cc}' (a name, or FLOW=NAME,...)")
    extra = {}
    for item in sysctl:
        key, eq, value = item.partition("=")
        if not eq or not key.startswith("net."):
            fail(
                f"--sysctl: '{item}' is not KEY=VALUE with a net.* key (namespaces have their own net.* only)"
            )
        extra[key.strip()] = value.strip()
    try:
        tr = run(scenario, set_, out_dir=out, cc=kernel_cc, sysctls=extra, rtt_method=rtt_method)
    except (Unavailable, TestbedError) as e:
        fail(str(e))
    except KeyboardInterrupt:
        stderr.print("rttlab: testbed interrupted; namespaces and devices removed", highlight=False)
        raise typer.Exit(130) from None
    r = tr.result
    if out is not None:
        # summary.json and one Parquet file per table, as `rttlab simulate --out` writes them.
        r.write(out)
        (out / "run.json").write_text(
            json.dumps(
                {
                    "summary": r.summary(),
                    "apps": tr.apps,
                    "emulator": tr.emulator,
                    "metadata": tr.metadata,
                    "pcaps": tr.pcaps,
                },
                indent=1,
                default=str,
            )
        )
    sim = None
    if compare:
        from rttlab.sim.run import PER_PACKET_TRACES, TRACES, simulate

        # The simulator keeps the traces the testbed has, so both sides hold the same tables.
        kept = [t for t in r.tables if t in TRACES or t in PER_PACKET_TRACES]
        sim = simulate(scenario, set=set_, traces=",".join(kept) or "none")
        if out is not None:
            # The simulator's side beside the testbed's, in the same formats (issue 43).
            sim.write(out / SIM_DIR)
    if as_json:
        doc = {
            "testbed": r.summary(),
            "fidelity": tr.emulator.get("fidelity"),
            "warnings": tr.metadata.get("warnings", []),
            "apps": tr.apps,
        }
        if sim is not None:
            doc["simulator"] = sim.summary()
        print_json(doc)
        return
    from rttlab.sim.scenario import Scenario
    from rttlab.testbed.run import _core_duration

    warmup = (
        _core_duration(Scenario.load(scenario).with_(list(set_)).resolved()["simulation"]["warmup"])
        / 1e9
    )
    _print(r, sim, tr, warmup)


def _rtt_percentiles(res, flow: int, warmup: float) -> str:
    """p10/p50/p90 of a flow's RTT samples after the warm-up, in ms."""
    import numpy as np

    t = res.traces.get("rtt")
    if t is None:
        return "—"
    x = t[(t.flow == flow) & (t.time >= warmup)]["sample"].to_numpy()
    if not len(x):
        return "—"
    return "/".join(f"{v * 1e3:.0f}" for v in np.percentile(x, [10, 50, 90]))


def _mean_queue(res, warmup: float) -> str:
    q = res.traces.get("queue")
    if q is None:
        return ""
    b = res.channels.set_index("name").loc[res.bottleneck].channel
    x = q[(q.channel == b) & (q.time >= warmup)].packets
    return f", mean queue {x.mean():.1f} packets" if len(x) else ""


#: |Δ goodput| beyond which --compare flags a flow: with SACK the testbed and the simulator agree
#: within 3 % on every shipped dumbbell (docs/testbed.md, "Where they agree"); 5 % is the
#: tolerance of `rttlab reproduce testbed-dumbbell`.
DISAGREE = 0.05


def _print(r, sim, tr, warmup: float) -> None:
    from rttlab.cli.summary import bottleneck_line
    from rttlab.cli.table import Col, num, show

    # Timeouts: an rttlab flow's are its sender's own count; a kernel flow's are inferred from its pcap.
    cols = [
        num("flow"),
        Col("stack", priority=3),
        Col("cc", priority=2),
        num("goodput Mb/s"),
        num("retx", 1),
        num("RTO", 2),
        num("RTT p10/50/90 ms", 3),
        num("ECN cuts", 4),
    ]
    if sim is not None:
        cols += [
            Col("sim cc", priority=4),
            num("sim goodput Mb/s"),
            num("sim retx", 1),
            num("sim RTO", 2),
            num("sim RTT p10/50/90 ms", 3),
            num("Δ goodput"),
        ]
    sf = sim.flows if sim is not None else None
    rows, apart = [], []
    for row in r.flows.itertuples():
        rto = (
            "—" if row.timeouts is None or row.timeouts != row.timeouts else str(int(row.timeouts))
        )
        cells = [
            str(row.flow),
            str(row.stack),
            row.cc,
            f"{row.goodput_bps / 1e6:.3f}",
            str(row.retransmissions),
            rto,
            _rtt_percentiles(r, row.flow, warmup),
            str(row.ecn_reductions),
        ]
        if sf is not None:
            s = sf.iloc[row.flow]
            d = (row.goodput_bps - s.goodput_bps) / s.goodput_bps if s.goodput_bps else float("nan")
            if abs(d) > DISAGREE:
                apart.append(f"flow {row.flow} {d:+.1%}")
            cells += [
                f"{s.cc}+{s.recovery}",
                f"{s.goodput_bps / 1e6:.3f}",
                str(s.retransmissions),
                str(s.timeouts),
                _rtt_percentiles(sim, row.flow, warmup),
                f"{d:+.1%}" + (" !" if abs(d) > DISAGREE else ""),
            ]
        rows.append(cells)
    show(
        cols, rows, title=f"{r.name or 'testbed'} — {r.duration:g} s in real time", formats="--json"
    )
    if apart:
        console.print(
            f"! Linux and the simulator disagree beyond {DISAGREE:.0%} in goodput ({', '.join(apart)}): more than where "
            'the simulator does what Linux does (within 3 % with SACK, docs/testbed.md "Where they agree"); '
            "without SACK, Linux re-arms its RTO on partial ACKs and repairs under PRR, which the simulator does not "
            '(docs/testbed.md, "Without SACK")',
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    for label, res in (("testbed", r), ("simulator", sim)):
        if res is None:
            continue
        console.print(
            bottleneck_line(res.summary(), label, _mean_queue(res, warmup)),
            highlight=False,
            soft_wrap=True,
        )
    f = tr.emulator.get("fidelity") or {}
    if f.get("samples"):
        console.print(
            f"emulator: {f['samples']:,} packets delivered {f['lateness_p50_ns'] / 1e3:.0f} µs late at the median, "
            f"{f['lateness_p99_ns'] / 1e3:.0f} µs at p99 (max {f['lateness_max_ns'] / 1e3:.0f} µs); CPU {f['cpu_ns'] / 1e6:.0f} ms; "
            f"real-time priority {'on' if f.get('sched_fifo') else 'off'}"
        )
    for w in tr.metadata.get("warnings", []):
        stderr.print(f"rttlab: warning: {w}", highlight=False, soft_wrap=True)
    for i, a in enumerate(tr.apps):
        for role in ("sender", "receiver"):
            err = (a[role] or {}).get("error")
            if err:
                console.print(f"flow {i} {role}: {err}")


def register(app: typer.Typer) -> None:
    app.command("testbed")(testbed)
