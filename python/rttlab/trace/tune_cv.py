"""Time-ordered cross-validation behind ``rttlab tune``'s recommendation (docs/tuning.md, "How
the recommendation is chosen").

Each input is cut into ``folds`` contiguous blocks by time (:func:`split_blocks`). Fold i holds
out block i of every input; the whole search runs on the other blocks, pooled. The candidates are

- every estimator at its defaults (0 knobs searched);
- each fold's tuned point (the recommendation of the search on that fold's other blocks; as many
  knobs as its estimator's searched space);
- each fold's one-knob floor: Linux's ``rto_min`` alone, tuned the same way (1 knob);
- with ``conformal``/``quantile-experts`` among the estimators: each fold's point with their
  ``target`` fixed to the user's target and only the step size ``eta`` searched (1 knob): do
  estimators that calibrate by construction keep the target on data they did not see?

Every candidate is replayed on every cell (one input's block). A candidate **holds** in a cell
when its bad-timeout rate there is at most the target or the target lies inside its 95 %
Clopper–Pearson interval; with ``confidence`` c, only when the one-sided Clopper–Pearson upper
bound at c is at most the target. A candidate is eligible only when it holds in every cell: a
failing cell is never averaged away by the others. Among eligible candidates, the smallest pooled
W wins, except that more knobs must earn their place: going up from the fewest knobs, the best
candidate with more knobs replaces the choice only when its W is more than :data:`TIE_MARGIN`
below it (fewer knobs: less to get wrong, less to defend). When the winner is a default —
no tuned point beats the best default by more than the margin out of sample — the answer is
"keep the default". When nothing is eligible, the answer is also to keep a default (the one
failing the fewest cells, then with the lowest worst-cell rate), said as failing.

A fold's tuned point was fitted on the other blocks, so its score there is in-sample; the cell
it did not see (its own fold) is the out-of-sample check, and the folds table shows exactly that
cell for each fold. The Clopper–Pearson interval treats samples as independent; RTTs are
autocorrelated, so the interval is too narrow: this makes "holds within its interval" harder to
claim, not easier.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rttlab.trace.estimators import spec
from rttlab.trace.replay import score
from rttlab.trace.tune_search import (
    METRIC_COLUMNS,
    Replay,
    Settings,
    Trace,
    _registry,
    combine,
    recommend,
    sentence,
    space,
    split_blocks,
    tune_trace,
    upper_bound,
)

#: More knobs must cut the held-out W by more than this fraction against fewer knobs.
TIE_MARGIN = 0.05
#: Estimators that calibrate to a target by construction: also tried with target = the user's.
CALIBRATED = ("conformal", "quantile-experts")
#: The one-knob floor every tuning is compared with: Linux's rto_min (what an operator can set).
FLOOR = ("linux", "rto_min")

#: ``progress(text, done)``: a phase's text; ``done`` one more estimator search finished.
Progress = Callable[[str, bool], None]


def planned_searches(names: list[str], folds: int, floor_knob: bool, calibrated: bool) -> int:
    """Estimator searches :func:`crossvalidate` runs (for a progress bar)."""
    per_fold = len(names)
    if floor_knob and FLOOR[0] not in names:
        per_fold += 1
    if calibrated:
        per_fold += sum(n in names for n in CALIBRATED)
    return folds * per_fold


def cp_interval(bad: int, n: int, level: float = 0.95) -> list[float]:
    """Two-sided Clopper–Pearson interval of a rate from ``bad`` events in ``n`` trials."""
    from scipy.stats import beta

    a = 1 - level
    lo = 0.0 if bad == 0 else float(beta.ppf(a / 2, bad, n - bad + 1))
    hi = 1.0 if bad >= n else float(beta.ppf(1 - a / 2, bad + 1, n - bad))
    return [lo, hi]


def holds(bad: int, n: int, target: float, confidence: float | None) -> tuple[bool, str]:
    """Whether a cell's rate meets the target (module docstring), and how it reads."""
    rate = bad / n if n else math.nan
    if confidence is not None:
        ub = float(upper_bound(np.array([bad]), np.array([n]), confidence)[0])
        ok = ub <= target + 1e-12
        return ok, (
            f"holds at {confidence:.0%} confidence"
            if ok
            else f"does not hold at {confidence:.0%} confidence"
        )
    if rate <= target + 1e-12:
        return True, "holds"
    if cp_interval(bad, n)[0] <= target:
        return True, "holds within its interval"
    return False, "does not hold"


