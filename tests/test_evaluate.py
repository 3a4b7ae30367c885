"""``rttlab.evaluate``: the one call behind ``rttlab evaluate`` (docs/metrics.md defines every value)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import rttlab
from rttlab.estimators import spec
from rttlab.trace.evaluate import FLOOR_PARAMS, NO_FLOOR, pareto_front
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
    assert any("really lost" in n for n in result.notes)
    assert rttlab.evaluate(path, ["rfc6298"], by=None).connections is None
    doc = result.to_json()
    assert doc["schema"] == "rttlab.evaluate/3" and doc["connections"][0]["conn"] == conn["conn"]


def test_a_frame_with_connections_is_one_stream_per_connection():
    frame = pd.DataFrame(
        {"conn": [1, 1, 1, 2, 2, 2], "time": [0.1, 0.2, 0.3, 0.05, 0.15, 0.25], "rtt": [0.1] * 6}
    )
    result = rttlab.evaluate(frame, ["rfc6298"])
    [row] = result.rows
    assert row["samples"] == 4  # two streams, each's first sample warms up
    assert [(c["conn"], c["samples"], c["rows"][0]["samples"]) for c in result.connections] == [
        (1, 3, 2),
        (2, 3, 2),
    ]
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
    with pytest.raises(ValueError, match="min_rto: expected a duration"):
        rttlab.evaluate(np.full(5, 0.1), ["rfc6298"], min_rto=-1)


def test_real_series_score_with_and_without_equal_floors(shared):
    path = shared / "rtt-series" / "tyrell_roundtrip005.csv"
    own = {r["estimator"]: r for r in rttlab.evaluate(path, ["rfc6298", "quic", "eifel"]).rows}
    equal = {
        r["estimator"]: r
        for r in rttlab.evaluate(path, ["rfc6298", "quic", "eifel"], min_rto=0.2).rows
    }
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
    uses = {
        int(c): bool(f and r) for c, f, r in zip(flows["conn"], flows["ts_fwd"], flows["ts_rev"])
    }
    assert all(c["timestamps"] == uses[c["conn"]] for c in auto.connections)
    forced = rttlab.evaluate(path, ["rfc6298"], timestamps=False)
    assert all(c["timestamps"] is False for c in forced.connections)


def capture_with_a_loss_and_a_spurious_resend() -> bytes:
    """Client-side capture: handshake, ten 1000-byte segments 100 ms apart each ACKed 40–49 ms
    later; then segment L sent at 1.1 s, never acknowledged, resent at 1.6 s and ACKed at
    1.65 s (really lost: evidence `unacked`); then segment M sent at 2.0 s, resent at 2.03 s,
    its original ACKed at 2.04 s and the resend reported as a duplicate by a D-SACK at 2.07 s
    (not lost); then two more segments ACKed 45 ms later."""
    from test_capture import ACK, PSH, SYN, T0, pcap, tcp_frame

    frames = [
        (T0, tcp_frame(True, 100, 0, SYN)),
        (T0 + 0.050, tcp_frame(False, 900, 101, SYN | ACK)),
        (T0 + 0.0501, tcp_frame(True, 101, 901, ACK)),
    ]
    seq = 101
    for i in range(10):
        t = T0 + 0.1 + 0.1 * i
        frames += [
            (t, tcp_frame(True, seq, 901, ACK | PSH, 1000)),
            (t + 0.040 + i * 0.001, tcp_frame(False, 901, seq + 1000, ACK)),
        ]
        seq += 1000
    lost = seq  # L = [lost, lost + 1000)
    frames += [
        (T0 + 1.1, tcp_frame(True, lost, 901, ACK | PSH, 1000)),
        (T0 + 1.6, tcp_frame(True, lost, 901, ACK | PSH, 1000)),
        (T0 + 1.65, tcp_frame(False, 901, lost + 1000, ACK)),
    ]
    m = lost + 1000
    frames += [
        (T0 + 2.0, tcp_frame(True, m, 901, ACK | PSH, 1000)),
        (T0 + 2.03, tcp_frame(True, m, 901, ACK | PSH, 1000)),
        (T0 + 2.04, tcp_frame(False, 901, m + 1000, ACK)),
        (T0 + 2.07, tcp_frame(False, 901, m + 1000, ACK, sack=[(m, m + 1000)])),
    ]
    seq = m + 1000
    for t in (2.2, 2.3):
        frames += [
            (T0 + t, tcp_frame(True, seq, 901, ACK | PSH, 1000)),
            (T0 + t + 0.045, tcp_frame(False, 901, seq + 1000, ACK)),
        ]
        seq += 1000
    return pcap(frames)


def test_a_capture_lists_its_retransmissions_with_the_evidence_that_they_were_needed(tmp_path):
    path = tmp_path / "loss.pcap"
    path.write_bytes(capture_with_a_loss_and_a_spurious_resend())
    _, _, rtx = rttlab.read_capture(path, retransmissions=True)
    assert rtx["evidence"].astype(str).tolist() == ["unacked", "dsack"]
    assert rtx["needed"].tolist() == [True, False]
    lost = rtx.iloc[0]
    assert (lost["direction"], lost["attempt"], lost["dupacks"]) == ("fwd", 1, 0)
    # Sent at 1.1 s, after the last ACK (1.049 s): its timer started when it was sent.
    assert (
        lost["sent"] == pytest.approx(1.1)
        and lost["timer_start"] == pytest.approx(1.1)
        and lost["resent"] == pytest.approx(1.6)
    )


def test_w_on_really_lost_segments_is_the_rto_in_force_when_their_timer_started(tmp_path):
    path = tmp_path / "loss.pcap"
    path.write_bytes(capture_with_a_loss_and_a_spurious_resend())
    result = rttlab.evaluate(path, ["last", "rfc6298"])
    rows = {r["estimator"]: r for r in result.rows}
    # `last` (RTO = 2 × last sample): the last sample before 1.1 s is 49 ms → W = 98 ms.
    # rfc6298: its 1 s floor. Only L is scored; M's resend was not needed (D-SACK).
    assert rows["last"]["lost_segments"] == 1 and rows["last"]["lost_wait_mean_s"] == pytest.approx(
        0.098, abs=1e-9
    )
    assert rows["rfc6298"]["lost_wait_mean_s"] == pytest.approx(1.0) and rows["rfc6298"][
        "lost_wait_max_s"
    ] == pytest.approx(1.0)
    [conn] = result.connections
    assert (conn["retransmissions"], conn["lost"], conn["spurious"]) == (2, 1, 1)
    # The real sender waited 0.5 s (resent at 1.6 s).
    assert conn["actual_lost_wait_mean_s"] == pytest.approx(0.5)
    assert {r["estimator"]: r["lost_wait_mean_s"] for r in conn["rows"]} == {
        r["estimator"]: r["lost_wait_mean_s"] for r in result.rows
    }
    assert any("really lost" in n for n in result.notes)
    assert result.to_json()["schema"] == "rttlab.evaluate/3"


def test_a_plain_series_has_no_lost_segments_to_score():
    [row] = rttlab.evaluate(np.full(10, 0.1), ["rfc6298"]).rows
    assert row["lost_segments"] == 0 and row["lost_wait_mean_s"] is None


def test_on_every_real_capture_each_lost_segment_waits_exactly_a_constant_rto_and_timers_start_in_order(
    shared,
):
    # A constant RTO longer than any sample never expires (no back-off), so W is independent of
    # the samples: every scored loss must wait exactly it (W = f(start + RTO) − start).
    scored = 0
    for path in sorted((shared / "captures").glob("*.pcap*")):
        samples, conns, rtx = rttlab.read_capture(path, retransmissions=True)
        known = rtx[rtx["sent"].notna()]
        assert (known["sent"] <= known["timer_start"]).all() and (
            known["timer_start"] <= known["resent"]
        ).all(), path.name
        assert (
            (rtx["evidence"] == "unknown") == rtx["sent"].isna() & (rtx["evidence"] != "acked")
        ).all(), path.name
        if rttlab.capture.path_samples(samples, conns).empty:
            continue
        [row] = rttlab.evaluate(path, [spec("constant", rto="1000s")], by=None).rows
        if row["lost_segments"]:
            assert (
                row["lost_wait_mean_s"] == pytest.approx(1000.0)
                and row["lost_wait_max_s"] == 1000.0
            ), path.name
        scored += row["lost_segments"]
    # The development captures hold real losses (zeek-tcprs_* are loss-recovery test traces).
    assert scored > 50


def shifted(capture: bytes, after_s: float, by_s: float) -> bytes:
    """The capture with every packet from ``after_s`` (since its first) on moved by ``by_s``."""
    import struct

    from test_capture import pcap

    rest, packets = capture[24:], []
    while rest:
        sec, usec, length, _ = struct.unpack("<IIII", rest[:16])
        packets.append((sec + usec / 1e6, rest[16 : 16 + length]))
        rest = rest[16 + length :]
    t0 = packets[0][0]
    return pcap([(t + by_s if t - t0 >= after_s else t, frame) for t, frame in packets])


def test_a_capture_whose_clock_steps_back_an_hour_is_replayed_in_segments_and_says_where(tmp_path):
    from test_capture import run

    path = tmp_path / "step.pcap"
    # The step falls between the ninth data segment and the lost one (sent 1.1 s, resent 1.6 s).
    path.write_bytes(shifted(capture_with_a_loss_and_a_spurious_resend(), 0.95, -3600.0))
    out = run("evaluate", path, "-e", "rfc6298,last", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "clock steps back 3599.9 s at frame 23" in out.stderr
    doc = json.loads(out.stdout)
    [conn] = doc["connections"]
    assert conn["clock_segments"] == 2
    rows = {r["estimator"]: r for r in doc["rows"]}
    # Both segments warm up on their first sample; the lost segment is scored within the second.
    assert rows["rfc6298"]["samples"] == doc["samples_read"] - 2
    assert rows["last"]["lost_segments"] == 1 and rows["last"]["lost_wait_mean_s"] == pytest.approx(
        0.098, abs=1e-9
    )
    # The same per connection as pooled (one connection).
    assert {r["estimator"]: r["mae_s"] for r in conn["rows"]} == {r: rows[r]["mae_s"] for r in rows}


def test_a_lost_segment_resent_across_a_clock_step_is_counted_not_scored(tmp_path):
    path = tmp_path / "step.pcap"
    # The step falls between the lost segment's send (1.1 s) and its resend (1.6 s).
    path.write_bytes(shifted(capture_with_a_loss_and_a_spurious_resend(), 1.5, -3600.0))
    result = rttlab.evaluate(path, ["last"])
    assert result.rows[0]["lost_segments"] == 0
    assert any("resent across a backwards clock step" in w for w in result.warnings)


def test_a_list_of_files_is_evaluated_pooled_with_each_one_alone(write):
    a = write("a.csv", "\n".join(str(100 + i % 9) for i in range(60)))
    b = write("b.csv", "time,rtt\n" + "".join(f"{i},{0.04 + (i % 7) / 1000}\n" for i in range(40)))
    result = rttlab.evaluate([a, b], ["rfc6298"])
    assert result.input_kind == "inputs" and [e.input for e in result.inputs] == [str(a), str(b)]
    assert result.rows[0]["samples"] == 59 + 39
    assert result.to_json()["inputs"][1]["rows"] == rttlab.evaluate(b, ["rfc6298"]).rows
    # One path in a list is that file alone; a list of numbers is still an array of RTTs.
    assert rttlab.evaluate([a], ["rfc6298"]).input == str(a)
    assert rttlab.evaluate([0.1, 0.2, 0.1], ["rfc6298"]).input == "<array>"


def test_rtts_in_milliseconds_given_as_seconds_are_scored_as_given_with_a_warning():
    result = rttlab.evaluate(np.array([100.0, 120.0, 110.0, 300.0]), ["linux"])
    assert any(
        w.startswith("samples: median RTT 115 s, read in seconds") and "divide them by 1,000" in w
        for w in result.warnings
    )
    assert result.rows[0]["mae_s"] > 10


def test_a_series_read_first_keeps_its_unit_warning_in_the_evaluation(write):
    path = write("ms.csv", "time,rtt\n" + "".join(f"{i},{80 + i % 9}\n" for i in range(30)))
    with pytest.warns(UserWarning, match="--unit ms"):
        series = rttlab.read_series(path)
    assert series.warnings[0] in rttlab.evaluate(series, ["rfc6298"]).warnings
    assert any("--unit ms" in w for w in rttlab.evaluate(path, ["rfc6298"]).warnings)
    with pytest.raises(ValueError, match="columns applies to series files"):
        rttlab.evaluate(series, ["rfc6298"], columns="rtt=rtt")


def test_the_pareto_mark_needs_the_samples_tune_asks_for_a_one_percent_rate():
    from rttlab.trace import evaluate, replay, tune_search

    # One rule, in one place: evaluate and tune call the same function.
    assert tune_search.needed_samples is replay.needed_samples
    assert evaluate.PARETO_MIN_SAMPLES == replay.needed_samples(0.01) == 1522
    short = rttlab.evaluate(np.full(1522, 0.1), ["rfc6298", "quic"])  # 1,521 scored
    assert short.pareto == [] and any("1,521 scored samples" in w for w in short.warnings)
    enough = rttlab.evaluate(np.full(1523, 0.1), ["rfc6298", "quic"])
    assert enough.pareto and not any("too few" in w for w in enough.warnings)


def test_the_mark_warning_counts_samples_in_words():
    from rttlab.trace.evaluate import pareto_warning

    rows = [{"samples": 1}, {"samples": 1}]
    assert pareto_warning(rows).startswith("1 scored sample: too few to rank estimators")
    assert pareto_warning([{"samples": 1}]) is None  # one row: nothing to rank
