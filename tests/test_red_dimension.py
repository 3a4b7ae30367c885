"""SpecTCP's RED/ECN dimensioning (Bai, Lilja & Atiquzzaman 2009 §5) as an API and as `rttlab red-dimension`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rttlab.papers.bai_spectcp.red_dimension import (
    DimensionError,
    dimension,
    flow_bound,
    marking_wait,
    max_buffer,
    max_threshold,
    share_from_loss_rate,
)

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]


def by_name(rows):
    return {q.name: q for q in rows}


@pytest.mark.parametrize(
    ("ssth", "rtt", "published"),
    [((15, 15), 0.059, 19), ((15, 20), 0.059, 24), ((15, 15), 0.099, 12)],
)
def test_eq3_gives_table_3s_analytic_buffer_with_an_equal_share_of_1_5_mbps_and_1040_byte_packets(
    ssth, rtt, published
):
    q = by_name(
        dimension(
            ssthresh=ssth,
            rtt=[rtt],
            bandwidth_bps=1.5e6,
            packet_bytes=1040,
            min_th=5,
            omega=0.002,
            max_p=0.1,
        )
    )
    # μ̄ = 0.75 Mb/s / 8320 bit = 90.14 packets/s; Σ(SSth − r·μ̄), by hand for case 1: 30 − 2·0.059·90.14 = 19.36.
    mu = 0.75e6 / 8320
    assert q["Q(t)_max"].value == pytest.approx(sum(ssth) - 2 * rtt * mu)
    assert round(q["Q(t)_max"].value) == published
    assert q["Q(t)_max"].equation == "eq. (3)"


def test_eq8_adds_omega_to_each_beta_as_printed_and_says_it_is_dimensionally_odd():
    q = by_name(
        dimension(
            ssthresh=[15, 15],
            rtt=[0.059],
            bandwidth_bps=1.5e6,
            packet_bytes=1040,
            min_th=5,
            omega=0.002,
            max_p=0.1,
            p=0.1,
            window=[10, 20],
        )
    )
    # β = 1/(0.1·10) = 1 and 1/(0.1·20) = 0.5: 5 + 1.002 + 0.502.
    assert q["beta[0]"].value == pytest.approx(1.0) and q["beta[1]"].value == pytest.approx(0.5)
    assert q["Qbar_max"].value == pytest.approx(6.504)
    assert q["Q(t0)"].value == pytest.approx(6.5) and q["Q(t1)"].value == pytest.approx(8.5)
    assert "dimensionally odd" in q["Qbar_max"].note and q["Qbar_max"].equation == "eq. (8)"


def test_the_default_eq5_inputs_are_stated_as_assumptions():
    q = by_name(
        dimension(
            ssthresh=[15, 15],
            rtt=[0.059],
            bandwidth_bps=1.5e6,
            packet_bytes=1040,
            min_th=5,
            omega=0.002,
            max_p=0.1,
        )
    )
    assert "assumed" in q["W[0]"].note and "assumed: p(t) = max_p" in q["beta[0]"].note
    assert q["W[0]"].value == pytest.approx(0.059 * 0.75e6 / 8320 + 2.5)


def test_eq21_share_and_the_flow_bound():
    assert share_from_loss_rate(0.5, 0.1) == pytest.approx(400.0)  # 2/(0.5·0.01)
    assert flow_bound(1000, 400) == 2
    q = by_name(
        dimension(
            ssthresh=[20],
            rtt=[0.1],
            bandwidth_bps=1e6,
            packet_bytes=1000,
            min_th=5,
            omega=0.002,
            max_p=0.1,
            loss_rate=0.5,
        )
    )
    assert (
        q["share[0]"].equation == "eq. (21)" and q["alpha"].value == 0
    )  # 125 packets/s < 400: not even one flow's share
    assert max_buffer([20], [0.1], [400]) == pytest.approx(-20.0)
    assert max_threshold(5, [1, 2], 0.5) == pytest.approx(9.0)


def test_bad_inputs_raise_errors_that_name_them():
    with pytest.raises(DimensionError, match="2 RTTs for 3 flows"):
        dimension(
            ssthresh=[1, 2, 3],
            rtt=[0.1, 0.2],
            bandwidth_bps=1e6,
            packet_bytes=1000,
            min_th=5,
            omega=0.002,
            max_p=0.1,
        )
    with pytest.raises(DimensionError, match="p > 0"):
        marking_wait(0, 10)


def test_the_cli_prints_each_quantity_with_its_equation_as_json_and_rejects_bad_input_in_one_line():
    r = subprocess.run(
        [
            *RTTLAB,
            "red-dimension",
            "--ssthresh",
            "15",
            "--ssthresh",
            "20",
            "--rtt",
            "59ms",
            "--bandwidth",
            "1.5Mbps",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    q = {x["name"]: x for x in doc["quantities"]}
    assert doc["schema"] == "rttlab.red-dimension/1"
    assert round(q["Q(t)_max"]["value"]) == 24 and q["Qbar_max"]["equation"] == "eq. (8)"
    bad = subprocess.run(
        [*RTTLAB, "red-dimension", "--ssthresh", "15", "--rtt", "59ms", "--bandwidth", "fast"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        bad.returncode != 0
        and "bandwidth 'fast'" in bad.stderr
        and len(bad.stderr.strip().splitlines()) == 1
    )
