"""Regenerate the parameter tables in docs/estimators.md from the Rust registry.

python scripts/gen_estimator_docs.py          # rewrite docs/estimators.md in place
python scripts/gen_estimator_docs.py --check  # exit 1 if the file is out of date (a test runs this)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rttlab.estimators import catalog

DOC = Path(__file__).resolve().parent.parent / "docs" / "estimators.md"
BLOCK = re.compile(r"(<!-- params:(?P<name>[a-z0-9-]+) -->\n).*?(<!-- /params -->)", re.S)


def table(name: str) -> str:
    entry = next(e for e in catalog() if e["name"] == name)
    rows = ["| parameter | default | range | meaning |", "|---|---|---|---|"]
    rows += [
        f"| `{p['name']}` | `{p['default']}` | {p['range']} | {p['doc']} |" for p in entry["params"]
    ]
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + table(m.group("name")) + m.group(3), text)


def main() -> int:
    text = DOC.read_text()
    fresh = render(text)
    missing = {e["name"] for e in catalog()} - set(BLOCK_NAMES(text))
    if missing:
        print(
            f"docs/estimators.md has no parameter table for: {', '.join(sorted(missing))}",
            file=sys.stderr,
        )
        return 1
    if "--check" in sys.argv:
        if fresh != text:
            print(
                "docs/estimators.md is out of date: run python scripts/gen_estimator_docs.py",
                file=sys.stderr,
            )
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


def BLOCK_NAMES(text: str) -> list[str]:
    return [m.group("name") for m in BLOCK.finditer(text)]


if __name__ == "__main__":
    sys.exit(main())
