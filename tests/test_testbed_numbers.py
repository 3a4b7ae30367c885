"""Issue 43: the testbed's numbers and warnings mean what they say. An aggregate goodput that the
link can carry (both engines), warnings checked against their own condition, ``--compare --out``
keeping both sides, one RTT sample per ACK at most (the simulated sender's rule). The real runs
need root, namespaces and TUN (skipped elsewhere with the reason); each is a few seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from rttlab.testbed import unavailable

ROOT = Path(__file__).resolve().parent.parent
REASON = unavailable()
needs_machine = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable here: {REASON}")
#: The bottleneck's payload rate: 10 Mb/s × 1448 of every 1500 bytes (MSS 1448 with timestamps).
PAYLOAD_10 = 10e6 * 1448 / 1500


def staggered(tmp_path: Path, warmup: str = "0s", duration: str = "6s") -> Path:
    p = tmp_path / "staggered.toml"
    p.write_text(
        f"""
[simulation]
name = "staggered"
duration = "{duration}"
warmup = "{warmup}"
[topology]
kind = "dumbbell"
bottleneck = {{ bandwidth = "10Mbps", delay = "10ms", queue = {{ kind = "droptail", limit = "60p" }} }}
access = {{ bandwidth = "100Mbps", delay = "0ms", queue = {{ kind = "droptail", limit = "1000p" }} }}
[tcp]
cc = "reno"
sack = true
timestamps = true
[[flows]]
count = 3
start = "0s"
start_step = "1500ms"
"""
    )
    return p


def zero_delay(tmp_path: Path, bandwidth: str, duration: str = "3s") -> Path:
    p = tmp_path / "zero.toml"
    p.write_text(
        f"""
