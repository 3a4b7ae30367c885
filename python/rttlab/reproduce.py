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

    [sweep] / [set] / [grid] / [zip] / [scenario]   # a sweep file's tables
    [quick.sweep] / [quick.set] / [quick.grid] / [quick.zip]   # replace those tables for --quick

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
    #: "full" (the file's own tables) or the name of a ``[scale.NAME.*]`` overlay (e.g. "medium").
    scale: str = "full"

    @classmethod
    def load(cls, name: str, quick: bool = False, scale: str = "full") -> Reproduction:
        if name not in available():
            raise ReproductionError(f"no reproduction named {name!r} (have: {', '.join(available())})")
        text = resources.files("rttlab").joinpath("reproductions", f"{name}.toml").read_text()
        doc = tomllib.loads(text)
        scales = ["full", *doc.get("scale", {})]
        if scale not in scales:
            raise ReproductionError(f"reproduction {name}: no scale {scale!r} (have: {', '.join(scales)})")
        return cls(name=name, doc=doc, quick=quick, meta=doc["reproduction"], scale=scale)

    @property
    def sweep_name(self) -> str:
        if self.quick:
            return f"{self.name}-quick"
        return self.name if self.scale == "full" else f"{self.name}-{self.scale}"

    def sweep(self) -> Sweep:
        tables = {k: dict(self.doc[k]) for k in ("sweep", "set", "grid", "zip", "scenario") if k in self.doc}
        overlay = self.doc.get("quick", {}) if self.quick else self.doc.get("scale", {}).get(self.scale, {})
        if overlay:
            for k, v in overlay.items():
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

    def compare(self, runs: Any) -> list[dict[str, Any]]:
        """Comparison rows from the stored runs of this reproduction's sweep."""
        from rttlab.stats import summarise

        ok = runs[runs["status"] == "ok"]
        pub = self.doc["published"]
        kind = pub["kind"]
        if kind == "claims":
            return self._claims(ok)
        if kind == "peer":
            peer = pub["simulator"]
            ours = summarise(ok[ok["simulator"] == "rttlab"], self.by, [self.metric], self.level)
            theirs = summarise(ok[ok["simulator"] == peer], self.by, [self.metric], self.level)
            theirs = {tuple(r[k] for k in self.by): r for r in theirs.to_dict("records")}
        else:
            ours = summarise(ok, self.by, [self.metric], self.level)
        rows = []
        for r in ours.to_dict("records"):
            key = tuple(r[k] for k in self.by)
            point = dict(zip(self.by, key))
            if kind == "formula":
                published, source = self._formula(point), pub["source"]
            elif kind == "table":
                published, source = self._table(point)
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
                raise ReproductionError(f"reproduction {self.name}: published.kind {kind!r} is not formula, table, peer or claims")
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

    def _claims(self, ok: Any) -> list[dict[str, Any]]:
        """Published claims that compare two groups of runs (``kind = "claims"``): per point
        (``by``), ratio = mean of ``metric`` over the ``ours`` runs / over the ``versus`` runs
        (both within ``where``), tested against ``ratio = "<= 0.7"`` (or ``>=``) at ``holds`` =
        ``"all"`` points or ``"any"``; ``gap_grows``: ours − versus larger at the largest ``by``
        than at the smallest. One row per point and one verdict row per claim (its point is
        ``claim: ID``), whose ``matched`` says whether the claim holds in our runs."""
        from rttlab.stats import summarise

        rows = []
        for c in self.doc["published"]["claims"]:
            op, _, value = c["ratio"].partition(" ")
            if op not in ("<=", ">="):
                raise ReproductionError(f"reproduction {self.name}: claim {c['id']}: ratio must be '<= X' or '>= X'")
            threshold = float(value)
            def only(frame: Any, sel: dict[str, Any]) -> Any:
                for k, v in sel.items():  # a column the sweep never had: no run matches
                    frame = frame[frame[k] == v] if k in frame else frame.iloc[0:0]
                return frame

            frame = only(ok, c.get("where", {}))
            if c["metric"] not in frame or c["by"] not in frame:
                frame = frame.iloc[0:0].assign(**{c["metric"]: [], c["by"]: []})

            def group(sel: dict[str, Any], frame: Any = frame) -> dict[Any, dict[str, Any]]:
                frame = only(frame, sel)
                table = summarise(frame.dropna(subset=[c["metric"]]), [c["by"]], [c["metric"]], self.level)
                return {r[c["by"]]: r for r in table.to_dict("records")}

            ours, versus = group(c["ours"]), group(c["versus"])
            points = sorted(set(ours) & set(versus))
            results = []
            for p in points:
                a, b = ours[p], versus[p]
                ratio = a["mean"] / b["mean"] if b["mean"] else math.nan
                holds = bool(ratio <= threshold) if op == "<=" else bool(ratio >= threshold)
                results.append((p, a, b, ratio, holds))
                rows.append(self._claim_row(f"{c['id']}: {c['by']}={_short(p)}", {c["by"]: p, "claim": c["id"]}, c, ratio, threshold, min(a["n"], b["n"]), holds,
                                            f"{c['source']}: ours {a['mean']:.4g} vs {b['mean']:.4g}"))
            verdicts = [h for *_, h in results]
            holds = bool(verdicts) and (all(verdicts) if c.get("holds", "all") == "all" else any(verdicts))
            if c.get("gap_grows"):  # one point cannot show a growing gap
                first, last = results[0] if results else None, results[-1] if results else None
                holds = holds and len(results) >= 2 and (last[1]["mean"] - last[2]["mean"]) > (first[1]["mean"] - first[2]["mean"])
            best = min((r[3] for r in results), default=math.nan) if op == "<=" else max((r[3] for r in results), default=math.nan)
            rows.append(self._claim_row(f"claim: {c['id']}", {"claim": c["id"]}, c, best, threshold, len(results), holds, c["text"]))
        return rows

    def _claim_row(self, point: str, params: dict[str, Any], c: dict[str, Any], ratio: float, threshold: float, n: int, matched: bool, source: str) -> dict[str, Any]:
        return {
            "point": point, "params": params, "metric": f"{c['metric']} ratio", "published": threshold, "source": source,
            "ours": ratio, "ci_low": math.nan, "ci_high": math.nan, "n": int(n),
            "diff": ratio / threshold - 1 if threshold else math.nan, "tolerance": 0.0, "matched": matched, "inside_ci": False,
        }

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
    numeric = len(rep.by) == 1 and rep.doc["published"]["kind"] != "claims" and all(isinstance(r["params"][rep.by[0]], (int, float)) for r in rows)
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