def _candidate(
    kind: str, estimator: str, params: dict[str, str], floor: float, knobs: int, fold: int | None
) -> dict[str, Any]:
    setting = sentence(estimator, params, floor) + (" (defaults)" if kind == "default" else "")
    return {
        "kind": kind,
        "estimator": estimator,
        "params": dict(params),
        "timer_floor_s": float(floor),
        "setting": setting,
        "knobs": knobs,
        "fold": fold,
    }


def _from_rec(
    rec: dict[str, Any], kind: str, knobs: int, fold: int, table_defaults: set[str]
) -> dict[str, Any]:
    if rec["setting"] in table_defaults:
        return _candidate("default", rec["estimator"], rec["params"], rec["timer_floor_s"], 0, None)
    return _candidate(kind, rec["estimator"], rec["params"], rec["timer_floor_s"], knobs, fold)


def score_candidates(trace: Trace, cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each candidate replayed on ``trace`` (the metrics of docs/metrics.md), in order; one core
    call per timer floor."""
    groups: dict[float, list[int]] = {}
    for i, c in enumerate(cands):
        groups.setdefault(c["timer_floor_s"], []).append(i)
    rows: list[dict[str, Any]] = [{}] * len(cands)
    for floor, idx in groups.items():
        result = score(
            trace.times_ns,
            trace.rtts_ns,
            [spec(cands[i]["estimator"], **cands[i]["params"]) for i in idx],
            starts=trace.starts,
            timestamps=trace.timestamps,
            losses=trace.losses or None,
            min_rto=floor or None,
        )
        for i, r in zip(idx, result.rows):
            rows[i] = {k: r[k] for k in METRIC_COLUMNS}
    return rows


def crossvalidate(
    traces: list[Trace],
    names: list[str],
    settings: Settings,
    fixed: dict[str, dict[str, str]],
    ranges: dict[str, dict[str, str]],
    folds: int = 5,
    replay: Replay | None = None,
    floor_knob: bool = True,
    calibrated: bool = True,
    progress: Progress | None = None,
    shared: Any = None,
) -> dict[str, Any]:
    """The module's procedure on ``traces``; see its docstring. ``floor_knob``/``calibrated``:
    whether the one-knob floor and the calibrated variants are candidates (``--stack any``).
    ``shared``: the search on all data (its table): with it, the folds do not search again —
    every point that search replayed is replayed once per block, and fold i picks its point by
    the sums over the other blocks (:func:`_SharedFolds`; ``--shared-folds``). Or a
    :class:`~rttlab.trace.tune_race.Racer` (``--search halving``): fold i picks among the
    finalists of its races by the sums over its training blocks, and every candidate's held-out
    numbers come from the races' last rung (exact block replays) where it was a finalist."""
    from rttlab.trace.tune_race import Racer

    target, confidence = settings.target, settings.confidence
    racer = shared if isinstance(shared, Racer) else None
    blocks = racer.blocks if racer else [split_blocks(t, folds) for t in traces]
    names_in = [t.name for t in traces]
    cands: list[dict[str, Any]] = []
    seen: set[tuple] = set()

    def add(c: dict[str, Any]) -> dict[str, Any]:
        key = (c["estimator"], tuple(sorted(c["params"].items())), c["timer_floor_s"])
        if key not in seen:
            seen.add(key)
            cands.append(c)
        return next(
            x
            for x in cands
            if (x["estimator"], tuple(sorted(x["params"].items())), x["timer_floor_s"]) == key
        )

    for n in names:
        add(_candidate("default", n, dict(spec(n, **fixed.get(n, {})).params), 0.0, 0, None))
    per_fold: list[dict[str, Any]] = []
    sharing = None if shared is None or racer else _SharedFolds(shared, blocks, settings)
    for i in range(folds):
        if progress:
            progress(f"fold {i + 1}/{folds}: searching on the other {folds - 1} blocks", False)
        train = combine([blocks[x][j] for x in range(len(traces)) for j in range(folds) if j != i])
        tick = (lambda _n, i=i: progress(f"fold {i + 1}/{folds}", True)) if progress else None

        def fold_search(fnames, ffixed, franges, main=False, train=train, tick=tick, i=i):
            if racer is not None:
                table = racer.table(("fold", i), fnames, ffixed, franges)
                return table, None, recommend(table, target, confidence)
            if sharing is not None:
                table = sharing.table(i, None if main else fnames[0], ffixed, franges)
                for n in fnames:
                    if tick:
                        tick(n)
                return table, None, recommend(table, target, confidence)
            return tune_trace(train, fnames, settings, ffixed, franges, replay, tick)

        table, _, rec = fold_search(names, fixed, ranges, main=True)
        defaults = set(table.loc[table["default"], "setting"])
        entry: dict[str, Any] = {"fold": i + 1, "tuned": None, "floor": None, "calibrated": {}}
        if rec is not None:
            knobs = len(
                space(rec["estimator"], fixed.get(rec["estimator"]), ranges.get(rec["estimator"]))
            )
            entry["tuned"] = add(_from_rec(rec, "tuned", knobs, i + 1, defaults))
        if floor_knob:
            est, key = FLOOR
            if est in names and set(d.key for d in space(est, fixed.get(est), ranges.get(est))) == {
                key
            }:
                sub = table[table["estimator"] == est]
                frec = recommend(sub, target, confidence)
                fdefaults = defaults
            else:
                ffixed = {est: {k: v for k, v in fixed.get(est, {}).items() if k != key}}
                ft, _, frec = fold_search([est], ffixed, {})
                fdefaults = set(ft.loc[ft["default"], "setting"])
            if frec is not None:
                entry["floor"] = add(_from_rec(frec, "floor", 1, i + 1, fdefaults))
        if calibrated:
            for n in CALIBRATED:
                if n not in names:
                    continue
                reg = _registry(n)
                cfixed = {
                    k: str(reg[k]["default"]) for k in space_keys(n) if k != "eta"
                } | fixed.get(n, {})
                cfixed = {k: v for k, v in cfixed.items() if k != "eta"}
                cfixed["target"] = f"{target:g}"
                ct, _, crec = fold_search([n], {n: cfixed}, {})
                if crec is not None:
                    cdefaults = set(ct.loc[ct["default"], "setting"])
                    c = _from_rec(crec, "calibrated", 1, i + 1, cdefaults)
                    if (
                        c["kind"] == "default"
                    ):  # its own default with target fixed: 0 knobs searched
                        c = _candidate("calibrated", n, crec["params"], 0.0, 0, i + 1)
                    entry["calibrated"][n] = add(c)
        per_fold.append(entry)
    if progress:
        progress(f"scoring {len(cands)} candidates on {folds * len(traces)} held-out blocks", False)
    # scores[c][i][x]: candidate c on block i of input x.
    scores = [[[None] * len(traces) for _ in range(folds)] for _ in cands]
    known = [racer.cell_rows(c) if racer else None for c in cands]
    rest = [ci for ci, k in enumerate(known) if k is None]
    for ci, rows in enumerate(known):
        for cell, row in enumerate(rows or []):
            scores[ci][cell % folds][cell // folds] = row
    for i in range(folds):
        for x in range(len(traces)):
            for ci, row in zip(rest, score_candidates(blocks[x][i], [cands[c] for c in rest])):
                scores[ci][i][x] = row

    def cell(row: dict[str, Any]) -> dict[str, Any]:
        n, bad = int(row["samples"]), int(row["bad_timeouts"])
        ok, text = holds(bad, n, target, confidence)
        return {
            "samples": n,
            "bad_timeouts": bad,
            "bad_timeout_rate": bad / n if n else None,
            "bad_timeout_rate_ci": cp_interval(bad, n),
            "wait_mean_s": row["wait_mean_s"],
            "holds": ok,
            "verdict": text,
        }

    summary = []
    for ci, c in enumerate(cands):
        cells = [cell(scores[ci][i][x]) for i in range(folds) for x in range(len(traces))]
        n = sum(e["samples"] for e in cells)
        bad = sum(e["bad_timeouts"] for e in cells)
        wsum = sum((e["wait_mean_s"] or 0.0) * e["samples"] for e in cells)
        worst = max(cells, key=lambda e: e["bad_timeout_rate"] or 0.0)
        summary.append(
            {
                **c,
                "cells_held": sum(e["holds"] for e in cells),
                "cells": len(cells),
                "holds_all": all(e["holds"] for e in cells),
                "samples": n,
                "bad_timeout_rate": bad / n,
                "bad_timeout_rate_ci": cp_interval(bad, n),
                "wait_mean_s": wsum / n,
                "worst_bad_timeout_rate": worst["bad_timeout_rate"],
                "by_cell": cells,
            }
        )
    # The procedure's own out-of-sample view: fold i's tuned point on block i of each input.
    table_rows = []
    for i, entry in enumerate(per_fold):
        for x in range(len(traces)):
            row = {
                "fold": i + 1,
                "held_out": names_in[x],
                "tuned": None if entry["tuned"] is None else entry["tuned"]["setting"],
            }
            if entry["tuned"] is None:
                row.update(
                    samples=blocks[x][i].scored,
                    holds=False,
                    verdict="no point met the target on the other blocks",
                )
            else:
                ci = cands.index(entry["tuned"])
                row.update(cell(scores[ci][i][x]))
            table_rows.append(row)
    calibration = {}
    for n in CALIBRATED:
        rows = []
        for i, entry in enumerate(per_fold):
            c = entry["calibrated"].get(n)
            if c is None:
                continue
            ci = cands.index(c)
            for x in range(len(traces)):
                rows.append(
                    {
                        "fold": i + 1,
                        "held_out": names_in[x],
                        "setting": c["setting"],
                        **cell(scores[ci][i][x]),
                    }
                )
        if rows:
            held = sum(r["holds"] for r in rows)
            calibration[n] = {
                "cells_held": held,
                "cells": len(rows),
                "carried_over": held == len(rows),
                "rates": [r["bad_timeout_rate"] for r in rows],
                "by_cell": rows,
            }
    chosen, best_default, headline = choose(summary, target, confidence)
    if chosen is None and confidence is not None:
        # With no bad timeout at all, the one-sided upper bound is 1 − (1 − c)^(1/n): below the
        # target only from n ≥ ln(1 − c) / ln(1 − target) samples.
        need = math.ceil(math.log(1 - confidence) / math.log(1 - target))
        small = min(e["samples"] for s in summary for e in s["by_cell"])
        if small < need:
            headline += (
                f"; the smallest held-out block has {small:,} samples and a {target:.2%} rate at {confidence:.0%} confidence "
                f"takes at least {need:,} even with no bad timeout: give fewer --folds or more data"
            )
    floors = [s for s in summary if s["kind"] == "floor"]
    best_floor = min(
        (s for s in floors if s["holds_all"]), key=lambda s: s["wait_mean_s"], default=None
    )
    if best_floor is None and floors:
        best_floor = min(
            floors, key=lambda s: (s["cells"] - s["cells_held"], s["worst_bad_timeout_rate"])
        )
    return {
        "method": f"time-ordered cross-validation: {folds} contiguous blocks per input by time; each held out in turn, tuned on the rest",
        "folds": folds,
        "target_bad_timeout_rate": target,
        "confidence": confidence,
        "tie_margin": TIE_MARGIN,
        "fold_table": table_rows,
        "candidates": sorted(summary, key=lambda s: (not s["holds_all"], s["wait_mean_s"])),
        "chosen": chosen,
        "best_default": best_default,
        "best_floor": best_floor,
        "keep_default": chosen is None or chosen["kind"] == "default",
        "holds": chosen is not None,
        "calibration": calibration,
        "headline": headline,
    }


class _SharedFolds:
    """Folds without a search of their own (``--shared-folds``): the points the search on all
    data replayed (a grid of the space for the one-knob floor and the calibrated variants) are
    each replayed once on every block; fold i's table sums each point's counts over the blocks
    other than i (scored samples, bad timeouts, W and forecast error weighted by samples; W's
    99th percentile cannot be summed and is left out). The blocks partition the data, so this
    costs one replay of those points, not one search per fold. What it gives up: a search of
    3+ parameters (differential evolution) chose where to look using all the data, the held-out
    block included; the fold still *picks* its point on the other blocks only."""

    def __init__(self, table: Any, blocks: list[list[Trace]], settings: Settings) -> None:
        self.blocks, self.settings = blocks, settings
        self.main = self._replayed(table)
        self.extra: dict[tuple, Any] = {}

    def _replayed(self, rows: Any) -> tuple[Any, list[list[list[dict[str, Any]]]]]:
        """rows and, per block i and input x, each row's metrics on that cell."""
        cands = [
            {
                "estimator": r["estimator"],
                "params": dict(r["params"]),
                "timer_floor_s": float(r["timer_floor_s"]),
            }
            for _, r in rows.iterrows()
        ]
        folds = len(self.blocks[0])
        per = [
            [score_candidates(self.blocks[x][i], cands) for x in range(len(self.blocks))]
            for i in range(folds)
        ]
        return rows.reset_index(drop=True), per

    def _grid(self, name: str, fixed: dict[str, str], ranges: dict[str, str]) -> Any:
        import pandas as pd

        from rttlab.trace.tune_search import fmt_value

        dims = space(name, fixed, ranges)
        assert len(dims) == 1, "shared folds grid: one searched parameter"
        d = dims[0]
        rows = []
        for v in d.values(self.settings.budget):
            params = dict(fixed)
            floor = 0.0
            if d.key == "timer_min_rto":
                floor = float(v)
            else:
                params[d.key] = fmt_value(d.kind, float(v))
            rows.append(
                {
                    "estimator": name,
                    "setting": sentence(name, params, floor),
                    "default": False,
                    "params": params,
                    "timer_floor_s": floor,
                }
            )
        base = dict(spec(name, **fixed).params)
        rows.append(
            {
                "estimator": name,
                "setting": sentence(name, base, 0.0) + " (defaults)",
                "default": True,
                "params": base,
                "timer_floor_s": 0.0,
            }
        )
        return pd.DataFrame(rows)

    def table(self, i: int, name: str | None, fixed: dict, ranges: dict) -> Any:
        """Fold i's table: the main search's points (``name`` None) or one estimator's grid."""
        if name is None:
            rows, per = self.main
        else:
            key = (name, tuple(sorted(fixed.get(name, {}).items())))
            if key not in self.extra:
                self.extra[key] = self._replayed(
                    self._grid(name, fixed.get(name, {}), ranges.get(name, {}))
                )
            rows, per = self.extra[key]
        n = np.zeros(len(rows))
        bad = np.zeros(len(rows))
        wsum = np.zeros(len(rows))
        msum = np.zeros(len(rows))
        lost = np.zeros(len(rows))
        for j, cells in enumerate(per):
            if j == i:
                continue
            for cell in cells:
                for k, r in enumerate(cell):
                    n[k] += r["samples"]
                    bad[k] += r["bad_timeouts"]
                    wsum[k] += (r["wait_mean_s"] or 0.0) * r["samples"]
                    msum[k] += (r["mae_s"] if r["mae_s"] is not None else math.nan) * r["samples"]
                    lost[k] += r["lost_segments"] or 0
        out = rows[["estimator", "setting", "default", "params", "timer_floor_s"]].copy()
        with np.errstate(invalid="ignore", divide="ignore"):
            out["samples"] = n.astype(int)
            out["bad_timeouts"] = bad.astype(int)
            out["bad_timeout_rate"] = bad / n
            out["wait_mean_s"] = wsum / n
            out["wait_p99_s"] = math.nan
            out["mae_s"] = msum / n
            out["mape"] = math.nan
            out["lost_segments"] = lost.astype(int)
            out["lost_wait_mean_s"] = math.nan
        return out


def space_keys(name: str) -> list[str]:
    """The keys :data:`rttlab.trace.tune_search.TUNABLE` searches for ``name`` (its default space)."""
    from rttlab.trace.tune_search import TUNABLE

    return list(TUNABLE.get(name, {}))


def choose(
    summary: list[dict[str, Any]], target: float, confidence: float | None
) -> tuple[dict[str, Any] | None, dict[str, Any], str]:
    """The rule of the module's docstring → (chosen or None, best default, headline)."""
    from rttlab.units import duration

    eligible = [s for s in summary if s["holds_all"]]
    defaults = [s for s in summary if s["kind"] == "default"]
    ok_defaults = [s for s in defaults if s["holds_all"]]
    if ok_defaults:
        best_default = min(ok_defaults, key=lambda s: s["wait_mean_s"])
    else:
        best_default = min(
            defaults,
            key=lambda s: (s["cells"] - s["cells_held"], s["worst_bad_timeout_rate"]),
        )
    how = f" at {confidence:.0%} confidence" if confidence is not None else ""
    if not eligible:
        return (
            None,
            best_default,
            f"keep the default {best_default['estimator']}: no setting, tuned or default, met the {target:.2%} target{how} in every held-out block "
            f"({best_default['estimator']} held in {best_default['cells_held']} of {best_default['cells']}, worst block {best_default['worst_bad_timeout_rate']:.2%})",
        )
    # From the fewest knobs up: the best of a level with more knobs replaces the choice only
    # when it cuts W by more than TIE_MARGIN against it.
    chosen = None
    for k in sorted({s["knobs"] for s in eligible}):
        best = min((s for s in eligible if s["knobs"] == k), key=lambda s: s["wait_mean_s"])
        if chosen is None or best["wait_mean_s"] < chosen["wait_mean_s"] * (1 - TIE_MARGIN):
            chosen = best
    w = duration(chosen["wait_mean_s"])
    if chosen["kind"] == "default":
        return (
            chosen,
            best_default,
            f"keep the default {chosen['estimator']}: no tuned setting beats it out of sample "
            f"(it holds the {target:.2%} target{how} in all {chosen['cells']} held-out blocks, W {w}; a tuned point must cut W by more than {TIE_MARGIN:.0%})",
        )
    versus = ""
    if best_default["holds_all"]:
        versus = f", {chosen['wait_mean_s'] / best_default['wait_mean_s']:.2f}× the W of the best default {best_default['estimator']}"
    else:
        versus = f"; no default holds in every block (best: {best_default['estimator']}, {best_default['cells_held']} of {best_default['cells']})"
    return (
        chosen,
        best_default,
        f"recommend {chosen['setting']}: holds the {target:.2%} target{how} in all {chosen['cells']} held-out blocks, W {w}{versus}",
    )
