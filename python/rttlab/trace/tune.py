"""``rttlab tune``: search each estimator's parameters on the user's own traces and recommend one.

The search (grid or differential evolution, batched replays) is :mod:`rttlab.trace.tune_search`;
held-out validation :mod:`rttlab.trace.tune_validate`; the figure :mod:`rttlab.trace.tune_plot`.
What tune does and how to read it: docs/tuning.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rttlab.trace.estimators import spec
from rttlab.trace.tune_search import (
    DEFAULT_ESTIMATORS,
    METRIC_COLUMNS,
    MIN_SAMPLES,
    SCHEMA,
    TIMER_FLOOR,
    TUNABLE,
    Replay,
    Settings,
    Trace,
    TuneError,
    _registry,
    check_target,
    combine,
    command,
    fmt_value,
    load_trace,
    needed_samples,
    pareto_mask,
    recommend,
    round_value,
    space,
    split_time,
    tune_trace,
)
from rttlab.trace.tune_validate import validate_tuning

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Interrupted",
    "DEFAULT_ESTIMATORS",
    "METRIC_COLUMNS",
    "MIN_SAMPLES",
    "SCHEMA",
    "TIMER_FLOOR",
    "TUNABLE",
    "Settings",
    "Trace",
    "TuneError",
    "Tuning",
    "fmt_value",
    "load_trace",
    "pareto_mask",
    "round_value",
    "space",
    "split_time",
    "tune",
]


@dataclass
class Tuning:
    """The result of :func:`tune`: the full table (one row per replayed point, defaults
    included), the recommendation, and validation when asked for."""

    inputs: list[str]
    samples: int
    settings: Settings
    methods: dict[str, str]
    table: pd.DataFrame
    recommendation: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    validation: dict[str, Any] | None = None
    #: Time-ordered cross-validation (:func:`rttlab.trace.tune_cv.crossvalidate`): what chose
    #: the recommendation.
    cv: dict[str, Any] | None = None
    #: The point the search on all data recommends (in-sample; not the recommendation).
    fit: dict[str, Any] | None = None
    stack: str = "any"
    hz: int = 1000
    #: True when the run was stopped (Ctrl-C) before its end: the recommendation is the best so far.
    partial: bool = False

    def front(self, estimator: str | None = None) -> pd.DataFrame:
        """One estimator's own Pareto front, or the joint front (``None``), sorted by bad rate."""
        t = self.table
        if estimator is None:
            return t[t["joint_front"]].sort_values(["bad_timeout_rate", "wait_mean_s"])
        return t[(t["estimator"] == estimator) & t["estimator_front"]].sort_values(
            ["bad_timeout_rate", "wait_mean_s"]
        )

    def to_json(self) -> dict[str, Any]:
        t = self.table
        cols = ["estimator", "setting", "default", *METRIC_COLUMNS]
        return {
            "schema": SCHEMA,
            "inputs": self.inputs,
            "samples": self.samples,
            "target_bad_timeout_rate": self.settings.target,
            "confidence": self.settings.confidence,
            "budget": self.settings.budget,
            "seed": self.settings.seed,
            "methods": self.methods,
            "points": int(len(t)),
            "fronts": {name: self.front(name)[cols].to_dict("records") for name in self.methods},
            "joint_front": self.front()[cols].to_dict("records"),
            "defaults": t[t["default"]][cols].to_dict("records"),
            "stack": self.stack,
            "folds": None if self.cv is None else self.cv["folds"],
            "partial": self.partial,
            "recommendation": self.recommendation,
            "fit_on_all_data": self.fit,
            "cross_validation": self.cv,
            "validation": self.validation,
            "notes": self.notes,
            "warnings": self.warnings,
        }

    def write(self, path: str | Path) -> None:
        """The full table: Parquet for ``.parquet``, DuckDB for ``.duckdb`` (appended to the table
        ``tune_points``, see :meth:`write_duckdb`), else CSV."""
        path = Path(path)
        if path.suffix.lower() == ".parquet":
            self.table.to_parquet(path, index=False)
        elif path.suffix.lower() == ".duckdb":
            self.write_duckdb(path)
        else:
            self.table.to_csv(path, index=False)

    def run_key(self) -> str:
        """What identifies this run: inputs, estimators, target, budget, seed, confidence (a
        rerun with the same key replaces its rows in a DuckDB file)."""
        import hashlib
        import json

        s = self.settings
        doc = {
            "inputs": self.inputs,
            "estimators": list(self.methods),
            "target": s.target,
            "budget": s.budget,
            "seed": s.seed,
            "confidence": s.confidence,
            "folds": None if self.cv is None else self.cv["folds"],
            "stack": self.stack,
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]

    def write_duckdb(self, path: str | Path) -> None:
        """Every point into the DuckDB table ``tune_points`` (one schema for every run: the
        parameters as JSON text in ``params``), keyed by :meth:`run_key`; a rerun replaces its
        own rows, other runs stay. Query it with SQL, e.g. ``SELECT setting, bad_timeout_rate,
        wait_mean_s FROM tune_points WHERE joint_front ORDER BY bad_timeout_rate``."""
        import json

        import duckdb

        cols = [
            "estimator",
            "setting",
            "default",
            "timer_floor_s",
            *METRIC_COLUMNS,
            "estimator_front",
            "joint_front",
        ]
        frame = self.table[cols].copy()
        frame.insert(0, "params", [json.dumps(p, sort_keys=True) for p in self.table["params"]])
        frame.insert(0, "run", self.run_key())
        frame.insert(1, "inputs", " + ".join(self.inputs))
        frame.insert(2, "target", self.settings.target)
        frame.insert(3, "seed", self.settings.seed)
        frame["lost_wait_mean_s"] = frame["lost_wait_mean_s"].astype("float64")
        con = duckdb.connect(str(path))
        try:
            con.register("points", frame)
            con.execute(
                "CREATE TABLE IF NOT EXISTS tune_points AS SELECT * FROM points WHERE false"
            )
            con.execute("DELETE FROM tune_points WHERE run = ?", [self.run_key()])
            con.execute("INSERT INTO tune_points BY NAME SELECT * FROM points")
        finally:
            con.close()

    def plot(self, path: str | Path) -> None:
        from rttlab.trace.tune_plot import plot_tuning

        plot_tuning(self, path)


