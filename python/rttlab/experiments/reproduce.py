"""Reproductions: a sweep plus the published numbers and how ours are compared — data, not code.

A reproduction is a TOML file in ``rttlab/experiments/reproductions/`` or a paper's folder of ``rttlab/papers/`` (docs/experiments.md)::

    [reproduction]
    title = "..."
    source = "the paper"
    metric = "goodput_bps"              # a column of the runs table
    by = ["topology.bottleneck.error.per"]   # what makes a point
    level = 0.95                        # the paper's confidence level
    tolerance = 0.15                    # |ours / published - 1| allowed for "matched"

    [published]                         # one of three kinds
    kind = "formula"                    # a model over each point's parameters (DataFrame.eval)
    formula = "mss * 8 / rtt * sqrt(1.5) / sqrt(p)"
    vars = { p = "topology.bottleneck.error.per" }
    constants = { mss = 1448, rtt = 0.1 }
    source = "eq. (3)"
    # kind = "table": [[published.values]] point = {...}, value = ..., source = "Table 2, p. 5"
    # kind = "peer": another simulator of the same sweep (simulator = "ns3") run beside ours
    # kind = "ratio": [[published.values]] numerator = {...}, denominator = {...}, value, source —
    #   a published ratio of the metric between two points of the sweep (ours: per seed, paired);
    #   each row's "direction" says whether our interval lies on the published side of 1, and
    #   require_direction = true makes that a condition of "matched"

    # Optional: several metrics (table values then name theirs), and a paired contrast — ours is
    # treatment − control of `key` (a swept parameter), per seed, so the CI is the paired one:
    # metrics = ["jain_index", "retransmissions"]
    # contrast = { key = "tcp.rto.policy", treatment = "ca-rto", control = "none" }
    # A table value may carry its own `tolerance`, an `abs_tolerance` (|ours − published| ≤ it:
    # for a published 0) or `at_least = true` (a published lower bound: ours ≥ value·(1 − tolerance));
    # with a contrast, `relative = true`: a claim in per cent, ours the paired (treatment − control) / control.
    # kind = "table" with only_listed = true: points without a published value are left out

    [sweep] / [set] / [grid] / [zip] / [scenario]   # a sweep file's tables
    [quick.sweep] / [quick.set] / [quick.grid] / [quick.zip]   # replace those tables for --quick
    [scale.NAME.sweep] / [scale.NAME.set] / ...   # the same for --scale NAME (e.g. another figure's runs)
    [scale.NAME.quick.*]                         # --scale NAME --quick: on top of that scale

A metric ``flows.COLUMN`` is a per-flow column (the store's ``flows`` table) joined with its run's
parameters: ``by`` may then name ``flow`` or any other column of the flows table (``estimator``,
``group``, ``cc``…); without ``flow`` a run's flows are summed — or averaged with
``flows_agg = "mean"`` — so each run is one observation. ``flows_where = { group = 0 }`` keeps
only the flows matching every key (e.g. the measured flow, not the cross traffic). Several
``flows.*`` metrics may be listed in ``metrics``; a ``ratio`` value may name its ``metric``.
``[[report]]`` entries (``title``, ``metric``, ``by``, optional ``expr`` over the flows table's
columns, e.g. ``"rtt_max - rtt_min"``, and their own ``flows_where``/``flows_agg``, defaulting
to the reproduction's) are printed as tables of ours alone, for results with nothing published
to compare against. A metric ``trace.NAME`` (in ``metrics`` beside run columns, or a report's) is
computed per run from a trace the sweep keeps (``[sweep] traces``): its rows (``where``: a pandas
query over the trace's columns, e.g. ``"time >= 60 and cause == 'overflow'"``) counted (``agg =
"count"``, the default) or a ``column`` / ``expr`` over them aggregated (``agg`` = mean, sum, min,
max, first, last, std or mean_abs_diff: mean |x − previous x|); with ``per`` (a column) per group first, then across groups by ``then``. NAME
is a ``[trace.NAME]`` table holding those keys and ``trace`` (which trace), or in a report the
trace itself with the keys in the entry; ``@OTHER`` in ``where`` is the same run's
``trace.OTHER``. A report over a trace the sweep does not keep (e.g. under ``--quick``) is left
out; a comparison over one is an error. ``parts = ["OTHER"]`` in ``[reproduction]``: reproductions
run and printed after this one (a table measured on a set-up of its own; ``quick_parts`` replaces the
list under ``--quick``). With ``kind = "ratio"``, ``simulated = "ENGINE"`` computes each ratio
again with ``simulator`` = ENGINE (the same points in another engine) and ``beside = "OTHER"`` (or a list)
sets OTHER's stored comparison beside each row with the same published value (metric and
source; from the same store; per reading where OTHER declares the same readings). ``[[model]]`` entries compare a
paper's own model column with the model computed here, no runs involved: ``title``, ``formula``
(DataFrame.eval, as kind = "formula"), ``constants``, optional ``abs_tolerance``, and
``[[model.rows]]`` each with ``point`` (the formula's variables), ``value`` (published) and
``source``; a model's ``tolerance`` (relative) replaces the reproduction's. ``models_only = true`` in
``[reproduction]``: a file of ``[[model]]`` tables alone (no sweep, no runs; e.g. a paper's
published predictions recomputed from its published coefficients).

``[[reading]]`` tables declare the readings of an ambiguous paper (``name``,
``says``: the paper's words, ``what``, ``primary = true`` on exactly one; overlays ``trace.NAME``
for the same runs read another way, ``set``/``zip`` for other runs): see :attr:`Reproduction.readings`.

Every comparison row: the point, ours (mean, Student-t CI at ``level``, n), the published value
and its source, the relative difference, and whether it matched within ``tolerance``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from rttlab.experiments.sweep import Sweep, SweepError, as_stored


class ReproductionError(Exception):
    pass


@cache
def _files() -> dict[str, Any]:
    """Every shipped reproduction file by name: the generic ones (``experiments/reproductions/``)
    and each paper's, in its folder of :mod:`rttlab.papers` (package data: scanned once)."""
    root = resources.files("rttlab")
    folders = [
        root / "experiments" / "reproductions",
        *(d for d in (root / "papers").iterdir() if d.is_dir()),
    ]
    return {
        f.name.removesuffix(".toml"): f
        for d in folders
        for f in d.iterdir()
        if f.name.endswith(".toml")
    }


def available() -> list[str]:
    return sorted(_files())


