"""One duration rule everywhere: the command line, `--set`, scenario files, estimator parameters
and the Python API read ns/us/µs/ms/s/min/h alike; `--set` errors name the `--set` argument and
speak the scenario's language."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import rttlab
from rttlab import _core, units

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"
RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("250ns", 250e-9),
        ("250us", 250e-6),
        ("250µs", 250e-6),
        ("200ms", 0.2),
        ("1.5 s", 1.5),
        ("0.2", 0.2),
        ("2min", 120.0),
        ("1h", 3600.0),
    ],
)
def test_every_unit_reads_the_same_in_the_core_and_in_python(text, seconds):
    assert _core.parse_duration(text) == round(seconds * 1e9)
    assert units.seconds(text, "x") == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["2m", "1hr", "-1ms", "fast", "nan"])
def test_a_duration_that_is_not_one_is_an_error_naming_the_argument(bad):
    with pytest.raises(ValueError, match=r"^min_rto: .*ns, us, ms, s, min, h"):
        units.seconds(bad, "min_rto")


def test_the_python_api_takes_duration_text_as_the_estimators_do():
    by_text = rttlab.evaluate(
        rttlab.sample_path(),
        ["rfc6298", "linux"],
        min_rto="200ms",
        tick="4ms",
        timer_granularity="0s",
    )
    by_number = rttlab.evaluate(
        rttlab.sample_path(), ["rfc6298", "linux"], min_rto=0.2, tick=0.004, timer_granularity=0.0
    )
    assert by_text.settings == by_number.settings
    assert [r["mae_s"] for r in by_text.rows] == [r["mae_s"] for r in by_number.rows]
    with pytest.raises(ValueError, match="min_rto"):
        rttlab.evaluate(rttlab.sample_path(), ["rfc6298"], min_rto="soon")


def test_replay_takes_duration_text_too():
    a = rttlab.replay([0.1, 0.12, 0.11, 0.3], ["rfc6298"], min_rto="200ms")
    b = rttlab.replay([0.1, 0.12, 0.11, 0.3], ["rfc6298"], min_rto=0.2)
    assert a.scores.equals(b.scores)


def test_set_takes_an_hour_long_run():
    text = SCENARIO.read_text()
    assert 'duration = "3600s"' in _core.resolve_scenario(text, ["simulation.duration=1h"])
    assert 'duration = "90s"' in _core.resolve_scenario(text, ["simulation.duration=1.5min"])


def test_the_cli_reads_minutes_and_hours_in_its_duration_options():
    from rttlab.cli.common import parse_duration

    assert parse_duration("1h", "--tick") == 3600.0
    assert parse_duration("2min", "--tick") == 120.0


def test_a_bare_number_on_the_command_line_is_refused_with_the_units_it_may_have_meant():
    out = run("evaluate", "--sample", "--min-rto", "200")
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "--min-rto: '200' has no unit; did you mean 200ms or 200s?" in last
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "override,says",
    [
        ("tcp.init_cwnd=abc", '--set tcp.init_cwnd=abc: expected a whole number ≥ 0, got "abc"'),
        ("tcp.init_cwnd=-1", "--set tcp.init_cwnd=-1: expected a whole number ≥ 0, got -1"),
        (
            "simulation.duration=3 parsecs",
            "--set simulation.duration=3 parsecs: expected a duration such as",
        ),
    ],
)
def test_a_bad_set_value_is_blamed_on_the_set_argument_in_the_scenarios_words(override, says):
    out = run("simulate", SCENARIO, "--set", override)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert len(line.splitlines()) == 1 and says in line, line
    assert SCENARIO.name not in line and "u32" not in line


def test_a_bad_value_in_the_file_is_still_blamed_on_the_file(write):
    bad = write("bad.toml", SCENARIO.read_text().replace("seed = 1", 'seed = "x"', 1))
    out = run("simulate", bad, "--set", "tcp.ecn=true")
    assert out.returncode == 2
    assert f"{bad}: simulation.seed: expected a whole number ≥ 0" in out.stderr.strip(), out.stderr
