"""Successive halving: ``rttlab tune`` on a day of traffic (``--search halving``; docs/tuning.md,
"Large inputs").

The exhaustive search replays every point of every estimator on all the data, once for the fronts
and again in every fold. On two million samples that is hours. Here every point is first replayed
on a small subsample, and only the best go on to larger ones (Jamieson & Talwalkar, "Non-stochastic
best arm identification and hyperparameter optimization", AISTATS 2016; Li et al., "Hyperband",
JMLR 2018):

- **Cells.** Each input is cut into the ``folds`` time blocks of cross-validation
  (:func:`~rttlab.trace.tune_search.split_blocks`); a cell is one block of one input. Every replay
  is scored per cell (one core call, ``per_stream``), so any view that is a set of cells —
  all data, fold i's training blocks, ``--validate``'s leave-one-trace-out parts — is a sum.
- **Rungs.** Rung r replays each cell's samples in :data:`WINDOWS` evenly spaced windows covering
  a fraction ``ETA^-(R-r)`` of it (each window a fresh stream); the last rung is every cell whole,
  so every number reported is an exact replay of its block, as the exhaustive path computes it.
  The first rung holds at least :data:`SMALLEST_RUNG` samples.
- **Points.** Data-independent: the grid of the exhaustive search for one or two parameters; for
  three or more, a scrambled Sobol sample of ``budget`` points in the same (log) space, in place
  of differential evolution, whose path depends on the data it is run on.
- **Promotion.** After each rung, every view ranks the points by its own training cells on
  differential evolution's objective (log W plus a penalty growing with the excess over the
  target) and keeps its best ``1/ETA`` (at least :data:`MIN_KEEP`); the union goes on. A fold's
  choice is therefore never ranked on its held-out block at any rung: its finalists are the same
  as a halving run on its training blocks alone would keep, plus other views' finalists.
- **Finalists.** The points that reach the last rung are the table: the fronts are drawn from them
  (with each estimator's defaults), and every fold and ``--validate`` part picks among them.

What it gives up against the exhaustive search: a point that looks poor on a small subsample but
would be best on all the data is dropped early (the benchmark in BENCHMARKS.md compares the two
answers); 3+-parameter spaces are sampled rather than evolved; the all-data numbers of the fronts
are the blocks' sums (each block a fresh stream), not one replay of the unsplit trace.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rttlab.trace.estimators import spec
from rttlab.trace.tune_search import (
    METRIC_COLUMNS,
    TIMER_FLOOR,
    Dim,
    Searched,
    Settings,
    Trace,
    _spec_of,
    _table,
    combine,
    fmt_value,
    recommend,
    replay_specs,
    round_value,
    sentence,
    space,
    split_blocks,
)

#: Each rung replays ETA times the samples of the one before and keeps 1/ETA of the points.
ETA = 8
#: Samples (summed over cells) of the first rung, at least.
SMALLEST_RUNG = 3_000
#: Evenly spaced windows per cell on a rung below the last (spread over its block's time).
WINDOWS = 4
#: Points each view keeps at a promotion, at least.
MIN_KEEP = 1
#: ``--search auto``: halving above this many scored samples (pooled), the exhaustive search below.
AUTO_ABOVE = 250_000

#: Per cell and point: scored samples, bad timeouts, sum of W, sum of the forecast error (NaN for
#: estimators without a forecast), lost segments, sum of their W.
COUNTS = ("samples", "bad_timeouts", "wait_sum", "mae_sum", "lost", "lost_wait_sum")

#: ``progress(text, done, planned, count)``: work in sample replays (a point replayed on n samples
#: is n), so the ETA follows the cost; ``count`` the points replayed out of those planned.
Progress = Callable[[str, int, int, str], None]


def window(cell: Trace, fraction: float, windows: int = WINDOWS) -> Trace:
    """``windows`` evenly spaced runs of ``cell``'s samples holding about ``fraction`` of them, each
    cut at the cell's stream edges and each a stream of its own; the cell itself for 1."""
    n = len(cell.rtts_ns)
    want = math.ceil(n * fraction)
    if fraction >= 1 or want >= n:
        return cell
    length = max(2, math.ceil(want / windows))
    firsts = np.linspace(0, n - length, windows).round().astype(int)
    times, rtts, starts, ts, losses = [], [], [], [], []
    m = 0
    for s in firsts.tolist():
        for k, (a, b) in enumerate(zip(cell.starts, cell.ends)):
            lo, hi = max(s, a), min(s + length, b)
            if hi - lo < 2:
                continue
            t0, t1 = int(cell.times_ns[lo]), int(cell.times_ns[hi - 1])
            losses += [(len(starts), ns) for j, ns in cell.losses if j == k and t0 <= ns <= t1]
            starts.append(m)
            ts.append(cell.timestamps[k])
            times.append(cell.times_ns[lo:hi])
            rtts.append(cell.rtts_ns[lo:hi])
            m += hi - lo
    return Trace(
        cell.name,
        cell.kind,
        np.concatenate(times),
        np.concatenate(rtts),
        starts,
        ts,
        sorted(losses),
    )


