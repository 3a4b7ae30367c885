"""Figures: one fixed, colour-blind-safe colour per estimator and congestion control
(rttlab.palette), axis labels in words with units (rttlab.trace.labels), and
`rttlab evaluate --plot` as small multiples plus the Pareto front."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rttlab import _core
from rttlab.palette import CONGESTION_CONTROLS, ESTIMATORS, EXTENDED, SAMPLE_GREY, colour
from rttlab.trace.labels import axis_label, numeric, sig, sort_key
from rttlab.trace.plot import broken, drawn_indices, front_figure, gap_threshold, replay_figure
from rttlab.trace.replay import Scores
from rttlab.units import duration, rate

CATALOGUE = _core.catalogue()
ESTIMATOR_NAMES = [e["name"] for e in CATALOGUE if e["family"] == "estimator"]
CC_NAMES = [e["name"] for e in CATALOGUE if e["family"] == "cc"]

# Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of color
# vision deficiency", IEEE TVCG 15(6): the severity-1.0 matrices, applied to linear RGB.
CVD = {
    "protanopia": [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ],
    "deuteranopia": [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ],
    "tritanopia": [
        [1.255528, -0.076749, -0.178779],
        [-0.078411, 0.930809, 0.147602],
        [0.004733, 0.691367, 0.303900],
    ],
    "normal vision": np.eye(3).tolist(),
}


def linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(lin: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear-RGB colour."""
    xyz = np.array(
        [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
    ) @ np.clip(lin, 0, 1)
    f = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(f > 0.008856, np.cbrt(f), 7.787 * f + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def least_difference(names: list[str], vision: str) -> tuple[float, str, str]:
    seen = {n: lab(np.array(CVD[vision]) @ linear(colour(n))) for n in names}
    return min(
        (float(np.linalg.norm(seen[a] - seen[b])), a, b)
        for a, b in itertools.combinations(names, 2)
    )


def test_every_registered_estimator_and_congestion_control_has_a_fixed_colour_of_its_own():
    assert set(ESTIMATOR_NAMES) <= set(ESTIMATORS), (
        "a new estimator needs its colour in rttlab/palette.py"
    )
    assert set(CC_NAMES) <= set(CONGESTION_CONTROLS), (
        "a new congestion control needs its colour in rttlab/palette.py"
    )
    assert len({colour(n) for n in ESTIMATOR_NAMES}) == len(ESTIMATOR_NAMES)
    assert len({colour(n) for n in CC_NAMES}) == len(CC_NAMES)


@pytest.mark.parametrize("vision", list(CVD))
def test_every_two_estimators_stay_apart_under_simulated_colour_blindness(vision):
    # 15 ΔE (CIE76): our bar, far above the ≈ 2.3 of a just-noticeable difference.
    for names in (ESTIMATOR_NAMES, CC_NAMES):
        d, a, b = least_difference(names, vision)
        assert d >= 15, f"{a} and {b} differ by only {d:.1f} ΔE under {vision}"


def test_no_estimator_and_no_fallback_is_drawn_in_the_samples_grey():
    def saturation(c: str) -> int:
        rgb = [int(c[i : i + 2], 16) for i in (1, 3, 5)]
        return max(rgb) - min(rgb)

    assert SAMPLE_GREY not in EXTENDED and saturation(SAMPLE_GREY) == 0
    assert all(saturation(c) > 0 or c == "#000000" for c in EXTENDED)


def test_a_label_with_parameters_or_an_alias_keeps_its_names_colour():
    assert colour("linux (hz=250)") == colour("linux") == colour("LINUX")
    assert colour("fixed-share eta=2") == colour("fixed-share") != colour("fixed")
    assert colour("new_reno") == colour("newreno") and colour("westwood") == colour("westwood+")


def test_a_name_outside_the_palette_gets_the_same_colour_in_every_process():
    code = "from rttlab.palette import colour; print(colour('my-new-estimator'))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        ).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert len(seen) == 1 and seen.pop() in EXTENDED


def test_axis_labels_are_words_with_units_not_column_names():
    assert axis_label("goodput_bps") == "aggregate goodput (Mb/s)"
    assert axis_label("mae_s") == "mean absolute error of the RTT forecast (ms)"
    assert axis_label("topology.bottleneck.bandwidth") == "bottleneck bandwidth (Mb/s)"
    assert (
        axis_label("some.new.rate_bps") == "rate (Mb/s)"
    )  # an unknown column still reads as words


def test_swept_quantities_read_as_numbers_so_5_mbps_sorts_before_20_mbps():
    assert (
        numeric("20Mbps") == 2e7
        and numeric("64kbps") == 64e3
        and numeric("20ms") == pytest.approx(0.02)
    )
    assert numeric("1500B") == 1500 and numeric("100p") == 100 and numeric(0.5) == 0.5
    assert numeric("newreno") is None and numeric(True) is None
    assert sorted(["20Mbps", "5Mbps", "100Mbps"], key=sort_key) == ["5Mbps", "20Mbps", "100Mbps"]


def test_numbers_print_to_three_significant_figures_and_bits_per_second_with_their_unit():
    assert [sig(x) for x in (0.0006329, 0.09999, 12.345, 0.0)] == ["0.000633", "0.100", "12.3", "0"]
    assert sig(18925600.0) == "1.89e+07" and sig(math.nan) == "—"
    # One formatter of units for tables and figures (rttlab.units).
    assert rate(18925600.0) == "18.9 Mb/s" and duration(0.0123) == "12.3 ms"
    assert duration(0.0) == "0 s" and duration(300.0) == "5 min"


def scores_with_a_gap(names: list[str]) -> Scores:
    """Samples every 0.1 s for 10 s, silence for 60 s, then 10 s more."""
    t = np.concatenate([np.arange(0, 10, 0.1), 70 + np.arange(0, 10, 0.1)])
    rtt = np.full(len(t), 0.1)
    traces = {
        n: {
            "prediction": rtt.copy(),
            "rto": np.full(len(t), 0.3 + 0.1 * i),
            "prediction_after": rtt,
            "wait": rtt,
            "expiries": rtt,
        }
        for i, n in enumerate(names)
    }
    return Scores(
        [], np.round(t * 1e9).astype(np.uint64), np.round(rtt * 1e9).astype(np.uint64), traces
    )  # Scores holds ns


def test_evaluate_plot_draws_one_panel_per_estimator_with_shared_axes_and_no_legend():
    import matplotlib.pyplot as plt

    names = ["rfc6298", "linux", "quic", "last", "eifel"]
    fig = replay_figure(scores_with_a_gap(names))
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in panels] == names
    for ax, name in zip(panels, names):
        samples, rto = ax.get_lines()[:2]
        assert (
            samples.get_color() == SAMPLE_GREY and samples.get_zorder() < rto.get_zorder()
        )  # samples beneath
        assert rto.get_color() == colour(name)
        assert any(line.get_ydata()[0] == 1000 for line in ax.get_lines()[2:])  # the 1 s line
        assert ax.get_legend() is None  # nothing covers the 1 s line
        assert ax.get_shared_x_axes().joined(ax, panels[0]) and ax.get_shared_y_axes().joined(
            ax, panels[0]
        )
    assert {ax.get_xlabel() for ax in panels[-2:]} == {"time (s)"} and panels[
        0
    ].get_ylabel() == "RTT / RTO (ms)"
    plt.close(fig)


def test_lines_break_over_a_silence_instead_of_bridging_it():
    import matplotlib.pyplot as plt

    s = scores_with_a_gap(["rfc6298"])
    assert gap_threshold(s.times_s) == 1.0  # 10 × 0.1 s, at least 1 s
    fig = replay_figure(s)
    x, y = fig.axes[0].get_lines()[1].get_data()
    gap = np.flatnonzero(np.isnan(y))
    assert len(gap) == 1 and x[gap[0] - 1] < 10 and x[gap[0] + 1] >= 70
    plt.close(fig)
    # Thinning keeps both ends of every gap.
    idx, after = drawn_indices(s.times_s, max_points=10, gap=1.0)
    assert {99, 100} <= set(idx) and after[list(idx).index(99)]
    bx, _ = broken(np.array([0.0, 1.0, 5.0]), np.array([1.0, 1.0, 1.0]), np.array([False, True]))
    assert np.isnan(bx[2]) and len(bx) == 4


def test_a_long_series_is_drawn_as_each_time_slices_range_with_a_readable_time_axis():
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection
    from rttlab.trace.plot import ENVELOPE_COLUMNS, envelope, time_unit

    # A day and a half of samples every 0.5 s, with one 300 ms spike and a 2-hour silence.
    t = np.arange(0, 36 * 3600, 0.5)
    t = t[(t < 10 * 3600) | (t >= 12 * 3600)]
    rtt = np.full(len(t), 0.1)
    rtt[len(t) // 3] = 0.3
    traces = {"rfc6298": {"rto": np.full(len(t), 1.0)}}
    s = Scores(
        [], np.round(t * 1e9).astype(np.uint64), np.round(rtt * 1e9).astype(np.uint64), traces
    )
    fig = replay_figure(s)
    ax = fig.axes[0]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # the samples' range beneath, the RTO's above: no 250,000 dots
    assert not any(len(line.get_xdata()) > ENVELOPE_COLUMNS for line in ax.get_lines())
    assert ax.get_xlabel() == "time (h)" and ax.xaxis.get_offset_text().get_text() == ""
    plt.close(fig)
    # The spike survives as its slice's maximum; the silence is a run of empty slices.
    x, lo, hi = envelope(t, rtt, ENVELOPE_COLUMNS, float(t[0]), float(t[-1]))
    assert np.nanmax(hi) == 0.3 and np.nanmin(lo) == 0.1
    silent = (x >= 10.1 * 3600) & (x < 11.9 * 3600)
    assert silent.any() and np.isnan(hi[silent]).all()
    assert [time_unit(x)[0] for x in (60, 3600, 86_400, 30 * 86_400)] == ["s", "min", "h", "days"]


def test_the_front_figure_marks_the_estimators_no_other_beats_on_both_axes():
    import matplotlib.pyplot as plt
    from rttlab.trace.evaluate import pareto_front

    rows = [
        {"estimator": "rfc6298", "bad_timeout_rate": 0.0, "wait_mean_s": 1.0},
        {"estimator": "quic", "bad_timeout_rate": 0.01, "wait_mean_s": 0.2},
        {"estimator": "last", "bad_timeout_rate": 0.02, "wait_mean_s": 0.5},  # beaten by quic
        {"estimator": "linux", "bad_timeout_rate": None, "wait_mean_s": 0.3},  # not ranked
    ]
    fig = front_figure(rows)
    ax = fig.axes[0]
    import matplotlib.colors as mcolors

    names = {tuple(t.xy): t.get_text() for t in ax.texts}
    assert sorted(names.values()) == ["last", "quic", "rfc6298"]
    drawn = {}
    for c in ax.collections:
        name = names[tuple(c.get_offsets()[0])]
        assert mcolors.to_hex(c.get_facecolor()[0]).upper() == colour(name)
        drawn[name] = len(c.get_paths()[0].vertices) == 5  # a diamond ◆, not a circle
    assert (
        {n for n, diamond in drawn.items() if diamond} == pareto_front(rows) == {"rfc6298", "quic"}
    )
    assert (
        ax.get_xscale() == "log"
        and ax.get_xlabel().startswith("mean wait W after a loss (s)")
        and ax.get_ylabel() == "bad-timeout rate (%)"
    )
    plt.close(fig)


def test_evaluate_plot_writes_the_small_multiples_and_the_front_beside_them(tmp_path):
    target = tmp_path / "replay.svg"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "from rttlab.cli.main import main; main()",
            "evaluate",
            "--sample",
            "-e",
            "rfc6298,quic",
            "--plot",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert target.read_text().startswith("<?xml") and (
        tmp_path / "replay-front.svg"
    ).read_text().startswith("<?xml")
    assert "replay-front.svg (Pareto front)" in r.stdout


def test_a_reproductions_figure_names_two_ratios_with_one_numerator_apart_and_its_axes_in_words(
    monkeypatch,
):
    import matplotlib.pyplot as plt
    from rttlab.experiments import reproduce

    captured = {}
    monkeypatch.setattr(plt, "close", lambda fig: captured.setdefault("fig", fig))
    rep = reproduce.Reproduction.load("spectcp", quick=True)
    rows = [
        {
            "point": "cc=spectcp, ber=5e-05 / cc=reno, ber=5e-05",
            "params": {"cc": "spectcp", "ber": 5e-05},
            "metric": "goodput_bps ratio",
            "ours": 1.1,
            "ci_low": 1.0,
            "ci_high": 1.2,
            "published": 5.0,
        },
        {
            "point": "cc=spectcp, ber=5e-05 / cc=spectcp, ber=1e-05",
            "params": {"cc": "spectcp", "ber": 5e-05},
            "metric": "goodput_bps ratio",
            "ours": 0.3,
            "ci_low": 0.2,
            "ci_high": 0.4,
            "published": 0.9,
        },
    ]
    assert reproduce.figure_svg(rep, rows).startswith("<svg")
    fig = captured["fig"]
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == [r["point"] for r in rows]  # the same numerator, two ratios, two labels
    assert ax.get_xlabel() == "aggregate goodput ratio" and "_" not in ax.get_ylabel()
    assert fig._suptitle.get_text().startswith("SpecTCP")  # across the figure, wrapped
    monkeypatch.undo()
    plt.close(fig)


def test_simulate_plot_gives_flows_of_two_congestion_controls_their_controls_colours(
    tmp_path, monkeypatch
):
    import matplotlib.pyplot as plt
    import rttlab

    scenario = (
        Path(__file__).resolve().parent.parent
        / "examples"
        / "scenarios"
        / "dumbbell-n1-droptail.toml"
    )
    text = (
        scenario.read_text()
        + '\n[[flows]]\ncount = 1\nstart = "100ms"\nbytes = "inf"\ntcp = { cc = "vegas" }\n'
    )
    result = rttlab.simulate(text, set=['simulation.duration="1s"'])
    captured = {}
    monkeypatch.setattr(plt, "close", lambda fig: captured.setdefault("fig", fig))
    result.plot(tmp_path / "sim.png")
    cwnd, rtt, queue = captured["fig"].axes
    assert {line.get_label(): line.get_color() for line in cwnd.get_lines()} == {
        "newreno": colour("newreno"),
        "vegas": colour("vegas"),
    }
    assert {line.get_color() for line in rtt.get_lines()[::2]} == {
        SAMPLE_GREY
    }  # the samples of both flows
    for ax in (cwnd, rtt, queue):
        assert ax.get_ylabel() and "_" not in ax.get_ylabel()
    monkeypatch.undo()
    plt.close(captured["fig"])
