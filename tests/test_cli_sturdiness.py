"""Bad output paths, closed pipes, full disks and odd inputs: one line naming the path and a
non-zero exit, never a traceback; API misuse names the argument."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rttlab
from test_capture import bulk, pcap

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"
RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=300)


def one_line_error(out: subprocess.CompletedProcess, *must_contain: str) -> None:
    assert out.returncode != 0, out.stdout
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for text in must_contain:
        assert text in lines[0], lines[0]


def test_a_plot_into_a_missing_directory_is_one_line_naming_it(tmp_path):
    target = tmp_path / "missing" / "plot.png"
    one_line_error(run("evaluate", "--sample", "-e", "rfc6298", "--plot", target), str(target))


def test_simulate_out_on_a_file_or_an_unwritable_path_is_one_line_naming_it(tmp_path):
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    one_line_error(
        run("simulate", SCENARIO, "--set", "simulation.duration=1s", "--out", a_file), str(a_file)
    )
    one_line_error(
        run("simulate", SCENARIO, "--set", "simulation.duration=1s", "--out", "/proc/rttlab-out"),
        "/proc/rttlab-out",
    )


def test_samples_output_into_a_missing_directory_is_one_line_naming_it(tmp_path, write):
    cap = write("b.pcap", pcap(bulk(5)))
    for name in ("s.csv", "s.parquet"):
        target = tmp_path / "missing" / name
        one_line_error(run("samples", cap, "-o", target), str(target))


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "args", [["flows", "--json"], ["flows"], ["samples"], ["estimators", "--json"]]
)
def test_writing_to_a_full_disk_is_one_line_naming_it(write, args):
    cap = write("b.pcap", pcap(bulk(5)))
    argv = [*RTTLAB, args[0], *([str(cap)] if args[0] != "estimators" else []), *args[1:]]
    with open("/dev/full", "w") as full:
        out = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    one_line_error(out, "/dev/full", "No space left on device")


def test_a_closed_pipe_ends_samples_quietly_as_a_unix_filter(write):
    cap = write("big.pcap", pcap(bulk(3000)))  # ~250 kB of CSV: more than a pipe holds
    out = subprocess.run(
        [
            "bash",
            "-o",
            "pipefail",
            "-c",
            f"{sys.executable} -m rttlab.cli.main samples {cap} | head -1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.stdout.startswith("conn,direction,time,rtt,method")
    assert out.stderr == ""
    assert out.returncode == 141  # killed by SIGPIPE, as `yes | head -1` is; never a silent 1


def test_a_scenario_file_that_is_not_utf8_is_one_line_naming_it(write):
    bad = write("latin1.toml", "name = 'caf\xe9'\n".encode("latin-1"))
    one_line_error(run("simulate", bad), str(bad), "not UTF-8")
    with pytest.raises(rttlab.ScenarioError, match="not UTF-8"):
        rttlab.simulate(bad)


def test_a_csv_with_a_utf8_byte_order_mark_keeps_its_time_column(write):
    path = write("bom.csv", b"\xef\xbb\xbftime,rtt\n1.0,0.1\n3.0,0.2\n")
    df = rttlab.read_series(path)
    np.testing.assert_allclose(df["time"], [1.0, 3.0])


def test_huge_times_and_rtts_are_clear_errors_not_clamped_or_warned(write):
    one_line_error(
        run("evaluate", write("t.csv", "time,rtt\n1e300,0.1\n")),
        "t.csv:2: field 'time': 1e300 s is outside the representable range",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy cast warning either
        with pytest.raises(
            ValueError, match=r"sample 1: rtt 1e\+11 s is outside the representable range"
        ):
            rttlab.replay(pd.DataFrame({"rtt": [0.1, 1e11]}), ["rfc6298"])
        with pytest.raises(ValueError, match=r"sample 0: time 1e\+300 s"):
            rttlab.replay(pd.DataFrame({"time": [1e300], "rtt": [0.1]}), ["rfc6298"])


def test_a_huge_bad_cell_is_echoed_cut(write):
    path = write("cell.csv", "100\n" + "y" * 1_000_000 + "\n")
    out = run("evaluate", path)
    one_line_error(out, "cell.csv:2: field 'rtt'", "(1000000 bytes) is not a number")
    assert len(out.stderr) < 300


def test_python_api_errors_name_the_argument(write):
    df = pd.DataFrame({"rtt": [0.1, 0.2, 0.15]})
    with pytest.raises(TypeError, match=r"samples must be a DataFrame .* got the path 'file.csv'"):
        rttlab.replay("file.csv", ["rfc6298"])
    with pytest.raises(TypeError, match=r"estimators\[0\] must be an estimator name .* got int 3"):
        rttlab.replay(df, [3])
    with pytest.raises(TypeError, match="path must be a capture file path .* got DataFrame"):
        rttlab.read_capture(df)
    with pytest.raises(
        TypeError, match="paths must be a list of capture files, got one path 'a.pcap'"
    ):
        rttlab.read_captures("a.pcap")
    with pytest.raises(
        TypeError,
        match=r"set must be a list of 'key.path=value' strings or a mapping, got the string 'k=v'",
    ):
        rttlab.simulate(SCENARIO, set="k=v")
