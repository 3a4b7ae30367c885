"""Docs that must match behaviour: generated tables and the README's claims."""

from __future__ import annotations

import re
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


# ---- every repository path the docs cite exists ----

# Where a path written relative to a folder (`sim/run.py`, `rttlab/trace/labels.py`, `tcp/sender.rs`)
# is looked up; a top-level path (`src/…`, `python/…`, `docs/…`) is found from the root itself.
_BASES = ("", "python", "python/rttlab", "src", "src/sim", "src/sim/tcp", "src/testbed")
_TOP = ("src", "python", "tests", "docs", "scripts", "examples", "benchmarks", "fuzz", ".ci")
# Linux's source tree (`net/ipv4/tcp_input.c`) is cited as a source, not a file of ours.
_EXTERNAL = ("net/", "include/")
_FILE = r"[\w.-]+(?:/[\w.-]+)+\.(?:rs|py|pyi|toml|md|cc|c|sh|csv|json)"
_CITED = (
    re.compile(rf"(?<![\w/.-])((?:{'|'.join(re.escape(t) for t in _TOP)})/[\w./-]*[\w/])"),
    re.compile(rf"`({_FILE})(?:[:\s`]|::)"),
)


def _placeholder(path: str) -> bool:
    """`src/rtt/NAME.rs`, `papers/PAPER/`: a shape, not a file; its folder must exist instead."""
    return any(part.split(".")[0].isupper() for part in path.split("/"))


def _docs() -> list[Path]:
    # CHANGELOG.md is history: it names files as they were when each change landed.
    return [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _ignored(path: str) -> bool:
    """Paths a documented command writes (a fuzz corpus) are ignored by git, not missing."""
    out = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, capture_output=True)
    return out.returncode == 0


def _checked(path: str) -> str | None:
    """The part of a cited path that must exist: a placeholder's folder, nothing for Linux's
    tree or a bare placeholder (`DIR/comparison.json`)."""
    if path.startswith(_EXTERNAL):
        return None
    while _placeholder(path) and "/" in path:
        path = path.rsplit("/", 1)[0]
    return None if _placeholder(path) else path


def missing_doc_paths() -> list[str]:
    missing = []
    for doc in _docs():
        name = doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            cited = dict.fromkeys(  # both patterns may find the same path: once each
                m.group(1).rstrip(".").split("::")[0] for p in _CITED for m in p.finditer(line)
            )
            for path in filter(None, map(_checked, cited)):
                if not any((ROOT / base / path).exists() for base in _BASES) and not _ignored(path):
                    missing.append(f"{name}:{number}: {path}")
    return missing


def test_every_repository_path_the_docs_cite_exists():
    assert missing_doc_paths() == []


def test_the_docs_path_check_finds_a_path_that_does_not_exist(tmp_path, monkeypatch):
    doc = tmp_path / "doc.md"
    doc.write_text(
        "See `src/sim/no_such_module.rs` and `src/rtt/NAME.rs`; `python/rttlab/sim/run.py`.\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "_docs", lambda: [doc])
    found = missing_doc_paths()
    assert len(found) == 1 and found[0].endswith(": src/sim/no_such_module.rs")