[simulation]
name = "zero-delay"
duration = "{duration}"
warmup = "500ms"
[topology]
kind = "dumbbell"
bottleneck = {{ bandwidth = "{bandwidth}", delay = "0ms", queue = {{ kind = "droptail", limit = "50p" }} }}
access = {{ bandwidth = "400Mbps", delay = "0ms", queue = {{ kind = "droptail", limit = "1000p" }} }}
[tcp]
cc = "reno"
sack = true
timestamps = true
[[flows]]
count = 1
start = "0s"
"""
    )
    return p


def test_the_simulators_aggregate_with_staggered_starts_is_bytes_over_the_common_window(
    tmp_path: Path,
) -> None:
    from rttlab.sim.run import simulate

    for warmup in ("0s", "1s"):
        r = simulate(staggered(tmp_path, warmup))
        window = r.duration - float(warmup[:-1])
        # Each flow's goodput is over its own interval: their sum is no rate the link carried.
        assert r.flows.goodput_bps.sum() > PAYLOAD_10
        # Without a warm-up every delivered byte crossed the bottleneck in the window; with one,
        # bytes that crossed it before the warm-up and reached the application after it count too
        # (in flight or held for reassembly then: docs/schema.md), a few hundredths of a per cent.
        bound = PAYLOAD_10 if warmup == "0s" else PAYLOAD_10 * 1.001
        assert 0.9 * PAYLOAD_10 < r.aggregate_goodput_bps <= bound, r.aggregate_goodput_bps
        after = sum(
            g * (r.duration - max(s, float(warmup[:-1])))
            for g, s in zip(r.flows.goodput_bps, r.flows.start)
        )
        assert r.aggregate_goodput_bps * window == pytest.approx(after, rel=1e-9)


def test_a_lateness_warning_holds_only_over_the_reference_its_scenario_has() -> None:
    from rttlab.testbed.run import LATENESS_FLOOR_NS, lateness_warnings

    def warn(p99_ns: float, delay_ns: int, bps: int) -> list[str]:
        return lateness_warnings(
            {"lateness_p99_ns": p99_ns}, {"delay_ns": delay_ns, "bandwidth_bps": bps}, 1500
        )

    # The case: zero delay, 0.07 ms p99 — no warning (5 % of 0 is no reference).
    assert warn(70_000, 0, 10_000_000) == []
    # Zero delay at 10 Mb/s: a packet takes 1.2 ms; lateness below that is no warning ...
    assert warn(1_100_000, 0, 10_000_000) == []
    # ... above it is, naming the packet time and advice that fits (not "RTTs").
    (w,) = warn(1_300_000, 0, 10_000_000)
    assert "1.30 ms late" in w and "transmission time" in w and "1200 µs at 10 Mb/s" in w
    assert "slower bottleneck" in w and "RTTs" not in w
    # Zero delay on a fast link: the fixed floor is the reference.
    assert warn(LATENESS_FLOOR_NS - 1, 0, 400_000_000) == []
    (w,) = warn(LATENESS_FLOOR_NS + 50_000, 0, 400_000_000)
    assert "100 µs floor" in w and "0 ms round trip" in w
    # A 20 ms bottleneck: 5 % of its 40 ms round trip (2 ms) is the reference.
    assert warn(1_900_000, 20_000_000, 10_000_000) == []
    (w,) = warn(2_500_000, 20_000_000, 10_000_000)
    assert "round-trip propagation delay (40 ms)" in w and "RTTs carry" in w
    # No measurement, no warning.
    assert lateness_warnings({}, {"delay_ns": 0, "bandwidth_bps": 1}, 1500) == []


@needs_machine
def test_the_testbeds_aggregate_with_staggered_starts_stays_within_the_link(
    tmp_path: Path,
) -> None:
    from rttlab.testbed import run

    tr = run(staggered(tmp_path))
    r = tr.result
    assert r.aggregate_goodput_bps <= PAYLOAD_10, r.aggregate_goodput_bps
    assert r.aggregate_goodput_bps > 0.8 * PAYLOAD_10
    # The old definition (the sum of the flows' goodputs, each over its own interval) is over it.
    assert r.flows.goodput_bps.sum() > PAYLOAD_10, r.flows.goodput_bps.sum()
    measured = [a["receiver"]["bytes_measured"] for a in tr.apps]
    assert r.aggregate_goodput_bps == pytest.approx(sum(measured) * 8 / r.duration)


def cli(args: list[str], nice: int = 0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["nice", "-n", str(nice), sys.executable, "-m", "rttlab.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@needs_machine
def test_a_zero_delay_run_on_a_slow_link_prints_no_lateness_warning(tmp_path: Path) -> None:
    # 1 Mb/s: a packet takes 12 ms, far above what even a busy machine's emulator is late by; the
    # old check (over 5 % of a 0 ms round trip) warned on every zero-delay run.
    p = cli(["testbed", str(zero_delay(tmp_path, "1Mbps")), "--json"])
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["fidelity"]["lateness_p99_ns"] < 12_000_000
    assert doc["warnings"] == []
    assert "late" not in p.stderr


@needs_machine
def test_a_zero_delay_run_under_cpu_load_is_warned_about_exactly_when_it_passes_the_floor(
    tmp_path: Path,
) -> None:
    from rttlab.testbed.run import LATENESS_FLOOR_NS

    # 200 Mb/s: a packet takes 60 µs, so the 100 µs floor is the reference. Busy loops on every
    # core, with the testbed at a lower priority (nice 10), push the emulator's p99 lateness to
    # around the floor: on the development machine 91–94 µs in 3 of 5 runs and above 100 µs in
    # 2. So the run cannot promise a warning; it checks the warning against its own condition:
    # given exactly when the measured p99 is past the floor, and then naming the floor. (The
    # rule's thresholds are pinned on constructed inputs above.)
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        p = cli(["testbed", str(zero_delay(tmp_path, "200Mbps")), "--json"], nice=10)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    p99 = doc["fidelity"]["lateness_p99_ns"]
    lateness = [w for w in doc["warnings"] if "late" in w]
    assert bool(lateness) == (p99 > LATENESS_FLOOR_NS), (p99, doc["warnings"])
    assert all("100 µs floor" in w for w in lateness), lateness


@needs_machine
def test_compare_out_writes_the_simulators_tables_beside_the_testbeds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    p = cli(
        [
            "testbed",
            str(ROOT / "examples/scenarios/dumbbell-n1-droptail.toml"),
            "--set",
            "simulation.duration=3s",
            "--compare",
            "--out",
            str(out),
        ]
    )
    assert p.returncode == 0, p.stderr
    tb = {f.name for f in out.glob("*.parquet")}
    sim = {f.name for f in (out / "simulator").glob("*.parquet")}
    assert {"flows.parquet", "channels.parquet", "rtt.parquet", "queue.parquet"} <= tb
    assert sim == tb
    for name in sorted(tb):
        assert pq.read_schema(out / name).equals(pq.read_schema(out / "simulator" / name)), name
    assert (out / "summary.json").is_file() and (out / "simulator" / "summary.json").is_file()
    assert (out / "run.json").is_file() and (out / "flow0-sender.pcap").is_file()
    assert pq.read_table(out / "simulator" / "rtt.parquet").num_rows > 0


@needs_machine
def test_the_testbeds_rtt_samples_are_the_simulators_rule_and_count(tmp_path: Path) -> None:
    from rttlab.sim.run import simulate
    from rttlab.testbed import run

    # The shipped one-flow dumbbell with SACK and timestamps (the testbed-dumbbell reproduction's
    # primary reading, with RFC 7323 RTTM): one sample per ACK advancing the left edge on both
    # sides. Without SACK Linux recovers one hole per round trip (docs/testbed.md), which no
    # sampling rule makes comparable.
    shipped = ROOT / "examples/scenarios/dumbbell-n1-droptail.toml"
    sets = [
        "simulation.duration=8s",
        "simulation.warmup=2s",
        "tcp.sack=true",
        "tcp.timestamps=true",
    ]
    tr = run(shipped, sets)
    sim = simulate(shipped, set=sets)
    ours, theirs = int(tr.result.flows.rtt_samples.iloc[0]), int(sim.flows.rtt_samples.iloc[0])
    assert abs(ours - theirs) <= 0.05 * theirs, (ours, theirs)
    # One per ACK at most: no two samples completed by one ACK (one time) ...
    t = tr.result.traces["rtt"]
    assert not t.time.duplicated().any()
    assert len(t) == ours
    # ... where every sample of both methods counts about two for each ACK.
    every = run(shipped, [*sets, "simulation.duration=4s"], rtt_method="all")
    per_ack = run(shipped, [*sets, "simulation.duration=4s"])
    assert every.result.flows.rtt_samples.iloc[0] > 1.6 * per_ack.result.flows.rtt_samples.iloc[0]
