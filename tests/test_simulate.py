"""`rttlab.simulate` and `rttlab simulate`: the closed-loop simulator from Python and the shell."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from rttlab.sim.run import SCHEMA, TRACES

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "examples" / "scenarios"
DROPTAIL10 = SCENARIOS / "dumbbell-n10-droptail.toml"
RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]
SHORT = ["simulation.duration=5s"]

TINY = """
[simulation]
duration = "1s"
[topology.bottleneck]
bandwidth = "10Mbps"
delay = "20ms"
[topology.access]
bandwidth = "100Mbps"
delay = "1ms"
[[flows]]
bytes = "3000B"
"""


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=120)


def test_a_tiny_transfer_completes_when_serialisation_and_propagation_say():
    # 3 segments (1500, 1500, 156 B on the wire) through 100 Mb/s 1 ms + 10 Mb/s 20 ms + 100 Mb/s
    # 1 ms: the last byte arrives at 24.65728 ms, the first ACK at 45.48992 ms (src/sim/tests.rs).
    r = rttlab.simulate(TINY)
    flow = r.flows.iloc[0]
    assert flow["completed"] == pytest.approx(0.02465728, abs=1e-12)
    assert flow["bytes_delivered"] == 3000
    assert r.traces["rtt"]["sample"].iloc[0] == pytest.approx(0.04548992, abs=1e-12)
    assert pd.isna(r.traces["rtt"]["prediction"].iloc[0]), "no prediction before the first sample"


def test_results_come_back_as_dataframes_with_documented_columns():
    r = rttlab.simulate(DROPTAIL10, set=SHORT)
    assert len(r.flows) == 10
    assert {
        "flow",
        "goodput_bps",
        "retransmissions",
        "retx_timeout",
        "retx_fast",
        "retx_spurious",
        "timeouts",
    } <= set(r.flows.columns)
    assert set(r.traces) == {"window", "rtt", "retransmissions", "drops", "marks", "queue"}
    assert {"time", "flow", "sample", "prediction", "rto"} <= set(r.traces["rtt"].columns)
    assert {"time", "channel", "cause", "kind"} <= set(r.traces["drops"].columns)
    # Every overflow drop counted at the bottleneck is in the drop trace with its cause.
    bottleneck = r.channels.set_index("name").loc[r.bottleneck]
    drops = r.traces["drops"]
    assert (drops["cause"] == "overflow").sum() == bottleneck["drops_overflow"] > 0
    assert drops["congestion"].all(), "no error model here: every loss is congestion"
    # The aggregate is the bytes delivered over the common window (no warm-up: the whole run),
    # not the sum of the flows' rates over their own intervals (issue 43; docs/schema.md).
    assert r.aggregate_goodput_bps == pytest.approx(
        r.flows["bytes_delivered"].sum() * 8 / r.duration, rel=1e-12
    )
    assert r.aggregate_goodput_bps < r.flows["goodput_bps"].sum()  # flows start at 0.1 s + i·10 ms
    assert 0.5 < r.jain_index <= 1.0


def test_the_same_seed_repeats_exactly_and_overrides_change_the_run():
    lossy = {
        **dict(s.split("=") for s in SHORT),
        "topology.bottleneck.error.kind": "bernoulli",
        "topology.bottleneck.error.per": 0.002,
    }
    a = rttlab.simulate(DROPTAIL10, set=lossy, seed=1)
    b = rttlab.simulate(DROPTAIL10, set=lossy, seed=1)
    c = rttlab.simulate(DROPTAIL10, set=lossy, seed=2)
    assert a.event_hash == b.event_hash and a.flows.equals(b.flows)
    assert a.event_hash != c.event_hash
    slower = rttlab.simulate(DROPTAIL10, set=[*SHORT, "topology.bottleneck.bandwidth=5Mbps"])
    assert slower.aggregate_goodput_bps < 5e6 < a.aggregate_goodput_bps


def test_scenario_errors_name_the_key():
    # A value an override put there is blamed on the override (in the scenario's words), whether
    # the scenario came from a file or from text; an error in the file itself names the key.
    for scenario in (DROPTAIL10, DROPTAIL10.read_text()):
        with pytest.raises(
            rttlab.ScenarioError,
            match=r'^--set topology\.bottleneck\.bandwidth=fast: expected a bandwidth such as "10Mbps", got "fast"$',
        ):
            rttlab.simulate(scenario, set=["topology.bottleneck.bandwidth=fast"])
    bad = DROPTAIL10.read_text().replace('bandwidth = "10Mbps"', 'bandwidth = "fast"', 1)
    assert bad != DROPTAIL10.read_text()
    with pytest.raises(
        rttlab.ScenarioError, match=r"topology\.bottleneck\.bandwidth: expected a bandwidth"
    ):
        rttlab.simulate(bad)
    with pytest.raises(rttlab.ScenarioError, match="no-such-file.toml"):
        rttlab.simulate("no-such-file.toml")


def test_the_cli_prints_a_table_and_a_summary_line():
    out = run("simulate", DROPTAIL10, "--set", "simulation.duration=5s")
    assert out.returncode == 0, out.stderr
    assert "goodput" in out.stdout and "Jain index" in out.stdout
    assert re.search(r"│ +\d[\d.]* [kMG]?b/s │", out.stdout), (
        out.stdout
    )  # each flow's goodput with its unit
    assert "bottleneck (forward)" in out.stdout
    # One wording for the bottleneck line, shared with `testbed` (and both sides of its --compare).
    from rttlab.cli.summary import bottleneck_line

    s = rttlab.simulate(
        rttlab.Scenario.load(DROPTAIL10).with_({"simulation.duration": "5s"})
    ).summary()
    assert bottleneck_line(s) in out.stdout.splitlines()
    assert bottleneck_line(s, "simulator", ", mean queue 3.0 packets").startswith(
        "simulator: aggregate goodput "
    )
    # The channel "bottleneck>" reads as the link and its direction, not "bottleneck bottleneck>".
    assert "; bottleneck (forward): utilisation" in bottleneck_line(s)


def test_cli_json_is_versioned_and_carries_per_flow_counts():
    out = run("simulate", DROPTAIL10, "--set", "simulation.duration=5s", "--seed", "3", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == SCHEMA == "rttlab.simulate/2"
    assert doc["seed"] == 3 and doc["duration_s"] == 5.0
    assert {"aggregate_goodput_bps", "jain_index", "flows", "bottleneck"} <= doc.keys()
    assert len(doc["flows"]) == 10
    assert all({"goodput_bps", "retransmissions", "timeouts"} <= f.keys() for f in doc["flows"])
    assert doc["aggregate_goodput_bps"] == pytest.approx(
        sum(f["bytes_delivered"] for f in doc["flows"]) * 8 / doc["duration_s"], rel=1e-12
    )
    # Strict JSON (no NaN): a bulk flow's offered load is null.
    assert all(f["offered_bps"] is None for f in doc["flows"]) and "NaN" not in out.stdout


def test_cli_out_writes_parquet_traces_that_read_back(tmp_path):
    out = run(
        "simulate",
        DROPTAIL10,
        "--set",
        "simulation.duration=3s",
        "--out",
        tmp_path / "run",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    written = {p.name for p in (tmp_path / "run").iterdir()}
    assert {
        "summary.json",
        "flows.parquet",
        "channels.parquet",
        "rtt.parquet",
        "window.parquet",
        "drops.parquet",
        "queue.parquet",
    } <= written
    rtt = pd.read_parquet(tmp_path / "run" / "rtt.parquet")
    assert len(rtt) > 100 and (rtt["sample"] > 0.04).all()
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["schema"] == SCHEMA


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["--set", "topology.bottleneck.queue.kind=pie"],
            "topology.bottleneck.queue.kind: unknown queue 'pie'",
        ),
        (["--set", "tcp.rto.min_rto=soon"], "tcp.rto: rfc6298.min_rto: cannot read 'soon'"),
        (["--set", "nonsense"], "--set nonsense: expected key.path=value"),
    ],
)
def test_cli_errors_are_one_line_naming_the_key(args, expected):
    out = run("simulate", DROPTAIL10, *args)
    assert out.returncode == 2
    assert expected in out.stderr
    assert "Traceback" not in out.stderr


def test_a_missing_scenario_file_is_a_one_line_error():
    out = run("simulate", "missing.toml")
    assert out.returncode == 2
    assert "missing.toml: no such scenario file" in out.stderr


def test_link_losses_are_told_apart_from_congestion_drops():
    r = rttlab.simulate(
        DROPTAIL10,
        set=[
            *SHORT,
            "topology.bottleneck.error.kind=bernoulli",
            "topology.bottleneck.error.per=0.01",
        ],
    )
    drops = r.traces["drops"]
    corrupted = drops[drops["cause"] == "corruption"]
    assert len(corrupted) > 10 and not corrupted["congestion"].any()
    assert drops.loc[drops["cause"] == "overflow", "congestion"].all()


def test_cli_plot_draws_a_figure(tmp_path):
    target = tmp_path / "run.png"
    out = run(
        "simulate",
        SCENARIOS / "dumbbell-n10-red.toml",
        "--set",
        "simulation.duration=3s",
        "--plot",
        target,
    )
    assert out.returncode == 0, out.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = run("simulate", DROPTAIL10, "--plot", tmp_path / "run.bmp")
    assert bad.returncode == 2 and "--plot" in bad.stderr


def test_reno_and_onoff_sources_are_scenario_settings_from_python():
    # Two flows writing 1 Mb/s half the time (fixed 100/100 ms periods): 0.5 Mb/s each on an
    # uncongested 10 Mb/s path, measured from each flow's jittered start to the end (±5 %: the
    # last partial period and the data still in flight).
    text = TINY.replace(
        'bytes = "3000B"',
        'count = 2\nstart_jitter = "100ms"\napp = { kind = "onoff", rate = "1Mbps", on = "100ms", off = "100ms", dist = "fixed" }',
    )
    r = rttlab.simulate(text, set=["tcp.cc=reno", "simulation.duration=10s"])
    assert r.flows["goodput_bps"].tolist() == pytest.approx([0.5e6, 0.5e6], rel=0.05)
    # The load each application offered, over the same interval: what was delivered, plus what
    # was still in flight at the end.
    assert r.flows["offered_bps"].tolist() == pytest.approx([0.5e6, 0.5e6], rel=0.05)
    assert (r.flows["offered_bps"] >= r.flows["goodput_bps"]).all()
    assert (r.flows["start"] < 0.1).all()
    with pytest.raises(
        rttlab.ScenarioError, match=r"^flows\[0\]\.app\.off: an on/off source needs"
    ):
        rttlab.simulate(
            TINY.replace('bytes = "3000B"', 'app = { kind = "onoff", on = "1s", rate = "1Mbps" }')
        )
    with pytest.raises(rttlab.ScenarioError, match=r"known: reno, newreno, westwood\+"):
        rttlab.simulate(TINY, set=["tcp.cc=tahoe"])


def test_components_lists_every_family_with_its_declared_parameters():
    out = run("components", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "rttlab.components/1"
    by_name = {(c["family"], c["name"]): c for c in doc["components"]}
    assert {f for f, _ in by_name} == {
        "queue",
        "error",
        "app",
        "agent",
        "cc",
        "recovery",
        "rto-policy",
        "spurious-detection",
        "spurious-response",
        "discriminator-sender",
        "discriminator-receiver",
    }
    assert {n for f, n in by_name if f == "discriminator-receiver"} == {
        "biaz",
        "mbiaz",
        "spike",
        "zigzag",
        "zbs",
    }
    assert {n for f, n in by_name if f == "spurious-detection"} == {"eifel", "frto", "frto-sack"}
    assert {n for f, n in by_name if f == "spurious-response"} == {
        "linux",
        "rfc4015",
        "rate-halving",
    }
    assert [p["name"] for p in by_name[("cc", "vegas")]["params"]][:3] == ["alpha", "beta", "gamma"]
    assert "scale" in [p["name"] for p in by_name[("rto-policy", "ca-rto")]["params"]]
    assert {"droptail", "red", "threshold"} <= {n for f, n in by_name if f == "queue"}
    max_p = next(p for p in by_name[("queue", "red")]["params"] if p["name"] == "max_p")
    assert (max_p["default"], max_p["range"]) == ("0.1", "0..1")
    assert [p["name"] for p in by_name[("error", "bernoulli")]["params"]] == ["per"]
    assert rttlab.sim.components() == doc["components"]


def test_components_lists_loss_recovery_with_reno_newreno_and_sack():
    out = run("components", "--json")
    recovery = [c for c in json.loads(out.stdout)["components"] if c["family"] == "recovery"]
    assert [c["name"] for c in recovery] == ["reno", "newreno", "sack"]
    assert all(c["params"] == [] and c["source"].startswith("RFC ") for c in recovery)
    shown = run("components", "recovery")
    assert (
        shown.returncode == 0
        and "tcp.recovery" in shown.stdout
        and "RFC 6675" in shown.stdout
        and "droptail" not in shown.stdout
    )


def test_components_of_one_family_and_unknown_names():
    out = run("components", "error")
    assert out.returncode == 0 and "gilbert-elliott" in out.stdout and "droptail" not in out.stdout
    bad = run("components", "pie")
    assert bad.returncode == 2
    assert "unknown component or family 'pie'" in bad.stderr and "Traceback" not in bad.stderr


def test_codel_is_listed_with_its_parameters_and_a_codel_bottleneck_simulates():
    shown = run("components", "queue")
    assert shown.returncode == 0 and "codel" in shown.stdout and "RFC 8289" in shown.stdout
    listed = json.loads(run("components", "--json").stdout)["components"]
    codel = next(c for c in listed if (c["family"], c["name"]) == ("queue", "codel"))
    params = {p["name"]: p for p in codel["params"]}
    assert list(params) == ["limit", "target", "interval", "ecn"]
    assert [(params[k]["kind"], params[k]["default"]) for k in ("target", "interval")] == [
        ("duration", "5ms"),
        ("duration", "100ms"),
    ]
    assert params["target"]["range"].endswith("s..60s") and (
        params["ecn"]["default"],
        params["ecn"]["range"],
    ) == ("false", "true|false")
    # Ten bulk flows through a 1000-packet CoDel queue: the queue never fills, CoDel's head drops
    # (cause aqm, traced at dequeue) are what the flows react to.
    r = rttlab.simulate(
        DROPTAIL10, set=['topology.bottleneck.queue={kind="codel", limit="1000p"}', *SHORT]
    )
    bottleneck = r.channels.set_index("name").loc[r.bottleneck]
    drops = r.traces["drops"]
    assert bottleneck["drops_overflow"] == 0
    assert (drops["cause"] == "aqm").sum() == bottleneck["drops_aqm"] > 0
    assert r.aggregate_goodput_bps > 0.8 * 10e6


def test_a_parameter_outside_its_declared_range_names_the_key():
    with pytest.raises(
        rttlab.ScenarioError,
        match=r"topology\.bottleneck\.queue\.max_p: 1\.5 is outside the accepted range 0\.\.1",
    ):
        rttlab.simulate(
            DROPTAIL10, set=['topology.bottleneck.queue={kind="red", max_p=1.5}', *SHORT]
        )


def test_traces_are_chosen_per_run_and_summaries_do_not_depend_on_them():
    full = rttlab.simulate(DROPTAIL10, set=SHORT)
    none = rttlab.simulate(DROPTAIL10, set=SHORT, traces="none")
    some = rttlab.simulate(DROPTAIL10, set=SHORT, traces=["cwnd", "drops"])
    assert set(full.traces) == set(TRACES), "the per-packet traces are asked for by name"
    assert none.traces == {}
    assert set(some.traces) == {"window", "drops"}
    pd.testing.assert_frame_equal(some.traces["drops"], full.traces["drops"])
    for r in (none, some):
        assert r.event_hash == full.event_hash
        pd.testing.assert_frame_equal(r.flows, full.flows)
    with pytest.raises(rttlab.ScenarioError, match="unknown trace 'loss'"):
        rttlab.simulate(DROPTAIL10, set=SHORT, traces="loss")


def test_progress_reports_simulated_time_in_order_up_to_the_end():
    seen = []
    rttlab.simulate(
        DROPTAIL10, set=SHORT, traces="none", progress=lambda now, end: seen.append((now, end))
    )
    assert len(seen) >= 2, "one report per 16384 events: about 50 000 here"
    assert all(end == 5.0 for _, end in seen)
    times = [now for now, _ in seen]
    assert times == sorted(times) and 0 < times[-1] <= 5.0


def test_cli_traces_none_writes_only_summaries_and_plot_needs_its_traces(tmp_path):
    out = run("simulate", DROPTAIL10, "--set", SHORT[0], "--traces", "none", "--out", tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "channels.parquet",
        "flows.parquet",
        "summary.json",
    ]
    bad = run("simulate", DROPTAIL10, "--traces", "drops", "--plot", tmp_path / "x.png")
    assert bad.returncode == 2 and "--plot needs the window, rtt, queue trace(s)" in bad.stderr


def test_cli_all_plus_the_per_arrival_traces_writes_them_and_can_still_plot(tmp_path):
    threshold = 'topology.bottleneck.queue={kind="threshold", limit="100p", tau=30}'
    out = run(
        "simulate",
        DROPTAIL10,
        "--set",
        "simulation.duration=2s",
        "--set",
        threshold,
        "--traces",
        "all,arrival,quench",
        "--out",
        tmp_path,
        "--plot",
        tmp_path / "run.png",
    )
    assert out.returncode == 0, out.stderr
    assert {"arrival.parquet", "quench.parquet", "window.parquet", "run.png"} <= {
        p.name for p in tmp_path.iterdir()
    }
    arrival = pd.read_parquet(tmp_path / "arrival.parquet")
    assert len(arrival) > 1000 and set(arrival["verdict"].cat.categories) == {
        "enqueued",
        "marked",
        "dropped",
    }


LONG_RUN = ["--set", "simulation.duration=100000s", "--traces", "none"]


def _sigint_default() -> None:
    """In the child, before exec: Ctrl-C's default disposition. A shell starts background jobs
    with SIGINT ignored, and a Python started so never installs its KeyboardInterrupt handler —
    the test would then measure how pytest was launched, not rttlab."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_after_start(
    args: list[str], marker: str
) -> tuple[subprocess.CompletedProcess, float]:
    """Start a long run, wait until it is simulating (its progress callback wrote `marker`),
    send SIGINT and time how long the process takes to exit."""
    import signal
    import time

    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default
    )
    try:
        deadline = time.monotonic() + 60
        while not Path(marker).exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        return subprocess.CompletedProcess(args, proc.returncode, out, err), time.monotonic() - sent
    finally:
        proc.kill()


