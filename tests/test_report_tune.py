"""`rttlab report` on a tuning store (`rttlab tune --store`): the fronts figure (one colour per
estimator, defaults hollow, the recommendation marked), the recommendation and each estimator's
defaults beside its best point meeting the target — equal to SQL over the store — in headless
Chromium at 1400 and 900 px without overflow or console messages."""

from __future__ import annotations

import re
import subprocess
import sys

import duckdb
import numpy as np
import pytest
from test_report import CHROMIUM, Numbers, open_in_chromium, probe  # noqa: F401 - the page checks

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (make test-deps installs it; CI has it)"
)


def spiky(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    rtt = 100 + rng.normal(0, 5, n).clip(-15, 15)
    spikes = rng.random(n) < 0.04
    rtt[spikes] *= rng.uniform(2, 4, spikes.sum())
    return "\n".join(f"{x:.3f}" for x in rtt)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    out = tmp_path_factory.mktemp("tuned")
    for i in range(2):
        (out / f"s{i}.csv").write_text(spiky(500, i + 1))
    db = out / "tune.duckdb"
    r = subprocess.run(
        [
            *RTTLAB,
            "tune",
            out / "s0.csv",
            out / "s1.csv",
            "-e",
            "rfc6298,linux,constant",
            "--budget",
            "40",
            "-t",
            "2%",
            "--validate",
            "--store",
            db,
            "--name",
            "tv",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    page = out / "report.html"
    r = subprocess.run(
        [*RTTLAB, "report", db, "-o", page], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    dom, console = open_in_chromium(page)
    parser = Numbers()
    parser.feed(dom)
    return page, db, parser, console


@pytest.mark.parametrize("width", [1400, 900])
def test_a_tuning_report_fits_the_window_without_console_messages(tuned, width):
    page, _, _, _ = tuned
    _, console = open_in_chromium(page, width)
    assert console == []
    p = probe(page, width)
    assert p["scroll"] <= width and p["bad"] == [] and p["cut"] == [], p


def test_the_fronts_figure_has_its_axes_labelled_and_marks_defaults_and_the_recommendation(tuned):
    page, _, shown, _ = tuned
    assert len(shown.figures) == 1  # the validation's own sweep is summed up, not a section
    fig = shown.figures[0]
    assert shown.labels[f"{fig}-xlabel-0"].strip() == "bad-timeout rate (%)"
    assert (
        shown.labels[f"{fig}-ylabel-0"]
        .strip()
        .startswith("mean wait W after a loss (ms), log scale")
    )
    text = page.read_text()
    assert (
        "defaults (hollow)" in text and "recommendation" in text and "Held-out validation" in text
    )
    from rttlab.palette import colour

    svg = text[text.index("<svg") : text.index("</svg>")]
    for name in ("rfc6298", "linux", "constant"):  # each estimator in its own colour, as everywhere
        assert colour(name).lower() in svg.lower()


def test_the_recommendation_and_each_estimators_numbers_equal_sql_over_the_store(tuned):
    _, db, shown, _ = tuned
    v = shown.values
    with duckdb.connect(str(db), read_only=True) as c:
        points = "FROM runs r JOIN scores sc USING (hash) JOIN sweep_runs s USING (hash) WHERE s.sweep = 'tv' AND r.status = 'ok'"
        (target,) = c.execute("SELECT target FROM tunings WHERE sweep = 'tv'").fetchone()
        assert v["tv|target|bad_timeout_rate"] == target == 0.02
        # The recommendation: the smallest W among the points meeting the target.
        bad, wait, p99, mae, nbad, n = c.execute(
            f"SELECT sc.bad_timeout_rate, sc.wait_mean_s, sc.wait_p99_s, sc.mae_s, sc.bad_timeouts, sc.samples {points} AND sc.bad_timeout_rate <= {target} "
            "ORDER BY sc.wait_mean_s, sc.bad_timeout_rate LIMIT 1"
        ).fetchone()
        assert (
            v["tv|recommendation|wait_mean_s"],
            v["tv|recommendation|bad_timeout_rate"],
            v["tv|recommendation|wait_p99_s"],
            v["tv|recommendation|mae_s"],
        ) == (wait, bad, p99, mae)
        assert (v["tv|recommendation|bad_timeouts"], v["tv|recommendation|samples"]) == (nbad, n)
        checked = 0
        for est, points_n, dbad, dwait, best_wait in c.execute(
            f'SELECT r.estimator, count(*) FILTER (NOT r."default"), any_value(sc.bad_timeout_rate) FILTER (r."default"), any_value(sc.wait_mean_s) FILTER (r."default"), '
            f'min(sc.wait_mean_s) FILTER (NOT r."default" AND sc.bad_timeout_rate <= {target}) {points} GROUP BY 1'
        ).fetchall():
            key = f"tv|estimator={est}"
            assert v[f"{key}|points"] == points_n and (
                v[f"{key}|default|bad_timeout_rate"],
                v[f"{key}|default|wait_mean_s"],
            ) == (dbad, dwait)
            assert v[f"{key}|best|wait_mean_s"] == best_wait
            checked += 1
        assert checked == 3
        assert v["tv|runs|ok"] == c.execute(f"SELECT count(*) {points}").fetchone()[0]


def test_the_numbers_a_reader_sees_are_in_the_headers_units(tuned):
    page, _, _, _ = tuned
    text = page.read_text()
    m = re.search(r'data-key="tv\|recommendation\|wait_mean_s" data-value="([^"]+)">([^<]+)<', text)
    assert m and float(m.group(2)) == pytest.approx(float(m.group(1)) * 1e3, rel=5e-3)  # W in ms
