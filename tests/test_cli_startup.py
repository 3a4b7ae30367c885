"""The command line starts fast because it imports what a command needs when it runs: these
check what gets imported (speed itself is measured in BENCHMARKS.md, never asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pandas", "pyarrow", "matplotlib")


def imported_by(code: str) -> set[str]:
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return {m.split(".")[0] for m in json.loads(out.stdout.strip().splitlines()[-1])}


def test_the_top_level_help_imports_no_heavy_library():
    code = "import contextlib, io\nfrom rttlab.cli.app import app\nwith contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    app(['--help'])"
    assert imported_by(code) == set()


def test_import_rttlab_is_lazy_and_the_public_api_still_works(tmp_path):
    assert imported_by("import rttlab") == set()
    code = "import rttlab\nfrom rttlab.trace.replay import METRICS\nassert callable(rttlab.replay), rttlab.replay\nprint(rttlab.replay([0.1, 0.2, 0.15], ['rfc6298'])['samples'][0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    import rttlab

    for name in rttlab.__all__:
        assert getattr(rttlab, name) is not None, name
    assert "read_capture" in dir(rttlab)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rttlab.nope  # noqa: B018


def test_the_listed_summaries_are_the_commands_own_first_lines():
    from rttlab.cli.app import COMMANDS, load_command

    for name, (_, summary) in COMMANDS.items():
        first = (load_command(name).help or "").strip().splitlines()[0]
        assert first == summary, name


def test_the_help_lists_every_command_and_each_command_still_has_its_rich_help():
    top = subprocess.run(
        [sys.executable, "-m", "rttlab.cli.main", "--help"], capture_output=True, text=True
    )
    assert top.returncode == 0
    for name in ("estimators", "evaluate", "flows", "samples", "simulate"):
        assert name in top.stdout
    sub = subprocess.run(
        [sys.executable, "-m", "rttlab.cli.main", "samples", "--help"],
        capture_output=True,
        text=True,
    )
    assert sub.returncode == 0 and "--output" in sub.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "rttlab.cli.main", "nope"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "No such command" in bad.stderr
