"""`rttlab flows`, `rttlab samples` and `rttlab evaluate` read plain argument lists without typer
(`rttlab.cli.direct`); these check that such a list makes exactly the call typer would make, that
every other list is left to typer, and that a plain run imports no typer."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rttlab.cli import capture, direct
from rttlab.cli import evaluate as evaluate_cli
from rttlab.cli.app import load_command

SHARED = Path(__file__).resolve().parents[2] / "shared" / "captures"


def bound(function, args, kwargs) -> dict:
    """The call's arguments by name, defaults filled in, sequences as lists."""
    call = inspect.signature(function).bind(*args, **kwargs)
    call.apply_defaults()
    return {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in call.arguments.items()}


def calls(argv: list[str], monkeypatch) -> tuple[dict | None, dict | Exception]:
    """(the direct reader's call or None, typer's call or its parse error) for one list."""
    made: list[dict] = []
    for module, name in ((capture, "flows"), (capture, "samples"), (evaluate_cli, "evaluate")):
        function = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=function, **k: made.append(bound(_f, a, k)))
    fast = direct.read(argv)
    if fast is not None:
        fast()
    ours = made.pop() if fast is not None else None
    command = load_command(argv[0])
    try:
        with command.make_context(argv[0], list(argv[1:])) as ctx:
            command.invoke(ctx)
        theirs: dict | Exception = made.pop()
    except Exception as e:  # click's usage errors (and --help's exit)
        theirs = e
    monkeypatch.undo()
    return ours, theirs


PLAIN = [
    ["samples", "a.pcap"],
    ["samples", "a.pcap", "b.pcapng", "-o", "s.parquet", "--method", "ts"],
    [
        "samples",
        "--output=s.csv",
        "a.pcap",
        "-m",
        "seq",
        "--flow",
        "3",
        "--flow=0",
        "--include-ambiguous",
    ],
    [
        "samples",
        "a.pcap",
        "--path",
        "--flow",
        "12",
        "--threads",
        "2",
        "-o",
        "x.jsonl",
        "-o",
        "y.csv",
    ],
    ["samples", "a.pcap", "--method=all", "--threads=1", "--path", "--path"],
    ["flows", "a.pcap", "--json"],
    ["flows", "--threads", "4", "a.pcap", "b.pcap"],
    ["flows", "a.pcap", "--json", "--threads=0"],
    ["evaluate", "a.csv"],
    ["evaluate", "a.csv", "-e", "rfc6298"],
    ["evaluate", "--estimators=rfc6298,linux", "a.csv", "--json", "--sort", "wait_mean_s"],
    [
        "evaluate",
        "a.pcap",
        "-p",
        "fixed-share.eta=2",
        "--param=linux.hz=250",
        "--tick",
        "4ms",
        "--min-rto=200ms",
    ],
    [
        "evaluate",
        "a.csv",
        "--unit",
        "us",
        "--timer-granularity",
        "500ms",
        "--timestamps",
        "--no-timestamps",
        "--plot",
        "f.png",
    ],
    ["evaluate", "--sample", "-e", "last"],
    ["evaluate"],
    ["evaluate", "a.csv", "b.pcap", "--columns", "time=t,rtt=rtt_ms", "--csv"],
    ["evaluate", "--columns=rtt=lat", "a.csv"],
]

LEFT_TO_TYPER = [
    ["samples"],
    ["samples", "--help"],
    ["samples", "a.pcap", "--help"],
    ["samples", "a.pcap", "-os.csv"],
    ["samples", "a.pcap", "-o=s.csv"],
    ["samples", "a.pcap", "--threads", "2.0"],
    ["samples", "a.pcap", "--threads", "+2"],
    ["samples", "a.pcap", "--flow", "-1"],
    ["samples", "a.pcap", "--flow"],
    ["samples", "a.pcap", "--pat"],
    ["samples", "--", "a.pcap"],
    ["samples", "-"],
    ["samples", "a.pcap", "--json"],
    ["flows", "a.pcap", "--json=yes"],
    ["flows", "a.pcap", "--method", "ts"],
    ["evaluate", "a.csv", "-e"],
    ["evaluate", "a.csv", "--timestamps=yes"],
    ["evaluate", "a.csv", "--help"],
    ["estimators"],
    [],
]


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_argument_list_makes_the_call_typer_makes(argv, monkeypatch):
    ours, theirs = calls(argv, monkeypatch)
    assert ours is not None
    assert ours == theirs


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=lambda a: " ".join(a) or "(none)")
def test_every_other_argument_list_is_left_to_typer(argv):
    assert direct.read(argv) is None


TOKENS = st.sampled_from(
    [
        "a.pcap",
        "b.pcap",
        "s.csv",
        "3",
        "0",
        "12",
        "-1",
        "2.0",
        "seq",
        "all",
        "",
        "x=y",
        "-",
        "--",
        "--help",
        "-o",
        "-m",
        "--output",
        "--method",
        "--flow",
        "--threads",
        "--json",
        "--path",
        "--include-ambiguous",
        "--output=o.parquet",
        "--threads=2",
        "--flow=7",
        "--method=ts",
        "--json=1",
        "-o=z",
        "--thread",
    ]
)


