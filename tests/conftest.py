from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Under pytest the process environment (not os.environ) holds COLUMNS=80 by the time tests run,
# so every `rttlab` a test starts would fit its tables to 80 columns. The CLI's tables answer to
# COLUMNS (rttlab.cli.table); tests that want a width pass it (tests/test_cli_tables.py), the
# others see a pipe, as a script does.
os.unsetenv("COLUMNS")

# Started in the background by a shell without job control (`nohup … &`), the test process
# inherits SIGINT ignored, and so would every `rttlab` it starts: the Ctrl-C tests would find
# their SIGINT ignored. Python's own handler here makes children start with the default again.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def shared() -> Path:
    """../shared beside the clone (real captures and RTT series); skipped where a user has none."""
    if not SHARED.is_dir():
        pytest.skip(f"no shared data at {SHARED} (CI always has it; a user's clone may not)")
    return SHARED


@pytest.fixture
def write(tmp_path: Path):
    """Write a small input file and return its path."""

    def _write(name: str, content: str | bytes) -> Path:
        p = tmp_path / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        return p

    return _write


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def nunes_wired_quick(tmp_path_factory):
    """`rttlab reproduce nunes-wired --quick` with its parts (nunes-wired-trace, nunes-wired-paths),
    run once per session for tests/test_nunes_wired.py and tests/test_nunes_paths.py: the output
    directory (results.duckdb, figures/) and the printed JSON."""
    import json
    import subprocess

    out = tmp_path_factory.mktemp("nunes-wired")
    cmd = [
        sys.executable,
        "-c",
        "from rttlab.cli.main import main; main()",
        "reproduce",
        "nunes-wired",
        "--quick",
        "--workers",
        "2",
        "--out",
        str(out),
        "--figures",
        str(out / "figures"),
        "--json",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return out, json.loads(r.stdout)