def test_ctrl_c_stops_rttlab_simulate_within_a_second_and_writes_what_it_had_simulated(tmp_path):
    marker = tmp_path / "started"
    # The CLI itself, with a progress hook that drops a marker once the event loop runs.
    code = (
        "import sys, pathlib, rttlab.sim as s\n"
        "orig = s.simulate\n"
        "def hooked(*a, progress=None, **k):\n"
        "    def p(now, end):\n"
        f"        pathlib.Path({str(marker)!r}).touch()\n"
        "        progress(now, end)\n"
        "    return orig(*a, progress=p, **k)\n"
        "import rttlab.cli.simulate as c; c.run_scenario = hooked\n"
        "from rttlab.cli.main import main; sys.argv = ['rttlab', *sys.argv[1:]]; main()\n"
    )
    out = tmp_path / "out"
    done, took = _interrupt_after_start(
        [
            sys.executable,
            "-c",
            code,
            "simulate",
            str(DROPTAIL10),
            *LONG_RUN,
            "--json",
            "--out",
            str(out),
        ],
        str(marker),
    )
    assert took < 1.0, took
    assert done.returncode == 130
    m = re.search(
        r"rttlab: simulation interrupted at ([\d.]+) s of 100000 s; its partial result covers only that much and is written to ",
        done.stderr,
    )
    assert m, done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert {k: v for k, v in json.loads(done.stdout).items() if k != "scenario"} == summary
    assert summary["interrupted"]["end_s"] == 100000 and summary["interrupted"]["at_s"] == summary[
        "duration_s"
    ] == pytest.approx(float(m.group(1)), abs=1e-3)
    assert 0 < summary["duration_s"] < 100000 and summary["events"] > 0
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 10 and (flows["bytes_delivered"] > 0).all()


def test_ctrl_c_stops_rttlab_simulate_from_python_within_a_second(tmp_path):
    marker = tmp_path / "started"
    code = (
        "import pathlib, rttlab\n"
        "try:\n"
        f"    rttlab.simulate({str(DROPTAIL10)!r}, set=['simulation.duration=100000s'], traces='none',\n"
        f"        progress=lambda now, end: pathlib.Path({str(marker)!r}).touch())\n"
        "except KeyboardInterrupt as stop:\n"
        "    r = stop.result\n"
        "    print(type(stop).__name__, r.duration < r.interrupted_end == 100000, r.events > 0, len(r.flows))\n"
        "    raise\n"
    )
    done, took = _interrupt_after_start([sys.executable, "-c", code], str(marker))
    assert took < 1.0, took
    assert done.returncode != 0
    # A KeyboardInterrupt (what callers catch) that holds the partial result.
    assert done.stdout.split() == ["Interrupted", "True", "True", "10"], done.stdout
    assert re.search(
        r"Interrupted: simulation interrupted at [\d.]+ s of 100000 s$", done.stderr.rstrip()
    ), done.stderr[-500:]
