"""`rttlab report`: the HTML opened in headless Chromium (Debian package `chromium`, `make test-deps`)
renders without console messages, is self-contained, and shows the store's numbers."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="chromium is not installed (make test-deps installs it; CI has it)")

PER = "topology.bottleneck.error.per"


def open_in_chromium(page: Path) -> tuple[str, list[str]]:
    """The DOM after scripts ran, and every console message the page produced."""
    r = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, [line for line in r.stderr.splitlines() if ":CONSOLE" in line]


class Numbers(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, float] = {}
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a:
            self.values[a["data-key"]] = float(a["data-value"])
        for k in ("src", "href"):
            if a.get(k) and not a[k].startswith("#"):
                self.external.append(f"{tag} {k}={a[k]}")
        if tag == "link":
            self.external.append("link")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("report")
    spec = out / "loss.toml"
    spec.write_text(
        f"""
[sweep]
name = "loss"
scenario = "{ROOT / 'examples' / 'scenarios' / 'dumbbell-n10-droptail.toml'}"
replications = 3
[set]
"simulation.duration" = "5s"
"topology.bottleneck.error.kind" = "bernoulli"
[grid]
"{PER}" = [0.0, 0.01, 1.5]
"""
    )
    db = out / "results.duckdb"
    r = subprocess.run([*RTTLAB, "sweep", str(spec), "--workers", "1", "--store", str(db)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*RTTLAB, "reproduce", "mathis", "--quick", "--workers", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    page = out / "report.html"
    r = subprocess.run([*RTTLAB, "report", str(db), "-o", str(page)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return page, db


def test_the_console_check_catches_a_page_that_logs_an_error(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><script>console.error("broken"); missing();</script></body></html>')
    _, console = open_in_chromium(bad)
    assert any("broken" in line for line in console) and any("missing" in line for line in console)


def test_the_report_renders_in_chromium_without_console_messages(report):
    page, _ = report
    dom, console = open_in_chromium(page)
    assert console == []
    assert dom.count("<svg") >= 3  # one figure per sweep, one per reproduction
    assert "Reproduction <code>mathis-quick</code>" in dom


def test_the_report_is_self_contained(report):
    page, _ = report
    parser = Numbers()
    parser.feed(page.read_text())
    assert parser.external == []  # no stylesheet, script, image or font from elsewhere


def test_every_number_shown_equals_the_stores(report):
    page, db = report
    dom, _ = open_in_chromium(page)
    parser = Numbers()
    parser.feed(dom)
    shown = parser.values
    checked = 0
    with duckdb.connect(str(db), read_only=True) as c:
        # Sweep tables: mean and Student-t half width of each metric per point, from SQL here.
        for per, n, mean, sd in c.execute(
            f'SELECT "{PER}", count(*), avg(goodput_bps), stddev_samp(goodput_bps) FROM runs JOIN sweep_runs USING (hash) '
            "WHERE sweep_runs.sweep = 'loss' AND status = 'ok' GROUP BY 1"
        ).fetchall():
            key = f"loss|{PER}={per:.4g}|goodput_bps"
            assert shown[f"{key}|mean"] == pytest.approx(mean, rel=1e-12)
            assert shown[f"{key}|half_width"] == pytest.approx(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n), rel=1e-9, abs=1e-9)
            checked += 2
        ok, failed = c.execute("SELECT count(*) FILTER (status = 'ok'), count(*) FILTER (status <> 'ok') FROM runs JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = 'loss'").fetchone()
        assert (shown["loss|runs|ok"], shown["loss|runs|failed"]) == (ok, failed) == (6, 3)
        # Reproduction table: exactly the comparisons table.
        for point, metric, ours, lo, hi, published in c.execute("SELECT point, metric, ours, ci_low, ci_high, published FROM comparisons").fetchall():
            key = f"mathis-quick|{point}|{metric}"
            assert (shown[f"{key}|ours"], shown[f"{key}|ci_low"], shown[f"{key}|ci_high"], shown[f"{key}|published"]) == (ours, lo, hi, published)
            checked += 4
    assert checked == 2 * 2 + 2 * 4  # two loss points with runs (1.5 fails), two mathis points
    # And the rounded text the reader sees is the same number.
    text = re.search(r'data-key="loss\|topology.bottleneck.error.per=0.01\|goodput_bps\|mean" data-value="([^"]+)">([^<]+)<', dom)
    assert text and float(text.group(2)) == pytest.approx(float(text.group(1)) / 1e6, rel=1e-3)
