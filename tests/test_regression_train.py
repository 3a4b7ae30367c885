"""`rttlab train regression`: the fit on flows made here (exact expectations), captures written
here, the published-coefficient check, bad input, and one run on a shared capture."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rttlab.trace.regression_train import (
    CUBIC,
    Flow,
    TrainError,
    design,
    fit,
    mape,
    train,
    train_flows,
    windows,
)

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "captures"


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=300)


def flow(rtts: list[float], ttl: int = 50, hops: int = 14, conn: int = 0) -> Flow:
    return Flow(
        "made.pcap", conn, "10.0.0.1:40000", "10.0.0.2:80", ttl, hops, np.asarray(rtts, dtype=float)
    )


def test_windows_slide_by_one_with_the_mean_or_the_next_sample_as_target():
    mm, y, end = windows(np.array([10.0, 30, 20, 40]), 2, "mean")
    assert (
        mm.tolist() == [[10, 30], [20, 30], [20, 40]]
        and y.tolist() == [20, 25, 30]
        and end.tolist() == [2, 3, 4]
    )
    mm, y, end = windows(np.array([10.0, 30, 20, 40]), 2, "next")
    assert mm.tolist() == [[10, 30], [20, 30]] and y.tolist() == [20, 40] and end.tolist() == [3, 4]


def test_a_window_of_two_is_fitted_exactly_as_the_mid_range():
    """With two samples per window the mean is (min + max)/2 exactly: the fit must find b2 = b3 =
    ½ and nothing else, and score 0 % held out — on three flows whose hops and TTLs differ."""
    rng = np.random.default_rng(7)
    flows = [
        flow(list(rng.uniform(20, 200, 60)), ttl=t, hops=h, conn=i)
        for i, (t, h) in enumerate([(50, 14), (110, 18), (240, 9)])
    ]
    for split in ("time", "flow"):
        t = train_flows(flows, window=2, target="mean", split=split)
        assert t.coefficients == pytest.approx([0, 0, 0.5, 0.5, 0], abs=1e-9), split
        assert t.dropped == [] and t.mape == pytest.approx(0, abs=1e-9)
        assert len(t.flows) == 3 and all(r["test_windows"] > 0 for r in t.flows)
    # The time split scores only windows after each flow's cut (60 samples, 70 %: 42 | 18).
    t = train_flows(flows, window=2, split="time")
    assert [r["test_windows"] for r in t.flows] == [17, 17, 17] and t.train_rows == 3 * 41


def test_hops_and_ttl_that_add_no_rank_are_fixed_at_zero_and_named():
    # One initial TTL (64): hops = 64 − ttl exactly, so ttl adds nothing beside hops and the intercept.
    rng = np.random.default_rng(1)
    flows = [flow(list(rng.uniform(20, 200, 40)), ttl=64 - h, hops=h, conn=h) for h in (5, 9, 14)]
    t = train_flows(flows, window=2)
    assert t.dropped == ["ttl"] and t.coefficients[4] == 0
    # One flow: both are constant, like the intercept.
    t = train_flows(flows[:1], window=2)
    assert t.dropped == ["hops", "ttl"] and t.coefficients[1] == t.coefficients[4] == 0


def test_without_path_features_only_min_and_max_are_fitted():
    rng = np.random.default_rng(1)
    flows = [
        flow(list(rng.uniform(20, 200, 40)), ttl=t, hops=h, conn=h)
        for h, t in ((5, 59), (9, 119), (14, 241))
    ]
    t = train_flows(flows, window=2, path_features=False)
    assert t.dropped == [] and t.coefficients[1] == t.coefficients[4] == 0
    assert t.coefficients == pytest.approx([0, 0, 0.5, 0.5, 0], abs=1e-9)


def test_mape_is_the_mean_absolute_percentage_error_by_hand():
    x = np.array([[1.0, 0, 100, 0, 0], [1.0, 0, 200, 0, 0]])
    # ŷ = min: 100 vs 110 (9.0909 %), 200 vs 180 (11.111 %).
    assert mape([0, 0, 1, 0, 0], x, np.array([110.0, 180.0])) == pytest.approx(
        (10 / 110 + 20 / 180) / 2 * 100
    )


def test_fit_recovers_a_noiseless_linear_model():
    rng = np.random.default_rng(3)
    rows = np.column_stack(
        [
            np.ones(50),
            rng.integers(3, 20, 50),
            rng.uniform(10, 100, 50),
            rng.uniform(100, 200, 50),
            rng.integers(40, 250, 50),
        ]
    )
    b = np.array([1.5, 0.2, 0.6, 0.4, -0.01])
    got, dropped = fit(rows, rows @ b)
    assert got == pytest.approx(b, abs=1e-9) and dropped == []


def test_design_rows_follow_the_projects_feature_order():
    assert design(flow([1, 2], ttl=50, hops=15), np.array([[90.8, 91.1]])).tolist() == [
        [1, 15, 90.8, 91.1, 50]
    ]
    # docs/algorithms.md §10: zimbra.free.fr's published Cubic prediction.
    assert design(flow([1, 2], ttl=50, hops=15), np.array([[90.8, 91.1]])) @ np.array(
        CUBIC
    ) == pytest.approx(90.957875, abs=5e-7)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"window": 1}, "--window: a window needs at least 2 samples"),
        ({"target": "median"}, "--target: expected mean or next"),
        ({"split": "random"}, "--split: expected time or flow"),
        ({"train_fraction": 1.0}, "--train-fraction: expected a fraction between 0 and 1"),
        # 82 samples: 70 % is 57, leaving the 25 a test window needs.
        ({"window": 25}, "no flow has the 82 path-RTT samples a time split with window 25 needs"),
        (
            {"window": 2, "split": "flow"},
            "--split flow: leaving flows out needs at least 2 usable flows, got 1",
        ),
    ],
)
def test_bad_options_and_short_flows_are_refused_with_what_to_change(kwargs, message):
    with pytest.raises(TrainError, match=message.replace("(", r"\(")):
        train_flows([flow([float(v) for v in range(20, 60)])], **kwargs)


# ---- captures written here: a client-side stop-and-wait transfer, one RTT per segment ----

SYN, ACK, PSH = 0x02, 0x10, 0x08


def frame(c2s: bool, seq: int, ack: int, flags: int, ttl: int, payload: int = 0) -> bytes:
    src, dst, sport, dport = (
        (bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), 40000, 80)
        if c2s
        else (bytes([10, 0, 0, 2]), bytes([10, 0, 0, 1]), 80, 40000)
    )
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack(
        ">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + payload, 1, 0x4000, ttl, 6, 0, src, dst
    )
    return (
        b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + tcp + b"\xab" * payload
    )


def stop_and_wait(rtts_ms: list[float], server_ttl: int) -> bytes:
    """pcap bytes: handshake, then one 100-byte segment at a time, each ACKed after its RTT."""
    t, seq = 1_600_000_000.0, 101
    packets = [
        (t, frame(True, 100, 0, SYN, 64)),
        (t + 0.05, frame(False, 900, 101, SYN | ACK, server_ttl)),
        (t + 0.0501, frame(True, 101, 901, ACK, 64)),
    ]
    t += 0.1
    for r in rtts_ms:
        packets.append((t, frame(True, seq, 901, ACK | PSH, 64, 100)))
        seq += 100
        packets.append((t + r / 1e3, frame(False, 901, seq, ACK, server_ttl)))
        t += r / 1e3 + 0.01
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for ts, f in packets:
        us = round(ts * 1e6)
        out.append(struct.pack("<IIII", us // 1_000_000, us % 1_000_000, len(f), len(f)) + f)
    return b"".join(out)


@pytest.fixture
def capture(tmp_path):
    def make(name: str, rtts: list[float], ttl: int = 52) -> Path:
        p = tmp_path / name
        p.write_bytes(stop_and_wait(rtts, ttl))
        return p

    return make


def test_a_capture_gives_its_flow_with_the_far_ends_ttl_and_hops(capture):
    rtts = [100.0 + 10 * (i % 3) for i in range(30)]
    t = train([capture("a.pcap", rtts, ttl=52)], window=2)
    (row,) = t.flows
    assert (row["ttl"], row["hops"], row["dst"]) == (52, 12, "10.0.0.2:80")
    assert row["samples"] == 30
    # One flow: hops and ttl are constant (dropped); a window of two is its mid-range exactly.
    assert t.dropped == ["hops", "ttl"] and t.coefficients == pytest.approx(
        [0, 0, 0.5, 0.5, 0], abs=1e-6
    )


def test_the_cli_prints_per_flow_mape_the_check_and_a_coef_that_the_estimator_accepts(
    capture, tmp_path
):
    rtts = [100.0 + 10 * (i % 3) + (i % 7) for i in range(60)]
    a = capture("a.pcap", rtts, ttl=52)
    out = tmp_path / "fit.json"
    r = run("train", "regression", a, "--window", "5", "--out", out)
    assert r.returncode == 0, r.stderr
    assert (
        "check: the published Cubic coefficients give 9 of the project's 9 published predictions to 1e-6 ms"
        in r.stdout
    )
    assert "held-out MAPE over" in r.stdout and "a.pcap" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["schema"] == "rttlab.train/1" and doc["split"] == "time" and doc["target"] == "mean"
    assert doc["check"]["matched"] == 9 and len(doc["flows"]) == 1
    line = next(x for x in r.stdout.splitlines() if "-p regression.coef=" in x).strip()
    assert line == f"-p regression.coef={doc['coef']}"
    # The coefficients go straight back into the estimator.
    import rttlab

    est = rttlab.estimators.spec("regression", coef=doc["coef"], hops="12", ttl="52")
    same = rttlab.estimators.spec(
        "regression",
        **{f"b{i}": repr(b) for i, b in enumerate(doc["coefficients"])},
        hops="12",
        ttl="52",
    )
    a_rows, b_rows = (
        rttlab.replay(np.asarray(rtts) / 1e3, [est]).rows,
        rttlab.replay(np.asarray(rtts) / 1e3, [same]).rows,
    )
    assert a_rows[0]["predicted"] > 50 and {
        k: v for k, v in a_rows[0].items() if k != "estimator"
    } == {k: v for k, v in b_rows[0].items() if k != "estimator"}
    default = rttlab.replay(
        np.asarray(rtts) / 1e3, [rttlab.estimators.spec("regression", hops="12", ttl="52")]
    ).rows[0]
    assert default["mae_s"] != a_rows[0]["mae_s"]
    toml_out = tmp_path / "fit.toml"
    assert run("train", "regression", a, "--window", "5", "--out", toml_out).returncode == 0
    assert f'coef = "{doc["coef"]}"' in toml_out.read_text()


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda c, d: c("nottl.pcap", [100.0] * 90, ttl=0),
            "nottl.pcap: no connection with IP TTLs from both endpoints",
        ),
        (
            lambda c, d: c("short.pcap", [100.0] * 20),
            "no flow has the 82 path-RTT samples a time split with window 25 needs",
        ),
        (lambda c, d: d / "missing.pcap", "missing.pcap: no such file"),
    ],
)
def test_bad_captures_are_one_line_errors(capture, tmp_path, make, message):
    r = run("train", "regression", make(capture, tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_only_regression_can_be_trained(capture):
    r = run("train", "fixed-share", capture("a.pcap", [100.0] * 60))
    assert (
        r.returncode == 2
        and "train: cannot train 'fixed-share' (trainable: regression)" in r.stderr
    )


@pytest.mark.skipif(
    not (SHARED / "ndpi_zoom2-2023.pcap").is_file(),
    reason="../shared/captures is not here (the shared development captures)",
)
def test_a_shared_capture_trains_and_is_scored_held_out():
    t = train([SHARED / "ndpi_zoom2-2023.pcap"])
    (row,) = t.flows
    assert (row["ttl"], row["hops"], row["samples"]) == (49, 15, 231)
    assert row["test_windows"] > 0 and 0 <= row["mape"] < 100 and 0 <= row["mape_cubic"] < 100
    assert t.dropped == ["hops", "ttl"]


def test_a_scenario_takes_the_written_coefficients_in_its_rto_table(capture, tmp_path):
    a = capture("a.pcap", [100.0 + 10 * (i % 3) + (i % 7) for i in range(60)], ttl=52)
    fit_toml = tmp_path / "fit.toml"
    assert run("train", "regression", a, "--window", "5", "--out", fit_toml).returncode == 0
    import tomllib

    rto = tomllib.loads(fit_toml.read_text())["tcp"]["rto"]
    example = (
        Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"
    ).read_text()
    text = example.replace('duration = "60s"', 'duration = "2s"').replace(
        'rto = { estimator = "rfc6298" }',
        f'rto = {{ estimator = "{rto["estimator"]}", coef = "{rto["coef"]}", hops = 12, ttl = 52 }}',
    )
    scenario = tmp_path / "s.toml"
    scenario.write_text(text)
    r = run("simulate", scenario)
    assert r.returncode == 0, r.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(f'coef = "{rto["coef"]}"', 'coef = "1,2"'))
    r = run("simulate", bad)
    assert r.returncode == 2 and "regression.coef: cannot read '1,2' as five numbers" in r.stderr, (
        r.stderr
    )