def tune(
    traces: list[str | Path | Trace],
    estimators: list[str] | None = None,
    *,
    target: float = 0.01,
    budget: int = 300,
    seed: int = 0,
    fixed: dict[str, dict[str, str]] | None = None,
    ranges: dict[str, dict[str, str]] | None = None,
    validate: bool = False,
    confidence: float | None = None,
    unit: str | None = None,
    columns: Any = None,
    threads: int | None = None,
    replay: Replay | None = None,
    folds: int = 5,
    stack: str = "any",
    hz: int = 1000,
    max_ack_delay: str | None = None,
    progress: Any = None,
    shared_folds: bool = False,
    search: str = "auto",
) -> Tuning:
    """Tune ``estimators`` (default: :data:`DEFAULT_ESTIMATORS`) on ``traces`` (paths of series or
    captures, or :class:`Trace`), pooled; recommend the point meeting ``target`` bad-timeout rate
    with the smallest W. ``fixed``: ``{estimator: {key: value}}`` held (``-p``); ``ranges``:
    ``{estimator: {key: "lo:hi"}}`` searched instead of :data:`TUNABLE`'s. ``validate``: also
    score the procedure on data it was not tuned on (:func:`validate_tuning`). ``confidence``:
    recommend only points meeting the target at that one-sided Clopper–Pearson upper bound
    (:func:`rttlab.trace.tune_search.recommend`). ``replay``: how the points are replayed (default:
    here, :func:`rttlab.trace.tune_search.replay_points`; a stored sweep's: looked up in its store
    first, :class:`rttlab.experiments.tune_job.StoredReplay`); its ``validation()``, when it has
    one, replays the validation folds' searches. ``folds``: the recommendation is chosen by
    time-ordered cross-validation over this many blocks per trace
    (:func:`rttlab.trace.tune_cv.crossvalidate`; docs/tuning.md). ``stack``: search only what
    that stack exposes (:mod:`rttlab.trace.tune_stack`), Linux at ``hz``, QUIC with the peer's
    ``max_ack_delay``. ``unit``, ``columns``: of series files, as :func:`rttlab.read_series`
    takes them. ``progress``: called with a line of text at each phase. ``shared_folds``:
    the folds reuse the points of the search on all data instead of searching again (faster;
    see :class:`rttlab.trace.tune_cv._SharedFolds` for what it gives up). ``search``:
    ``exhaustive`` (every point on all the data, in every fold), ``halving`` (successive halving
    on subsamples, :mod:`rttlab.trace.tune_race`), or ``auto``: halving above
    :data:`~rttlab.trace.tune_race.AUTO_ABOVE` scored samples."""
    from rttlab.trace.tune_stack import resolve

    check_target(target)
    if folds < 2:
        raise TuneError(
            f"--folds: {folds} is too few (at least 2: tune on some blocks, score on another)"
        )
    if stack != "any" and (fixed or ranges):
        raise TuneError(
            f"{'--param' if fixed else '--range'}: --stack {stack} decides which knobs are searched; use --stack any to set others"
        )
    stack_names, stack_fixed, stack_ranges = resolve(stack, hz, max_ack_delay, estimators)
    if stack != "any":
        estimators, fixed, ranges = stack_names, stack_fixed, stack_ranges
    if confidence is not None and not (0.5 <= confidence < 1):
        raise TuneError(f"--confidence: {confidence:g} is outside [0.5, 1): give e.g. 0.95")
    if budget < 4:
        raise TuneError(f"--budget: {budget} points per estimator is too few (at least 4)")
    names = list(estimators or DEFAULT_ESTIMATORS)
    if len(set(names)) != len(names):
        raise TuneError("--estimators: an estimator is listed twice")
    fixed, ranges = fixed or {}, ranges or {}
    for what, given in (("--param", fixed), ("--range", ranges)):
        for n in given:
            if n not in names:
                raise TuneError(
                    f"{what}: '{n}' is not among the estimators tuned ({', '.join(names)})"
                )
    for n in names:
        _registry(n)
        if fixed.get(n):
            spec(n, **fixed[n])  # the core names a bad key or value
        space(n, fixed.get(n), ranges.get(n))
    loaded = [t if isinstance(t, Trace) else load_trace(t, unit, columns) for t in traces]
    if not loaded:
        raise TuneError("TRACES: give at least one RTT series or capture")
    for t in loaded:
        if t.scored < MIN_SAMPLES:
            raise TuneError(
                f"{t.name}: {t.scored} scored samples; tune needs at least {MIN_SAMPLES} per trace"
            )
    from rttlab.trace.tune_search import split_blocks

    for t in loaded:
        split_blocks(t, folds)  # fewer samples than folds: say so before any search
    settings = Settings(target, budget, seed, threads, confidence)
    data = combine(loaded)
    from rttlab.trace.tune_race import AUTO_ABOVE

    if search not in ("auto", "halving", "exhaustive"):
        raise TuneError(f"--search: unknown method '{search}' (known: auto, halving, exhaustive)")
    if search == "halving" and replay is not None:
        raise TuneError(
            "--search halving: not with --store yet (a stored sweep replays every point); use --search exhaustive"
        )
    if search == "halving" and shared_folds:
        raise TuneError(
            "--shared-folds: applies to --search exhaustive; halving shares its replays across folds already"
        )
    halving = search == "halving" or (
        search == "auto" and replay is None and not shared_folds and data.scored > AUTO_ABOVE
    )
    if halving:
        return _tune_halving(
            loaded, data, names, settings, fixed, ranges, folds, stack, hz, validate, progress
        )
    from rttlab.trace.tune_cv import planned_searches

    planned = len(names) + planned_searches(names, folds, stack == "any", stack == "any")
    if progress:
        progress("searching on all data (the fronts)", 0, planned)
    done = [0]

    def step(text: str, finished: bool = True) -> None:
        done[0] += finished
        if progress:
            progress(text, done[0], planned)

    table, methods, rec = tune_trace(
        data, names, settings, fixed, ranges, replay, lambda n: step("all data")
    )
    check_reach(table, target, stack)
    notes, warnings = _notes(loaded, data, table, methods, rec, settings, fixed, ranges)
    from rttlab.trace.tune_cv import crossvalidate

    try:
        cv = crossvalidate(
            loaded,
            names,
            settings,
            fixed,
            ranges,
            folds,
            replay.validation() if hasattr(replay, "validation") else replay,
            floor_knob=stack == "any",
            calibrated=stack == "any",
            progress=step,
            shared=table if shared_folds else None,
        )
    except KeyboardInterrupt:
        # Stopped part-way: the in-sample fit on all data is the best there is, marked partial.
        partial = Tuning(
            [t.name for t in loaded],
            data.scored,
            settings,
            methods,
            table,
            None,
            notes,
            warnings,
            fit=rec,
            stack=stack,
            hz=hz,
            partial=True,
        )
        raise Interrupted(partial, done[0], planned) from None
    final = recommendation(cv, data, [t.name for t in loaded], stack, hz)
    result = Tuning(
        [t.name for t in loaded],
        data.scored,
        settings,
        methods,
        table,
        final,
        notes,
        warnings,
        cv=cv,
        fit=rec,
        stack=stack,
        hz=hz,
    )
    if validate:
        result.validation = validate_tuning(
            loaded,
            names,
            settings,
            fixed,
            ranges,
            replay.validation() if hasattr(replay, "validation") else replay,
        )
        result.warnings += result.validation.pop("warnings", [])
    return result