EVALUATE_TOKENS = st.sampled_from(
    [
        "a.csv",
        "b.pcap",
        "rfc6298",
        "linux,last",
        "4ms",
        "-x",
        "",
        "--",
        "--help",
        "-e",
        "-p",
        "--estimators",
        "--param",
        "--unit",
        "--tick",
        "--min-rto",
        "--timer-granularity",
        "--timestamps",
        "--no-timestamps",
        "--sort",
        "--json",
        "--plot",
        "--sample",
        "--estimators=quic",
        "-e=quic",
        "--json=1",
        "--tick=1ms",
        "fixed-share.eta=2",
    ]
)


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(EVALUATE_TOKENS, max_size=8))
def test_whatever_the_direct_reader_accepts_of_evaluate_typer_reads_the_same_way(tokens):
    with pytest.MonkeyPatch.context() as monkeypatch:
        ours, theirs = calls(["evaluate", *tokens], monkeypatch)
    if ours is not None:
        assert ours == theirs, tokens


@settings(max_examples=300, deadline=None)
@given(command=st.sampled_from(["flows", "samples"]), tokens=st.lists(TOKENS, max_size=8))
def test_whatever_the_direct_reader_accepts_typer_reads_the_same_way(command, tokens):
    with pytest.MonkeyPatch.context() as monkeypatch:
        ours, theirs = calls([command, *tokens], monkeypatch)
    if ours is not None:
        assert ours == theirs, tokens


def test_the_direct_reader_knows_each_commands_options_and_no_other():
    kinds = {
        True: {direct.FLAG},
        False: {direct.INT, direct.INTS, direct.TEXT, direct.TEXTS, direct.PATH},
    }
    for name, spec in direct.COMMANDS.items():
        options = [p for p in load_command(name).params if p.param_type_name == "option"]
        assert {o for p in options for o in (*p.opts, *p.secondary_opts)} == set(spec), name
        for p in options:
            for token in p.opts:
                parameter, kind = spec[token]
                assert parameter == p.name, token
                assert kind in kinds[bool(p.is_flag)], token
                assert (kind in (direct.INTS, direct.TEXTS)) == p.multiple, token
            for token in p.secondary_opts:  # --no-timestamps
                assert spec[token] == (p.name, direct.FLAG_OFF), token


def test_a_plain_capture_command_runs_without_importing_typer_typing_or_json(tmp_path):
    capture_file = SHARED / "zeek-tcprs_rto001.pcap"
    if not capture_file.exists():
        pytest.skip(f"{capture_file} is missing (../shared/captures is not beside this clone)")
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('typer imported: %s\\n' % ('typer' in sys.modules)))\n"
        "started = set(sys.modules)\n"  # the interpreter's own start (site, .pth files) may import them
        "atexit.register(lambda: sys.stderr.write('typing or json imported: %s\\n' % bool({'typing', 'json'} & (set(sys.modules) - started))))\n"
        "from rttlab.cli.main import main\n"
        "sys.argv = ['rttlab', *sys.argv[1:]]\n"
        "main()\n"
    )
    out = tmp_path / "s.csv"
    plain = subprocess.run(
        [sys.executable, "-c", probe, "samples", str(capture_file), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert plain.returncode == 0, plain.stderr
    assert "typer imported: False" in plain.stderr
    # Each costs milliseconds of every run's start (typing ≈ 3.4 ms, json ≈ 1.7 ms): imported
    # where used, behind `TYPE_CHECKING = False` for annotations.
    assert "typing or json imported: False" in plain.stderr
    assert out.read_text().startswith("conn,direction,time,rtt")
    helped = subprocess.run(
        [sys.executable, "-c", probe, "samples", "--help"], capture_output=True, text=True
    )
    assert helped.returncode == 0 and "--include-ambiguous" in helped.stdout
    assert "typer imported: True" in helped.stderr
    misspelt = subprocess.run(
        [sys.executable, "-c", probe, "flows", str(capture_file), "--jsn"],
        capture_output=True,
        text=True,
    )
    assert misspelt.returncode == 2 and "No such option" in misspelt.stderr


def test_a_plain_evaluate_of_a_series_imports_neither_typer_numpy_nor_pandas(tmp_path):
    series = tmp_path / "s.csv"
    series.write_text("".join(f"{50 + i % 7}.25\n" for i in range(2000)))
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('imported: %s\\n' % sorted({'typer', 'numpy', 'pandas'} & set(sys.modules))))\n"
        "from rttlab.cli.main import main\n"
        "sys.argv = ['rttlab', *sys.argv[1:]]\n"
        "main()\n"
    )
    for extra in ([], ["--json"]):
        plain = subprocess.run(
            [sys.executable, "-c", probe, "evaluate", str(series), "-e", "rfc6298,linux", *extra],
            capture_output=True,
            text=True,
        )
        assert plain.returncode == 0, plain.stderr
        assert "imported: []" in plain.stderr, plain.stderr
        assert "rfc6298" in plain.stdout and "linux" in plain.stdout
