"""`rttlab report`: the HTML opened in headless Chromium (Debian package `chromium`, `make test-deps`)
at 1400 and 900 px renders without console messages or horizontal overflow, is self-contained,
labels every figure's axes in words, sorts numeric parameters as numbers, and shows the store's
numbers (checked against SQL over the DuckDB file)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="chromium is not installed (make test-deps installs it; CI has it)",
)

BW = "topology.bottleneck.bandwidth"
PER = "topology.bottleneck.error.per"

#: Appended to a copy of the page: measures what overflows the viewport, and any figure text cut
#: by its own SVG's edge, into an attribute the dumped DOM carries.
PROBE = """<script>
(function () {
  var w = window.innerWidth, bad = [], cut = [];
  document.querySelectorAll("body *").forEach(function (e) {
    var inSvg = e.closest("svg") && e.tagName.toLowerCase() !== "svg";
    var r = e.getBoundingClientRect();
    if (!inSvg && r.width > 0 && r.right > w + 0.5) bad.push(e.tagName + "." + (e.getAttribute("class") || ""));
    if (e.tagName.toLowerCase() === "text" && e.textContent.trim()) {
      var s = e.closest("svg").getBoundingClientRect();
      if (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1) cut.push(e.textContent.trim());
    }
  });
  document.body.setAttribute("data-probe", JSON.stringify({scroll: document.documentElement.scrollWidth, inner: w, bad: bad.slice(0, 10), cut: cut.slice(0, 10)}));
})();
</script>"""


def open_in_chromium(page: Path, width: int = 1400) -> tuple[str, list[str]]:
    """The DOM after scripts ran, and every console message the page produced."""
    r = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},900",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, [line for line in r.stderr.splitlines() if ":CONSOLE" in line]


def probe(page: Path, width: int) -> dict:
    copy = page.with_name(f"probe-{width}.html")
    copy.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom, _ = open_in_chromium(copy, width)
    return json.loads(re.search(r'data-probe="([^"]*)"', dom).group(1).replace("&quot;", '"'))


class Numbers(HTMLParser):
    """data-key → data-value of every number shown (in page order), external references, and the
    text of every element whose id marks an axis label."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, float] = {}
        self.order: list[str] = []
        self.external: list[str] = []
        self.labels: dict[str, str] = {}
        self._label: str | None = None
        self.figures: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a:
            self.values[a["data-key"]] = float(a["data-value"])
            self.order.append(a["data-key"])
        for k in ("src", "href"):
            if a.get(k) and not a[k].startswith("#"):
                self.external.append(f"{tag} {k}={a[k]}")
        if tag == "link":
            self.external.append("link")
        if tag == "figure":
            self.figures.append(a.get("id", ""))
        if re.search(r"-(x|y)label-\d+$", a.get("id") or ""):
            self._label = a["id"]
            self.labels[a["id"]] = ""

    def handle_data(self, data):
        if self._label is not None:
            self.labels[self._label] += data

    def handle_endtag(self, tag):
        if tag == "g":
            self._label = None