@dataclass
class Rung:
    """One rung's data: every cell's windows laid end to end, and the cell of each stream."""

    data: Trace
    cell_of_stream: np.ndarray
    cells: int

    @property
    def samples(self) -> int:
        return len(self.data.rtts_ns)

    @classmethod
    def of(cls, cells: list[Trace], fraction: float) -> Rung:
        parts = [window(c, fraction) for c in cells]
        owner = np.concatenate([np.full(len(p.starts), i) for i, p in enumerate(parts)])
        return cls(combine(parts) if len(parts) > 1 else parts[0], owner, len(cells))


def replay_cells(rung: Rung, made: list[tuple[Any, float]], threads: int | None) -> np.ndarray:
    """Each (spec, timer floor) replayed on ``rung``: an array [point, cell, :data:`COUNTS`]."""
    out = np.zeros((len(made), rung.cells, len(COUNTS)))
    for p, (_, streams) in enumerate(replay_specs(rung.data, made, threads, per_stream=True)):
        for s, r in enumerate(streams):
            n = r["samples"]
            if not n:
                continue
            lost = r["lost_segments"] or 0
            out[p, rung.cell_of_stream[s]] += (
                n,
                r["bad_timeouts"],
                (r["wait_mean_s"] or 0.0) * n,
                math.nan if r["mae_s"] is None else r["mae_s"] * n,
                lost,
                (r["lost_wait_mean_s"] or 0.0) * lost,
            )
    return out


def metrics(counts: np.ndarray) -> dict[str, Any]:
    """Summed :data:`COUNTS` of one point as the metric columns of a tuning table."""
    n, bad, wsum, msum, lost, lwsum = counts.tolist()
    return {
        "samples": int(n),
        "bad_timeouts": int(bad),
        "bad_timeout_rate": bad / n if n else math.nan,
        "wait_mean_s": wsum / n if n else math.nan,
        "wait_p99_s": math.nan,  # a percentile does not sum over cells
        "mae_s": msum / n if n else math.nan,
        "mape": math.nan,
        "lost_segments": int(lost),
        "lost_wait_mean_s": lwsum / lost if lost else math.nan,
    }


def objective(sums: np.ndarray, target: float) -> np.ndarray:
    """Differential evolution's objective on summed counts [point, COUNTS]: log W, plus 100 per
    target's worth of excess bad-timeout rate (feasible points compete on W alone)."""
    n = np.maximum(sums[:, 0], 1)
    rate, w = sums[:, 1] / n, sums[:, 2] / n
    return np.log10(np.maximum(w, 1e-9)) + 100.0 * np.maximum(0.0, rate - target) / target


def promote(counts: np.ndarray, views, k: int, target: float) -> list[int]:
    """The points that go on to the next rung: the union of every view's best ``k`` by
    :func:`objective` over the view's own cells (``counts``: [point, cell, COUNTS]; ``views``:
    boolean masks over cells), in their original order. Ties keep the earlier point."""
    keep: set[int] = set()
    for mask in views:
        score = objective(counts[:, mask].sum(axis=1), target)
        keep.update(np.argsort(score, kind="stable")[:k].tolist())
    return sorted(keep)


def candidates(dims: list[Dim], budget: int, seed: int) -> list[dict[str, float]]:
    """The points screened: the exhaustive search's grid for 1–2 parameters, else a scrambled
    Sobol sample of ``budget`` points in the search space (log-spaced where it spans decades),
    each value rounded as the exhaustive search rounds it."""
    if len(dims) <= 2:
        n = budget if len(dims) == 1 else max(2, int(math.sqrt(budget)))
        mesh = np.meshgrid(*[d.values(n) for d in dims], indexing="ij")
        return [{d.key: float(m.flat[i]) for d, m in zip(dims, mesh)} for i in range(mesh[0].size)]
    from scipy.stats import qmc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "balance properties": a budget need not be 2^m
        unit = qmc.Sobol(len(dims), scramble=True, seed=seed).random(budget)
    points = []
    for u in unit:
        p = {}
        for d, x in zip(dims, u):
            lo, hi = (math.log10(d.lo), math.log10(d.hi)) if d.log else (d.lo, d.hi)
            v = lo + x * (hi - lo)
            p[d.key] = round_value(d.kind, 10**v if d.log else v)
        points.append(p)
    return list({tuple(p.values()): p for p in points}.values())


