"""`rttlab reproduce regression-sanity`: Baddam et al.'s published coefficients against the
project's published predictions and sanity tables (a model-only reproduction: nothing is run)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rttlab.experiments.reproduce import Reproduction
from rttlab.papers.baddam_regression import COEFFICIENTS, SANITY

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


@pytest.fixture(scope="module")
def models():
    return Reproduction.load(SANITY).models()


def matched(model):
    return sum(r["matched"] for r in model["rows"]), len(model["rows"])


def test_the_cubic_coefficients_give_all_nine_published_predictions(models):
    cubic = models[0]
    assert "Cubic" in cubic["title"] and matched(cubic) == (9, 9)
    assert max(abs(r["ours"] - r["published"]) for r in cubic["rows"]) < 1e-9
    # An independent evaluation of one row (sky.it: 14 hops, 100.8/128.2 ms, TTL 241).
    b, _ = COEFFICIENTS["cubic"]
    assert b[0] + b[1] * 14 + b[2] * 100.8 + b[3] * 128.2 + b[4] * 241 == pytest.approx(
        112.483913568, abs=1e-9
    )


def test_reno_and_vegas_lists_come_from_the_sanity_tables_original_columns_on_six_sites_of_nine(
    models,
):
    for model, name in zip(models[1:3], ("Reno", "Vegas")):
        assert name in model["title"] and matched(model) == (6, 9)
        missed = sorted(r["params"]["site"] for r in model["rows"] if not r["matched"])
        assert missed == ["sky.it", "tiu.ru", "trademe.co.nz"]
        # Each miss is one hop count or TTL away: within |b1| + |b4| of the published value.
        b, _ = COEFFICIENTS[name.lower()]
        assert all(
            abs(r["ours"] - r["published"]) <= abs(b[1]) + abs(b[4]) + 1e-9 for r in model["rows"]
        )


def test_the_sanity_tables_are_predicted_within_the_published_mape_on_five_sites_of_nine(models):
    for model, name in zip(models[3:], ("Cubic", "Reno", "Vegas")):
        assert model["title"].startswith(f"{name} sanity table") and matched(model) == (5, 9)
        mape = sum(abs(r["diff"]) for r in model["rows"]) / 9 * 100
        assert mape == pytest.approx({"Cubic": 5.85, "Reno": 4.37, "Vegas": 4.48}[name], abs=0.01)


def test_the_cli_prints_every_table_and_writes_the_comparison_without_running_anything(tmp_path):
    r = subprocess.run(
        [*RTTLAB, "reproduce", SANITY, "--out", tmp_path],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "COLUMNS": "250"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(" of 9 matched: ") == 6 and "9 of 9 matched: Cubic" in r.stdout
    assert "(a computation: no runs)" in r.stdout
    doc = json.loads((tmp_path / "comparison.json").read_text())
    assert len(doc["models"]) == 6 and doc["rows"] == []
    assert not (tmp_path / "results.duckdb").exists()
