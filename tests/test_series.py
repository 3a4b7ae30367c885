"""Reading RTT series through the Python API."""

from __future__ import annotations

import numpy as np
import pytest
import rttlab


def test_one_column_series_are_milliseconds(write):
    df = rttlab.read_series(write("a.csv", "# comment\n100\n250\n"))
    np.testing.assert_allclose(df["rtt"], [0.1, 0.25])
    np.testing.assert_allclose(df["time"], [0.1, 0.35])


def test_time_rtt_csvs_are_seconds_unless_told(write):
    p = write("b.csv", "time,rtt\n0,0.1\n1,0.2\n")
    np.testing.assert_allclose(rttlab.read_series(p)["rtt"], [0.1, 0.2])
    np.testing.assert_allclose(rttlab.read_series(p, unit="ms")["rtt"], [1e-4, 2e-4])


def test_errors_name_the_file_line_and_field(write):
    with pytest.raises(rttlab.InputError, match=r"c.csv:2: field 'time': 'x' is not a number"):
        rttlab.read_series(write("c.csv", "time,rtt\nx,0.1\n"))


def test_the_bundled_sample_is_there():
    assert len(rttlab.read_series(rttlab.sample_path())) == 5000


def test_the_largest_shared_series_reads_completely(shared):
    df = rttlab.read_series(shared / "rtt-series" / "tyrell_roundtrip005.csv")
    assert len(df) == 83230
    assert 0.89 < df["rtt"].min() < df["rtt"].max() < 2.7
