"""`rttlab tune`'s recommendation by time-ordered cross-validation and `--stack`: the rule on
constructed series whose answer is known, the apply lines, the JSON shape and the bad-input lines."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from rttlab.trace.tune import load_trace, tune
from rttlab.trace.tune_cv import TIE_MARGIN, choose
from rttlab.trace.tune_search import split_blocks

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=300)


def shifting(n: int = 5000, share: float = 0.03, seed: int = 3) -> str:
    """100 ms ± 2 ms for the first 80 % of the samples; the last 20 % has a spike of 2–3× on
    ``share`` of its samples. Pooled, the spikes are 0.6 % of all samples: a point that lets every
    spike become a bad timeout meets a 1 % target on all data, and fails the last block."""
    rng = np.random.default_rng(seed)
    rtt = 100 + rng.normal(0, 2, n).clip(-5, 5)
    late = np.arange(n) >= int(n * 0.8)
    spikes = late & (rng.random(n) < share)
    rtt[spikes] *= rng.uniform(2, 3, spikes.sum())
    return "\n".join(f"{x:.3f}" for x in rtt)


def test_blocks_are_contiguous_in_time_and_keep_every_sample(write):
    trace = load_trace(write("s.csv", shifting(1000)))
    blocks = split_blocks(trace, 5)
    assert sum(len(b.rtts_ns) for b in blocks) == len(trace.rtts_ns)
    for a, b in zip(blocks, blocks[1:]):
        assert a.times_ns.max() < b.times_ns.min()


def test_the_fit_on_all_data_fails_the_last_block_and_cross_validation_refuses_it(write):
    path = write("shift.csv", shifting())
    result = tune([path], ["constant"], target=0.01, budget=40)
    fit = result.fit
    # On all data the fitted point meets the target: the spikes are only 0.6 % of the samples.
    assert fit is not None and fit["bad_timeout_rate"] <= 0.01
    cv = result.cv
    # It is a candidate of the folds that saw the spikes, and it fails the last block.
    tuned = [c for c in cv["candidates"] if c["kind"] == "tuned"]
    assert tuned and all(not c["holds_all"] for c in tuned)
    for c in tuned:
        last = c["by_cell"][-1]
        assert not last["holds"] and last["bad_timeout_rate"] > 0.01
    # The fold that never saw a spike is shown failing, not pooled away.
    assert [f["holds"] for f in cv["fold_table"]][-1] is False
    # The only setting that holds everywhere is the default (rto 1 s, above every spike).
    rec = result.recommendation
    assert rec["action"] == "keep-default" and rec["estimator"] == "constant"
    assert rec["held_out"]["holds_all"] and rec["setting"] != fit["setting"]
    assert cv["headline"].startswith("keep the default constant")


def test_keep_the_default_is_the_first_line_the_cli_prints(write):
    path = write("shift.csv", shifting())
    out = run("tune", path, "-e", "constant", "--budget", "30")
    assert out.returncode == 0, out.stderr
    first = out.stdout.strip().splitlines()[0]
    assert first.startswith("keep the default constant: no tuned setting beats it"), first
    # Folds come next, each with its verdict; the failing one says so.
    assert "does not hold" in out.stdout.split("candidates scored")[0]


def _cand(kind: str, knobs: int, w: float, ok: bool = True, name: str = "x") -> dict:
    return {
        "kind": kind,
        "estimator": name,
        "setting": f"{name} {kind} {knobs}",
        "knobs": knobs,
        "holds_all": ok,
        "cells_held": 5 if ok else 3,
        "cells": 5,
        "wait_mean_s": w,
        "worst_bad_timeout_rate": 0.005 if ok else 0.04,
    }


def test_fewer_knobs_win_within_the_margin_and_lose_beyond_it():
    default = _cand("default", 0, 1.0, name="linux")
    floor = _cand("floor", 1, 0.80, name="linux")
    four = _cand("tuned", 4, 0.80 / (1 + TIE_MARGIN / 2), name="quantile-experts")
    chosen, best_default, _ = choose([default, floor, four], 0.01, None)
    assert chosen is floor and best_default is default
    # Beyond the margin the four-knob point wins; a point failing a block never does.
    far = _cand("tuned", 4, 0.5, name="quantile-experts")
    failing = _cand("tuned", 3, 0.1, ok=False, name="rfc6298")
    chosen, _, headline = choose([default, floor, far, failing], 0.01, None)
    assert chosen is far and headline.startswith("recommend quantile-experts")


def test_nothing_held_everywhere_keeps_the_default_that_failed_least():
    a = _cand("default", 0, 1.0, ok=False, name="linux")
    b = {**_cand("default", 0, 1.2, ok=False, name="quic"), "cells_held": 4}
    c = _cand("tuned", 2, 0.3, ok=False, name="eifel")
    chosen, best, headline = choose([a, b, c], 0.01, None)
    assert chosen is None and best is b
    assert headline.startswith("keep the default quic: no setting, tuned or default, met")


def test_stack_linux_searches_only_rto_min_in_jiffies_and_prints_the_lines_to_apply(write):
    path = write("shift.csv", shifting(2000, share=0.0))
    out = run("tune", path, "--stack", "linux", "--hz", "250", "--budget", "40", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc["fronts"]) == {"linux"}
    rec = doc["recommendation"]
    assert rec["stack"] == "linux" and rec["estimator"] == "linux"
    if rec["action"] == "apply":
        assert set(rec["knobs"]) == {"rto_min_us"}
        us = rec["knobs"]["rto_min_us"]
        assert us % 4000 == 0  # whole jiffies at HZ=250
        assert rec["apply"][0] == f"sysctl -w net.ipv4.tcp_rto_min_us={us}"
        assert rec["apply"][1].startswith("ip route change ") and rec["apply"][1].endswith(
            f"rto_min {us // 1000}ms"
        )
    else:
        assert rec["knobs"] == {} and rec["apply"] == []
    # Every point searched is Linux with hz fixed and rto_min on the jiffy clock.
    for p in doc["fronts"]["linux"]:
        assert p["estimator"] == "linux"


def test_stack_linux_on_a_real_series_recommends_an_rto_min_with_its_apply_lines(shared):
    path = shared / "rtt-series" / "tyrell_roundtrip013.csv"
    out = run("tune", path, "--stack", "linux", "--budget", "40")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(("recommend linux hz=1000 rto_min=", "keep the default linux"))
    if lines[0].startswith("recommend"):
        assert any(line.strip().startswith("sysctl -w net.ipv4.tcp_rto_min_us=") for line in lines)


def test_stack_freebsd_searches_rexmit_min_and_rexmit_slop_in_ticks_and_prints_the_sysctls(write):
    path = write("shift.csv", shifting(2000, share=0.0))
    out = run("tune", path, "--stack", "freebsd", "--budget", "16", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc["fronts"]) == {"freebsd"}
    rec = doc["recommendation"]
    assert rec["stack"] == "freebsd" and rec["estimator"] == "freebsd"
    if rec["action"] == "apply":
        knobs = rec["knobs"]
        assert set(knobs) == {"rexmit_min_ms", "rexmit_slop_ms"}
        assert all(isinstance(v, int) and v >= 1 for v in knobs.values())  # whole 1-ms ticks
        lo, sl = knobs["rexmit_min_ms"], knobs["rexmit_slop_ms"]
        assert rec["apply"] == [
            f"sysctl net.inet.tcp.rexmit_min={lo}",
            f"sysctl net.inet.tcp.rexmit_slop={sl}",
            f"net.inet.tcp.rexmit_min={lo}  # in /etc/sysctl.conf",
            f"net.inet.tcp.rexmit_slop={sl}  # in /etc/sysctl.conf",
        ]
    else:
        assert rec["knobs"] == {} and rec["apply"] == []


def test_stack_freebsd_on_a_real_series_recommends_its_sysctls_with_their_conf_lines(shared):
    path = shared / "rtt-series" / "tyrell_roundtrip013.csv"
    out = run("tune", path, "--stack", "freebsd", "--budget", "40")
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert lines[0].startswith(
        ("recommend freebsd hz=1000 rexmit_min=", "keep the default freebsd")
    )
    if lines[0].startswith("recommend"):
        for key in ("rexmit_min", "rexmit_slop"):
            assert any(line.startswith(f"sysctl net.inet.tcp.{key}=") for line in lines)
            assert any(
                line.startswith(f"net.inet.tcp.{key}=") and line.endswith("# in /etc/sysctl.conf")
                for line in lines
            )


def test_stack_freebsd_searches_only_its_two_sysctls_on_the_one_ms_clock(write):
    path = write("s.csv", shifting(1000, share=0.0))
    result = tune([path], stack="freebsd", budget=16)
    assert set(result.methods) == {"freebsd"}
    table = result.table
    searched = [c for c in table.columns if c.startswith("param.")]
    assert set(searched) == {"param.rexmit_min", "param.rexmit_slop"}
    tuned = table.loc[~table["default"]]
    assert set(tuned["params"].map(lambda p: p["hz"])) == {"1000"}
    for column in searched:  # every value replayed is a whole number of 1-ms ticks, from one
        ms = tuned[column].to_numpy() * 1000
        assert (ms >= 1).all() and np.allclose(ms, np.round(ms))


def test_stack_freebsd_apply_lines_are_in_milliseconds_and_keep_a_knob_no_fold_moved():
    from rttlab.trace.tune_stack import apply_lines

    rec = {
        "estimator": "freebsd",
        "params": {"hz": "1000", "rexmit_min": "45ms"},
        "timer_floor_s": 0.0,
    }
    got = apply_lines("freebsd", rec, 1000)
    assert got["knobs"] == {"rexmit_min_ms": 45, "rexmit_slop_ms": 200}
    assert got["apply"][:2] == [
        "sysctl net.inet.tcp.rexmit_min=45",
        "sysctl net.inet.tcp.rexmit_slop=200",
    ]
    kept = apply_lines("freebsd", {**rec, "keep_default": True}, 1000)
    assert kept["knobs"] == {} and kept["apply"] == []
    # The research view searched off the tick clock: no line, a pointer to --stack freebsd.
    research = apply_lines("any", rec, 1000)
    assert research["apply"] == [] and "run --stack freebsd" in research["apply_note"]


def test_stack_quic_takes_the_peers_max_ack_delay_as_an_input(write):
    path = write("s.csv", shifting(1000, share=0.0))
    result = tune([path], stack="quic", max_ack_delay="40ms", budget=16)
    assert set(result.methods) == {"quic"}
    searched = [c for c in result.table.columns if c.startswith("param.")]
    assert set(searched) == {"param.granularity", "param.initial_rtt"}
    assert set(
        result.table.loc[~result.table["default"], "params"].map(lambda p: p["max_ack_delay"])
    ) == {"40ms"}


def unreachable() -> str:
    """Every 50th RTT jumps from 100 ms to 8 s, long after the last jump has decayed out of the
    RTO: no rto_min up to 3 s keeps those timers from expiring (2 % bad timeouts), so Linux
    cannot reach a 1 % target."""
    rtt = np.full(1000, 100.0)
    rtt[25::50] = 8000.0
    return "\n".join(f"{x:.3f}" for x in rtt)


@pytest.mark.parametrize(
    "content,args,message",
    [
        (None, ["--stack", "bsd"], "--stack: unknown stack 'bsd'"),
        (None, ["--stack", "freebsd", "--hz", "250"], "--hz: 250 is for --stack linux"),
        (None, ["--stack", "freebsd", "-e", "linux"], "--estimators: --stack freebsd decides"),
        (None, ["--stack", "freebsd", "-p", "freebsd.hz=100"], "--param: --stack freebsd decides"),
        (
            None,
            ["--stack", "freebsd", "--max-ack-delay", "25ms"],
            "--max-ack-delay: only with --stack quic",
        ),
        (None, ["--folds", "1"], "--folds: 1 is too few"),
        (None, ["--folds", "40"], "--folds 40: "),
        (None, ["--stack", "linux", "--hz", "333"], "--hz: 333 is not a Linux tick rate"),
        (None, ["--stack", "linux", "-e", "quic"], "--estimators: --stack linux decides"),
        (None, ["--max-ack-delay", "25ms"], "--max-ack-delay: only with --stack quic"),
        (
            "unreachable",
            ["--stack", "linux"],
            "--target-bad-timeouts: 1.00% is out of reach for --stack linux",
        ),
    ],
)
def test_bad_stack_and_fold_arguments_are_one_line_naming_the_argument(
    write, content, args, message
):
    path = write("s.csv", unreachable() if content else shifting(600, share=0.0))
    out = run("tune", path, "--budget", "16", *args)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.stderr


def test_the_folds_table_fits_a_narrow_terminal_and_keeps_every_verdict_whole(write):
    import os

    path = write("shift.csv", shifting(2000))
    env = {**os.environ, "COLUMNS": "70"}
    out = subprocess.run(
        [*RTTLAB, "tune", str(path), "-e", "constant", "--budget", "20"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    folds = out.stdout.split("candidates scored")[0]
    table = [line for line in folds.splitlines() if line.startswith(("┃", "│", "┏", "└"))]
    assert table and all(len(line) <= 70 for line in table)
    # Five folds, each with a whole verdict (a verdict wraps between words, never cut).
    verdicts = " ".join(line.split("│")[-2].strip() for line in table if line.startswith("│"))
    import re

    found = re.findall(r"holds within its interval|does not hold|holds", " ".join(verdicts.split()))
    assert len(found) == 5 and found[-1] == "does not hold", verdicts


def test_at_a_confidence_too_high_for_the_blocks_the_answer_says_how_many_samples_it_takes(write):
    path = write("s.csv", shifting(500, share=0.0))
    result = tune([path], ["linux"], target=0.01, budget=16, confidence=0.95)
    rec, cv = result.recommendation, result.cv
    # 100 samples per block: with no bad timeout the 95 % bound is 3.0 % > 1 %, so nothing holds.
    assert rec["action"] == "keep-default" and not rec["holds"]
    assert "takes at least 299 even with no bad timeout" in cv["headline"]


def test_a_stop_during_cross_validation_keeps_the_fit_on_all_data_marked_partial(write):
    from rttlab.trace.tune import Interrupted

    path = write("s.csv", shifting(1000, share=0.0))

    def stop_in_the_second_fold(text: str, done: int, planned: int) -> None:
        if text.startswith("fold 2"):
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        tune([path], ["linux"], budget=16, progress=stop_in_the_second_fold)
    part = stop.value.tuning
    assert part.partial and part.recommendation is None and part.cv is None
    assert part.fit is not None and part.fit["bad_timeout_rate"] <= 0.01
    # The search on all data (1) and the first fold (1) were done, of 1 + 5 planned.
    assert (stop.value.done, stop.value.planned) == (2, 6)
    assert part.to_json()["partial"] is True


def test_shared_folds_on_a_grid_give_the_same_folds_and_answer_as_searching_each_fold(write):
    # A one-parameter grid looks at the same points whatever the data, so summing each point's
    # per-block counts over the other blocks must reproduce each fold's own search exactly.
    path = write("shift.csv", shifting(3000))
    own = tune([path], ["constant", "linux"], budget=30)
    shared = tune([path], ["constant", "linux"], budget=30, shared_folds=True)
    assert shared.cv["fold_table"] == own.cv["fold_table"]
    assert shared.recommendation["setting"] == own.recommendation["setting"]
    assert [c["setting"] for c in shared.cv["candidates"]] == [
        c["setting"] for c in own.cv["candidates"]
    ]
