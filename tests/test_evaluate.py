"""``rttlab.evaluate``: the one call behind ``rttlab evaluate`` (docs/metrics.md defines every value)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rttlab
from rttlab.evaluate import FLOOR_PARAMS, NO_FLOOR, pareto_front
from test_evaluate_cli import synthetic_capture


def test_a_stall_is_one_bad_timeout_whatever_the_samples_around_it():
    # 100 ms back to back, one 2.5 s sample: rfc6298's 1 s timer, restarted at the previous ACK,
    # fires at +1 s; backed off to 2 s its next deadline is +3 s > +2.5 s: one episode, one expiry.
    rtts = np.r_[np.full(20, 0.1), 2.5, np.full(20, 0.1)]
    result = rttlab.evaluate(rtts, ["rfc6298"])
    [row] = result.rows
    assert (row["bad_timeouts"], row["expiries"], row["karn_withheld"]) == (1, 1, 1)
    assert row["bad_timeout_rate"] == pytest.approx(1 / 40)
    # W: 1 s for every segment, but 2 s for the one after the stall (Karn kept the back-off).
    assert row["wait_mean_s"] == pytest.approx((39 * 1.0 + 2.0) / 40)
    assert row["floor"] == "1 s" and row["floor_s"] == 1.0


def test_a_longer_stall_backs_off_inside_one_episode():
    rtts = np.r_[np.full(5, 0.1), 3.5, np.full(5, 0.1)]
    [row] = rttlab.evaluate(rtts, ["rfc6298"]).rows
    # Fires at +1 s and +3 s (1 s, then 2 s backed off); the ACK at +3.5 s ends the episode.
    assert (row["bad_timeouts"], row["expiries"]) == (1, 2)


def test_the_pareto_front_is_the_set_no_row_beats_on_both_axes():
    rows = [
        {"estimator": "a", "bad_timeout_rate": 0.0, "wait_mean_s": 1.0},
        {"estimator": "b", "bad_timeout_rate": 0.1, "wait_mean_s": 0.2},
        {"estimator": "c", "bad_timeout_rate": 0.1, "wait_mean_s": 0.3},  # beaten by b
        {"estimator": "d", "bad_timeout_rate": 0.0, "wait_mean_s": 1.0},  # ties a: both stay
        {"estimator": "e", "bad_timeout_rate": None, "wait_mean_s": None},
    ]
    assert pareto_front(rows) == {"a", "b", "d"}


def test_every_estimator_has_its_floor_described():
    for name in rttlab.estimators.NAMES:
        assert name in FLOOR_PARAMS or name in NO_FLOOR, name


def test_a_capture_is_evaluated_per_connection_in_one_call(tmp_path):
    path = tmp_path / "c.pcap"
    path.write_bytes(synthetic_capture())
    result = rttlab.evaluate(path, ["rfc6298", "linux"], by="conn")
    assert result.input_kind == "capture"
    [conn] = result.connections
    assert conn["method"] == "seq fwd" and conn["samples"] == 20 and conn["retransmissions"] == 0
    assert [r["estimator"] for r in conn["rows"]] == [r["estimator"] for r in result.rows]
    assert any("capture layer reports how many segments" in n for n in result.notes)
    assert rttlab.evaluate(path, ["rfc6298"], by=None).connections is None
    doc = result.to_json()
    assert doc["schema"] == "rttlab.evaluate/2" and doc["connections"][0]["conn"] == conn["conn"]


def test_a_frame_with_connections_is_one_stream_per_connection():
    frame = pd.DataFrame({"conn": [1, 1, 1, 2, 2, 2], "time": [0.1, 0.2, 0.3, 0.05, 0.15, 0.25], "rtt": [0.1] * 6})
    result = rttlab.evaluate(frame, ["rfc6298"])
    [row] = result.rows
    assert row["samples"] == 4  # two streams, each's first sample warms up
    assert [(c["conn"], c["samples"], c["rows"][0]["samples"]) for c in result.connections] == [(1, 3, 2), (2, 3, 2)]
    # Rows are taken in time order within each connection, whatever order they come in.
    shuffled = frame.iloc[[5, 2, 0, 4, 1, 3]]
    assert rttlab.evaluate(shuffled, ["rfc6298"]).rows == rttlab.evaluate(frame, ["rfc6298"]).rows
    with pytest.raises(ValueError, match="within each connection"):
        rttlab.evaluate(frame.assign(time=[0.1, 0.2, np.nan, 0, 0, 0]), ["rfc6298"])


def test_arguments_are_checked_by_name():
    with pytest.raises(ValueError, match="by must be 'conn' or None"):
        rttlab.evaluate(np.full(5, 0.1), ["rfc6298"], by="flow")
    with pytest.raises(ValueError, match="sort must be one of"):
        rttlab.evaluate(np.full(5, 0.1), ["rfc6298"], sort="premature_timeout_rate")
    with pytest.raises(ValueError, match="min_rto must be"):
        rttlab.evaluate(np.full(5, 0.1), ["rfc6298"], min_rto=-1)


def test_real_series_score_with_and_without_equal_floors(shared):
    path = shared / "rtt-series" / "tyrell_roundtrip005.csv"
    own = {r["estimator"]: r for r in rttlab.evaluate(path, ["rfc6298", "quic", "eifel"]).rows}
    equal = {r["estimator"]: r for r in rttlab.evaluate(path, ["rfc6298", "quic", "eifel"], min_rto=0.2).rows}
    for name in own:
        assert 0 <= own[name]["bad_timeout_rate"] <= 1 and own[name]["wait_mean_s"] > 0
        # A common floor can only lengthen the timers of estimators whose floor was lower.
        assert equal[name]["wait_mean_s"] >= 0.2 - 1e-9
    assert equal["quic"]["bad_timeouts"] <= own["quic"]["bad_timeouts"]
    # rfc6298's own floor (1 s) is above 200 ms: lowering it shortens its wait.
    assert equal["rfc6298"]["wait_mean_s"] <= own["rfc6298"]["wait_mean_s"]


def test_real_captures_pool_what_their_connections_score(shared):
    path = shared / "captures" / "zeek-tcprs_rto001.pcap"
    result = rttlab.evaluate(path, ["rfc6298", "linux"])
    pooled = {r["estimator"]: r for r in result.rows}
    for name, row in pooled.items():
        per = [r for c in result.connections for r in c["rows"] if r["estimator"] == name]
        assert row["bad_timeouts"] == sum(r["bad_timeouts"] for r in per)
        assert row["samples"] == sum(r["samples"] for r in per)


def test_a_capture_decides_karn_per_connection_from_its_timestamp_option(shared):
    path = shared / "captures" / "zeek-tcprs_rto001.pcap"
    auto = rttlab.evaluate(path, ["rfc6298"])
    assert auto.settings["timestamps"] == "auto"
    _, flows = rttlab.read_capture(path)
    uses = {int(c): bool(f and r) for c, f, r in zip(flows["conn"], flows["ts_fwd"], flows["ts_rev"])}
    assert all(c["timestamps"] == uses[c["conn"]] for c in auto.connections)
    forced = rttlab.evaluate(path, ["rfc6298"], timestamps=False)
    assert all(c["timestamps"] is False for c in forced.connections)