def check_reach(table: pd.DataFrame, target: float, stack: str) -> None:
    """A stack's knobs that cannot reach the target on these traces: say so (one line)."""
    if stack == "any":
        return
    low = float(table["bad_timeout_rate"].min())
    if not low <= target:
        best = table.sort_values(["bad_timeout_rate", "wait_mean_s"]).iloc[0]
        raise TuneError(
            f"--target-bad-timeouts: {target:.2%} is out of reach for --stack {stack} on these traces: the lowest bad-timeout rate its knobs reach is {low:.2%} ({best['setting']})"
        )


def _notes(loaded, data, table, methods, rec, settings, fixed, ranges):
    """What the search was (notes) and what to beware of (warnings); adds the fit's command."""
    target, confidence = settings.target, settings.confidence
    notes = [
        f"{n}: {m} over {', '.join(d.key for d in space(n, fixed.get(n), ranges.get(n)))}"
        for n, m in methods.items()
    ]
    if len(loaded) > 1:
        notes.append(
            "scores pool every scored sample of every trace (a long trace weighs more); each stream starts from a fresh estimator and timer"
        )
    warnings = [w for t in loaded for w in t.warnings]
    need = needed_samples(target)
    if data.scored < need:
        warnings.append(
            f"{data.scored:,} scored samples: a {target:.2%} bad-timeout rate is known to ±50 % only from ≈{need:,} samples (95 % binomial interval); treat the recommendation as rough"
        )
    if rec is not None:
        rec["command"] = command(
            [t.name for t in loaded], rec["estimator"], rec["params"], rec["timer_floor_s"]
        )
    if rec is None:
        low = table.sort_values(["bad_timeout_rate", "wait_mean_s"]).iloc[0]
        how = f" at {confidence:.0%} confidence" if confidence is not None else ""
        notes.append(
            f"no point meets the target {target:.2%}{how}: the lowest bad-timeout rate reached is {low['bad_timeout_rate']:.2%} ({low['setting']}); widen a --range or raise the target"
        )
    return notes, warnings


