"""The Python replay API against independent references and the definitions in docs/metrics.md."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import rttlab
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fixed_share as ref_fixed_share
from reference import rfc6298 as ref_rfc6298
from rttlab.estimators import FixedShare, Linux, Rfc6298, spec


def test_rfc6298_replay_matches_the_plain_python_reference(rng):
    rtts = rng.gamma(2.0, 0.05, size=3000) + 0.02
    _, traces = rttlab.replay(rtts, [Rfc6298(min_rto="200ms")], trace=True)
    pred, rto = ref_rfc6298(rtts, min_rto=0.2)
    got = traces["rfc6298(min_rto=200ms)"]
    np.testing.assert_allclose(got["prediction"][1:], pred[1:], atol=1e-9)
    np.testing.assert_allclose(got["rto"], rto, atol=1e-9)


@pytest.mark.filterwarnings("ignore:.*exceed its top expert:UserWarning")  # out of range on purpose
def test_fixed_share_replay_matches_the_numpy_reference(rng):
    # The default tick is 4 ms (one jiffy of Nunes et al. 2011's Linux 2.6.28 at HZ = 250): the reference
    # is told so explicitly, and 0.3–2 s samples reach beyond its 516 ms top expert.
    # The core holds times in whole ns; with 4 ms ticks the squared loss is sensitive enough to
    # that rounding (up to 1e-7 s in the prediction), so the reference gets the same samples.
    rtts = ns(
        np.concatenate(
            [rng.uniform(0.05, 0.15, 500), rng.uniform(0.3, 0.6, 300), rng.uniform(0.01, 2.0, 200)]
        )
    )
    _, traces = rttlab.replay(rtts, [FixedShare()], trace=True)
    np.testing.assert_allclose(
        traces["fixed-share"]["prediction"], ref_fixed_share(rtts, tick=0.004), atol=1e-9
    )


def ns(seconds: np.ndarray) -> np.ndarray:
    """Samples rounded to whole nanoseconds, as the core stores them."""
    return np.rint(seconds * 1e9) / 1e9


@pytest.mark.filterwarnings("ignore:.*exceed its top expert:UserWarning")  # out of range on purpose
@pytest.mark.parametrize("tick", ["10ms", "500ms"])
def test_fixed_share_with_another_tick_matches_the_reference_with_that_tick(rng, tick):
    rtts = ns(rng.uniform(0.01, 3.0, 400))
    _, traces = rttlab.replay(rtts, [FixedShare(tick=tick)], trace=True)
    seconds = {"10ms": 0.01, "500ms": 0.5}[tick]
    np.testing.assert_allclose(
        traces[f"fixed-share(tick={tick})"]["prediction"],
        ref_fixed_share(rtts, tick=seconds),
        atol=1e-9,
    )


def test_fixed_share_clamp_feeds_the_top_expert_for_samples_above_it(rng):
    rtts = ns(
        np.concatenate(
            [rng.uniform(0.05, 0.15, 100), rng.uniform(0.6, 3.0, 200), rng.uniform(0.05, 0.15, 50)]
        )
    )
    _, traces = rttlab.replay(rtts, [FixedShare(clamp="top")], trace=True)
    clamped = ref_fixed_share(rtts, tick=0.004, clamp=True)
    np.testing.assert_allclose(traces["fixed-share(clamp=top)"]["prediction"], clamped, atol=1e-9)
    # Unclamped, the long samples drag the prediction toward the mean expert (≈ 36 ms), far below
    # the top expert that the clamped run sits near.
    plain = ref_fixed_share(rtts, tick=0.004)
    assert plain[299] < 0.05 < 0.45 < clamped[299]


def test_tick_sets_every_tick_based_estimator():
    rtts = np.full(50, 0.1)
    table = rttlab.replay(rtts, ["fixed-share", "linux", "rfc6298"], tick=0.01).scores
    assert list(table["estimator"]) == ["fixed-share", "linux", "rfc6298"]
    # The same as setting each estimator's own clock parameter.
    own = rttlab.replay(
        rtts, [FixedShare(tick="10ms"), Linux(hz=100), Rfc6298(granularity="10ms")], tick=0.01
    ).scores
    pd.testing.assert_frame_equal(table.drop(columns="estimator"), own.drop(columns="estimator"))
    # rfc6298 without a floor: RTO = SRTT + max(G, 4·RTTVAR) shows the 10 ms G once RTTVAR is 0.
    bare = rttlab.replay(rtts, [Rfc6298(min_rto=0)], tick=0.01, trace=True).traces[
        "rfc6298(min_rto=0)"
    ]
    assert bare["rto"].iloc[-1] == pytest.approx(0.11, abs=1e-6)
    assert table["mae_ticks"][0] == pytest.approx(table["mae_s"][0] / 0.01)
    with pytest.raises(ValueError, match="not a whole number of Hz"):
        rttlab.replay(rtts, ["linux"], tick=0.003)


def test_metrics_follow_their_definitions():
    rtts = np.array([0.1, 0.1, 2.0, 0.1])
    table, traces = rttlab.replay(rtts, ["rfc6298"], trace=True)
    row = table.iloc[0]
    t = traces["rfc6298"].iloc[1:]
    err = t["prediction"] - t["rtt"]
    assert row["samples"] == 3
    assert row["mae_s"] == pytest.approx(err.abs().mean())
    assert row["mae_after_s"] == pytest.approx((t["prediction_after"] - t["rtt"]).abs().mean())
    assert row["mape"] == pytest.approx((err.abs() / t["rtt"]).mean() * 100)
    assert row["under_prediction_rate"] == pytest.approx((err < 0).mean())
    assert row["rto_mean_s"] == pytest.approx(t["rto"].mean())
    assert row["mae_ticks"] == pytest.approx(row["mae_s"] / 0.004)
    # Back to back, the 2 s sample's segment went out at the previous ACK: the 1 s timer fires
    # at +1 s, backs off to 2 s and the ACK at +2 s beats it — one bad timeout, one expiry.
    assert list(t["expiries"]) == [0, 1, 0]
    assert (row["bad_timeouts"], row["expiries"], row["karn_withheld"]) == (1, 1, 1)
    assert row["bad_timeout_rate"] == pytest.approx(1 / 3)
    # W: the RTO in force at arming; Karn kept the back-off for the last segment (2 × 1 s).
    assert list(t["wait"]) == [1.0, 1.0, 2.0]
    assert row["wait_mean_s"] == pytest.approx(4 / 3)
    assert row["wait_p99_s"] == 2.0


def test_a_dataframe_with_times_is_accepted_and_times_reach_the_linux_window():
    rtt = np.full(200, 0.1)
    rtt[1] = 0.5  # a spike inflates rttvar; how fast it decays depends on the window boundaries
    df = pd.DataFrame({"time": np.arange(200) * 0.001, "rtt": rtt})
    every = rttlab.replay(df, [Linux(window="every-sample")])
    by_time = rttlab.replay(df, [Linux(window="time")])
    # 200 samples 1 ms apart span under two SRTT-long windows: rttvar decays far less often.
    assert by_time["rto_mean_s"][0] > every["rto_mean_s"][0]


def test_peak_hopper_has_no_prediction_so_its_errors_are_undefined():
    table = rttlab.replay(np.full(10, 0.1), ["peak-hopper"])
    assert np.isnan(table["mae_s"][0]) and table["predicted"][0] == 0
    assert table["rto_mean_s"][0] > 0.1


def test_replay_is_deterministic_including_the_seeded_estimator(rng):
    rtts = rng.uniform(0.01, 0.5, 2000)
    a = rttlab.replay(rtts, ["ca-rto", "fixed-share", "linux"])
    b = rttlab.replay(rtts, ["ca-rto", "fixed-share", "linux"], threads=1)
    pd.testing.assert_frame_equal(a.scores, b.scores)


def test_bad_parameters_are_rejected_when_the_spec_is_made():
    with pytest.raises(
        rttlab.ParameterError, match=r"fixed-share.alpha: 1.5 is outside the accepted range 0..1"
    ):
        FixedShare(alpha=1.5)
    with pytest.raises(rttlab.ParameterError, match="unknown parameter 'gamma'"):
        spec("eifel", gamma=3)
    with pytest.raises(rttlab.ParameterError, match="unknown estimator 'bbr'"):
        spec("bbr")


def test_bad_samples_are_rejected_with_their_index():
    with pytest.raises(ValueError, match="sample 2: rtt must be positive"):
        rttlab.replay(np.array([0.1, 0.2, -1.0]), ["rfc6298"])
    with pytest.raises(ValueError, match="no estimators"):
        rttlab.replay(np.array([0.1]), [])


def test_a_mapping_of_columns_is_read_as_a_dataframe_and_anything_else_names_the_argument():
    times, rtts = np.arange(50) * 0.2, np.linspace(0.05, 0.15, 50)
    from_mapping = rttlab.replay({"time": times.tolist(), "rtt": rtts}, ["rfc6298", "linux"])
    from_frame = rttlab.replay(pd.DataFrame({"time": times, "rtt": rtts}), ["rfc6298", "linux"])
    assert from_mapping.rows == from_frame.rows
    with pytest.raises(
        ValueError,
        match=r"^samples: a mapping needs an 'rtt' column \(seconds\) and optionally 'time'; got 'conn1', 'conn2'$",
    ):
        rttlab.replay({"conn1": rtts, "conn2": rtts}, ["rfc6298"])
    with pytest.raises(
        TypeError,
        match=r"^samples\['rtt'\] must be a 1-D sequence of numbers \(seconds\), got str$",
    ):
        rttlab.replay({"rtt": "0.1"}, ["rfc6298"])
    with pytest.raises(TypeError, match=r"^samples must be a DataFrame or mapping .* got set$"):
        rttlab.replay({0.1, 0.2}, ["rfc6298"])


def test_the_catalog_lists_every_estimator_with_documented_parameters():
    names = {e["name"] for e in rttlab.estimators.catalog()}
    assert {
        "rfc6298",
        "linux",
        "freebsd",
        "eifel",
        "peak-hopper",
        "quic",
        "fixed-share",
        "ca-rto",
        "regression",
        "last",
        "constant",
    } <= names
    for e in rttlab.estimators.catalog():
        for p in e["params"]:
            assert p["doc"] and p["default"] and p["range"], (e["name"], p["name"])


def test_regression_fit_recovers_coefficients_from_noisy_data(rng):
    x = np.column_stack(
        [
            rng.integers(5, 30, 400),
            rng.uniform(10, 200, 400),
            rng.uniform(10, 300, 400),
            rng.integers(40, 250, 400),
        ]
    ).astype(float)
    truth = np.array([-0.5, 0.015, 0.59, 0.41, 0.0016])
    y = truth[0] + x @ truth[1:] + rng.normal(0, 1e-6, 400)
    fitted = rttlab.estimators.fit_regression(x, y, window=10)
    np.testing.assert_allclose([float(fitted.params[f"b{i}"]) for i in range(5)], truth, atol=1e-4)
    assert fitted.params["window"] == "10"
    with pytest.raises(ValueError, match="rank-deficient"):
        rttlab.estimators.fit_regression(np.column_stack([x[:, 0], x[:, 0], x[:, 2], x[:, 3]]), y)


floors = st.sampled_from(
    [
        ("rfc6298", 1.0),
        ("linux", 0.2),
        ("freebsd", 0.23),  # rexmit_min + rexmit_slop
        ("ca-rto", 1.0),
        ("fixed-share", 0.2),
    ]
)


@pytest.mark.filterwarnings("ignore:.*exceed its top expert:UserWarning")  # out of range on purpose
@pytest.mark.filterwarnings("ignore:.*implausible for a network path:UserWarning")  # so are medians
@settings(max_examples=40, deadline=None)
@given(rtts=st.lists(st.floats(1e-5, 100.0), min_size=2, max_size=300), choice=floors)
def test_every_rto_is_finite_and_respects_its_floor(rtts, choice):
    name, floor = choice
    _, traces = rttlab.replay(np.array(rtts), [name], trace=True)
    rto = traces[name]["rto"].to_numpy()
    assert np.all(np.isfinite(rto))
    assert np.all(rto >= floor - 1e-9)


@pytest.mark.filterwarnings("ignore:.*exceed its top expert:UserWarning")  # out of range on purpose
@pytest.mark.filterwarnings("ignore:.*implausible for a network path:UserWarning")  # so are medians
@settings(max_examples=40, deadline=None)
@given(
    rtts=st.lists(st.floats(1e-5, 100.0), min_size=2, max_size=300),
    name=st.sampled_from(rttlab.estimators.NAMES),
)
def test_every_estimator_gives_finite_positive_rtos(rtts, name):
    _, traces = rttlab.replay(np.array(rtts), [name], trace=True)
    rto = traces[name]["rto"].to_numpy()
    assert np.all(np.isfinite(rto)) and np.all(rto > 0)


def test_replay_warns_when_samples_exceed_fixed_shares_top_expert():
    rtts = np.r_[np.full(10, 0.1), np.full(5, 0.9)]
    with pytest.warns(
        UserWarning, match=r"fixed-share: 5 of 15 samples \(33.3%\) exceed its top expert \(516 ms"
    ):
        rttlab.replay(rtts, ["fixed-share"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rttlab.replay(rtts, [FixedShare(clamp="top")])
