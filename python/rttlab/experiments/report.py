"""``rttlab report``: one self-contained HTML file from a results store.

No external resources: CSS and a few lines of script inline, figures as inline SVG (matplotlib,
text kept as ``<text>`` so the labels are in the page). Per sweep: what was varied and what was
measured, one figure per measured metric against the varied parameters (a numeric parameter on a
numeric axis, the others as groups), an evaluate sweep's Pareto front, and a table of means with
their interval as ±. Per reproduction: published beside ours for every claim, with its verdict.

Every number shown carries its exact value in ``data-value`` and what it is in ``data-key``
(``sweep|point|metric|stat``), so a test (tests/test_report.py, headless Chromium) can check the
rendered page against the store; every axis label carries an id ending ``-xlabel``/``-ylabel``.
"""

from __future__ import annotations

import html
import io
import math
from itertools import count
from typing import Any

from rttlab.experiments.stats import paired, summarise, summarise_bootstrap
from rttlab.experiments.store import RUN_COLUMNS, Store
from rttlab.palette import EXTENDED, colour
from rttlab.trace.labels import numeric, quantity, sig

#: Metrics a sweep's runs may carry, in the order they are shown (run columns, then an evaluate
#: job's scores, docs/metrics.md); words and units from rttlab.trace.labels.
METRICS = [
    "goodput_bps",
    "jain_index",
    "utilisation",
    "drops",
    "timeouts",
    "mae_s",
    "bad_timeout_rate",
    "wait_mean_s",
]
#: Parameters whose values are names with a fixed colour (rttlab.palette).
NAMED = {"estimator", "tcp.cc", "tcp.estimator", "tcp.rto.estimator", "simulator"}
#: Markers and dashes telling apart the lines of one colour (the parameters after the first).
MARKERS = ("o", "s", "^", "D", "v", "P")
DASHES = ("-", "--", ":", "-.")

CSS = """
*, *::before, *::after { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 1120px; color: #222; padding: 0 1.2em; }
h1 { font-size: 1.55em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2.2em; } h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 13px; width: 100%; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 8px; vertical-align: top; overflow-wrap: break-word; }
td.param { white-space: nowrap; }
th { background: #f5f5f5; cursor: pointer; text-align: left; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num span { white-space: nowrap; } /* a number never breaks; a narrow column puts its ± part under the mean */
.pm { color: #666; display: inline-block; }
.no { color: #b00; font-weight: bold; } .yes { color: #070; font-weight: bold; }
.meta { color: #555; } dl.design { display: grid; grid-template-columns: max-content 1fr; gap: 0.2em 1em; }
dl.design dt { font-weight: 600; } dl.design dd { margin: 0; overflow-wrap: anywhere; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr)); gap: 1em; }
figure { margin: 0.6em 0; min-width: 0; } figcaption { color: #555; font-size: 13px; }
svg { max-width: 100%; height: auto; display: block; }
code { background: #f6f6f6; padding: 0 3px; overflow-wrap: anywhere; }
@media (max-width: 1000px) { body { font-size: 14px; } table { font-size: 12px; } th, td { padding: 3px 5px; } .figures { grid-template-columns: 1fr; } }
"""

# Click a header to sort its table (numbers by data-value).
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var key = function (r) { var c = r.cells[col]; var v = c.getAttribute("data-sort"); return v === null ? c.textContent : parseFloat(v); };
    var dir = th.getAttribute("data-dir") === "asc" ? -1 : 1;
    th.setAttribute("data-dir", dir === 1 ? "asc" : "desc");
    rows.sort(function (a, b) { var x = key(a), y = key(b); return (x > y ? 1 : x < y ? -1 : 0) * dir; });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""

_figure_ids = count(1)


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def fmt(v: Any, scale: float = 1.0) -> str:
    """A value as shown: numbers to 3 significant figures in their display unit."""
    if missing(v):
        return "—"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return sig(float(v) * scale)
    return str(v)


def key_value(v: Any) -> str:
    """A parameter value in a data-key (floats to 4 significant figures, as before)."""
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def number(v: Any, key: str, scale: float = 1.0) -> str:
    """A number: shown to 3 significant figures in its unit, exact in data-value (stored units)."""
    value = "NaN" if missing(v) else repr(float(v))
    return f'<span data-key="{esc(key)}" data-value="{value}">{fmt(v, scale)}</span>'


def integer(v: Any, key: str) -> str:
    """A count: every digit (a count to 3 significant figures would read as another count)."""
    value = "NaN" if missing(v) else repr(float(v))
    return f'<span data-key="{esc(key)}" data-value="{value}">{"—" if missing(v) else f"{int(v):,}"}</span>'


def mean_cell(
    mean: Any, half: Any, key: str, scale: float, low: Any = None, high: Any = None
) -> str:
    """``mean ± half width`` in one cell (sorted by the mean); an interval without a half width
    (a bootstrap's, not symmetric) as ``mean (low – high)``."""
    sort = "" if missing(mean) else f' data-sort="{float(mean)!r}"'
    if missing(half) and not missing(low):
        pm = f' <span class="pm">({number(low, key + "|ci_low", scale)} – {number(high, key + "|ci_high", scale)})</span>'
    else:
        pm = (
            ""
            if missing(half)
            else f' <span class="pm">± {number(half, key + "|half_width", scale)}</span>'
        )
    return f'<td class="num"{sort}>{number(mean, key + "|mean", scale)}{pm}</td>'


def error_bars(rows: Any, scale: float) -> list[list[float]]:
    """Below/above the mean from the interval's ends (0 where undefined)."""
    low = [0.0 if missing(lo) else (m - lo) * scale for m, lo in zip(rows["mean"], rows["ci_low"])]
    high = [
        0.0 if missing(hi) else (hi - m) * scale for m, hi in zip(rows["mean"], rows["ci_high"])
    ]
    return [low, high]