def _tune_halving(
    loaded, data, names, settings, fixed, ranges, folds, stack, hz, validate, progress
) -> Tuning:
    """:func:`tune` by successive halving (:mod:`rttlab.trace.tune_race`): every view — all
    data, each fold, each ``--validate`` part — picks among the same races' finalists."""
    from rttlab.trace.tune_cv import CALIBRATED, FLOOR, crossvalidate
    from rttlab.trace.tune_race import Racer

    inputs = [t.name for t in loaded]
    racer = Racer(
        loaded, folds, settings, Racer.cell_views(loaded, folds, validate), progress=progress
    )
    extra = (stack == "any") * (1 + sum(n in names for n in CALIBRATED)) - (
        stack == "any" and FLOOR[0] in names
    )
    racer.plan(len(names) + max(0, extra))
    try:
        table = racer.table("all", names, fixed, ranges)
        rec = recommend(table, settings.target, settings.confidence)
        check_reach(table, settings.target, stack)
        methods = {
            n: f"successive halving over a {'grid' if len(r.dims) <= 2 else 'Sobol sample'} ({r.screened} points screened, {len(r.finalists)} replayed on all data)"
            for n in names
            for r in [racer.race(n, fixed.get(n, {}), ranges.get(n, {}))]
        }
        notes, warnings = _notes(loaded, data, table, methods, rec, settings, fixed, ranges)
        notes.append(racer.describe())
        cv = crossvalidate(
            loaded,
            names,
            settings,
            fixed,
            ranges,
            folds,
            floor_knob=stack == "any",
            calibrated=stack == "any",
            shared=racer,
        )
        result = Tuning(
            inputs,
            data.scored,
            settings,
            methods,
            table,
            recommendation(cv, data, inputs, stack, hz),
            notes,
            warnings,
            cv=cv,
            fit=rec,
            stack=stack,
            hz=hz,
        )
        if validate:
            result.validation = validate_tuning(loaded, names, settings, fixed, ranges, racer=racer)
            result.warnings += result.validation.pop("warnings", [])
    except KeyboardInterrupt:
        import pandas as pd

        best = racer.best_so_far
        if best is not None and best["rung_samples"] < len(data.rtts_ns):
            best = dict(best)
            best["setting"] += (
                f" (on {best['rung_samples']:,} of {data.scored:,} samples: a subsample)"
            )
        partial = Tuning(
            inputs,
            data.scored,
            settings,
            {},
            pd.DataFrame(columns=["estimator", "setting", "default", *METRIC_COLUMNS]),
            None,
            [],
            [],
            fit=best,
            stack=stack,
            hz=hz,
            partial=True,
        )
        raise Interrupted(
            partial, racer.done, max(racer.planned, racer.done), "sample replays"
        ) from None
    return result


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during cross-validation: ``tuning`` holds what was done (the fit on all data, not
    cross-validated: ``partial`` is True, ``recommendation`` None); ``done`` of ``planned``
    estimator searches had finished."""

    def __init__(self, tuning: Tuning, done: int, planned: int, unit: str = "searches") -> None:
        super().__init__()
        self.tuning, self.done, self.planned, self.unit = tuning, done, planned, unit


def recommendation(
    cv: dict[str, Any], data: Trace, inputs: list[str], stack: str, hz: int
) -> dict[str, Any]:
    """What cross-validation chose as the machine-readable recommendation (docs/tuning.md):
    the stack, the estimator, its knobs in the stack's units and the lines that apply them, how
    it held out of sample, and its numbers on all data (to reproduce with ``command``)."""
    from rttlab.trace.tune_cv import score_candidates
    from rttlab.trace.tune_stack import apply_lines

    keep = cv["keep_default"]
    c = cv["chosen"] if cv["chosen"] is not None else cv["best_default"]
    held = {
        k: c[k]
        for k in (
            "cells_held",
            "cells",
            "holds_all",
            "bad_timeout_rate",
            "bad_timeout_rate_ci",
            "wait_mean_s",
            "worst_bad_timeout_rate",
        )
    }
    row = score_candidates(data, [c])[0]
    out: dict[str, Any] = {
        "stack": stack,
        "action": "keep-default" if keep else "apply",
        "holds": cv["holds"],
        "headline": cv["headline"],
        "estimator": c["estimator"],
        "kind": c["kind"],
        "searched_knobs": c["knobs"],
        "params": dict(c["params"]),
        "timer_floor_s": c["timer_floor_s"],
        "setting": c["setting"],
        **apply_lines(stack, {**c, "keep_default": keep}, hz),
        "held_out": held,
        **row,
    }
    out["command"] = command(inputs, c["estimator"], c["params"], c["timer_floor_s"])
    return out
