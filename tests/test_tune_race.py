"""`rttlab tune --search halving`: successive halving over cells (python/rttlab/trace/tune_race.py).
Each view keeps its own best, the last rung is exact block replays, one rung is the shared-folds
search, and the choice reaches the CLI with its one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from rttlab.trace.estimators import spec
from rttlab.trace.replay import score
from rttlab.trace.tune import load_trace, tune
from rttlab.trace.tune_race import COUNTS, Racer, promote, window
from rttlab.trace.tune_search import Settings, Trace

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def series(n: int, seed: int = 5) -> str:
    """100 ms ± 3 ms with a 2–4× spike on 1.5 % of the samples, spread over the whole series."""
    rng = np.random.default_rng(seed)
    rtt = 100 + rng.normal(0, 3, n).clip(-9, 9)
    spikes = rng.random(n) < 0.015
    rtt[spikes] *= rng.uniform(2, 4, spikes.sum())
    return "\n".join(f"{x:.3f}" for x in rtt)


def counts(rates_waits: list[list[tuple[float, float]]]) -> np.ndarray:
    """[point, cell, COUNTS] from (bad-timeout rate, W) per point and cell, 1,000 samples each."""
    out = np.zeros((len(rates_waits), len(rates_waits[0]), len(COUNTS)))
    for p, cells in enumerate(rates_waits):
        for c, (rate, w) in enumerate(cells):
            out[p, c, :3] = (1000, rate * 1000, w * 1000)
    return out


def test_each_view_keeps_its_own_best_point_even_when_the_others_rank_it_last():
    # Point 0 is best on cell 0 only, point 1 best on cell 1 only, point 2 never best.
    c = counts([[(0.0, 1.0), (0.5, 9.0)], [(0.5, 9.0), (0.0, 1.0)], [(0.0, 2.0), (0.0, 2.0)]])
    views = [np.array([True, False]), np.array([False, True])]
    assert promote(c, views, 1, 0.01) == [0, 1]
    # On both cells together point 2 is the only one meeting the target: that view keeps it.
    assert promote(c, [np.array([True, True])], 1, 0.01) == [2]


def test_a_point_beyond_the_target_loses_to_any_point_within_it_whatever_its_wait():
    c = counts([[(0.02, 0.1)], [(0.01, 5.0)]])
    assert promote(c, [np.array([True])], 1, 0.01) == [1]


def test_windows_hold_the_fraction_spread_over_the_cell_and_never_cross_a_stream_edge():
    n = 10_000
    times = np.arange(n, dtype=np.uint64) * 1_000_000
    cell = Trace("c", "series", times, np.full(n, 5_000_000, np.uint64), [0, 6_000], [False] * 2)
    part = window(cell, 0.1, windows=4)
    assert abs(len(part.rtts_ns) - 1_000) <= 4
    # Four windows of 250 spread from the start to the end; none crosses sample 6,000.
    spans = [
        (int(part.times_ns[a]), int(part.times_ns[b - 1])) for a, b in zip(part.starts, part.ends)
    ]
    assert spans[0][0] == 0 and spans[-1][1] == times[-1]
    assert all(not (lo < 6_000_000_000 <= hi) for lo, hi in spans)
    assert window(cell, 1.0) is cell


def test_the_last_rung_holds_exact_replays_of_each_block(write):
    trace = load_trace(write("s.csv", series(40_000)))
    views = Racer.cell_views([trace], 4, validate=False)
    racer = Racer([trace], 4, Settings(budget=24), views)
    assert len(racer.fractions) == 2  # 40,000 samples: a first rung of 5,000, then every block
    race = racer.race("linux", {}, {})
    assert 1 <= len(race.finalists) < 24
    cand = {
        "estimator": "linux",
        "params": {"rto_min": f"{race.finalists[0]['rto_min'] * 1e3:g}ms"},
        "timer_floor_s": 0.0,
    }
    rows = racer.cell_rows(cand)
    for block, row in zip(racer.blocks[0], rows):
        direct = score(
            block.times_ns, block.rtts_ns, [spec("linux", **cand["params"])], starts=block.starts
        ).rows[0]
        assert (row["samples"], row["bad_timeouts"]) == (direct["samples"], direct["bad_timeouts"])
        assert row["wait_mean_s"] == pytest.approx(direct["wait_mean_s"], rel=1e-12)


def test_one_rung_of_halving_is_exactly_the_shared_folds_search_on_a_grid(write):
    # Below a first rung's worth of samples nothing is dropped: every grid point is replayed on
    # every block, which is what --shared-folds does, so every fold must pick the same point.
    path = write("s.csv", series(3_000))
    shared = tune([path], ["constant", "linux"], budget=30, shared_folds=True)
    raced = tune([path], ["constant", "linux"], budget=30, search="halving")
    assert raced.recommendation["setting"] == shared.recommendation["setting"]
    for a, b in zip(raced.cv["fold_table"], shared.cv["fold_table"]):
        assert (a["tuned"], a["samples"], a["bad_timeouts"], a["holds"]) == (
            b["tuned"],
            b["samples"],
            b["bad_timeouts"],
            b["holds"],
        )
        assert a["wait_mean_s"] == pytest.approx(b["wait_mean_s"], rel=1e-12)


def test_halving_gives_the_same_answer_for_the_same_seed_and_validates_by_block(write):
    path = write("s.csv", series(40_000))
    runs = [
        tune([path], ["linux", "rfc6298"], budget=40, search="halving", validate=True, seed=2)
        for _ in range(2)
    ]
    # JSON text: NaN (W's 99th percentile, which does not sum over blocks) equals itself there.
    assert json.dumps(runs[0].to_json()) == json.dumps(runs[1].to_json())
    v = runs[0].validation
    assert v["method"].startswith("split by time at a block edge: tuned on the first 2 of 5")
    assert v["held_out"]["samples"] > 0
    assert "successive halving" in runs[0].methods["rfc6298"]


def test_a_stop_during_halving_keeps_the_best_point_so_far_marked_partial(write):
    from rttlab.trace.tune import Interrupted

    path = write("s.csv", series(40_000))

    def stop_at_the_second_estimator(text: str, done: int, planned: int, count: str = "") -> None:
        assert done <= planned
        if text.startswith("rfc6298"):
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        tune(
            [path],
            ["linux", "rfc6298"],
            budget=24,
            search="halving",
            progress=stop_at_the_second_estimator,
        )
    part = stop.value.tuning
    assert part.partial and part.recommendation is None
    assert part.fit["estimator"] == "linux" and "a subsample" not in part.fit["setting"]
    assert stop.value.unit == "sample replays" and 0 < stop.value.done < stop.value.planned


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--search", "quick"],
            "--search: unknown method 'quick' (known: auto, halving, exhaustive)",
        ),
        (
            ["--search", "halving", "--shared-folds"],
            "--shared-folds: applies to --search exhaustive",
        ),
    ],
)
def test_bad_search_arguments_are_one_line_errors_naming_the_argument(write, args, message):
    path = write("s.csv", series(2_000))
    done = subprocess.run(
        [*RTTLAB, "tune", str(path), "-e", "linux", *args], capture_output=True, text=True
    )
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and message in done.stderr


def test_the_cli_names_the_method_and_counts_points_in_its_json(write):
    path = write("s.csv", series(40_000))
    done = subprocess.run(
        [
            *RTTLAB,
            "tune",
            str(path),
            "-e",
            "linux",
            "--budget",
            "24",
            "--search",
            "halving",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["methods"]["linux"].startswith("successive halving over a grid (24 points screened")
    assert doc["recommendation"]["held_out"]["cells"] == 5