def table(headers: list[tuple[str, bool]], rows: list[str]) -> str:
    """``headers``: (text, numeric?) per column."""
    head = "".join(
        f'<th class="num">{esc(h)}</th>' if n else f"<th>{esc(h)}</th>" for h, n in headers
    )
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def label_axes(ax: Any, fig_id: str, k: int = 0) -> None:
    """Give the axis labels ids the page test finds (``FIG-xlabel-K``)."""
    ax.xaxis.label.set_gid(f"{fig_id}-xlabel-{k}")
    ax.yaxis.label.set_gid(f"{fig_id}-ylabel-{k}")


def svg(fig: Any) -> str:
    import matplotlib

    plt = _pyplot()
    buf = io.StringIO()
    # Text as <text>, not glyph paths: the labels are searchable and checked in the DOM.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "rttlab"}):
        fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def figure(fig: Any, fig_id: str, caption: str) -> str:
    return f'<figure id="{esc(fig_id)}">{svg(fig)}<figcaption>{caption}</figcaption></figure>'


def point_label(row: dict[str, Any], by: list[str]) -> str:
    """A point's name in data-keys: ``key=value`` of each grouped key it has (an estimator's own
    parameter is missing on the other estimators' points)."""
    return ", ".join(f"{k}={key_value(row[k])}" for k in by if not missing(row[k])) or "all runs"


def sort_values(values: list[Any]) -> list[Any]:
    """Distinct values in order: numerically where every one is a quantity (5Mbps before 20Mbps)."""
    distinct = list(dict.fromkeys(v for v in values if not missing(v)))
    nums = [numeric(v) for v in distinct]
    if all(x is not None for x in nums):
        return [v for _, v in sorted(zip(nums, distinct), key=lambda p: p[0])]
    return sorted(distinct, key=str)


def design(runs: Any, params: list[str]) -> tuple[list[str], list[str]]:
    """The varied parameters (more than one value among the runs) and the fixed ones."""
    by = [c for c in params if runs[c].notna().any() and runs[c].nunique(dropna=True) > 1]
    fixed = [c for c in params if runs[c].notna().any() and runs[c].nunique(dropna=True) == 1]
    if runs["simulator"].nunique() > 1:
        by.append("simulator")
    return by, fixed


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def short(column: str) -> str:
    """A parameter's header: its words (``topology.bottleneck.bandwidth`` → bottleneck bandwidth)."""
    q = quantity(column)
    return q.words


