"""A reproduction's tables read exactly the runs its current spec plans: rerun with fewer seeds
into the same store (replications cut, as a full run cut to a smaller one), its comparison and
its `[[report]]` tables count only the current runs, though the store keeps the old ones as
members of the same sweep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
from rttlab.experiments.reproduce import Reproduction

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]

#: A cheap simulated reproduction (one flow, 2 s), its seed count filled in per run.
SPEC = """
[reproduction]
paper = "Nobody 2000"
title = "a shrinking sweep"
source = "none"
metric = "goodput_bps"
by = ["topology.bottleneck.delay"]
tolerance = 0.5

[published]
kind = "table"
[[published.values]]
point = {{ "topology.bottleneck.delay" = "10ms" }}
value = 1e7
source = "made up"

[[report]]
title = "retransmissions"
metric = "flows.retransmissions"
by = ["topology.bottleneck.delay"]

[sweep]
replications = {replications}

[grid]
"topology.bottleneck.delay" = ["10ms"]

[scenario.simulation]
duration = "2s"

[scenario.topology.bottleneck]
bandwidth = "10Mbps"
delay = "10ms"

[scenario.topology.access]
bandwidth = "100Mbps"
delay = "1ms"

[[scenario.flows]]
count = 1
"""


def reproduce(tmp_path: Path, replications: int) -> dict:
    """`rttlab reproduce shrinking --json` into one store, the spec at ``replications`` seeds (a
    sitecustomize on the path adds the file to the shipped reproductions)."""
    (tmp_path / "shrinking.toml").write_text(SPEC.format(replications=replications))
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "from pathlib import Path\n"
        "import rttlab.experiments.reproduce as r\n"
        "shipped = r._files()\n"
        f"r._files = lambda: {{**shipped, 'shrinking': Path({str(tmp_path / 'shrinking.toml')!r})}}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    r = subprocess.run(
        [
            *RTTLAB,
            "reproduce",
            "shrinking",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_a_rerun_with_fewer_seeds_into_the_same_store_compares_and_reports_only_its_own_runs(
    tmp_path: Path,
) -> None:
    first = reproduce(tmp_path, 3)
    assert first["rows"][0]["n"] == 3 and first["reports"][0]["rows"][0]["n"] == 3
    second = reproduce(tmp_path, 1)
    # The store still holds the three runs as members of the sweep ...
    with duckdb.connect(str(tmp_path / "out" / "results.duckdb"), read_only=True) as c:
        assert (
            c.execute("SELECT count(*) FROM sweep_runs WHERE sweep = 'shrinking'").fetchone()[0]
            == 3
        )
    # ... and the tables count the one run the spec plans now (seed 1, stored by the first).
    assert second["rows"][0]["n"] == 1
    assert second["reports"][0]["rows"][0]["n"] == 1


def test_stored_selects_the_planned_runs_of_the_sweep_and_their_flows() -> None:
    import pandas as pd

    class Store:
        def runs(self, name: str) -> pd.DataFrame:
            return pd.DataFrame({"hash": ["a", "b", "c"], "status": ["ok"] * 3})

        def flows(self, name: str) -> pd.DataFrame:
            return pd.DataFrame({"hash": ["a", "b", "b", "c"], "flow": [0, 0, 1, 0]})

        def stored_hashes(
            self, status: str | None = None, scenario_schema: int | None = None
        ) -> set[str]:
            # The keys the planned runs are looked up under (a store written before canonical
            # form 2 holds them under their form-1 keys: rttlab.experiments.sweep.as_stored).
            return {"a", "b", "c"}

    class Run:
        def __init__(self, h: str) -> None:
            self.hash = h
            self.scenario = None

    class Sweep:
        name = "s"
        runs = [Run("a"), Run("c"), Run("d")]  # d: planned, not run yet

    runs, flows = Reproduction(name="x", doc={}).stored(Store(), Sweep())
    assert list(runs["hash"]) == ["a", "c"] and list(flows["hash"]) == ["a", "c"]
