"""`rttlab reproduce spectcp-live --quick`: rttlab's SpecTCP sender on real packets beside Linux's
reno and cubic on the emulated lossy link of Bai et al. §6.2, and the simulator's answer for the
same scenario (docs/reproductions/spectcp-live.md). Root-only: it skips with the testbed's own
reason where namespaces or TUN are missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rttlab.testbed import unavailable

ROOT = Path(__file__).resolve().parent.parent
REASON = unavailable()


def test_the_reproduction_declares_each_sender_with_its_stack_and_the_papers_ratios():
    from rttlab.experiments.reproduce import Reproduction

    rep = Reproduction.load("spectcp-live")
    z = rep.doc["zip"]
    assert dict(zip(z["tcp.cc"], z["flows.0.stack"])) == {
        "spectcp": "rttlab",
        "reno": "kernel",
        "cubic": "kernel",
    }
    assert rep.doc["grid"]["simulator"] == ["rttlab", "testbed"]
    values = rep.doc["published"]["values"]
    # Every published ratio is asked of the testbed and of the simulator alike.
    assert sorted(v["value"] for v in values) == [0.23, 0.23, 0.88, 0.88, 5.0, 5.0]
    assert {v["numerator"]["simulator"] for v in values} == {"rttlab", "testbed"}


@pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable here: {REASON}")
def test_spectcp_live_quick_runs_rttlabs_sender_and_linuxs_on_the_same_lossy_link(
    tmp_path: Path,
) -> None:
    import duckdb

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rttlab.cli.main",
            "reproduce",
            "spectcp-live",
            "--quick",
            "--workers",
            "2",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads((tmp_path / "comparison.json").read_text())["rows"]
    by_n = {row["point"]: row["n"] for row in rows}
    # Quick runs BER 5e-5 only: the two 5× rows (testbed, simulator) have their seed, the
    # BER-ratio rows none.
    five = [row for row in rows if row["published"] == 5.0]
    assert len(five) == 2 and all(row["n"] == 1 for row in five), by_n
    assert all(row["n"] == 0 for row in rows if row["published"] != 5.0), by_n
    sim = next(row for row in five if row["point"].startswith("simulator=rttlab"))
    # The simulator's answer is deterministic: pinned (20 s, seed 1).
    assert sim["ours"] == pytest.approx(SIM_RATIO, rel=1e-9)
    db = duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True)
    tb = db.sql("""select r."tcp.cc", f.stack, f.cc, f.goodput_bps, f.rtt_samples, f.timeouts, f.retransmissions
                   from runs r join flows f using (hash) where r.simulator = 'testbed' and r.status = 'ok' order by 1""").fetchall()
    got = {row[0]: row[1:] for row in tb}
    # Who sent each flow: rttlab's own SpecTCP sender on the wire, Linux's reno and cubic.
    assert {k: v[:2] for k, v in got.items()} == {
        "cubic": ("kernel", "linux-cubic"),
        "reno": ("kernel", "linux-reno"),
        "spectcp": ("rttlab", "spectcp"),
    }
    for cc, (_stack, _name, goodput, _samples, _timeouts, retx) in got.items():
        # Real data crossed the lossy link to a Linux receiver's application, and the bit
        # errors (34 % of data packets at BER 5e-5) made every sender resend.
        assert 0 < goodput < 64_000, (cc, goodput)
        assert retx > 0, (cc, retx)
    # rttlab's sender counts its own RTT samples and timeouts, as in simulation.
    assert got["spectcp"][3] > 0 and got["spectcp"][4] >= 1
    chans = db.sql("""select c.name, sum(c.drops_corruption) from runs r join channels c using (hash)
                      where r.simulator = 'testbed' group by 1""").fetchall()
    corrupt = dict(chans)
    assert corrupt.get("bottleneck>", 0) > 0, corrupt


#: rttlab's SpecTCP over its Reno+ECN in the simulator, BER 5e-5, 20 s, seed 1.
SIM_RATIO = 16_400 / 9_600
