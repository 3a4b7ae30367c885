"""Docs that must match behaviour: generated tables and the README's claims."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_estimator_parameter_tables_match_the_registry():
    out = subprocess.run(
        [sys.executable, ROOT / "scripts" / "gen_estimator_docs.py", "--check"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr


def test_the_readme_quick_start_has_exactly_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines() if line.strip()]
    assert commands == ["pip install . && rttlab evaluate --sample", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text().splitlines()[-1]