@dataclass
class Reproduction:
    name: str
    doc: dict[str, Any]
    quick: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    #: "full" (the file's own tables) or the name of a ``[scale.NAME.*]`` overlay (e.g. "medium").
    scale: str = "full"
    #: The reading of the paper this object compares under (a ``[[reading]]``'s name), or None
    #: for a file that declares no readings (then the file itself is the one reading).
    reading: str | None = None
    #: Whether this reading is the file's primary one (chosen from the paper's text).
    primary: bool = True
    #: The reading's ``[[reading]]`` table: its ``says``/``what`` and its overlays.
    reading_spec: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, name: str, quick: bool = False, scale: str = "full") -> Reproduction:
        files = _files()
        if name not in files:
            raise ReproductionError(
                f"no reproduction named {name!r} (have: {', '.join(sorted(files))})"
            )
        text = files[name].read_text()
        doc = tomllib.loads(text)
        scales = ["full", *doc.get("scale", {})]
        if scale not in scales:
            raise ReproductionError(
                f"reproduction {name}: no scale {scale!r} (have: {', '.join(scales)})"
            )
        return cls(name=name, doc=doc, quick=quick, meta=doc["reproduction"], scale=scale)

    @property
    def _scale_quick(self) -> bool:
        """--quick of a scale with its own ``[scale.NAME.quick.*]`` (other scales' --quick is the file's)."""
        return self.quick and "quick" in self.doc.get("scale", {}).get(self.scale, {})

    @property
    def sweep_name(self) -> str:
        """The sweep's (and store's) name: a reading that changes the runs (its own ``set``/``zip``)
        has its own sweep, ``NAME@READING``; one that only reads the runs differently shares them."""
        if self._scale_quick:
            base = f"{self.name}-{self.scale}-quick"
        elif self.quick:
            base = f"{self.name}-quick"
        else:
            base = self.name if self.scale == "full" else f"{self.name}-{self.scale}"
        return (
            f"{base}@{self.reading}" if self.reading and _changes_runs(self.reading_spec) else base
        )

    @property
    def own_runs(self) -> bool:
        """A reading with runs of its own (``set``/``zip``/``grid``): its reports are its own too."""
        return self.reading is not None and _changes_runs(self.reading_spec)

    @property
    def comparison_name(self) -> str:
        """The name its comparison is stored under: the sweep's, ``@READING`` for each reading."""
        if self.reading is None:
            return self.sweep_name
        return self.sweep_name if "@" in self.sweep_name else f"{self.sweep_name}@{self.reading}"

    @property
    def readings(self) -> list[Reproduction]:
        """The readings of the paper this file compares under (``[[reading]]`` tables, one marked
        ``primary``), each as a Reproduction; a file without any is its own single reading.

        A reading is declared in the file *before* the runs, with what the paper says for it:
        ``name``, ``says`` (the paper's sentence it rests on, quoted), ``what`` (what it changes,
        in a line), ``primary = true`` on exactly one, and overlays: ``trace.NAME`` tables that
        replace the file's ``[trace.NAME]`` (the same runs read another way), and ``set``/``zip``
        keys added to the sweep's (other runs: the reading gets a sweep of its own)."""
        specs = self.doc.get("reading", [])
        if not specs:
            return [self]
        where = f"reproduction {self.name}"
        if not isinstance(specs, list) or not all(isinstance(s, dict) for s in specs):
            raise ReproductionError(f"{where}: reading: expected [[reading]] tables")
        names = [s.get("name") for s in specs]
        for i, s in enumerate(specs):
            unknown = sorted(set(s) - READING_KEYS)
            if unknown:
                raise ReproductionError(
                    f"{where}: reading {i + 1}: unknown key {unknown[0]!r} (expected {', '.join(sorted(READING_KEYS))})"
                )
            if (
                not isinstance(s.get("name"), str)
                or not s["name"].replace("-", "").replace("_", "").isalnum()
            ):
                raise ReproductionError(
                    f"{where}: reading {i + 1}: name must be a word of letters, digits, '-' and '_'"
                )
            if not isinstance(s.get("says"), str) or not s["says"].strip():
                raise ReproductionError(
                    f"{where}: reading {s['name']}: says: quote what the paper says that this reading rests on"
                )
            if "metric" in s and (not isinstance(s["metric"], str) or "metrics" in self.meta):
                raise ReproductionError(
                    f"{where}: reading {s['name']}: metric: expected a metric name, in a file with one metric (not metrics)"
                )
            quick = s.get("quick", {})
            if not isinstance(quick, dict) or set(quick) - {"set", "zip", "grid"}:
                raise ReproductionError(
                    f"{where}: reading {s['name']}: quick: expected a table of set, zip and grid (its overlays under --quick)"
                )
            for name in s.get("trace", {}):
                if name not in self.doc.get("trace", {}):
                    raise ReproductionError(
                        f"{where}: reading {s['name']}: trace.{name}: the file has no [trace.{name}] to replace"
                    )
        if len(set(names)) != len(names):
            raise ReproductionError(f"{where}: reading names must differ ({', '.join(names)})")
        primaries = [s["name"] for s in specs if s.get("primary")]
        if len(primaries) != 1:
            raise ReproductionError(
                f"{where}: exactly one [[reading]] must be primary = true (found {len(primaries)})"
            )
        scales = ["full", *self.doc.get("scale", {})]
        for s in specs:
            listed = s.get("scales")
            if listed is None:
                continue
            if s.get("primary"):
                raise ReproductionError(
                    f"{where}: reading {s['name']}: the primary reading is read at every scale (no scales)"
                )
            if not isinstance(listed, list) or not listed or any(x not in scales for x in listed):
                raise ReproductionError(
                    f"{where}: reading {s['name']}: scales must list some of {', '.join(scales)}"
                )
            for key in s.get("grid", {}):
                if key not in self.doc.get("grid", {}):
                    raise ReproductionError(
                        f"{where}: reading {s['name']}: grid.{key}: the file's [grid] has no such key to replace"
                    )
        out = []
        for s in specs:
            if self.scale not in s.get("scales", scales):
                continue  # read at other scales only (elsewhere_readings names them)
            doc = {**self.doc, "trace": {**self.doc.get("trace", {}), **s.get("trace", {})}}
            # `metric`: the same runs measured by another run or flows column (a definition the
            # paper allows, e.g. goodput with duplicates); the claims keep their published values.
            meta = {**self.meta, "metric": s["metric"]} if "metric" in s else self.meta
            out.append(
                Reproduction(
                    name=self.name,
                    doc=doc,
                    quick=self.quick,
                    meta=meta,
                    scale=self.scale,
                    reading=s["name"],
                    primary=bool(s.get("primary")),
                    reading_spec=s,
                )
            )
        return out

    @property
    def elsewhere_readings(self) -> list[tuple[str, list[str]]]:
        """The declared readings that are run at other scales than this one: (name, scales)."""
        return [
            (s["name"], list(s["scales"]))
            for s in self.doc.get("reading", [])
            if self.scale not in s.get("scales", [self.scale])
        ]

    def sweep(self) -> Sweep:
        tables = {
            k: dict(self.doc[k])
            for k in ("sweep", "set", "grid", "zip", "scenario")
            if k in self.doc
        }
        scale = self.doc.get("scale", {}).get(self.scale, {})
        own = {k: v for k, v in scale.items() if k != "quick"}
        if self._scale_quick:
            overlays = [own, scale["quick"]]
        else:
            overlays = [self.doc.get("quick", {}) if self.quick else own]
        for overlay in overlays:
            for k, v in overlay.items():
                tables[k] = {**tables.get(k, {}), **v} if k in ("sweep", "set") else dict(v)
        # A reading's own runs: keys added to the sweep's [set] and [zip], and [grid] keys
        # replaced, after any scale.
        # Under --quick a reading's own `quick = { set/zip/grid }` replaces its overlays (a zip
        # must match the quick zip's length).
        spec = (
            self.reading_spec.get("quick", self.reading_spec) if self.quick else self.reading_spec
        )
        for k in ("set", "zip", "grid"):
            if k in spec:
                tables[k] = {**tables.get(k, {}), **spec[k]}
        tables.setdefault("sweep", {})["name"] = self.sweep_name
        try:
            return Sweep.from_dict(tables, source=f"reproduction {self.name}")
        except SweepError as e:
            raise ReproductionError(str(e)) from None

    def stored(self, store: Any, sweep: Sweep | None = None) -> tuple[Any, Any]:
        """The runs and per-flow rows this reproduction's current spec plans, read from ``store``:
        exactly the runs of :meth:`sweep` (``sweep`` if given, to spare building it again). A
        store keeps every run a sweep's name ever held, so selecting by membership alone would
        let a rerun with fewer seeds or points (replications cut, a quicker size into the same
        store) still count the old runs in its comparison and ``[[report]]`` tables. Every table
        of a reproduction (comparison, reports, figures) reads its runs through this."""
        sweep = sweep if sweep is not None else self.sweep()
        planned = self.planned(store, sweep)
        runs, flows = store.runs(sweep.name), store.flows(sweep.name)
        return runs[runs["hash"].isin(planned)].reset_index(drop=True), flows[
            flows["hash"].isin(planned)
        ].reset_index(drop=True)

    def planned(self, store: Any, sweep: Sweep | None = None) -> list[str]:
        """The keys in ``store`` of the runs the current spec plans (:meth:`stored`'s selection;
        for a query of its own over the store: ``... AND r.hash IN (SELECT unnest(?))``): each
        run's hash, or the one it is stored under from before canonical form 2
        (:func:`rttlab.experiments.sweep.as_stored`)."""
        return [r.hash for r in as_stored(sweep if sweep is not None else self.sweep(), store).runs]

    @property
    def parts(self) -> list[Reproduction]:
        """The reproductions run and printed with this one (``parts = ["NAME", ...]`` in
        ``[reproduction]``): a paper's table measured on a set-up of its own, at the same scale."""
        names = (
            self.meta.get("quick_parts", self.meta.get("parts", []))
            if self.quick
            else self.meta.get("parts", [])
        )
        return [Reproduction.load(p, quick=self.quick, scale=self.scale) for p in names]

    @property
    def besides(self) -> list[Reproduction]:
        """``beside = "OTHER"`` (or a list of names) in ``[reproduction]``: other reproductions of
        the same published ratios (e.g. the same paper simulated) whose stored comparisons are
        shown beside ours, row by row where both name the same published value (metric and
        source)."""
        names = self.meta.get("beside") or []
        names = [names] if isinstance(names, str) else list(names)
        return [Reproduction.load(n, quick=self.quick, scale="full") for n in names]

    def attach_beside(self, rows: list[dict[str, Any]], store: Any) -> str:
        """Add to ``beside`` (a list) of each of ``rows`` (this reproduction's comparison) the
        stored comparison of each of :attr:`besides` in ``store``: its row with the same metric
        and published source (ours, interval, n, and the direction of a ratio). Where OTHER
        declares readings, a row of reading R reads OTHER's reading R (none where OTHER does not
        declare R: another reading is another answer); where it declares none, its one
        comparison stands beside every reading. OTHER's run at this quickness is preferred, else
        its other one. Returns what was read, in a line, for the printout."""
        return "; ".join(self._attach_one(other, rows, store) for other in self.besides)

    def _attach_one(self, other: Reproduction, rows: list[dict[str, Any]], store: Any) -> str:
        both = [other, Reproduction.load(other.name, quick=not other.quick)]
        declared = bool(other.doc.get("reading"))
        # Per reading of OTHER (None: its single comparison), the stored names to try in order.
        candidates: dict[str | None, list[str]] = {}
        for o in both:
            for x in o.readings:
                candidates.setdefault(x.reading if declared else None, []).append(x.comparison_name)
        found: dict[str, dict[tuple[Any, Any], dict[str, Any]]] = {}

        def stored(names: list[str]) -> tuple[str, dict[tuple[Any, Any], dict[str, Any]]] | None:
            for name in dict.fromkeys(names):
                if name not in found:
                    got = (
                        store.query("SELECT * FROM comparisons WHERE reproduction = ?", [name])
                        if "comparisons" in store.tables()
                        else None
                    )
                    found[name] = (
                        {(r["metric"], r["source"]): r for r in got.to_dict("records")}
                        if got is not None
                        else {}
                    )
                if found[name]:
                    return name, found[name]
            return None

        read: list[str] = []
        missing: list[str] = []
        for row in rows:
            key = row.get("reading") if declared else None
            if key not in candidates:
                missing.append(f"{key} (not a reading of {other.name})")
                continue
            hit = stored(candidates[key])
            if hit is None:
                missing.append(str(key) if declared else "")
                continue
            name, by_value = hit
            b = by_value.get((row["metric"], row["source"]))
            if b is None:
                continue
            read.append(name)
            lo, hi = (
                (b["ci_low"], b["ci_high"]) if not _nan(b["ci_low"]) else (b["ours"], b["ours"])
            )
            side = "below 1" if hi < 1 else "above 1" if lo > 1 else "undecided"
            direction = (
                "undecided"
                if side == "undecided"
                else "same"
                if (row["published"] < 1) == (side == "below 1")
                else "opposite"
            )
            row.setdefault("beside", []).append(
                {
                    "name": other.name,
                    "reproduction": name,
                    "ours": b["ours"],
                    "ci_low": b["ci_low"],
                    "ci_high": b["ci_high"],
                    "n": int(b["n"]),
                    "direction": direction,
                }
            )
        if not read:
            return f"beside: {other.name} is not in this store (run `rttlab reproduce {other.name}` with the same --out, or this reproduction without --quick, which runs it)"
        note = (
            f"beside: {', '.join(dict.fromkeys(read))}'s stored comparison (read from this store)"
        )
        gaps = [m for m in dict.fromkeys(missing) if m]
        return note + (
            f"; nothing of {other.name} beside reading {', '.join(gaps)}" if gaps else ""
        )

    @property
    def by(self) -> list[str]:
        return list(self.meta["by"])

    @property
    def metric(self) -> str:
        return self.meta.get("metric") or self.metrics[0]

    @property
    def metrics(self) -> list[str]:
        return list(self.meta.get("metrics") or [self.meta["metric"]])

    def _paired(self, ok: Any, relative: bool = False) -> Any:
        """Per point and seed, treatment − control of each metric (the contrast's runs paired by
        seed); ``relative``: (treatment − control) / control. An arm is named by its value, or
        by the ``name`` of a table value (a component with parameters: a reading's variant)."""
        c = self.meta["contrast"]
        key = c["key"]
        if key not in ok.columns:
            raise ReproductionError(
                f"reproduction {self.name}: contrast key {key!r} is not a swept parameter"
            )
        index = [*self.by, "seed"]
        ok = ok.assign(**{key: ok[key].map(_arm)})
        wide = ok.pivot_table(index=index, columns=key, values=self.metrics, aggfunc="first")
        treatment, control = (
            wide.xs(c["treatment"], axis=1, level=key),
            wide.xs(c["control"], axis=1, level=key),
        )
        out = (treatment - control) / control if relative else treatment - control
        return out.dropna().reset_index()

    @property
    def level(self) -> float:
        return float(self.meta.get("level", 0.95))

    @property
    def tolerance(self) -> float:
        return float(self.meta["tolerance"])

    def frame(
        self,
        runs: Any,
        flows: Any,
        metric: str,
        by: list[str],
        expr: str | None = None,
        spec: dict[str, Any] | None = None,
        series: Any = None,
    ) -> tuple[Any, str]:
        """The rows to summarise and the column holding ``metric``: the successful runs, or for
        ``flows.COLUMN`` their per-flow rows with the run's parameters (summed per run unless
        ``flow`` is in ``by``); ``expr`` computes the column from the flows table's columns; a
        ``trace.NAME`` metric is computed per run from its stored trace (:meth:`trace_values`)."""
        frame, cols = self.frames(runs, flows, [metric], by, expr, spec, series)
        return frame, cols[0]

    def frames(
        self,
        runs: Any,
        flows: Any,
        metrics: list[str],
        by: list[str],
        expr: str | None = None,
        spec: dict[str, Any] | None = None,
        series: Any = None,
    ) -> tuple[Any, list[str]]:
        """:meth:`frame` for several metrics at once (run columns and ``trace.*``, or all
        ``flows.*``): one row per run (or per flow with ``flow`` in ``by``), the runs' ``seed``
        kept for pairing. ``spec`` (a ``[[report]]`` entry) may override ``flows_where`` and
        ``flows_agg``, and gives an unnamed ``trace.NAME`` metric its fields."""
        ok = runs[runs["status"] == "ok"]
        per_flow = [m.startswith("flows.") for m in metrics]
        if not any(per_flow):
            traced = [m for m in metrics if m.startswith("trace.")]
            if traced:
                ok = ok.copy()
                for m in traced:
                    ok[m] = self.trace_values(ok, m, spec or {}, series)
            return ok, list(metrics)
        if not all(per_flow):
            raise ReproductionError(
                f"reproduction {self.name}: metrics mix per-run columns (run columns, trace.*) and flows.* columns: {', '.join(metrics)}"
            )
        cols = [m.removeprefix("flows.") for m in metrics]
        if flows is None:
            raise ReproductionError(
                f"reproduction {self.name}: metric {metrics[0]} needs the per-flow table"
            )
        spec = spec or {}
        where = spec.get("flows_where", self.meta.get("flows_where", {}))
        agg = spec.get("flows_agg", self.meta.get("flows_agg", "sum"))
        if agg not in ("sum", "mean"):
            raise ReproductionError(
                f"reproduction {self.name}: flows_agg must be 'sum' or 'mean', got {agg!r}"
            )
        f = flows[flows["hash"].isin(ok["hash"])].copy()
        for k, v in where.items():
            if k not in f.columns:
                raise ReproductionError(
                    f"reproduction {self.name}: flows_where.{k}: not a column of the flows table"
                )
            f = f[f[k] == v]
        if expr:
            f[cols[0]] = f.eval(expr)
        # A `by` key the runs table has comes from the run's parameters; any other (flow,
        # estimator, group, ...) from the flows table itself.
        from_runs = [k for k in by if k in ok.columns and k != "flow"]
        missing = [k for k in by if k not in ok.columns and k not in f.columns]
        if missing:
            raise ReproductionError(
                f"reproduction {self.name}: by {missing[0]!r} is neither a swept parameter nor a flows column"
            )
        keep = ["hash", *from_runs]
        for extra in ("simulator", "seed"):
            if extra in ok.columns and extra not in keep:
                keep.append(extra)
        merged = f.merge(ok[keep], on="hash")
        if "flow" not in by:
            group = [*keep, *[k for k in by if k not in keep]]
            merged = merged.groupby(group, as_index=False, dropna=False, observed=True)[cols].agg(
                agg
            )
        return merged, cols

    def compare(self, runs: Any, flows: Any = None, series: Any = None) -> list[dict[str, Any]]:
        """Comparison rows from the stored runs (and per-flow rows) of this reproduction's sweep;
        ``series(hash, name)`` gives a run's stored trace, for ``trace.NAME`` metrics."""
        from rttlab.experiments.stats import summarise

        ok, cols = self.frames(runs, flows, self.metrics, self.by, series=series)
        # A per-flow metric (flows.COLUMN) is summarised under its column's name; rows say its own.
        metrics = cols
        names = dict(zip(cols, self.metrics))
        pub = self.doc["published"]
        kind = pub["kind"]
        if kind == "ratio":
            return self._ratios(ok)
        if kind == "claims":
            return self._claims(ok)
        relative: dict[
            tuple[Any, ...], dict[str, Any]
        ] = {}  # (point…, metric) → paired relative row
        if kind == "peer":
            peer = pub["simulator"]
            ours = summarise(ok[ok["simulator"] == "rttlab"], self.by, metrics, self.level)
            # A variant of the peer engine (``testbed:net.ipv4.tcp_sack=0``) is the peer too.
            of_peer = ok["simulator"].map(lambda name: name.partition(":")[0]) == peer
            peer_names = sorted(ok.loc[of_peer, "simulator"].unique())
            theirs = summarise(ok[of_peer], self.by, metrics, self.level)
            theirs = {(*(r[k] for k in self.by), r["metric"]): r for r in theirs.to_dict("records")}
        elif "contrast" in self.meta and len(ok):
            # Differences of a bounded metric are not bounded by its range: plain t intervals.
            ours = summarise(self._paired(ok), self.by, metrics, self.level, bounded=False)
            # A published value stated in per cent (relative = true): ours is the paired
            # (treatment − control) / control per seed at that point (picked per row below).
            if kind == "table" and any(v.get("relative") for v in pub["values"]):
                rel = summarise(
                    self._paired(ok, relative=True), self.by, metrics, self.level, bounded=False
                )
                relative = {
                    (*(r[k] for k in self.by), r["metric"]): r for r in rel.to_dict("records")
                }
        else:
            ours = summarise(ok, self.by, metrics, self.level)
        rows, ranks = [], []
        for r in ours.to_dict("records"):
            key = tuple(r[k] for k in self.by)
            point = dict(zip(self.by, key))
            metric = names.get(r["metric"], r["metric"])
            tolerance, abs_tolerance, at_least = self.tolerance, None, False
            if kind == "formula":
                published, source = self._formula(point), pub["source"]
            elif kind == "table":
                published, source, v = self._table(point, metric)
                if v.get("relative"):
                    r = relative.get((*key, r["metric"]), r)
                tolerance = float(v.get("tolerance", tolerance))
                abs_tolerance = v.get("abs_tolerance")
                at_least = bool(v.get("at_least", False))
                if pub.get("only_listed") and math.isnan(published):
                    continue
                ranks.append(
                    next((i for i, x in enumerate(pub["values"]) if x is v), len(pub["values"]))
                )
            elif kind == "peer":
                t = theirs.get((*key, metric))
                published = t["mean"] if t else math.nan
                label = " + ".join(peer_names) or pub["simulator"]
                if t is None:
                    source = f"{label}: no successful run"
                elif t["n"] > 1:
                    source = f"{label} ({t['n']} runs, {self.level:.0%} CI ±{t['half_width']:.4g})"
                else:
                    source = f"{label} (1 run)"
            else:
                raise ReproductionError(
                    f"reproduction {self.name}: published.kind {kind!r} is not formula, table, peer, ratio or claims"
                )
            diff = (
                r["mean"] / published - 1 if published and not math.isnan(published) else math.nan
            )
            if math.isnan(published) or math.isnan(r["mean"]):
                matched = False
            elif r["mean"] == published:
                matched = True  # equal, 0 = 0 included (no relative difference to take)
            elif abs_tolerance is not None:
                matched = abs(r["mean"] - published) <= float(abs_tolerance)
            elif at_least:
                matched = r["mean"] >= published - abs(published) * tolerance
            else:
                matched = not math.isnan(diff) and abs(diff) <= tolerance
            label = ", ".join(f"{k}={_short(v)}" for k, v in point.items())
            if kind == "table" and v.get("relative"):
                metric = f"{metric} (relative)"
            rows.append(
                {
                    "point": f"{metric}: {label}" if len(self.metrics) > 1 else label,
                    "params": point,
                    "metric": metric,
                    "published": published,
                    "source": source,
                    "ours": r["mean"],
                    "ci_low": r["ci_low"],
                    "ci_high": r["ci_high"],
                    "n": int(r["n"]),
                    "diff": diff,
                    "tolerance": float(abs_tolerance) if abs_tolerance is not None else tolerance,
                    "tolerance_kind": "absolute"
                    if abs_tolerance is not None
                    else "at least"
                    if at_least
                    else "relative",
                    "matched": bool(matched),
                    "inside_ci": bool(r["ci_low"] <= published <= r["ci_high"])
                    if not math.isnan(r["ci_low"])
                    else False,
                }
            )
        if kind == "table" and pub.get("only_listed"):  # in the order the paper's values are listed
            rows = [row for _, row in sorted(zip(ranks, rows), key=lambda x: x[0])]
        return rows

    def _ratios(self, ok: Any) -> list[dict[str, Any]]:
        """Each published ratio metric(numerator point) / metric(denominator point): ours is the
        mean over seeds of the per-seed ratio (the two runs of a seed share its random streams),
        with a Student-t interval."""
        from rttlab.experiments.stats import t_interval

        def at(point: dict[str, Any]) -> dict[Any, float]:
            missing = [k for k in point if k not in ok.columns]
            if missing:
                raise ReproductionError(
                    f"reproduction {self.name}: {missing[0]!r} is not a swept parameter"
                )
            # A table value (a reading's variant, e.g. { name = "spectcp", ... }) answers to its name.
            mask = (
                ok.apply(
                    lambda r: all(_same(r[k], v) or _same(_arm(r[k]), v) for k, v in point.items()),
                    axis=1,
                )
                if len(ok)
                else []
            )
            return dict(zip(ok[mask]["seed"], ok[mask][column]))

        def label(point: dict[str, Any]) -> str:
            return ", ".join(f"{k.rsplit('.', 1)[-1]}={_short(v)}" for k, v in point.items())

        def paired(numerator: dict[str, Any], denominator: dict[str, Any]) -> list[float]:
            num, den = at(numerator), at(denominator)
            return [num[s] / den[s] for s in sorted(num.keys() & den.keys()) if den[s]]

        # ``simulated = "ENGINE"``: each ratio also with ``simulator`` = ENGINE in both points
        # (the same paths in another engine, e.g. the simulator beside the testbed), shown beside.
        other = self.meta.get("simulated")
        rows = []
        for v in self.doc["published"]["values"]:
            metric = v.get("metric", self.metric)
            if metric not in self.metrics:
                raise ReproductionError(
                    f"reproduction {self.name}: ratio metric {metric!r} is not one of the reproduction's metrics"
                )
            column = metric.removeprefix("flows.")
            ratios = paired(v["numerator"], v["denominator"])
            t = t_interval(ratios, self.level)
            extra: dict[str, Any] = {}
            if other is not None:
                if "simulator" not in v["numerator"] or "simulator" not in v["denominator"]:
                    raise ReproductionError(
                        f"reproduction {self.name}: simulated = {other!r} needs simulator in each ratio's numerator and denominator"
                    )
                o = t_interval(
                    paired(
                        {**v["numerator"], "simulator": other},
                        {**v["denominator"], "simulator": other},
                    ),
                    self.level,
                )
                extra["simulated"] = {
                    "engine": other,
                    "ours": o["mean"],
                    "ci_low": o["ci_low"],
                    "ci_high": o["ci_high"],
                    "n": o["n"],
                }
            published = float(v["value"])
            diff = t["mean"] / published - 1 if ratios else math.nan
            # Which side of 1 the ratio lies, ours judged by its whole interval: a published
            # ratio < 1 is "same" only if our interval lies below 1 (with one seed: the mean).
            lo, hi = (
                (t["ci_low"], t["ci_high"])
                if not math.isnan(t["ci_low"])
                else (t["mean"], t["mean"])
            )
            side = "below 1" if hi < 1 else "above 1" if lo > 1 else "undecided"
            direction = (
                "—"
                if not ratios
                else "undecided"
                if side == "undecided"
                else "same"
                if (published < 1) == (side == "below 1")
                else "opposite"
            )
            rows.append(
                {
                    "point": f"{metric}: {label(v['numerator'])} / {label(v['denominator'])}"
                    if len(self.metrics) > 1
                    else f"{label(v['numerator'])} / {label(v['denominator'])}",
                    "params": dict(v["numerator"]),
                    "metric": f"{metric} ratio",
                    "direction": direction,
                    "published": published,
                    "source": v["source"],
                    "ours": t["mean"],
                    "ci_low": t["ci_low"],
                    "ci_high": t["ci_high"],
                    "n": t["n"],
                    "diff": diff,
                    "tolerance": self.tolerance,
                    "tolerance_kind": "relative",
                    # require_direction: within tolerance *and* on the published side of 1.
                    "matched": bool(
                        not math.isnan(diff)
                        and abs(diff) <= self.tolerance
                        and (direction == "same" or not self.meta.get("require_direction"))
                    ),
                    "inside_ci": bool(t["ci_low"] <= published <= t["ci_high"])
                    if not math.isnan(t["ci_low"])
                    else False,
                    **extra,
                }
            )
        return rows

    def _claims(self, ok: Any) -> list[dict[str, Any]]:
        """Published claims that compare two groups of runs (``kind = "claims"``): per point
        (``by``), ratio = mean of ``metric`` over the ``ours`` runs / over the ``versus`` runs
        (both within ``where``), tested against ``ratio = "<= 0.7"`` (or ``>=``) at ``holds`` =
        ``"all"`` points or ``"any"``; ``gap_grows``: ours − versus larger at the largest ``by``
        than at the smallest. One row per point and one verdict row per claim (its point is
        ``claim: ID``), whose ``matched`` says whether the claim holds in our runs."""
        from rttlab.experiments.stats import summarise

        rows = []
        for c in self.doc["published"]["claims"]:
            op, _, value = c["ratio"].partition(" ")
            if op not in ("<=", ">="):
                raise ReproductionError(
                    f"reproduction {self.name}: claim {c['id']}: ratio must be '<= X' or '>= X'"
                )
            threshold = float(value)

            def only(frame: Any, sel: dict[str, Any]) -> Any:
                for k, v in sel.items():  # a column the sweep never had: no run matches
                    frame = frame[frame[k] == v] if k in frame else frame.iloc[0:0]
                return frame

            frame = only(ok, c.get("where", {}))
            if c["metric"] not in frame or c["by"] not in frame:
                frame = frame.iloc[0:0].assign(**{c["metric"]: [], c["by"]: []})

            def group(
                sel: dict[str, Any], frame: Any = frame, c: dict[str, Any] = c
            ) -> dict[Any, dict[str, Any]]:
                frame = only(frame, sel)
                table = summarise(
                    frame.dropna(subset=[c["metric"]]), [c["by"]], [c["metric"]], self.level
                )
                return {r[c["by"]]: r for r in table.to_dict("records")}

            ours, versus = group(c["ours"]), group(c["versus"])
            points = sorted(set(ours) & set(versus))
            results = []
            for p in points:
                a, b = ours[p], versus[p]
                ratio = a["mean"] / b["mean"] if b["mean"] else math.nan
                holds = bool(ratio <= threshold) if op == "<=" else bool(ratio >= threshold)
                results.append((p, a, b, ratio, holds))
                rows.append(
                    self._claim_row(
                        f"{c['id']}: {c['by']}={_short(p)}",
                        {c["by"]: p, "claim": c["id"]},
                        c,
                        ratio,
                        threshold,
                        min(a["n"], b["n"]),
                        holds,
                        f"{c['source']}: ours {a['mean']:.4g} vs {b['mean']:.4g}",
                    )
                )
            verdicts = [h for *_, h in results]
            holds = bool(verdicts) and (
                all(verdicts) if c.get("holds", "all") == "all" else any(verdicts)
            )
            if c.get("gap_grows"):  # one point cannot show a growing gap
                first, last = results[0] if results else None, results[-1] if results else None
                holds = (
                    holds
                    and len(results) >= 2
                    and (last[1]["mean"] - last[2]["mean"]) > (first[1]["mean"] - first[2]["mean"])
                )
            best = (
                min((r[3] for r in results), default=math.nan)
                if op == "<="
                else max((r[3] for r in results), default=math.nan)
            )
            rows.append(
                self._claim_row(
                    f"claim: {c['id']}",
                    {"claim": c["id"]},
                    c,
                    best,
                    threshold,
                    len(results),
                    holds,
                    c["text"],
                )
            )
        return rows

    def _claim_row(
        self,
        point: str,
        params: dict[str, Any],
        c: dict[str, Any],
        ratio: float,
        threshold: float,
        n: int,
        matched: bool,
        source: str,
    ) -> dict[str, Any]:
        return {
            "point": point,
            "params": params,
            "metric": f"{c['metric']} ratio",
            "published": threshold,
            "source": source,
            "ours": ratio,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "n": int(n),
            "diff": ratio / threshold - 1 if threshold else math.nan,
            "tolerance": 0.0,
            "tolerance_kind": "threshold",
            "matched": matched,
            "inside_ci": False,
        }

    def trace_spec(self, metric: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
        """What ``trace.NAME`` computes: the ``[trace.NAME]`` table when the reproduction names one,
        else the stored trace NAME itself with ``spec``'s fields (``where``, ``column``/``expr``,
        ``agg``, ``per``/``then``: a ``[[report]]`` entry's)."""
        name = metric.removeprefix("trace.")
        named = self.doc.get("trace", {})
        t = (
            dict(named[name])
            if name in named
            else {k: v for k, v in (spec or {}).items() if k in TRACE_KEYS}
        )
        t.setdefault("trace", name)
        where = (
            f"reproduction {self.name}: {'trace.' + name if name in named else 'metric ' + metric}"
        )
        unknown = sorted(set(t) - {"trace", *TRACE_KEYS})
        if unknown:
            raise ReproductionError(
                f"{where}: unknown key {unknown[0]!r} (expected trace, {', '.join(TRACE_KEYS)})"
            )
        for key in ("agg", "then"):
            if t.get(key, "count") not in TRACE_AGGS:
                raise ReproductionError(
                    f"{where}: {key} must be {', '.join(TRACE_AGGS[:-1])} or {TRACE_AGGS[-1]}, not {t[key]!r}"
                )
        if t.get("agg", "count") != "count" and not ("column" in t or "expr" in t):
            raise ReproductionError(f"{where}: agg = {t['agg']!r} needs a column or an expr")
        if ("then" in t) != ("per" in t):
            raise ReproductionError(
                f"{where}: per and then go together (aggregate per group, then across the groups)"
            )
        return t

    def trace_values(self, ok: Any, metric: str, spec: dict[str, Any], series: Any) -> list[float]:
        """``metric`` (``trace.NAME``) of each run in ``ok``, from its stored trace (``series(hash,
        trace)`` gives it as a DataFrame): the rows matching ``where`` (a pandas query over the
        trace's columns, in which ``@OTHER`` is the same run's ``trace.OTHER``, a ``[trace.OTHER]``
        table) counted or their ``column``/``expr`` aggregated by ``agg``; with ``per`` (a column)
        aggregated per group first, then across the groups by ``then``."""
        if "flow" in (spec.get("by") or []):
            raise ReproductionError(
                f"reproduction {self.name}: report {metric}: a trace metric is per run, by cannot name flow"
            )
        if series is None:
            raise ReproductionError(
                f"reproduction {self.name}: metric {metric} needs the runs' stored traces"
            )
        kept = set(self.sweep().traces)
        return [self._trace_value(h, metric, spec, series, kept, {}, ()) for h in ok["hash"]]

    def _trace_value(
        self,
        h: str,
        metric: str,
        spec: dict[str, Any],
        series: Any,
        kept: set[str],
        done: dict[str, float],
        chain: tuple[str, ...],
    ) -> float:
        import re

        import pandas as pd

        t = self.trace_spec(metric, spec)
        if t["trace"] not in kept:
            raise ReproductionError(
                f"reproduction {self.name}: metric {metric} needs the {t['trace']!r} trace, which [sweep] traces does not keep"
            )
        frame = series(h, t["trace"])
        where = t.get("where")
        if where:
            env = {}
            for other in dict.fromkeys(re.findall(r"@(\w+)", where)):
                if other not in self.doc.get("trace", {}):
                    raise ReproductionError(
                        f"reproduction {self.name}: metric {metric}: where names @{other}, which is no [trace.{other}] table"
                    )
                if other in chain or other == metric.removeprefix("trace."):
                    raise ReproductionError(
                        f"reproduction {self.name}: metric {metric}: @{other} depends on itself"
                    )
                if other not in done:
                    done[other] = self._trace_value(
                        h,
                        f"trace.{other}",
                        {},
                        series,
                        kept,
                        done,
                        (*chain, metric.removeprefix("trace.")),
                    )
                env[other] = done[other]
            frame = frame.query(where, local_dict=env)
        agg = t.get("agg", "count")

        def reduce(rows: Any) -> float:
            if agg == "count":
                return float(len(rows))
            return _aggregate(
                pd.Series(rows.eval(t["expr"]) if "expr" in t else rows[t["column"]], dtype=float),
                agg,
            )

        if "per" not in t:
            return reduce(frame)
        if t["per"] not in frame.columns:
            raise ReproductionError(
                f"reproduction {self.name}: metric {metric}: per {t['per']!r} is not a column of the {t['trace']} trace"
            )
        groups = pd.Series(
            [reduce(g) for _, g in frame.groupby(t["per"], observed=True, sort=True)], dtype=float
        )
        return (
            float(len(groups.dropna())) if t["then"] == "count" else _aggregate(groups, t["then"])
        )

    def reports(self, runs: Any, flows: Any = None, series: Any = None) -> list[dict[str, Any]]:
        """The ``[[report]]`` tables: ours alone (mean, CI, n) per point. ``series(hash, name)``
        gives a run's stored trace, for ``trace.NAME`` metrics."""
        from rttlab.experiments.stats import summarise

        out = []
        kept = set(self.sweep().traces)
        for spec in self.doc.get("report", []):
            by = list(spec["by"])
            if spec["metric"].startswith("trace."):
                if self.trace_spec(spec["metric"], spec)["trace"] not in kept or series is None:
                    continue  # e.g. a trace --quick does not keep
                frame, col = self.frame(runs, flows, spec["metric"], by, None, spec, series)
            else:
                frame, col = self.frame(runs, flows, spec["metric"], by, spec.get("expr"), spec)
            rows = [
                {
                    "point": ", ".join(f"{k}={_short(r[k])}" for k in by),
                    "params": {k: r[k] for k in by},
                    "ours": r["mean"],
                    "ci_low": r["ci_low"],
                    "ci_high": r["ci_high"],
                    "n": int(r["n"]),
                }
                for r in summarise(frame, by, [col], self.level).to_dict("records")
            ]
            out.append(
                {"title": spec.get("title", spec["metric"]), "metric": spec["metric"], "rows": rows}
            )
        return out

    def record(
        self,
        reports: list[dict[str, Any]] | None = None,
        models: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """This reading's row of the store's ``reproductions`` table (what ``rttlab report``
        shows above its comparison): paper, title, source, the reading, and ours-alone tables."""
        return {
            "reproduction": self.comparison_name,
            "name": self.name,
            "paper": self.meta.get("paper"),
            "title": self.meta.get("title"),
            "source": self.meta.get("source"),
            "reading": self.reading,
            "primary_reading": self.primary,
            "reading_what": self.reading_spec.get("what"),
            "reading_says": self.reading_spec.get("says"),
            "level": self.level,
            "tolerance": self.meta.get("tolerance"),
            "note": self.meta.get("note"),
            "reports": {"reports": reports or [], "models": models or []},
        }

    @property
    def paper(self) -> str:
        """What the reproduction checks, by author and year (``paper`` in ``[reproduction]``)."""
        return str(self.meta["paper"])

    @property
    def models_only(self) -> bool:
        """A file of ``[[model]]`` tables alone (``models_only = true``): nothing is run."""
        return bool(self.meta.get("models_only"))

    @property
    def has_figures(self) -> bool:
        return "figures" in self.meta

    def figures(self, store: Any, out: Any) -> list[Any]:
        """The paper's figures drawn from this reproduction's stored runs into directory ``out``
        (created if needed); returns the files written. ``figures = "MODULE"`` in
        ``[reproduction]`` names the module (the paper's own, in :mod:`rttlab.papers`) whose
        ``draw(reproduction, store, out)`` draws them — looked up by name, so this layer imports
        no paper."""
        import importlib
        from pathlib import Path

        if not self.has_figures:
            raise ReproductionError(
                f"reproduction {self.name} draws no figures of its own (its comparison is figure.svg)"
            )
        from rttlab.experiments.store import StoreError

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        try:
            return list(importlib.import_module(self.meta["figures"]).draw(self, store, out))
        except StoreError as e:
            # A figure reads a trace this scale did not keep (the CI-sized scales keep few).
            kept = ", ".join(self.sweep().traces) or "none"
            raise ReproductionError(
                f"reproduction {self.name}: cannot draw its figures: {e} (this scale keeps the traces: {kept}; the full scale keeps what the figures read)"
            ) from None

    def models(self) -> list[dict[str, Any]]:
        """The ``[[model]]`` tables: each row's published model value beside the formula evaluated
        on the row's variables; matched when within ``abs_tolerance`` (else the model's
        ``tolerance``, else the reproduction's)."""
        import pandas as pd

        out = []
        for spec in self.doc.get("model", []):
            rows = []
            for v in spec["rows"]:
                env = {**spec.get("constants", {}), **v["point"]}
                ours = float(pd.DataFrame([env]).eval(spec["formula"]).iloc[0])
                published = float(v["value"])
                abs_tol = v.get("abs_tolerance", spec.get("abs_tolerance"))
                diff = ours / published - 1 if published else math.nan
                tol = float(v.get("tolerance", spec.get("tolerance", self.tolerance)))
                matched = (
                    abs(ours - published) <= float(abs_tol)
                    if abs_tol is not None
                    else abs(diff) <= tol
                )
                rows.append(
                    {
                        "point": ", ".join(f"{k}={_short(x)}" for k, x in v["point"].items()),
                        "params": dict(v["point"]),
                        "ours": ours,
                        "published": published,
                        "source": v["source"],
                        "diff": diff,
                        "abs_tolerance": abs_tol,
                        "matched": bool(matched),
                    }
                )
            out.append({"title": spec["title"], "formula": spec["formula"], "rows": rows})
        return out

    def _formula(self, point: dict[str, Any]) -> float:
        import pandas as pd

        pub = self.doc["published"]
        env = dict(pub.get("constants", {}))
        for var, column in pub.get("vars", {}).items():
            env[var] = float(point[column])
        # pandas' expression evaluator: arithmetic and sqrt/log/exp, no Python beyond that.
        return float(pd.DataFrame([env]).eval(pub["formula"]).iloc[0])

    def _table(
        self, point: dict[str, Any], metric: str | None = None
    ) -> tuple[float, str, dict[str, Any]]:
        for v in self.doc["published"]["values"]:
            if v.get("metric", self.metric) == (metric or self.metric) and all(
                _same(point.get(k), x) for k, x in v["point"].items()
            ):
                return float(v["value"]), v["source"], v
        return math.nan, "not published for this point", {}


#: What a ``[[reading]]`` may hold.
READING_KEYS = {
    "name",
    "primary",
    "says",
    "what",
    "trace",
    "set",
    "zip",
    "grid",
    "scales",
    "quick",
    "metric",
}


def _changes_runs(spec: dict[str, Any]) -> bool:
    return bool(spec.get("set") or spec.get("zip") or spec.get("grid") or spec.get("quick"))


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _arm(value: Any) -> Any:
    """A contrast arm's label: the value itself, or for a table value (stored as its JSON text:
    a component with parameters, e.g. ``{name = "ca-rto", scale = "1s"}``) its ``name``."""
    if isinstance(value, str) and value.startswith("{"):
        import json

        try:
            table = json.loads(value)
        except ValueError:
            return value
        return table.get("name", value) if isinstance(table, dict) else value
    return value


#: A ``trace.*`` metric's fields besides ``trace`` (what it reads), and its aggregations.
TRACE_KEYS = ("where", "column", "expr", "agg", "per", "then")
#: ``std`` is the sample standard deviation; ``mean_abs_diff`` the mean absolute difference of
#: successive values in time order — a variation measure a slow drift hardly moves (RFC 6298's
#: RTTVAR is an exponentially weighted form of the same |R − previous| idea).
TRACE_AGGS = ("count", "mean", "sum", "min", "max", "first", "last", "std", "mean_abs_diff")


def _aggregate(x: Any, how: str) -> float:
    """A series' ``how`` (one of :data:`TRACE_AGGS` but count) over its non-null values; NaN if none
    (and for std / mean_abs_diff of fewer than two)."""
    x = x.dropna()
    if not len(x) or (how in ("std", "mean_abs_diff") and len(x) < 2):
        return math.nan
    if how == "mean_abs_diff":
        return float(x.diff().abs().mean())
    return float(
        x.iloc[0] if how == "first" else x.iloc[-1] if how == "last" else getattr(x, how)()
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    return a == b


def _short(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def figure_svg(rep: Reproduction, rows: list[dict[str, Any]]) -> str:
    """Ours (mean, CI as error bars) beside the published values, one marker per point; SVG text."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(r["metric"] for r in rows)) or [rep.metric]
    heights = [_panel_height(rep, [r for r in rows if r["metric"] == m]) for m in metrics]
    fig, axes = plt.subplots(
        len(metrics),
        1,
        figsize=(7.5, sum(heights)),
        layout="constrained",
        squeeze=False,
        height_ratios=heights,
    )
    for ax, metric in zip(axes[:, 0], metrics):
        _panel(ax, rep, [r for r in rows if r["metric"] == metric], metric)
    import textwrap

    # The title spans the figure (not one panel, whose left edge moves with its tick labels),
    # wrapped to fit: ≈ 100 characters of 9 pt text in 7.5 inches.
    fig.suptitle(textwrap.fill(rep.meta.get("title", rep.name), 100), fontsize=9)
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # inline: no XML prolog or doctype


def _numeric_panel(rep: Reproduction, rows: list[dict[str, Any]]) -> bool:
    return (
        bool(rows)
        and len(rep.by) == 1
        and rep.doc["published"]["kind"] not in ("claims", "ratio")
        and all(isinstance(r["params"].get(rep.by[0]), (int, float)) for r in rows)
    )


def _panel_height(rep: Reproduction, rows: list[dict[str, Any]]) -> float:
    return 4.0 if _numeric_panel(rep, rows) else 1.6 + 0.32 * len(rows)


def _panel(ax: Any, rep: Reproduction, rows: list[dict[str, Any]], metric: str) -> None:
    """One metric's panel: ours with CI error bars beside the published values. A numeric
    parameter goes on a log axis; otherwise each point is a row named by its full label (a ratio's
    numerator / denominator, so two ratios never share a label), the values on the horizontal axis."""
    import textwrap

    from rttlab.palette import colour
    from rttlab.trace.labels import axis_label, quantity

    contrast = rep.meta.get("contrast")
    what = f" ({contrast['treatment']} − {contrast['control']})" if contrast else ""
    ratio = metric.endswith(" ratio")
    base = metric.removesuffix(" ratio").removeprefix("flows.")
    q = quantity(metric.removesuffix(" ratio"))
    scale = 1.0 if ratio else q.scale
    label = (
        f"{q.words} ratio"
        if ratio
        else axis_label(metric.removesuffix(" ratio"))
        if base
        else metric
    )
    label += what
    ours = [r["ours"] * scale for r in rows]
    err = [
        [(r["ours"] - r["ci_low"]) * scale if not math.isnan(r["ci_low"]) else 0 for r in rows],
        [(r["ci_high"] - r["ours"]) * scale if not math.isnan(r["ci_high"]) else 0 for r in rows],
    ]
    published = [r["published"] * scale for r in rows]
    peer = rep.doc["published"]["kind"] == "peer"
    ours_label = f"rttlab{what} (mean, {rep.level:.0%} CI)"
    theirs_label = rep.doc["published"]["simulator"] if peer else "published"
    if _numeric_panel(rep, rows):
        x = [float(r["params"][rep.by[0]]) for r in rows]
        ax.errorbar(x, ours, yerr=err, fmt="o", capsize=3, color=colour("rttlab"), label=ours_label)
        ax.plot(x, published, "s", mfc="none", color=colour("ns3"), label=theirs_label)
        if not contrast:
            from rttlab.trace.plot import plain_log_ticks

            ax.set_xscale("log")
            ax.set_yscale("log")
            plain_log_ticks(ax.yaxis)
        ax.set_xlabel(axis_label(rep.by[0]))
        ax.set_ylabel(label)
        if contrast:
            ax.axhline(0, color="grey", lw=0.5)
    else:
        y = list(range(len(rows)))
        ax.errorbar(ours, y, xerr=err, fmt="o", capsize=3, color=colour("rttlab"), label=ours_label)
        ax.plot(published, y, "s", mfc="none", color=colour("ns3"), label=theirs_label)
        ax.set_yticks(
            y, [textwrap.shorten(r["point"], 70, placeholder="…") for r in rows], fontsize=7
        )
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.set_ylabel("point")
        if contrast:
            ax.axvline(0, color="grey", lw=0.5)
        if ratio:
            ax.axvline(1, color="grey", lw=0.5, ls="--")
    ax.grid(True, color="0.92", lw=0.6)
    ax.legend(fontsize=7)
