"""Print one point of `rttlab reproduce nunes-live` as a plain scenario file: the reproduction's
`[scenario]` with one `[zip]` row (a path) and one `flows.0.tcp.rto` of its grid (an estimator)
applied, full size or `--quick`'s. What docs/reproductions/nunes-live.md's traces were run on:

    python scripts/nunes_live_point.py S2-wifi-sender linux > s2.toml
    rttlab testbed s2.toml --set simulation.seed=2 --json
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from rttlab.sim.scenario import Scenario

TOML = Path(__file__).resolve().parent.parent / "python/rttlab/papers/nunes_experts/nunes-live.toml"


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--quick"]
    if len(args) != 2:
        print("usage: nunes_live_point.py PATH-NAME ESTIMATOR [--quick]", file=sys.stderr)
        return 2
    name, estimator = args
    doc = tomllib.loads(TOML.read_text())
    zipped = doc["quick"]["zip"] if "--quick" in argv else doc["zip"]
    names = zipped["simulation.name"]
    rtos = {r["estimator"]: r for r in doc["grid"]["flows.0.tcp.rto"]}
    if name not in names or estimator not in rtos:
        print(
            f"nunes_live_point.py: paths are {', '.join(names)}; estimators {', '.join(rtos)}",
            file=sys.stderr,
        )
        return 2
    i = names.index(name)
    s = (
        Scenario(doc["scenario"])
        .with_({k: v[i] for k, v in zipped.items()})
        .with_({"flows.0.tcp.rto": rtos[estimator]})
    )
    sys.stdout.write(s.to_toml())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
