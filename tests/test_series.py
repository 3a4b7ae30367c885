"""Reading RTT series through the Python API."""

from __future__ import annotations

import contextlib
import warnings

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


# ---- headers as people write them ----


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_a_timestamp_rtt_ms_header_is_read_in_milliseconds(write):
    series = rttlab.read_series(write("m.csv", "timestamp,rtt_ms\n0.5,80\n1.0,120\n"))
    np.testing.assert_allclose(series["rtt"], [0.08, 0.12])
    np.testing.assert_allclose(series["time"], [0.5, 1.0])


@pytest.mark.parametrize(
    "header, rtts",
    [
        ("t,rtt_us", [80e-6, 120e-6]),
        ("time,RTT (ms)", [0.08, 0.12]),
        ("time_ms,rtt_s", [80.0, 120.0]),
        ("Timestamp,rtt", [80.0, 120.0]),
    ],
)
def test_the_header_gives_each_columns_unit(write, header, rtts):
    with pytest.warns(UserWarning) if rtts[0] > 30 else _no_warning():
        series = rttlab.read_series(write("h.csv", f"{header}\n1000,80\n2000,120\n"))
    np.testing.assert_allclose(series["rtt"], rtts)
    np.testing.assert_allclose(series["time"], [1.0, 2.0] if "_ms" in header else [1000, 2000])


def test_columns_can_be_chosen_as_text_or_as_a_mapping(write):
    path = write("c.csv", "when,lat_ms,rtt\n1,20,999\n2,30,999\n")
    for columns in ("time=when,rtt=lat_ms", {"time": "when", "rtt": "lat_ms"}):
        series = rttlab.read_series(path, columns=columns)
        np.testing.assert_allclose(series["rtt"], [0.02, 0.03])
        np.testing.assert_allclose(series["time"], [1.0, 2.0])


def test_a_column_not_in_the_header_is_one_error_listing_the_headers_columns(write):
    path = write("c.csv", "time,rtt_ms\n1,20\n")
    with pytest.raises(rttlab.InputError) as e:
        rttlab.read_series(path, columns={"rtt": "latency"})
    assert str(e.value) == (
        f"{path}:1: column 'latency' (named for rtt) is not in the header; its columns: 'time', 'rtt_ms'"
    )


@pytest.mark.parametrize(
    "columns, expected",
    [
        ("rtt", "columns 'rtt': 'rtt' is not ROLE=COLUMN"),
        ("delay=x", "columns 'delay=x': unknown role 'delay' (the roles are time and rtt)"),
        ({"delay": "x"}, "columns: unknown role 'delay'"),
        ({"rtt": ""}, "columns: rtt must name a column"),
        (["rtt"], "columns must be 'time=COL,rtt=COL' or a mapping"),
    ],
)
def test_a_column_choice_that_cannot_be_read_is_a_parameter_error(write, columns, expected):
    with pytest.raises(
        rttlab.ParameterError, match=expected.replace("(", r"\(").replace(")", r"\)")
    ):
        rttlab.read_series(write("c.csv", "time,rtt\n1,0.1\n"), columns=columns)


def test_a_unit_against_the_headers_is_an_error_naming_both(write):
    path = write("c.csv", "time,rtt_ms\n1,20\n")
    with pytest.raises(
        rttlab.InputError, match=r"column 'rtt_ms' is in ms by its name, but the unit given is s"
    ):
        rttlab.read_series(path, unit="s")
    np.testing.assert_allclose(rttlab.read_series(path, unit="ms")["rtt"], [0.02])


def test_a_headerless_line_of_two_fields_is_an_error_not_its_first_field(write):
    with pytest.raises(rttlab.InputError, match=r"c.csv:1: 2 fields but no header"):
        rttlab.read_series(write("c.csv", "0.5,80\n1.0,120\n"))


# ---- units that catch mistakes ----


def test_milliseconds_read_as_seconds_warn_naming_the_unit_and_how_to_say_it(write):
    path = write(
        "ms.csv", "time,rtt\n" + "".join(f"{i},{(100, 110, 120)[i % 3]}\n" for i in range(51))
    )
    with pytest.warns(UserWarning) as caught:
        series = rttlab.read_series(path)
    [warning] = [str(w.message) for w in caught]
    assert warning == (
        f"{path}: median RTT 110 s, read in seconds (the default under a header), is implausible for a "
        "network path; if the values are milliseconds, say so: --unit ms, or the header rtt_ms"
    )
    # Never changed: the values are read as given.
    assert series["rtt"].min() == 100.0 and series.warnings == (warning,)


def test_microseconds_read_as_milliseconds_and_seconds_in_one_column_are_named_too(write):
    with pytest.warns(
        UserWarning,
        match=r"if the values are microseconds, say so: --unit us, or a first line rtt_us",
    ):
        rttlab.read_series(write("us.csv", "85000\n91000\n87000\n"))
    with pytest.warns(UserWarning, match=r"if the values are seconds, say so: --unit s"):
        rttlab.read_series(write("s.csv", "0.005\n0.006\n0.004\n"))
    with pytest.warns(
        UserWarning, match=r"as the column name 'rtt_s' says.*rename the column 'rtt_s'"
    ):
        rttlab.read_series(write("h.csv", "rtt_s\n80\n90\n"))


def test_a_plausible_series_reads_without_a_warning(write, shared):
    with _no_warning():
        rttlab.read_series(write("ok.csv", "time,rtt\n1,0.08\n2,0.12\n"))
        rttlab.read_series(shared / "rtt-series" / "tyrell_roundtrip028.csv")
        rttlab.read_series(rttlab.sample_path())


def test_replaying_milliseconds_as_numbers_warns_and_scores_them_as_given():
    with pytest.warns(
        UserWarning,
        match=r"rttlab.replay: median RTT 115 s, read in seconds .* divide them by 1,000 first",
    ):
        result = rttlab.replay([100, 120, 110, 300], ["linux"])
    assert result.rows[0]["mae_s"] > 10  # seconds, as given


def test_tune_reads_columns_and_keeps_the_unit_warning(write):
    from rttlab.trace.tune import load_trace

    path = write("t.csv", "when,lat\n" + "".join(f"{i},{80 + i % 9}\n" for i in range(100)))
    trace = load_trace(path, columns="time=when,rtt=lat")
    assert len(trace.rtts_ns) == 100 and trace.rtts_ns[0] == 80 * 10**9
    assert len(trace.warnings) == 1 and "--unit ms" in trace.warnings[0]
