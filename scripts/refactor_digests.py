"""Digests of what rttlab computes, for a bit-identity check across a refactoring.

    python scripts/refactor_digests.py > before.txt     # on the old commit
    python scripts/refactor_digests.py > after.txt      # on the new one
    diff before.txt after.txt                            # must print nothing

One line per output: what was run and the SHA-256 of its bytes (or of the run hashes it lists).
Covers every shipped reproduction's run keys at every scale (with and without --quick: a store
written before the change must resume with nothing to run), ``simulate --json`` on every example
scenario, ``evaluate --json`` on every RTT series of ``../shared/rtt-series``, and ``samples``
(CSV, Parquet, 1 and 2 threads) and ``flows --json`` on every capture of ``../shared/captures``.
The simulator's own event-level fingerprint is ``scripts/sim_fingerprint.sh``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def cli(*args: str) -> bytes:
    out = subprocess.run(["rttlab", *args], capture_output=True, cwd=ROOT)
    # A failing command is a digest too (its exit status and error), so a change in errors shows.
    return (
        out.stdout
        if out.returncode == 0
        else f"exit {out.returncode}: {out.stderr.decode()}".encode()
    )


def reproductions() -> None:
    from rttlab.experiments.reproduce import Reproduction, available

    for name in available():
        scales = ["full", *Reproduction.load(name).doc.get("scale", {})]
        for scale in scales:
            for quick in (False, True):
                rep = Reproduction.load(name, quick=quick, scale=scale)
                if rep.models_only:  # computes from published numbers; no runs to hash
                    continue
                hashes = sorted(r.hash for part in (rep, *rep.parts) for r in part.sweep().runs)
                print(
                    f"reproduce {name} scale={scale} quick={quick}: {len(hashes)} runs {digest(' '.join(hashes).encode())}"
                )


def main() -> None:
    reproductions()
    for scenario in sorted((ROOT / "examples").rglob("*.toml")):
        rel = scenario.relative_to(ROOT)
        print(
            f"simulate {rel}: {digest(cli('simulate', str(rel), '--set', 'simulation.duration=3s', '--json'))}"
        )
    if not SHARED.is_dir():
        print(f"(no {SHARED}: the shared series and captures were not digested)", file=sys.stderr)
        return
    for series in sorted((SHARED / "rtt-series").glob("*.csv")):
        print(f"evaluate {series.name}: {digest(cli('evaluate', str(series), '--json'))}")
    with tempfile.TemporaryDirectory() as tmp:
        for capture in sorted((SHARED / "captures").glob("*.pcap*")):
            print(f"flows {capture.name}: {digest(cli('flows', str(capture), '--json'))}")
            for threads in ("1", "2"):
                for ext in ("csv", "parquet"):
                    out = Path(tmp) / f"s.{ext}"
                    status = cli(
                        "samples",
                        str(capture),
                        "--method",
                        "all",
                        "--threads",
                        threads,
                        "-o",
                        str(out),
                    )
                    data = out.read_bytes() if out.exists() else status
                    out.unlink(missing_ok=True)
                    print(f"samples {capture.name} threads={threads} .{ext}: {digest(data)}")


if __name__ == "__main__":
    main()