def series_files(directory: Path, n: int = 3, samples: int = 300) -> None:
    rng = np.random.default_rng(7)
    for i in range(n):
        rtt = 50 + 5 * i + rng.gamma(2.0, 2.0, samples)
        rtt[rng.random(samples) < 0.02] += 300
        (directory / f"series{i}.csv").write_text("\n".join(f"{x:.3f}" for x in rtt) + "\n")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("report")
    scenario = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"
    (out / "bw.toml").write_text(
        f"""
[sweep]
name = "bw"
scenario = "{scenario}"
replications = 2
[set]
"simulation.duration" = "2s"
[grid]
"{BW}" = ["20Mbps", "5Mbps", "10Mbps"]
"tcp.cc" = ["newreno", "vegas"]
"""
    )
    (out / "loss.toml").write_text(
        f"""
[sweep]
name = "loss"
scenario = "{scenario}"
[set]
"simulation.duration" = "2s"
"topology.bottleneck.error.kind" = "bernoulli"
[grid]
"{PER}" = [0.0, 0.01, 1.5]
"""
    )
    (out / "data").mkdir()
    series_files(out / "data")
    # linux.rto_min is linux's own parameter: NULL on the other estimators' runs.
    (out / "est.toml").write_text(
        '[sweep]\nname = "est"\n[evaluate]\ninputs = ["data/*.csv"]\nestimators = ["rfc6298", "linux", "quic"]\n[grid]\n"linux.rto_min" = ["5ms", "200ms"]\n'
    )
    db = out / "results.duckdb"
    for name in ("bw", "loss", "est"):
        r = subprocess.run(
            [*RTTLAB, "sweep", str(out / f"{name}.toml"), "--workers", "1", "--store", str(db)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode in (0, 1), r.stderr  # loss's 1.5 fails on purpose
    r = subprocess.run(
        [*RTTLAB, "reproduce", "mathis", "--quick", "--workers", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    page = out / "report.html"
    r = subprocess.run(
        [*RTTLAB, "report", str(db), "-o", str(page)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return page, db


@pytest.fixture(scope="module")
def shown(report) -> Numbers:
    page, _ = report
    dom, _ = open_in_chromium(page)
    parser = Numbers()
    parser.feed(dom)
    return parser


def test_the_console_check_catches_a_page_that_logs_an_error(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><script>console.error("broken"); missing();</script></body></html>'
    )
    _, console = open_in_chromium(bad)
    assert any("broken" in line for line in console) and any("missing" in line for line in console)


def test_the_overflow_probe_catches_a_table_wider_than_the_window(tmp_path):
    wide = tmp_path / "wide.html"
    wide.write_text(
        "<!DOCTYPE html><html><body><table><tr>"
        + "<td>wwwwwwwwwwww</td>" * 200
        + "</tr></table></body></html>"
    )
    assert probe(wide, 900)["scroll"] > 900


@pytest.mark.parametrize("width", [1400, 900])
def test_the_report_fits_the_window_without_console_messages_or_cut_labels(report, width):
    page, _ = report
    _, console = open_in_chromium(page, width)
    assert console == []
    p = probe(page, width)
    assert p["inner"] == width
    assert p["scroll"] <= width and p["bad"] == [], p
    assert p["cut"] == [], p  # no title or tick label runs past its figure's edge


def test_the_report_is_self_contained(report):
    page, _ = report
    parser = Numbers()
    parser.feed(page.read_text())
    assert parser.external == []  # no stylesheet, script, image or font from elsewhere


def test_every_figure_has_both_axes_labelled_in_words(shown):
    assert (
        len(shown.figures) >= 8
    )  # mathis; bw: goodput, utilisation, drops, timeouts; loss; est: front + metrics
    for fig in shown.figures:
        for axis in ("x", "y"):
            label = shown.labels.get(f"{fig}-{axis}label-0", "").strip()
            assert label, f"{fig}: no {axis} axis label"
            assert not re.search(r"[a-z]+_[a-z]+", label), f"{fig}: raw column name {label!r}"
    labels = {v.strip() for v in shown.labels.values()}
    assert {
        "bottleneck bandwidth (Mb/s)",
        "aggregate goodput (Mb/s)",
        "mean wait W after a loss (s), log scale",
    } <= labels


def test_numeric_parameters_are_sorted_as_numbers(shown):
    points = [
        k.split("|")[1]
        for k in shown.order
        if k.startswith("bw|") and k.endswith("|goodput_bps|mean")
    ]
    bandwidths = list(
        dict.fromkeys(re.search(rf"{re.escape(BW)}=(\w+)", p).group(1) for p in points)
    )
    assert bandwidths == ["5Mbps", "10Mbps", "20Mbps"]


def test_an_evaluate_sweep_shows_its_pareto_front_and_its_inputs_not_seeds(report):
    page, _ = report
    text = page.read_text()
    section = text[text.index('id="sweep-est"') :]
    section = section[: section.index("<h2", 10)] if "<h2" in section[10:] else section
    assert "Pareto" in section and "mean wait W after a loss (s), log scale" in section
    assert "3 input files" in section and "seeds ;" not in text and "seeds ," not in text


def test_an_evaluate_sweep_pairs_each_estimator_with_rfc6298_file_by_file_and_no_mae_interval_goes_below_zero(
    report, shown
):
    _, db = report
    values = shown.values
    with duckdb.connect(str(db), read_only=True) as c:
        # The paired table: per input file, this estimator's MAE minus RFC 6298's, averaged — SQL here.
        pairs = c.execute(
            "WITH s AS (SELECT runs.estimator AS est, runs.\"linux.rto_min\" AS rto_min, runs.name AS file, mae_s FROM runs JOIN sweep_runs USING (hash) JOIN scores USING (hash) WHERE sweep_runs.sweep = 'est') "
            "SELECT a.est, a.rto_min, count(*), avg(a.mae_s - b.mae_s) FROM s a JOIN s b ON a.file = b.file AND b.est = 'rfc6298' WHERE a.est <> 'rfc6298' GROUP BY 1, 2"
        ).fetchall()
        assert len(pairs) == 3  # linux at two floors, quic
        for est, rto_min, n, mean in pairs:
            point = f"estimator={est}" + (f", linux.rto_min={rto_min}" if rto_min else "")
            assert n == 3 and values[f"est|{point}|mae_s|paired|mean"] == pytest.approx(
                mean, rel=1e-9, abs=1e-15
            )
    assert (
        "est|estimator=rfc6298|mae_s|paired|mean" not in values
    )  # the baseline is not compared with itself
    lows = [v for k, v in values.items() if k.startswith("est|") and k.endswith("|mae_s|ci_low")]
    assert len(lows) == 4 and min(lows) >= 0  # bootstrap over the files: within the values


def test_every_number_shown_equals_the_stores(report, shown):
    _, db = report
    values = shown.values
    checked = 0
    with duckdb.connect(str(db), read_only=True) as c:
        # Sweep tables: mean and Student-t half width of each metric per point, from SQL here.
        for bw, cc, n, mean, sd in c.execute(
            f'SELECT "{BW}", "tcp.cc", count(*), avg(goodput_bps), stddev_samp(goodput_bps) FROM runs JOIN sweep_runs USING (hash) '
            "WHERE sweep_runs.sweep = 'bw' AND status = 'ok' GROUP BY 1, 2"
        ).fetchall():
            key = f"bw|{BW}={bw}, tcp.cc={cc}|goodput_bps"
            assert values[f"{key}|mean"] == pytest.approx(mean, rel=1e-12)
            if sd:
                assert values[f"{key}|half_width"] == pytest.approx(
                    stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n), rel=1e-9
                )
            checked += 1
        for est, rto_min, mean in c.execute(
            "SELECT runs.estimator, runs.\"linux.rto_min\", avg(mae_s) FROM runs JOIN sweep_runs USING (hash) JOIN scores USING (hash) WHERE sweep_runs.sweep = 'est' GROUP BY 1, 2"
        ).fetchall():
            point = f"estimator={est}" + (f", linux.rto_min={rto_min}" if rto_min else "")
            assert values[f"est|{point}|mae_s|mean"] == pytest.approx(mean, rel=1e-12)
            checked += 1
        ok, failed = c.execute(
            "SELECT count(*) FILTER (status = 'ok'), count(*) FILTER (status <> 'ok') FROM runs JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = 'loss'"
        ).fetchone()
        assert (values["loss|runs|ok"], values["loss|runs|failed"]) == (ok, failed) == (2, 1)
        # Reproduction table: exactly the comparisons table, the interval as its half width.
        for point, metric, ours, lo, hi, published in c.execute(
            "SELECT point, metric, ours, ci_low, ci_high, published FROM comparisons"
        ).fetchall():
            key = f"mathis-quick|{point}|{metric}"
            assert (values[f"{key}|ours"], values[f"{key}|published"]) == (ours, published)
            assert values[f"{key}|half_width"] == pytest.approx((hi - lo) / 2, rel=1e-12)
            checked += 1
    assert checked == 6 + 4 + 2


def test_the_text_a_reader_sees_is_the_stored_number_to_three_significant_figures(report):
    page, _ = report
    text = page.read_text()
    m = re.search(
        r'data-key="bw\|[^"]*5Mbps, tcp.cc=newreno\|goodput_bps\|mean" data-value="([^"]+)">([^<]+)<',
        text,
    )
    assert m and m.group(2) == f"{float(m.group(1)) / 1e6:#.3g}".rstrip(".")


def test_a_tolerance_is_shown_as_stored_absolute_in_the_metrics_unit():
    from rttlab.experiments.report import tolerance_text

    assert (
        tolerance_text({"tolerance": 1.0, "tolerance_kind": "absolute"}, 1.0) == "± 1.00 (absolute)"
    )
    assert tolerance_text({"tolerance": 0.15, "tolerance_kind": "relative"}, 1.0) == "± 15.0 %"
    assert (
        tolerance_text({"tolerance": 0.15, "tolerance_kind": None}, 1.0) == "± 15.0 %"
    )  # a store older than the column


def test_a_simulation_sweep_on_the_same_seeds_is_paired_seed_by_seed(report, shown):
    _, db = report
    values = shown.values
    with duckdb.connect(str(db), read_only=True) as c:
        # Each point minus the 5 Mb/s point of the same congestion control, seed by seed — SQL here.
        q = (
            f"WITH s AS (SELECT \"{BW}\" AS bw, \"tcp.cc\" AS cc, seed, goodput_bps AS g FROM runs JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = 'bw' AND status = 'ok') "
            "SELECT a.bw, a.cc, count(*), avg(a.g - b.g) FROM s a JOIN s b ON a.cc = b.cc AND a.seed = b.seed AND b.bw = '5Mbps' WHERE a.bw <> '5Mbps' GROUP BY 1, 2"
        )
        pairs = c.execute(q).fetchall()
    assert len(pairs) == 4  # 10 and 20 Mb/s × two congestion controls
    for bw, cc, n, mean in pairs:
        assert n == 2 and values[
            f"bw|{BW}={bw}, tcp.cc={cc}|goodput_bps|paired|mean"
        ] == pytest.approx(mean, rel=1e-9, abs=1e-6)
    assert not any(
        k.startswith(f"bw|{BW}=5Mbps") and "|paired|" in k for k in values
    )  # the baseline itself
    assert not any(
        k.startswith("loss|") and "|paired|" in k for k in values
    )  # one seed: nothing to pair


def test_a_reproduction_page_names_its_paper_and_title_and_gives_every_claim_a_verdict(report):
    page, db = report
    text = page.read_text()
    with duckdb.connect(str(db), read_only=True) as c:
        title, paper, name = c.execute(
            "SELECT title, paper, name FROM reproductions WHERE reproduction = 'mathis-quick'"
        ).fetchone()
        claims, matched = c.execute(
            "SELECT count(*), count(*) FILTER (matched) FROM comparisons WHERE reproduction = 'mathis-quick'"
        ).fetchone()
    assert name == "mathis" and paper == "Mathis, Semke, Mahdavi & Ott 1997"
    section = text[text.index('id="reproduction-mathis-quick"') :]
    section = section[: section.index("<h2", 10)]
    import html as html_

    assert html_.escape(title, quote=True) in section and paper.replace("&", "&amp;") in section
    assert (
        section.count('<td class="yes">matched</td>') == matched
        and section.count('<td class="no">not matched</td>') == claims - matched
    )


def test_a_store_written_before_the_reproductions_table_still_reports_its_comparison(
    report, tmp_path
):
    from rttlab.experiments.report import render
    from rttlab.experiments.store import Store

    _, db = report
    old = tmp_path / "old.duckdb"
    shutil.copy(db, old)
    with duckdb.connect(str(old)) as c:
        c.execute("DROP TABLE reproductions")
    with Store(old, read_only=True) as s:
        text = render(s)
    assert 'id="reproduction-mathis-quick"' in text and "published vs ours" in text


def test_a_reproduction_read_two_ways_shows_each_reading_and_every_claim_under_each(tmp_path):
    """No runs needed: the comparisons of two readings and their `reproductions` rows, as
    `rttlab reproduce` stores them, rendered into one section."""
    from rttlab.experiments.report import render
    from rttlab.experiments.reproduce import Reproduction
    from rttlab.experiments.store import Store

    rep = Reproduction.load("spectcp-table3", quick=True)
    rep.doc = {
        **rep.doc,
        "reading": [
            {"name": "a", "primary": True, "what": "the window as sent", "says": "§1: 'x'"},
            {"name": "b", "what": "the window as acked", "says": "§2: 'y'"},
        ],
    }
    row = {
        "point": "claim: q",
        "metric": "drops",
        "published": 4.0,
        "source": "Table 3",
        "ci_low": 3.0,
        "ci_high": 5.0,
        "n": 3,
        "tolerance": 0.1,
        "tolerance_kind": "relative",
    }
    with Store(tmp_path / "r.duckdb") as s:
        for x, ours, matched in zip(rep.readings, (4.1, 6.0), (True, False)):
            s.write_comparison(x.comparison_name, [{**row, "ours": ours, "matched": matched}])
            s.write_reproduction(
                x.record(
                    [
                        {
                            "title": "ours alone",
                            "metric": "drops",
                            "rows": [
                                {"point": "p", "ours": 2.0, "ci_low": None, "ci_high": None, "n": 3}
                            ],
                        }
                    ]
                    if x.primary
                    else []
                )
            )
    with Store(tmp_path / "r.duckdb", read_only=True) as s:
        stored = s.query(
            "SELECT reproduction, name, paper, reading, primary_reading, reading_says FROM reproductions ORDER BY 1"
        ).to_dict("records")
        text = render(s)
    assert [
        (r["reproduction"], r["reading"], r["primary_reading"], r["reading_says"]) for r in stored
    ] == [
        ("spectcp-table3-quick@a", "a", True, "§1: 'x'"),
        ("spectcp-table3-quick@b", "b", False, "§2: 'y'"),
    ]
    assert (
        stored[0]["paper"] == "Bai, Lilja & Atiquzzaman 2009"
        and stored[0]["name"] == "spectcp-table3"
    )
    assert text.count('<h2 id="reproduction-') == 1  # both readings in one section
    section = text[text.index('<h2 id="reproduction-spectcp-table3-quick"') :]
    assert (
        "Bai, Lilja &amp; Atiquzzaman 2009" in section
        and "★ <strong>a</strong>: the window as sent" in section
    )
    assert (
        section.count('<td class="yes">matched</td>') == 1
        and section.count('<td class="no">not matched</td>') == 1
    )
    assert 'data-key="spectcp-table3-quick@b|claim: q|drops|ours" data-value="6.0"' in section
    assert (
        "ours alone (ours; nothing published to compare)" in section
        and 'data-key="spectcp-table3-quick@a|report:ours alone|p|ours"' in section
    )
