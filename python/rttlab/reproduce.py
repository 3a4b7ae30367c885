"""Reproductions: a sweep plus the published numbers and how ours are compared — data, not code.

A reproduction is a TOML file in ``rttlab/reproductions/`` (docs/experiments.md)::

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

    # kind = "table" with only_listed = true: points without a published value are left out

    [sweep] / [set] / [grid] / [zip] / [scenario]   # a sweep file's tables
    [quick.sweep] / [quick.set] / [quick.grid] / [quick.zip]   # replace those tables for --quick

A metric ``flows.COLUMN`` is a per-flow column (the store's ``flows`` table) joined with its run's
parameters: ``by`` may then name ``flow``; without it a run's flows are summed. ``[[report]]``
entries (``title``, ``metric``, ``by``, optional ``expr`` over the flows table's columns, e.g.
``"rtt_max_s - rtt_min_s"``) are printed as tables of ours alone, for results with nothing
published to compare against.

Every comparison row: the point, ours (mean, Student-t CI at ``level``, n), the published value
and its source, the relative difference, and whether it matched within ``tolerance``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from rttlab.sweep import Sweep, SweepError


class ReproductionError(Exception):
    pass


def available() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in resources.files("rttlab").joinpath("reproductions").iterdir() if p.name.endswith(".toml"))


@dataclass
class Reproduction:
    name: str
    doc: dict[str, Any]
    quick: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, name: str, quick: bool = False) -> Reproduction:
        if name not in available():
            raise ReproductionError(f"no reproduction named {name!r} (have: {', '.join(available())})")
        text = resources.files("rttlab").joinpath("reproductions", f"{name}.toml").read_text()
        doc = tomllib.loads(text)
        return cls(name=name, doc=doc, quick=quick, meta=doc["reproduction"])

    @property
    def sweep_name(self) -> str:
        return f"{self.name}-quick" if self.quick else self.name

    def sweep(self) -> Sweep:
        tables = {k: dict(self.doc[k]) for k in ("sweep", "set", "grid", "zip", "scenario") if k in self.doc}
        if self.quick:
            for k, v in self.doc.get("quick", {}).items():
                tables[k] = {**tables.get(k, {}), **v} if k in ("sweep", "set") else dict(v)
        tables.setdefault("sweep", {})["name"] = self.sweep_name
        try:
            return Sweep.from_dict(tables, source=f"reproduction {self.name}")
        except SweepError as e:
            raise ReproductionError(str(e)) from None

    @property
    def by(self) -> list[str]:
        return list(self.meta["by"])

    @property
    def metric(self) -> str:
        return self.meta["metric"]

    @property
    def level(self) -> float:
        return float(self.meta.get("level", 0.95))

    @property
    def tolerance(self) -> float:
        return float(self.meta["tolerance"])

    def frame(self, runs: Any, flows: Any, metric: str, by: list[str], expr: str | None = None) -> tuple[Any, str]:
        """The rows to summarise and the column holding ``metric``: the successful runs, or for
        ``flows.COLUMN`` their per-flow rows with the run's parameters (summed per run unless
        ``flow`` is in ``by``); ``expr`` computes the column from the flows table's columns."""
        ok = runs[runs["status"] == "ok"]
        if not metric.startswith("flows."):
            return ok, metric
        col = metric.removeprefix("flows.")
        if flows is None:
            raise ReproductionError(f"reproduction {self.name}: metric {metric} needs the per-flow table")
        f = flows[flows["hash"].isin(ok["hash"])].copy()
        if expr:
            f[col] = f.eval(expr)
        keep = ["hash", *[k for k in by if k != "flow"]]
        if "simulator" in ok.columns and "simulator" not in keep:
            keep.append("simulator")
        merged = f.merge(ok[keep], on="hash")
        if "flow" not in by:
            merged = merged.groupby(keep, as_index=False, dropna=False)[col].sum()
        return merged, col

    def compare(self, runs: Any, flows: Any = None) -> list[dict[str, Any]]:
        """Comparison rows from the stored runs (and per-flow rows) of this reproduction's sweep."""
        from rttlab.stats import summarise

        ok, col = self.frame(runs, flows, self.metric, self.by)
        pub = self.doc["published"]
        kind = pub["kind"]
        if kind == "peer":
            peer = pub["simulator"]
            ours = summarise(ok[ok["simulator"] == "rttlab"], self.by, [col], self.level)
            theirs = summarise(ok[ok["simulator"] == peer], self.by, [col], self.level)
            theirs = {tuple(r[k] for k in self.by): r for r in theirs.to_dict("records")}
        else:
            ours = summarise(ok, self.by, [col], self.level)
        rows = []
        for r in ours.to_dict("records"):
            key = tuple(r[k] for k in self.by)
            point = dict(zip(self.by, key))
            if kind == "formula":
                published, source = self._formula(point), pub["source"]
            elif kind == "table":
                published, source = self._table(point)
                if pub.get("only_listed") and math.isnan(published):
                    continue
            elif kind == "peer":
                t = theirs.get(key)
                published = t["mean"] if t else math.nan
                if t is None:
                    source = f"{pub['simulator']}: no successful run"
                elif t["n"] > 1:
                    source = f"{pub['simulator']} ({t['n']} runs, {self.level:.0%} CI ±{t['half_width']:.4g})"
                else:
                    source = f"{pub['simulator']} (1 run)"
            else:
                raise ReproductionError(f"reproduction {self.name}: published.kind {kind!r} is not formula, table or peer")
            diff = r["mean"] / published - 1 if published and not math.isnan(published) else math.nan
            rows.append(
                {
                    "point": ", ".join(f"{k}={_short(v)}" for k, v in point.items()),
                    "params": point,
                    "metric": self.metric,
                    "published": published,
                    "source": source,
                    "ours": r["mean"],
                    "ci_low": r["ci_low"],
                    "ci_high": r["ci_high"],
                    "n": int(r["n"]),
                    "diff": diff,
                    "tolerance": self.tolerance,
                    "matched": bool(not math.isnan(diff) and abs(diff) <= self.tolerance),
                    "inside_ci": bool(r["ci_low"] <= published <= r["ci_high"]) if not math.isnan(r["ci_low"]) else False,
                }
            )
        return rows

    def reports(self, runs: Any, flows: Any = None) -> list[dict[str, Any]]:
        """The ``[[report]]`` tables: ours alone (mean, CI, n) per point."""
        from rttlab.stats import summarise

        out = []
        for spec in self.doc.get("report", []):
            by = list(spec["by"])
            frame, col = self.frame(runs, flows, spec["metric"], by, spec.get("expr"))
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
            out.append({"title": spec.get("title", spec["metric"]), "metric": spec["metric"], "rows": rows})
        return out

    def _formula(self, point: dict[str, Any]) -> float:
        import pandas as pd

        pub = self.doc["published"]
        env = dict(pub.get("constants", {}))
        for var, column in pub.get("vars", {}).items():
            env[var] = float(point[column])
        # pandas' expression evaluator: arithmetic and sqrt/log/exp, no Python beyond that.
        return float(pd.DataFrame([env]).eval(pub["formula"]).iloc[0])

    def _table(self, point: dict[str, Any]) -> tuple[float, str]:
        for v in self.doc["published"]["values"]:
            if all(_same(point.get(k), x) for k, x in v["point"].items()):
                return float(v["value"]), v["source"]
        return math.nan, "not published for this point"


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

    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    labels = [r["point"] for r in rows]
    x = list(range(len(rows)))
    numeric = len(rep.by) == 1 and all(isinstance(r["params"][rep.by[0]], (int, float)) for r in rows)
    if numeric:
        x = [float(r["params"][rep.by[0]]) for r in rows]
    ours = [r["ours"] for r in rows]
    err = [[r["ours"] - r["ci_low"] if not math.isnan(r["ci_low"]) else 0 for r in rows], [r["ci_high"] - r["ours"] if not math.isnan(r["ci_high"]) else 0 for r in rows]]
    ax.errorbar(x, ours, yerr=err, fmt="o", capsize=3, label=f"rttlab (mean, {rep.level:.0%} CI)")
    ax.plot(x, [r["published"] for r in rows], "s", mfc="none", label="published" if rep.doc["published"]["kind"] != "peer" else rep.doc["published"]["simulator"])
    if numeric:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(rep.by[0])
    else:
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(rep.metric)
    ax.set_title(rep.meta.get("title", rep.name), fontsize=9)
    ax.legend(fontsize=8)
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # inline: no XML prolog or doctype
