"""`rttlab live --testbed S --rto-min D` / `--recommendation tune.json`: a Linux rto_min applied
to the kernel senders of a testbed scenario, measured against the kernel default, beside a
replay's prediction (docs/live.md, "Applying an RTO setting").

The first tests need nothing (the setting's checks and the prediction are sans-IO). The last
are root-only: real namespaces, the real sysctl and route, real Linux TCP watched by the BPF
program; they skip with the exact reason where the machine lacks them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from live_events import bpf_reason, event
from rttlab.live import apply
from rttlab.live import events as ev
from rttlab.live.session import Session
from rttlab.testbed import unavailable as testbed_unavailable

ROOT = Path(__file__).resolve().parent.parent
LIVE = [sys.executable, "-m", "rttlab.cli.main", "live"]
SPIKE = ROOT / "examples" / "live" / "spike.toml"
MS = 1_000_000


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "python")}


def _live(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LIVE, *args], env=_env(), capture_output=True, text=True, timeout=timeout
    )


def _one_line_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], lines[0]


# ---- the setting: what the kernel accepts ----


def test_an_rto_min_is_held_in_whole_jiffies_rounded_up_as_the_kernel_converts_it():
    # usecs_to_jiffies / msecs_to_jiffies round up: 30 ms at HZ 250 is 8 jiffies (32 ms).
    assert apply.parse_rto_min("30ms").jiffies(250) == 8
    assert apply.parse_rto_min("200ms").jiffies(250) == 50
    assert apply.parse_rto_min("1us").jiffies(1000) == 1
    assert apply.parse_rto_min("40ms").command() == "sysctl -w net.ipv4.tcp_rto_min_us=40000"
    assert apply.parse_rto_min("40ms", "route").command().endswith("rto_min 40ms")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--rto-min", "3min"], ["--rto-min 3min", "rto_max", "120 s"]),
        (["--rto-min", "500ns"], ["--rto-min", "microseconds"]),
        (["--rto-min", "1500us", "--apply-as", "route"], ["whole number of milliseconds"]),
        (["--rto-min", "40ms", "--apply-as", "bpf"], ["--apply-as", "sysctl, route"]),
        (["--rto-min", "forty"], ["--rto-min", "cannot read 'forty'"]),
        (["--rto-min", "40ms", "--recommendation", "x.json"], ["give one"]),
        (["--seeds", "1-3"], ["--seeds", "--rto-min"]),
    ],
)
def test_a_setting_the_kernel_would_not_take_is_refused_in_one_line(args, words):
    _one_line_error(_live("--testbed", str(SPIKE), *args), *words)


def test_an_rto_min_without_a_testbed_is_refused_the_hosts_setting_is_left_alone():
    _one_line_error(_live("--rto-min", "40ms"), "--rto-min", "--testbed")


def _tune_json(tmp_path: Path, rec: object) -> Path:
    p = tmp_path / "tune.json"
    p.write_text(json.dumps({"recommendation": rec}))
    return p


LINUX_REC = {
    "stack": "linux",
    "estimator": "linux",
    "knobs": {"rto_min_us": 40000},
    "apply": ["sysctl -w net.ipv4.tcp_rto_min_us=40000"],
}


@pytest.mark.parametrize(
    ("rec", "words"),
    [
        ({**LINUX_REC, "stack": "quic"}, ['recommendation.stack is "quic"', 'not "linux"']),
        ({**LINUX_REC, "knobs": {}}, ["recommendation.knobs.rto_min_us is missing"]),
        ({**LINUX_REC, "knobs": {"rto_min_us": "40ms"}}, ["not a whole number of µs"]),
        ({**LINUX_REC, "knobs": {"rto_min_us": 0}}, ["0 µs is outside", "1 … 2147483647"]),
        (
            {**LINUX_REC, "knobs": {"rto_min_us": 40000, "rto_max_ms": 60000}},
            ["recommendation.knobs.rto_max_ms is not applied"],
        ),
        (None, ["no 'recommendation' object"]),
    ],
)
def test_a_recommendation_that_is_not_a_linux_one_is_refused_in_one_line(tmp_path, rec, words):
    p = _tune_json(tmp_path, rec)
    _one_line_error(_live("--testbed", str(SPIKE), "--recommendation", str(p)), str(p), *words)


def test_a_recommendation_file_that_is_not_json_is_named(tmp_path):
    p = tmp_path / "tune.json"
    p.write_text("rfc6298 min_rto=116ms\n")
    _one_line_error(_live("--testbed", str(SPIKE), "--recommendation", str(p)), str(p), "not JSON")


def test_a_linux_recommendation_reads_as_its_rto_min(tmp_path):
    s = apply.from_recommendation(_tune_json(tmp_path, LINUX_REC), "route")
    assert (s.us, s.apply_as) == (40000, "route")
    assert "recommendation.knobs.rto_min_us" in s.source


# ---- the prediction: the kernel's samples replayed (sans-IO) ----


def _event(op: int, t_ms: float, args=(0, 0, 0), una: int = 1000) -> ev.Event:
    return event(op, t_ms, args=args, una=una, local="10.1.0.1:40000", remote="10.1.0.2:5000")


def test_the_default_runs_samples_replayed_with_a_lower_rto_min_predict_the_spike_as_a_bad_timeout():
    # 50 ms samples every 10 ms, then a 400 ms stall: no ACK for 400 ms, and the segment sent
    # just before it is acknowledged with a 400 ms sample; then 50 ms again. With Linux's default
    # 200 ms, RTO ≈ 50 + 200 = 250 ms < 400 ms: one bad timeout; with rto_min 1 s, RTO ≈ 1.05 s:
    # none. W follows rto_min.
    s = Session(["linux"], hz=250, keep_samples=True)
    una = 1000
    t = 0.0
    for i in range(200):
        rtt = 400 if i == 100 else 50
        t += 400 if i == 100 else 10
        una += 1448
        s.feed(_event(ev.ACK_SAMPLE, t, args=(rtt * 1000, rtt * 8000, 0), una=una))
    assert sum(len(c.kept) for c in s.conns.values()) == 200
    pred = apply.predict(list(s.conns.values()), 250, [200_000, 1_000_000, 20_000])
    assert pred[200_000]["samples"] == 199 and pred[200_000]["bad_timeouts"] == 1
    assert pred[1_000_000]["bad_timeouts"] == 0
    assert pred[20_000]["bad_timeouts"] == 1
    w = {us: pred[us]["wait_mean_s"] for us in pred}
    assert w[20_000] < w[200_000] < w[1_000_000]
    # 199 ms is 50 jiffies at HZ 250, as 200 ms is: the kernel holds one value, and so does the
    # prediction.
    same = apply.predict(list(s.conns.values()), 250, [200_000, 199_000])
    assert same[199_000]["wait_mean_s"] == same[200_000]["wait_mean_s"] == w[200_000]
    assert 0.24 < w[200_000] < 0.30  # SRTT 50 ms + 200 ms, in whole 4 ms jiffies
    # Not kept unless asked: a plain live session holds no samples.
    plain = Session(["linux"], hz=250)
    plain.feed(_event(ev.ACK_SAMPLE, 10, args=(50_000, 400_000, 0), una=2448))
    assert all(not c.kept for c in plain.conns.values())


def test_the_comparison_table_fits_80_columns_without_cutting_a_figure():
    from rich.console import Console
    from rttlab.cli.live import _compare_table

    cmp = apply.Comparison(apply.parse_rto_min("1500ms", "route"), 250, [12, 13])
    kernel = {
        "kernel_rtos": 13,
        "kernel_spurious": 12,
        "kernel_needed": 1,
        "kernel_unknown": 2,
        "samples": 30_000,
        "wait_mean_s": 1.4204,
        "wait_on_kernel_losses_s": 1.3391,
        "rto_lowest_s": 1.54,
    }
    predicted = {
        "samples": 29_999,
        "bad_timeouts": 13,
        "wait_mean_s": 1.4113,
        "lost_wait_mean_s": None,
        "given_needed": 1,
    }
    for seed in (12, 13):
        cmp.runs.append(apply.Run(seed, "default", 200_000, {}, kernel, predicted))
        cmp.runs.append(apply.Run(seed, "applied", 1_500_000, {}, kernel, predicted))
    console = Console(width=80, record=True)
    console.print(_compare_table(cmp))
    text = console.export_text()
    rows = [line for line in text.splitlines() if line.lstrip().startswith(("12", "13", "all"))]
    assert len(rows) == 6
    for line in rows:
        assert len(line) <= 80 and "…" not in line, line
        assert "1411/1420" in line and "—/1339" in line, line
        pooled = line.lstrip().startswith("all")
        assert ("26 (4?)" if pooled else "13 (2?)") in line, line
        assert ("26/24" if pooled else "13/12") in line, line


# ---- root-only: the real kernel ----


def _reason() -> str | None:
    why = testbed_unavailable()
    if why:
        return f"testbed unavailable here: {why}"
    why = bpf_reason()
    if why:
        return f"rttlab live unavailable here: {why}"
    if not Path("/proc/sys/net/ipv4/tcp_rto_min_us").exists():
        return "this kernel has no net.ipv4.tcp_rto_min_us (Linux ≥ 6.11)"
    return None


REASON = _reason() if os.geteuid() == 0 else "needs root (network namespaces, BPF)"
needs_root = pytest.mark.skipif(REASON is not None, reason=str(REASON))

#: A few seconds of traffic per run: the spike example cut to 2.5 s, a 700 ms stall at 1 s, a
#: 20-packet queue (RTT 40–65 ms, so the kernel's RTO sits on its floor SRTT + rto_min).
SHORT = [
    "--duration",
    "2500ms",
    "--set",
    'topology.bottleneck.delay_spikes=[{at="1s",duration="700ms"}]',
    "--set",
    "topology.bottleneck.queue.limit=20p",
]


def _compare(*args: str) -> tuple[list[dict], dict]:
    r = _live("--testbed", str(SPIKE), *SHORT, "--json", *args, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert lines[-1]["event"] == "rto_comparison"
    runs = lines[:-1]
    assert [x["event"] for x in runs] == ["rto_run", "rto_run"]
    return runs, lines[-1]


def _print(cmp: dict) -> None:
    """Measured beside predicted, for the test log (pytest -s)."""
    for row in cmp["rows"]:
        print(
            f"{row['setting']:8} rto_min {row['rto_min_us'] / 1000:g} ms: spurious predicted "
            f"{row['predicted_bad_timeouts']} measured {row['measured_spurious']}, needed measured "
            f"{row['measured_needed']}, W predicted {row['predicted_wait_mean_s'] * 1e3:.0f} ms "
            f"measured {row['measured_wait_mean_s'] * 1e3:.0f} ms"
        )


def _nothing_left() -> None:
    from rttlab.live import cgroup
    from rttlab.testbed import netns

    assert not list(cgroup.mount_point().glob(f"{cgroup.PREFIX}*"))
    assert not [n for n in netns.namespaces() if n.startswith(netns.PREFIX)]


@needs_root
def test_a_linux_recommendation_set_as_sysctl_in_the_senders_namespace_is_what_its_kernel_runs_with(
    tmp_path,
):
    # As `rttlab tune --stack linux --json` writes it: recommendation.knobs.rto_min_us.
    rec = _tune_json(tmp_path, LINUX_REC)
    runs, cmp = _compare("--recommendation", str(rec))
    _print(cmp)
    assert cmp["setting"]["rto_min_us"] == 40_000 and str(rec) in cmp["setting"]["source"]
    default, applied = runs
    assert (default["setting"], applied["setting"]) == ("default", "applied")
    # Read back from each namespace: the default is Linux's own 200 ms, the setting took.
    for ns, got in default["applied"].items():
        assert got["command"] is None and got["sysctl_us"] == 200_000, (ns, got)
        assert got["route_rto_min_ms"] is None
    for ns, got in applied["applied"].items():
        assert got["command"].endswith("net.ipv4.tcp_rto_min_us=40000"), got
        assert got["sysctl_us"] == 40_000 and got["route_rto_min_ms"] is None, (ns, got)
    # The kernel's own RTO (icsk_rto at each sample, from the BPF events) never falls below
    # SRTT + rto_min: with the default not below 200 ms + the 40 ms path; with 40 ms it does.
    d_k, a_k = default["kernel"], applied["kernel"]
    assert d_k["connections"] == a_k["connections"] == 1  # the one sender's connection
    assert d_k["rto_lowest_s"] >= 0.24 and a_k["rto_lowest_s"] < 0.2, (d_k, a_k)
    rows = {r["setting"]: r for r in cmp["rows"]}
    d, a = rows["default"], rows["applied"]
    assert d["samples"] > 200 and a["samples"] > 200
    assert a["measured_wait_mean_s"] < d["measured_wait_mean_s"]
    # The replay of the default run's samples predicts the lower W too, and for the default
    # itself W to within 25 % of the kernel's (the replay's timer is A&P's, not the kernel's).
    assert a["predicted_wait_mean_s"] < d["predicted_wait_mean_s"]
    assert d["predicted_wait_mean_s"] == pytest.approx(d["measured_wait_mean_s"], rel=0.25)
    # The 700 ms stall outlasts both RTOs: the kernel timed out spuriously in both runs.
    assert d["measured_spurious"] >= 1 and a["measured_spurious"] >= 1
    _nothing_left()


@needs_root
def test_an_rto_min_set_on_the_route_is_locked_there_and_the_route_keeps_its_initcwnd():
    runs, cmp = _compare("--rto-min", "1500ms", "--apply-as", "route")
    _print(cmp)
    default, applied = runs
    for got in applied["applied"].values():
        assert got["command"].startswith("ip -n ") and "rto_min 1500ms" in got["command"]
        assert got["route_rto_min_ms"] == 1500 and got["route_locked"], got
        assert "initcwnd" in got["route"] and got["sysctl_us"] == 200_000, got
    rows = {r["setting"]: r for r in cmp["rows"]}
    d, a = rows["default"], rows["applied"]
    assert a["rto_min_us"] == 1_500_000 and d["rto_min_us"] == 200_000
    # The route's locked metric overrides the sysctl (tcp_rto_min): the kernel's RTO never
    # fell below 1.5 s + the path, so the 700 ms stall made no timeout — measured, and
    # predicted by the replay; with the default it did.
    assert applied["kernel"]["rto_lowest_s"] >= 1.54, applied["kernel"]
    assert a["measured_spurious"] == 0 and a["kernel_rtos"] == 0
    assert a["predicted_bad_timeouts"] == 0
    assert d["measured_spurious"] >= 1
    assert a["measured_wait_mean_s"] > 1.5 > 0.5 > d["measured_wait_mean_s"]
    _nothing_left()