def metric_figure(
    summary: Any,
    sweep: str,
    metric: str,
    by: list[str],
    values: dict[str, list[Any]],
    level: float,
    how: str = "Student-t",
) -> str:
    """``metric``'s mean (and interval) against the varied parameters: the first numeric one on a
    numeric axis, one line per combination of the others; with none numeric, a dot plot with the
    points on the vertical axis."""
    plt = _pyplot()
    fig_id = f"fig{next(_figure_ids)}"
    q = quantity(metric)
    g = summary[summary["metric"] == metric]
    # A parameter set on only some runs (an estimator's own, NULL on the others) is no axis.
    numeric_params = [
        p for p in by if g[p].notna().all() and all(numeric(v) is not None for v in values[p])
    ]
    if numeric_params:
        x_param = numeric_params[0]
        others = [p for p in by if p != x_param]
        xq = quantity(x_param)
        fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
        groups = list(g.groupby(others, dropna=False, sort=False)) if others else [((), g)]
        order = {
            tuple(k) if isinstance(k, tuple) else (k,): i
            for i, k in enumerate(_combos(values, others))
        }
        groups.sort(key=lambda kv: order.get(kv[0] if isinstance(kv[0], tuple) else (kv[0],), 0))
        # Colour says the first other parameter (an estimator's or congestion control's own colour),
        # marker and dash the rest, so a line is found by its values, not by its place in a list.
        first = others[0] if others else None
        colours = (
            {
                v: colour(str(v)) if first in NAMED else EXTENDED[i % len(EXTENDED)]
                for i, v in enumerate(values[first])
            }
            if first
            else {}
        )
        styles = {
            combo: (MARKERS[i % len(MARKERS)], DASHES[i % len(DASHES)])
            for i, combo in enumerate(_combos(values, others[1:]))
        }
        for key, rows in groups:
            key = key if isinstance(key, tuple) else (key,)
            rows = rows.assign(_x=[numeric(v) * xq.scale for v in rows[x_param]]).sort_values("_x")
            name = ", ".join(
                f"{short(p)} {fmt(v)}" if p not in NAMED else str(v)
                for p, v in zip(others, key)
                if not missing(v)
            )
            c = colours.get(key[0], "0.35") if first else EXTENDED[0]
            marker, dash = styles.get(tuple(key[1:]), ("o", "-"))
            ax.errorbar(
                rows["_x"],
                rows["mean"] * q.scale,
                yerr=error_bars(rows, q.scale),
                marker=marker,
                ms=4,
                lw=1.2,
                ls=dash,
                capsize=3,
                color=c,
                label=name or None,
            )
        xs = [numeric(v) for v in values[x_param]]
        if all(x > 0 for x in xs) and max(xs) / min(xs) >= 20:
            from rttlab.trace.plot import plain_log_ticks

            ax.set_xscale("log")
            plain_log_ticks(ax.xaxis)
        unit = xq.unit or _unit_of(values[x_param])
        ax.set_xlabel(f"{xq.words} ({unit})" if unit else xq.words)
        ax.set_ylabel(q.label())
        if others:
            fig.legend(
                title=", ".join(short(p) for p in others),
                fontsize=7,
                title_fontsize=7,
                loc="outside right upper",
            )
    else:
        labels = [point_label(r, by) for r in g.to_dict("records")]
        pretty = [
            ", ".join(
                str(r[p]) if p in NAMED else f"{short(p)} {fmt(r[p])}"
                for p in by
                if not missing(r[p])
            )
            for r in g.to_dict("records")
        ]
        order = sorted(range(len(labels)), key=lambda i: _rank(g.iloc[i], by, values))
        fig, ax = plt.subplots(figsize=(6.4, 0.8 + 0.28 * len(labels)), layout="constrained")
        for y, i in enumerate(order):
            r = g.iloc[i]
            c = colour(str(r[by[0]])) if by[0] in NAMED else EXTENDED[0]
            ax.errorbar(
                [r["mean"] * q.scale],
                [y],
                xerr=error_bars(g.iloc[[i]], q.scale),
                fmt="o",
                ms=5,
                capsize=3,
                color=c,
            )
        ax.set_yticks(range(len(order)), [pretty[i] for i in order], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(q.label())
        ax.set_ylabel(", ".join(short(p) for p in by))
    ax.grid(True, color="0.92", lw=0.6)
    ax.set_title(f"{q.words}: mean and {level:.0%} interval", fontsize=9, loc="left")
    label_axes(ax, fig_id)
    return figure(
        fig,
        fig_id,
        f"{esc(upper_first(q.words))} per point of sweep <code>{esc(sweep)}</code> (mean over the replications, bars: {level:.0%} {how} interval).",
    )


def _unit_of(values: list[Any]) -> str:
    """The unit :func:`numeric` read a parameter's text values in (SI), for an unnamed parameter."""
    text = [v for v in values if isinstance(v, str)]
    if not text:
        return ""
    v = text[0]
    if v.rstrip().endswith(("bps", "b/s")):
        return "b/s"
    if v.rstrip().endswith("B"):
        return "B"
    if v.rstrip().endswith("p"):
        return "packets"
    return "s"


def _combos(values: dict[str, list[Any]], params: list[str]) -> list[tuple[Any, ...]]:
    import itertools

    return list(itertools.product(*(values[p] for p in params))) if params else [()]


def _rank(row: Any, by: list[str], values: dict[str, list[Any]]) -> tuple[int, ...]:
    return tuple(values[p].index(row[p]) if row[p] in values[p] else len(values[p]) for p in by)


def front_section(ok: Any, sweep: str, by: list[str]) -> str:
    """An evaluate sweep's Pareto front: per point, bad-timeout rate and W averaged over inputs."""
    from rttlab.trace.plot import front_figure

    if not {"bad_timeout_rate", "wait_mean_s"} <= set(ok.columns):
        return ""
    keys = by or ["estimator"]
    rows = []
    for key, g in ok.groupby(keys, dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        point = dict(zip(keys, key))
        label = " ".join(
            [str(point.get("estimator", ""))]
            + [
                f"{k.rsplit('.', 1)[-1]}={fmt(v)}"
                for k, v in point.items()
                if k != "estimator" and not missing(v)
            ]
        ).strip()
        rows.append(
            {
                "estimator": label,
                "bad_timeout_rate": g["bad_timeout_rate"].mean(),
                "wait_mean_s": g["wait_mean_s"].mean(),
            }
        )
    fig_id = f"fig{next(_figure_ids)}"
    fig = front_figure(rows, title=f"{sweep}: means over {ok['name'].nunique()} inputs")
    label_axes(fig.axes[0], fig_id)
    return figure(
        fig,
        fig_id,
        "Bad-timeout rate against mean wait W per point (each the mean over the inputs); ◆ the Pareto front.",
    )


def sweep_section(store: Store, sweep: str, level: float) -> str:
    runs = store.runs(sweep, scores=True)
    if is_tuning(runs):
        return tune_section(store, sweep, runs)
    params = [c for c in store.columns("runs") if c not in RUN_COLUMNS]
    replay = len(runs) > 0 and bool((runs["simulator"] == "replay").all())
    ok = runs[runs["status"] == "ok"]
    by, fixed = design(runs, params)
    values = {p: sort_values(runs[p].tolist()) for p in by}
    metrics = [m for m in METRICS if m in ok.columns and ok[m].notna().any()]
    out = [f'<h2 id="sweep-{esc(sweep)}">Sweep <code>{esc(sweep)}</code></h2>']
    versions = sorted(
        {
            f"rttlab {a} / {b}"
            for a, b in zip(runs["rttlab_version"], runs["simulator_version"].fillna("—"))
        }
    )
    if replay:
        inputs = sorted(runs["name"].dropna().unique())
        replications = f"replications: {len(inputs)} input file{'s' if len(inputs) != 1 else ''} ({esc(', '.join(str(i).rsplit('/', 1)[-1] for i in inputs[:6]))}{', …' if len(inputs) > 6 else ''})"
    else:
        seeds = sorted(runs["seed"].dropna().unique())
        replications = (
            f"replications: seed{'s' if len(seeds) != 1 else ''} {esc(', '.join(str(int(s)) for s in seeds))}"
            if seeds
            else "no seeds recorded"
        )
    out.append(
        f'<p class="meta">{len(runs)} runs: <span data-key="{esc(sweep)}|runs|ok" data-value="{len(ok)}">{len(ok)}</span> ok, '
        f'<span data-key="{esc(sweep)}|runs|failed" data-value="{len(runs) - len(ok)}">{len(runs) - len(ok)}</span> failed; '
        f"{replications}; {esc('; '.join(versions))}; intervals: {'percentile bootstrap' if replay else 'Student-t'}, {level:.0%}, over the replications.</p>"
    )
    items = []
    if by:
        items.append(
            "<dt>Varied</dt><dd>"
            + "; ".join(
                f"{esc(short(p))} (<code>{esc(p)}</code>): {esc(', '.join(fmt(v) for v in values[p]))}"
                for p in by
            )
            + "</dd>"
        )
    if fixed:
        items.append(
            "<dt>Fixed</dt><dd>"
            + "; ".join(f"{esc(short(c))} = {esc(fmt(runs[c].dropna().iloc[0]))}" for c in fixed)
            + "</dd>"
        )
    items.append(
        "<dt>Measured</dt><dd>"
        + (esc("; ".join(quantity(m).label() for m in metrics)) or "nothing (no successful run)")
        + "</dd>"
    )
    out.append(f'<dl class="design">{"".join(items)}</dl>')
    if len(ok):
        # Over an evaluate sweep's input files, a percentile bootstrap: traces differ far more than
        # seeds, and a Student-t interval over three of them can reach below zero for an MAE
        # (rttlab/experiments/stats.py; the paired table below compares the estimators).
        summary = (summarise_bootstrap if replay else summarise)(ok, by, metrics, level)
        how = "percentile bootstrap" if replay else "Student-t"
        figures = []
        if replay:
            figures.append(front_section(ok, sweep, by))
        # A metric that is the same at every point (one flow's Jain index) gets a sentence, not a figure.
        constant = [m for m in metrics if ok[m].nunique(dropna=True) == 1]
        if by:
            figures += [
                metric_figure(summary, sweep, m, by, values, level, how)
                for m in metrics
                if m not in constant
            ]
        if constant:
            out.append(
                "<p>The same in every run: "
                + "; ".join(
                    f"{esc(quantity(m).words)} = {esc(fmt(ok[m].dropna().iloc[0], quantity(m).scale))}{' ' + esc(quantity(m).unit) if quantity(m).unit else ''}"
                    for m in constant
                )
                + ".</p>"
            )
        if figures:
            out.append('<div class="figures">' + "".join(figures) + "</div>")
        rows = point_rows(
            summary,
            by,
            metrics,
            values,
            lambda r, label, m: mean_cell(
                r["mean"],
                r["half_width"],
                f"{sweep}|{label}|{m}",
                quantity(m).scale,
                r["ci_low"],
                r["ci_high"],
            ),
        )
        headers = (
            [(short(p), False) for p in by]
            + [("n", True)]
            + [(quantity(m).label(), True) for m in metrics]
        )
        what = (
            f"({level:.0%} percentile bootstrap interval over the input files)"
            if replay
            else f"± the {level:.0%} Student-t interval over the seeds"
        )
        out.append(f"<h3>Means per point, {what}</h3>" + table(headers, rows))
        out.append(paired_section(ok, sweep, by, metrics, values, level, replay))
    failed = runs[runs["status"] != "ok"]
    if len(failed):
        rows = [
            f"<tr><td><code>{esc(r['hash'][:12])}</code></td><td>{esc(point_label(r, by))}</td><td>{esc(fmt(r['seed']) if not replay else str(r['name']).rsplit('/', 1)[-1])}</td><td>{esc(r['error_kind'])}</td><td>{esc(r['error'])}</td></tr>"
            for r in failed.to_dict("records")
        ]
        out.append(
            "<h3>Failed runs</h3>"
            + table(
                [
                    ("run", False),
                    ("point", False),
                    ("input" if replay else "seed", False),
                    ("error", False),
                    ("message", False),
                ],
                rows,
            )
        )
    return "\n".join(out)


def is_tuning(runs: Any) -> bool:
    """A tuning's sweep (``rttlab tune --store``): every run a tuning point."""
    return len(runs) > 0 and bool((runs["simulator"] == "tune").all())


def tuning_points(runs: Any) -> Any:
    """A tuning sweep's successful points as the tune figure reads them: ``estimator``,
    ``default``, ``setting`` and the scores, each estimator's front and the joint front
    recomputed over the stored points (rttlab.trace.tune_search.pareto_mask)."""
    from rttlab.trace.tune_search import pareto_mask

    t = runs[runs["status"] == "ok"].copy()
    t["default"] = t["default"].fillna(False).astype(bool)
    t["setting"] = t["label"]
    for c in ("bad_timeout_rate", "wait_mean_s", "wait_p99_s", "mae_s"):
        t[c] = t[c].astype("float64")
    t["joint_front"] = (
        pareto_mask(t["bad_timeout_rate"].to_numpy(), t["wait_mean_s"].to_numpy()) if len(t) else []
    )
    t["estimator_front"] = False
    for _, idx in t.groupby("estimator").groups.items():
        sub = t.loc[idx]
        t.loc[idx, "estimator_front"] = pareto_mask(
            sub["bad_timeout_rate"].to_numpy(), sub["wait_mean_s"].to_numpy()
        )
    return t


def cv_section(doc: dict[str, Any]) -> list[str]:
    """The cross-validated recommendation of a tuning (docs/tuning.md): its headline, the lines
    to apply it, and the folds, each held-out block with its verdict."""
    cv, rec = doc.get("cross_validation"), doc.get("recommendation")
    if not cv or not rec:
        return []
    out = [f"<p><strong>Recommendation</strong> ({esc(cv['method'])}): {esc(cv['headline'])}.</p>"]
    if rec.get("apply"):
        out.append(
            "<p>Apply ("
            + esc(rec.get("apply_note", ""))
            + "):</p><pre>"
            + esc("\n".join(rec["apply"]))
            + "</pre>"
        )
    rows = []
    for f in cv["fold_table"]:
        rate = f.get("bad_timeout_rate")
        ci = f.get("bad_timeout_rate_ci") or [None, None]
        rows.append(
            f'<tr><td class="num">{f["fold"]}</td><td>{esc(f["held_out"])}</td><td>{esc(f["tuned"] or "—")}</td>'
            f'<td class="num">{f["samples"]:,}</td>'
            f'<td class="num">{fmt(rate, 100.0)} ({fmt(ci[0], 100.0)} – {fmt(ci[1], 100.0)})</td>'
            f'<td class="num">{fmt(f.get("wait_mean_s"), 1e3)}</td><td>{esc(f["verdict"])}</td></tr>'
        )
    out.append(
        "<table><thead><tr><th>fold</th><th>held out</th><th>tuned on the other blocks</th><th>samples</th>"
        "<th>bad-timeout rate, % (95 % CI)</th><th>W, ms</th><th>verdict</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    return out


def tune_section(store: Store, sweep: str, runs: Any) -> str:
    """A tuning sweep: its settings, the recommendation, the fronts figure (one colour per
    estimator, defaults hollow, the recommendation a star) and per estimator its defaults beside
    its best point meeting the target. Numbers from the stored points; what only the tuning knows
    (target, recommendation, validation) from its ``tunings`` row, when the run finished."""
    import json

    from rttlab.trace.tune_plot import fronts_figure

    t = tuning_points(runs)
    info = None
    if "tunings" in store.tables():
        found = store.query("SELECT * FROM tunings WHERE sweep = ?", [sweep])
        info = found.iloc[0].to_dict() if len(found) else None
    target = None if info is None else float(info["target"])
    estimators = (
        info["estimators"].split(",") if info is not None else sort_values(t["estimator"].tolist())
    )
    estimators = [e for e in estimators if e in set(t["estimator"])]
    rec = None
    if info is not None and isinstance(info.get("recommendation_hash"), str):
        hit = t[t["hash"] == info["recommendation_hash"]]
        rec = hit.iloc[0].to_dict() if len(hit) else None
    doc = json.loads(info["doc"]) if info is not None and isinstance(info.get("doc"), str) else {}
    failed = int((runs["status"] != "ok").sum())
    out = [f'<h2 id="sweep-{esc(sweep)}">Tuning <code>{esc(sweep)}</code></h2>']
    inputs = (
        info["inputs"]
        if info is not None
        else ", ".join(sort_values(runs["name"].dropna().tolist()))
    )
    samples = int(t["samples"].max()) if len(t) else 0
    versions = sorted({f"rttlab {v}" for v in runs["rttlab_version"].dropna()})
    out.append(
        f'<p class="meta"><span data-key="{esc(sweep)}|runs|ok" data-value="{len(t)}">{len(t)}</span> points replayed and stored '
        f'(<span data-key="{esc(sweep)}|runs|failed" data-value="{failed}">{failed}</span> failed), each over all of the tuning data: '
        f"{esc(inputs)} ({samples:,} scored samples); {esc('; '.join(versions))}.</p>"
    )
    items = [f"<dt>Estimators</dt><dd>{esc(', '.join(estimators))}</dd>"]
    methods = doc.get("methods") or {}
    if methods:
        items.append(
            "<dt>Search</dt><dd>"
            + esc("; ".join(f"{k}: {v}" for k, v in methods.items()))
            + (
                f"; budget {int(info['budget'])} points per estimator, seed {int(info['seed'])}"
                if info is not None
                else ""
            )
            + "</dd>"
        )
    if target is not None:
        conf = info.get("confidence")
        items.append(
            f"<dt>Target</dt><dd>bad-timeout rate ≤ {number(target, f'{sweep}|target|bad_timeout_rate', 100.0)} %"
            + (
                f" at {float(conf):.0%} confidence (Clopper–Pearson upper bound)"
                if conf is not None and not missing(conf)
                else ""
            )
            + "</dd>"
        )
    items.append(
        "<dt>Measured</dt><dd>"
        + esc(
            "; ".join(
                quantity(m).label()
                for m in ("bad_timeout_rate", "wait_mean_s", "wait_p99_s", "mae_s")
            )
        )
        + "</dd>"
    )
    out.append(f'<dl class="design">{"".join(items)}</dl>')
    if info is None:
        out.append(
            "<p>No recommendation stored: the tuning did not finish (rerun <code>rttlab tune … --store</code> to resume it).</p>"
        )
    elif rec is None:
        out.append(
            f"<p><strong>No recommendation</strong>: no point meets a bad-timeout rate of {target:.2%}.</p>"
        )
    else:
        key = f"{sweep}|recommendation"
        out.append(
            f"<p><strong>Fit on all data</strong> (in-sample: the point meeting the target with the smallest W on all the tuning data; the recommendation is chosen by cross-validation, below): <code>{esc(rec['setting'])}</code> — "
            f"bad-timeout rate {number(rec['bad_timeout_rate'], key + '|bad_timeout_rate', 100.0)} % "
            f"({integer(rec['bad_timeouts'], key + '|bad_timeouts')} of {integer(rec['samples'], key + '|samples')}), "
            f"W {number(rec['wait_mean_s'], key + '|wait_mean_s', 1e3)} ms (99th percentile {number(rec['wait_p99_s'], key + '|wait_p99_s', 1e3)} ms), "
            f"forecast MAE {number(rec['mae_s'], key + '|mae_s', 1e3)} ms.</p>"
        )
    out += cv_section(doc)
    v = doc.get("validation")
    if v and v.get("held_out"):
        h = v["held_out"]
        out.append(
            f"<p>Held-out validation ({esc(v['method'])}): bad-timeout rate {fmt(h['bad_timeout_rate'], 100.0)} % "
            f"({fmt(h['bad_timeout_rate_ci'][0], 100.0)} – {fmt(h['bad_timeout_rate_ci'][1], 100.0)}) against the target — {esc(v['verdict'])}; "
            f"W {fmt(h['wait_mean_s'], 1e3)} ms over {h['samples']:,} held-out samples (its searches: sweep <code>{esc(sweep)}.validation</code>).</p>"
        )
    if len(t):
        fig_id = f"fig{next(_figure_ids)}"
        fig = fronts_figure(
            t,
            estimators,
            target,
            rec,
            f"{sweep}: each estimator's Pareto front over {len(t):,} points",
        )
        label_axes(fig.axes[0], fig_id)
        out.append(
            figure(
                fig,
                fig_id,
                "Mean wait W after a loss against the bad-timeout rate: every point faint, each estimator's Pareto front as a line in its colour, "
                "its defaults as a hollow circle, the recommendation as a star, the target dashed.",
            )
        )
        rows = []
        for name in estimators:
            mine = t[t["estimator"] == name]
            key = f"{sweep}|estimator={name}"
            d = mine[mine["default"]]
            d = d.iloc[0] if len(d) else None
            searched = mine[~mine["default"]]
            ok = (
                searched[searched["bad_timeout_rate"] <= target + 1e-12]
                if target is not None
                else searched.iloc[0:0]
            )
            best = (
                ok.sort_values(["wait_mean_s", "bad_timeout_rate"], kind="stable").iloc[0]
                if len(ok)
                else None
            )
            cells = [
                f'<td class="param" style="color:{colour(name)}">■ <span style="color:#222">{esc(name)}</span></td>',
                f'<td class="num">{integer(len(searched), key + "|points")}</td>',
                f'<td class="num">{integer(int(searched["estimator_front"].sum()), key + "|front")}</td>',
                f'<td class="num">{number(None if d is None else d["bad_timeout_rate"], key + "|default|bad_timeout_rate", 100.0)}</td>',
                f'<td class="num">{number(None if d is None else d["wait_mean_s"], key + "|default|wait_mean_s", 1e3)}</td>',
                f"<td>{esc('—' if best is None else best['setting'].removeprefix(name + ' '))}</td>",
                f'<td class="num">{number(None if best is None else best["bad_timeout_rate"], key + "|best|bad_timeout_rate", 100.0)}</td>',
                f'<td class="num">{number(None if best is None else best["wait_mean_s"], key + "|best|wait_mean_s", 1e3)}</td>',
            ]
            rows.append(f"<tr>{''.join(cells)}</tr>")
        headers = [
            ("estimator", False),
            ("points", True),
            ("on its front", True),
            ("defaults: bad-timeout rate (%)", True),
            ("defaults: W (ms)", True),
            ("best point meeting the target", False),
            ("its bad-timeout rate (%)", True),
            ("its W (ms)", True),
        ]
        out.append(
            "<h3>Per estimator: its defaults and its best point meeting the target</h3>"
            + table(headers, rows)
        )
    return "\n".join(out)


def point_rows(
    summary: Any, by: list[str], metrics: list[str], values: dict[str, list[Any]], cell: Any
) -> list[str]:
    """One table row per point of a summary (``by`` keys, then n, then ``cell(row, label,
    metric)`` per metric), the points in the order of their parameters' values."""
    groups = (
        [(k, g) for k, g in summary.groupby(by, dropna=False, sort=False)]
        if by
        else [((), summary)]
    )
    groups.sort(key=lambda kv: _rank(kv[1].iloc[0], by, values))
    rows = []
    for _, g in groups:
        first = g.iloc[0].to_dict()
        label = point_label(first, by)
        cells = [f'<td class="param">{esc(fmt(first[p]))}</td>' for p in by]
        cells.append(f'<td class="num">{int(g["n"].max())}</td>')
        cells += [cell(g[g["metric"] == m].iloc[0].to_dict(), label, m) for m in metrics]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return rows


def paired_design(ok: Any, by: list[str]) -> bool:
    """Whether a simulation sweep is paired: two seeds or more, every point run on the same seeds."""
    if not by or ok["seed"].isna().any():
        return False
    seeds = {tuple(sorted(g["seed"].unique())) for _, g in ok.groupby(by, dropna=False)}
    return len(seeds) == 1 and len(next(iter(seeds))) >= 2


def paired_section(
    ok: Any,
    sweep: str,
    by: list[str],
    metrics: list[str],
    values: dict[str, list[Any]],
    level: float,
    replay: bool = True,
) -> str:
    """Each point against a baseline point, pair by pair: an evaluate sweep's estimators against
    RFC 6298 (or the first estimator) input file by input file; a simulation sweep's points
    against the first value of the first varied parameter (the other parameters kept), seed by
    seed, where every point ran on the same seeds. The mean difference and its Student-t
    interval (docs/experiments.md; the same numbers as ``rttlab results summary``'s paired table)."""
    if replay:
        if "estimator" not in by:
            return ""
        names = values["estimator"]
        first = "rfc6298" if "rfc6298" in names else names[0]
        base, pair_on, unit, units = {"estimator": first}, ["name"], "input file", "files"
    else:
        if not paired_design(ok, by):
            return ""
        base, pair_on, unit, units = {by[0]: values[by[0]][0]}, ["seed"], "seed", "seeds"
    diffs = paired(ok, by, metrics, base, pair_on, level)
    if not len(diffs):
        return ""
    rows = point_rows(
        diffs,
        by,
        metrics,
        values,
        lambda r, label, m: mean_cell(
            r["mean"], r["half_width"], f"{sweep}|{label}|{m}|paired", quantity(m).scale
        ),
    )
    headers = (
        [(short(p), False) for p in by]
        + [(units, True)]
        + [(f"Δ {quantity(m).label()}", True) for m in metrics]
    )
    ((key, value),) = base.items()
    what = f"<code>{esc(value)}</code>" if replay else f"{esc(short(key))} {esc(fmt(value))}"
    why = (
        "What the files share cancels in the differences, so an interval that excludes 0 is a difference between the estimators, however much the files differ among themselves."
        if replay
        else f"Each point is paired with the run of {what} at its other parameters and the same seed: what the seed draws (the random streams) is shared, so it cancels in the "
        "differences, and an interval that excludes 0 is what the parameter changes, even where the per-point intervals above overlap."
    )
    return (
        f"<h3>Each point minus {what}, {unit} by {unit} (± {level:.0%} Student-t over the {units})</h3><p>{why}</p>"
        + table(headers, rows)
    )


def metric_of(name: str) -> tuple[str, float, bool]:
    """A comparison's metric in words with its unit, the display scale, and whether it is a ratio."""
    if name.endswith(" ratio"):
        return f"{quantity(name.removesuffix(' ratio')).words} ratio", 1.0, True
    q = quantity(name)
    return q.label(), q.scale, False


def tolerance_text(r: dict[str, Any], scale: float) -> str:
    """The tolerance as stored: relative in %, absolute in the metric's unit, a claim's threshold."""
    kind = r.get("tolerance_kind") or "relative"
    t = r["tolerance"]
    if kind == "absolute":
        return f"± {fmt(t, scale)} (absolute)"
    if kind == "at least":
        return f"≥ −{fmt(t * 100)} %"
    if kind == "threshold":
        return "claim's bound"
    return f"± {fmt(t * 100)} %"


def reproduction_info(store: Store) -> dict[str, dict[str, Any]]:
    """The ``reproductions`` rows by comparison name (none in a store written before the table)."""
    if "reproductions" not in store.tables():
        return {}
    return {
        r["reproduction"]: r for r in store.query("SELECT * FROM reproductions").to_dict("records")
    }


def reproduction_groups(names: list[str], info: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Comparison names grouped by reproduction (its readings together), primary reading first."""
    groups: dict[str, list[str]] = {}
    for n in names:
        base = info[n]["name"] if n in info and info[n].get("name") else n.partition("@")[0]
        groups.setdefault(base, []).append(n)
    for members in groups.values():
        members.sort(key=lambda n: (not bool(info.get(n, {}).get("primary_reading", True)), n))
    return groups


def comparison_section(
    store: Store, reproduction: str | list[str], info: dict[str, dict[str, Any]] | None = None
) -> str:
    """A reproduction's page: its title and paper, each reading with what the paper says for it,
    published beside ours for every claim (under every reading) with the verdict, a figure per
    metric (the primary reading), and the tables of ours alone it stored."""
    import json

    plt = _pyplot()
    names = [reproduction] if isinstance(reproduction, str) else list(reproduction)
    info = info if info is not None else reproduction_info(store)
    cols = store.columns("comparisons")
    frames = []
    for n in names:
        f = store.query("SELECT * FROM comparisons WHERE reproduction = ? ORDER BY point", [n])
        if "tolerance_kind" not in cols:
            f["tolerance_kind"] = None
        frames.append(f)
    import pandas as pd

    c = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    head = info.get(names[0], {})
    readings = [info[n] for n in names if n in info and info[n].get("reading")]
    anchor = names[0].partition("@")[0] if len(names) > 1 else names[0]
    title = head.get("title")
    out = [
        f'<h2 id="reproduction-{esc(anchor)}">Reproduction <code>{esc(anchor)}</code>'
        + (f": {esc(title)}" if title else ": published vs ours")
        + "</h2>"
    ]
    if head.get("paper") or head.get("source"):
        out.append(
            f'<p class="meta">Paper: <strong>{esc(head.get("paper") or "")}</strong>'
            + (f" — {esc(head['source'])}" if head.get("source") else "")
            + "</p>"
        )
    if readings:
        items = "".join(
            f"<li>{'★ ' if r.get('primary_reading') else ''}<strong>{esc(r['reading'])}</strong>: {esc(r.get('reading_what') or '')} — the paper: <q>{esc(r.get('reading_says') or '')}</q></li>"
            for r in readings
        )
        out.append(
            f"<p>The paper can be read more than one way; every claim is compared under each reading (★ the primary one, chosen from the paper's text; when it was declared is in the reproduction file's git history, not asserted here):</p><ul>{items}</ul>"
        )
    for n in names:
        mine = c[c["reproduction"] == n]
        matched = int(mine["matched"].sum())
        reading = info.get(n, {}).get("reading")
        label = (
            f"reading {'★ ' if info.get(n, {}).get('primary_reading') else ''}{reading}: "
            if reading
            else ""
        )
        verdict_class = "yes" if matched == len(mine) else "no"
        out.append(
            f'<p class="{verdict_class}">{esc(label)}<span data-key="{esc(n)}|claims|matched" data-value="{matched}">{matched}</span> of {len(mine)} published numbers matched within their tolerance.</p>'
        )
    rows = []
    many = len(names) > 1
    # Claim by claim, each under every reading.
    order = {n: i for i, n in enumerate(names)}
    records = c.to_dict("records")
    first_seen: dict[tuple[str, str], int] = {}
    for i, r in enumerate(records):
        first_seen.setdefault((r["point"], r["metric"]), i)
    records.sort(key=lambda r: (first_seen[(r["point"], r["metric"])], order[r["reproduction"]]))
    for r in records:
        key = f"{r['reproduction']}|{r['point']}|{r['metric']}"
        words, scale, _ = metric_of(r["metric"])
        kind = r.get("tolerance_kind") or "relative"
        if kind == "absolute":
            diff = number(r["ours"] - r["published"], key + "|diff", scale)
        else:
            d = r["ours"] / r["published"] - 1 if r["published"] else math.nan
            diff = number(d * 100, key + "|diff_pct") + (" %" if not missing(d) else "")
        half = (
            (r["ci_high"] - r["ci_low"]) / 2
            if not (missing(r["ci_low"]) or missing(r["ci_high"]))
            else math.nan
        )
        ours = number(r["ours"], key + "|ours", scale) + (
            ""
            if missing(half)
            else f' <span class="pm">± {number(half, key + "|half_width", scale)}</span>'
        )
        verdict = (
            '<td class="yes">matched</td>' if r["matched"] else '<td class="no">not matched</td>'
        )
        rd = info.get(r["reproduction"], {})
        reading_cell = (
            f"<td>{'★ ' if rd.get('primary_reading') else ''}{esc(rd.get('reading') or r['reproduction'].partition('@')[2])}</td>"
            if many
            else ""
        )
        rows.append(
            f'<tr><td>{esc(r["point"])}</td>{reading_cell}<td>{esc(words)}</td><td class="num">{number(r["published"], key + "|published", scale)}</td>'
            f'<td class="num">{ours}</td><td class="num">{r["n"]}</td><td class="num">{diff}</td>'
            f'<td class="num">{esc(tolerance_text(r, scale))}</td>{verdict}<td>{esc(r["source"])}</td></tr>'
        )
    headers = [
        ("claim / point", False),
        *((("reading", False),) if many else ()),
        ("metric", False),
        ("published", True),
        ("ours ± CI", True),
        ("n", True),
        ("difference", True),
        ("tolerance", True),
        ("verdict", False),
        ("source", False),
    ]
    out.append(table(headers, rows))
    figures = []
    primary = c[c["reproduction"] == names[0]]
    for metric, g in primary.groupby("metric", sort=False):
        words, scale, ratio = metric_of(metric)
        g = g.reset_index(drop=True)
        fig_id = f"fig{next(_figure_ids)}"
        fig, ax = plt.subplots(figsize=(6.4, 1.0 + 0.32 * len(g)), layout="constrained")
        y = list(range(len(g)))
        lo = ((g["ours"] - g["ci_low"]).fillna(0) * scale).tolist()
        hi = ((g["ci_high"] - g["ours"]).fillna(0) * scale).tolist()
        ax.errorbar(
            g["ours"] * scale,
            y,
            xerr=[lo, hi],
            fmt="o",
            ms=5,
            capsize=3,
            color=colour("rttlab"),
            label="ours (mean, CI)",
        )
        ax.plot(g["published"] * scale, y, "s", mfc="none", color=colour("ns3"), label="published")
        if ratio:
            ax.axvline(1.0, color="0.6", lw=0.6, ls="--")
        ax.set_yticks(y, list(g["point"]), fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(words)
        ax.set_ylabel("claim / point")
        ax.grid(True, axis="x", color="0.92", lw=0.6)
        fig.legend(fontsize=7, loc="outside upper right", ncols=2)
        label_axes(ax, fig_id)
        figures.append(
            figure(
                fig,
                fig_id,
                f"{esc(upper_first(words))}: ours (dot, interval) beside the published number (square)"
                + (" under the primary reading." if many else "."),
            )
        )
    out.append('<div class="figures">' + "".join(figures) + "</div>")
    extra = json.loads(head["reports"]) if isinstance(head.get("reports"), str) else {}
    for rpt in extra.get("reports", []):
        metric = str(rpt["metric"])
        words, scale, _ = (
            (metric, 1.0, False) if metric.startswith(("trace.", "flows.")) else metric_of(metric)
        )
        body = []
        for r in rpt["rows"]:
            key = f"{names[0]}|report:{rpt['title']}|{r['point']}"
            ci = ""
            if r.get("ci_low") is not None and r.get("ci_high") is not None:
                ci = f' <span class="pm">({number(r["ci_low"], key + "|ci_low", scale)} – {number(r["ci_high"], key + "|ci_high", scale)})</span>'
            body.append(
                f'<tr><td>{esc(r["point"])}</td><td class="num">{number(r["ours"], key + "|ours", scale)}{ci}</td><td class="num">{r["n"]}</td></tr>'
            )
        out.append(
            f"<h3>{esc(rpt['title'])} (ours; nothing published to compare)</h3>"
            + table([("point", False), (f"ours ({words})", True), ("n", True)], body)
        )
    for m in extra.get("models", []):
        body = []
        for r in m["rows"]:
            key = f"{names[0]}|model:{m['title']}|{r['point']}"
            verdict = (
                '<td class="yes">matched</td>'
                if r["matched"]
                else '<td class="no">not matched</td>'
            )
            body.append(
                f'<tr><td>{esc(r["point"])}</td><td class="num">{number(r["published"], key + "|published")}</td><td class="num">{number(r["ours"], key + "|ours")}</td>{verdict}<td>{esc(r["source"])}</td></tr>'
            )
        out.append(
            f"<h3>{esc(m['title'])} (the paper's model beside ours: <code>{esc(m['formula'])}</code>)</h3>"
            + table(
                [
                    ("point", False),
                    ("published", True),
                    ("ours", True),
                    ("verdict", False),
                    ("source", False),
                ],
                body,
            )
        )
    return "\n".join(out)


def render(
    store: Store, sweep: str | None = None, level: float = 0.95, title: str | None = None
) -> str:
    """The whole report as one HTML string."""
    from rttlab import __version__

    sweeps = [sweep] if sweep else store.sweeps()
    # A tuning's validation searches (NAME.validation) are summed up in NAME's section.
    sweeps = [
        s
        for s in sweeps
        if not (s.endswith(".validation") and s.removesuffix(".validation") in sweeps)
    ]
    reproductions = [
        r[0]
        for r in store.db.execute(
            "SELECT DISTINCT reproduction FROM comparisons ORDER BY 1"
        ).fetchall()
    ]
    if sweep:
        reproductions = [r for r in reproductions if r == sweep or r.partition("@")[0] == sweep]
    info = reproduction_info(store)
    groups = reproduction_groups(reproductions, info)
    body = [f"<h1>{esc(title or f'rttlab report: {store.path.name}')}</h1>"]
    links = ", ".join(
        f'<a href="#reproduction-{esc(members[0].partition("@")[0] if len(members) > 1 else members[0])}">{esc(base)}</a>'
        for base, members in groups.items()
    )
    body.append(
        f'<p class="meta">Store <code>{esc(store.path)}</code>; written by rttlab {esc(__version__)}. Sweeps: '
        + ", ".join(f'<a href="#sweep-{esc(s)}">{esc(s)}</a>' for s in sweeps)
        + (f". Reproductions: {links}" if links else "")
        + ". Numbers to 3 significant figures; hover a column header and click to sort.</p>"
    )
    for members in groups.values():
        body.append(comparison_section(store, members, info))
    for s in sweeps:
        body.append(sweep_section(store, s, level))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title or 'rttlab report')}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