@dataclass
class Race:
    """One estimator's space raced through the rungs: its finalists and their per-cell counts
    on the last rung (exact block replays), and its defaults the same way."""

    estimator: str
    dims: list[Dim]
    fixed: dict[str, str]
    screened: int
    finalists: list[dict[str, float]]
    counts: np.ndarray  # [finalist, cell, COUNTS]
    default: np.ndarray  # [cell, COUNTS]
    default_params: dict[str, str]


class Racer:
    """Successive halving over cells, for every view at once (module docstring). ``views``: name →
    boolean mask over cells (the cells a view tunes on). A race per estimator space, run on
    first use and kept: fold tables, the fronts and ``--validate`` all read the same races."""

    def __init__(
        self,
        traces: list[Trace],
        folds: int,
        settings: Settings,
        views: dict[Any, np.ndarray],
        progress: Progress | None = None,
    ) -> None:
        self.traces, self.folds, self.settings, self.views = traces, folds, settings, views
        self.blocks = [split_blocks(t, folds) for t in traces]
        #: Cells in order: input x, block i → index x * folds + i.
        self.cells = [b for blocks in self.blocks for b in blocks]
        total = sum(len(c.rtts_ns) for c in self.cells)
        rungs = 1
        while total / ETA**rungs >= SMALLEST_RUNG:
            rungs += 1
        self.fractions = [float(ETA ** -(rungs - 1 - r)) for r in range(rungs)]
        self._rungs: dict[int, Rung] = {}
        self.races: dict[tuple, Race] = {}
        self.progress = progress
        #: Work (sample replays) done, and planned: races to come at :meth:`_estimate` each.
        self.done = 0
        self.planned = 0
        self._to_come = 0
        self._current = (0, 0)
        #: Points replayed so far (a point on each rung counts once per rung).
        self.points = 0
        #: The best point so far on all data's view (highest rung reached), for a stopped run.
        self.best_so_far: dict[str, Any] | None = None

    @staticmethod
    def cell_views(traces: list[Trace], folds: int, validate: bool) -> dict[Any, np.ndarray]:
        """The views of a tuning run: all data, each fold's training blocks and, with
        ``validate``, each leave-one-trace-out part (one trace: its first ``folds // 2`` blocks)."""
        x = np.repeat(np.arange(len(traces)), folds)
        i = np.tile(np.arange(folds), len(traces))
        views: dict[Any, np.ndarray] = {"all": np.ones(len(x), bool)}
        for f in range(folds):
            views[("fold", f)] = i != f
        if validate:
            if len(traces) >= 2:
                for t in range(len(traces)):
                    views[("validate", t)] = x != t
            else:
                views[("validate", 0)] = i < folds // 2
        return views

    def rung(self, r: int) -> Rung:
        if r not in self._rungs:
            self._rungs[r] = Rung.of(self.cells, self.fractions[r])
        return self._rungs[r]

    def plan(self, keys: int) -> None:
        """``keys`` races are to come (for the progress bar; a race not planned is added when it
        starts)."""
        self._to_come += keys
        self._report("planned")

    def _estimate(self, r: int = 0, alive: int | None = None) -> tuple[int, int]:
        """(work, points) left in a race from rung ``r`` on with ``alive`` points: each view
        keeps its 1/ETA, and the views' picks overlap only in part (×1.5 beyond the first rung)."""
        total = sum(len(c.rtts_ns) for c in self.cells)
        work, points = 0.0, 0
        for q in range(r, len(self.fractions)):
            if q == r and alive is not None:
                n = alive
            elif q == 0:
                n = self.settings.budget
            else:
                n = max(MIN_KEEP, round(self.settings.budget / ETA**q * 1.5))
            work += (n + (q == len(self.fractions) - 1)) * self.fractions[q] * total
            points += n
        return int(work), int(points)

    def _report(self, text: str) -> None:
        work, points = self._estimate()
        self.planned = self.done + self._current[0] + self._to_come * work
        if self.progress:
            count = self.points + self._current[1] + self._to_come * points
            self.progress(
                text, self.done, self.planned, f"{self.points:,}/{count:,} points (planned)"
            )

    def race(self, name: str, fixed: dict[str, str], ranges: dict[str, str]) -> Race:
        key = (name, tuple(sorted(fixed.items())), tuple(sorted(ranges.items())))
        if key in self.races:
            return self.races[key]
        dims = space(name, fixed, ranges)
        by_key = {d.key: d for d in dims}
        points = candidates(dims, self.settings.budget, self.settings.seed)
        screened = len(points)
        last = len(self.fractions) - 1
        self._to_come = max(0, self._to_come - 1)
        counts = np.zeros((0, len(self.cells), len(COUNTS)))
        base = spec(name, **fixed)
        for r in range(last + 1):
            rung = self.rung(r)
            made = [_spec_of(name, p, by_key, fixed) for p in points]
            # The defaults ride along on the last rung (one batch: both cores busy).
            counts = replay_cells(rung, made + [(base, 0.0)] * (r == last), self.settings.threads)
            self.done += (len(made) + (r == last)) * rung.samples
            self.points += len(made)
            self._current = self._estimate(r + 1) if r < last else (0, 0)
            self._report(
                f"{name}: rung {r + 1}/{last + 1}, {len(points)} points on {rung.samples:,} samples"
            )
            self._note_best(name, fixed, by_key, points, counts[: len(points)], r)
            if r < last:
                # Each view keeps what its own halving would: 1/ETA of what it kept before.
                k = max(MIN_KEEP, round(screened / ETA ** (r + 1)))
                keep = promote(counts[: len(points)], self.views.values(), k, self.settings.target)
                points = [points[j] for j in keep]
                self._current = self._estimate(r + 1, len(points))
        default, counts = counts[-1], counts[:-1]
        race = Race(name, dims, dict(fixed), screened, points, counts, default, dict(base.params))
        self.races[key] = race
        return race

    def _note_best(self, name, fixed, by_key, points, counts, r) -> None:
        sums = counts.sum(axis=1)
        target = self.settings.target
        ok = np.flatnonzero(sums[:, 1] <= target * sums[:, 0])
        if not len(ok):
            return
        j = int(ok[np.argmin(sums[ok, 2] / np.maximum(sums[ok, 0], 1))])
        m = metrics(sums[j])
        best = self.best_so_far
        if best is None or (best["rung"], -best["wait_mean_s"]) < (r, -m["wait_mean_s"]):
            params = {
                **fixed,
                **{
                    k: fmt_value(by_key[k].kind, v)
                    for k, v in points[j].items()
                    if k != TIMER_FLOOR
                },
            }
            self.best_so_far = {
                "estimator": name,
                "params": params,
                "timer_floor_s": points[j].get(TIMER_FLOOR, 0.0),
                "setting": sentence(name, params, points[j].get(TIMER_FLOOR, 0.0)),
                "rung": r,
                "rung_samples": self.rung(r).samples,
                **m,
            }

    def table(
        self,
        view: Any,
        names: list[str],
        fixed: dict[str, dict[str, str]],
        ranges: dict[str, dict[str, str]],
    ):
        """The tuning table of ``view`` (as :func:`rttlab.trace.tune_search.tune_trace` makes
        it): every estimator's finalists and defaults, summed over the view's cells."""
        mask = self.views[view]
        searched, defaults = [], []
        for n in names:
            race = self.race(n, fixed.get(n, {}), ranges.get(n, {}))
            rows = [metrics(c) for c in race.counts[:, mask].sum(axis=1)]
            searched.append(
                Searched(n, race.dims, race.fixed, "successive-halving", race.finalists, rows)
            )
            defaults.append(
                {
                    "estimator": n,
                    "setting": sentence(n, race.default_params, 0.0) + " (defaults)",
                    "default": True,
                    "params": dict(race.default_params),
                    "timer_floor_s": 0.0,
                    **metrics(race.default[mask].sum(axis=0)),
                }
            )
        return _table(searched, defaults)

    def recommend(self, view: Any, names, fixed, ranges) -> dict[str, Any] | None:
        return recommend(
            self.table(view, names, fixed, ranges), self.settings.target, self.settings.confidence
        )

    def cell_rows(self, cand: dict[str, Any]) -> list[dict[str, Any]] | None:
        """A candidate's metrics on every cell from the races (finalist or default), or None
        when no race replayed it on the last rung."""
        for race in self.races.values():
            if race.estimator != cand["estimator"]:
                continue
            if cand["params"] == race.default_params and not cand["timer_floor_s"]:
                return [metrics(c) for c in race.default]
            kinds = {d.key: d.kind for d in race.dims}
            for p, c in zip(race.finalists, race.counts):
                params = {
                    **race.fixed,
                    **{k: fmt_value(kinds[k], v) for k, v in p.items() if k != TIMER_FLOOR},
                }
                if params == cand["params"] and p.get(TIMER_FLOOR, 0.0) == cand["timer_floor_s"]:
                    return [metrics(x) for x in c]
        return None

    def describe(self) -> str:
        sizes = ", ".join(f"{self.rung(r).samples:,}" for r in range(len(self.fractions)))
        return (
            f"successive halving: each point screened on a subsample and only the best 1/{ETA} of each view's ranking "
            f"replayed on {ETA}× more, rungs of {sizes} samples (the last: every block whole)"
        )


__all__ = ["AUTO_ABOVE", "Racer", "METRIC_COLUMNS"]
