"""``rttlab report``: one self-contained HTML file from a results store.

No external resources: CSS and a few lines of script inline, figures as inline SVG (matplotlib).
Every number shown carries its exact value in ``data-value`` and what it is in ``data-key``
(``sweep|point|metric|stat``), so a test (tests/test_report.py, headless Chromium) can check the
rendered page against the store.
"""

from __future__ import annotations

import html
import io
import math
from typing import Any

from rttlab.experiments.stats import summarise
from rttlab.experiments.store import RUN_COLUMNS, Store

#: Metrics summarised per point (columns of ``runs``), with their display unit and scale.
METRICS = {
    "goodput_bps": ("aggregate goodput", "Mb/s", 1e-6),
    "jain_index": ("Jain index", "", 1.0),
    "utilisation": ("bottleneck utilisation", "", 1.0),
    "drops": ("bottleneck drops", "", 1.0),
    "timeouts": ("timeouts", "", 1.0),
    # Evaluate jobs (columns of ``scores``, docs/metrics.md).
    "mae_s": ("MAE of the prediction", "ms", 1e3),
    "bad_timeout_rate": ("bad-timeout rate", "", 1.0),
    "wait_mean_s": ("mean wait W", "s", 1.0),
    "cpu_s": ("CPU per run", "s", 1.0),
}

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; } th { background: #f3f3f3; cursor: pointer; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.no { color: #b00; font-weight: bold; } .yes { color: #070; }
.meta { color: #555; } figure { margin: 1em 0; } svg { max-width: 100%; height: auto; }
code { background: #f6f6f6; padding: 0 3px; }
"""

# Click a header to sort its table (numbers by data-value).
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var key = function (r) { var c = r.cells[col]; var v = c.getAttribute("data-value"); return v === null ? c.textContent : parseFloat(v); };
    var dir = th.getAttribute("data-dir") === "asc" ? -1 : 1;
    th.setAttribute("data-dir", dir === 1 ? "asc" : "desc");
    rows.sort(function (a, b) { var x = key(a), y = key(b); return (x > y ? 1 : x < y ? -1 : 0) * dir; });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def fmt(v: Any, scale: float = 1.0) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, (int, float)):
        return f"{v * scale:.4g}"
    return str(v)


def num_cell(v: Any, key: str, scale: float = 1.0) -> str:
    """A number: shown rounded (and scaled to its unit), exact in data-value (unscaled, repr)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return f'<td class="num" data-key="{esc(key)}" data-value="NaN">—</td>'
    return f'<td class="num" data-key="{esc(key)}" data-value="{float(v)!r}">{fmt(v, scale)}</td>'


def table(headers: list[str], rows: list[str]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def point_label(row: dict[str, Any], by: list[str]) -> str:
    return ", ".join(f"{k}={fmt(row[k]) if isinstance(row[k], float) else row[k]}" for k in by) or "all runs"


def sweep_section(store: Store, sweep: str, level: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = store.runs(sweep, scores=True)
    params = [c for c in store.columns("runs") if c not in RUN_COLUMNS]
    ok = runs[runs["status"] == "ok"]
    by = [c for c in params if runs[c].notna().any() and runs[c].nunique(dropna=True) > 1]
    if runs["simulator"].nunique() > 1:
        by.append("simulator")
    fixed = [c for c in params if runs[c].notna().any() and runs[c].nunique(dropna=True) == 1]
    out = [f'<h2 id="sweep-{esc(sweep)}">Sweep <code>{esc(sweep)}</code></h2>']
    versions = sorted({f"rttlab {a} / {b}" for a, b in zip(runs["rttlab_version"], runs["simulator_version"].fillna("—"))})
    out.append(
        f'<p class="meta">{len(runs)} runs: <span data-key="{esc(sweep)}|runs|ok" data-value="{len(ok)}">{len(ok)}</span> ok, '
        f'<span data-key="{esc(sweep)}|runs|failed" data-value="{len(runs) - len(ok)}">{len(runs) - len(ok)}</span> failed; '
        f"seeds {esc(', '.join(str(s) for s in sorted(runs['seed'].dropna().unique())))}; versions: {esc('; '.join(versions))}; "
        f"intervals: Student-t, {level:.0%}.</p>"
    )
    if fixed:
        out.append("<p>Fixed: " + ", ".join(f"<code>{esc(c)}</code> = {esc(runs[c].dropna().iloc[0])}" for c in fixed) + "</p>")
    if by:
        out.append("<p>Varied: " + ", ".join(f"<code>{esc(c)}</code> ({runs[c].nunique()} values)" for c in by) + "</p>")
    metrics = [m for m in METRICS if m in ok.columns and ok[m].notna().any()]
    if len(ok):
        summary = summarise(ok, by, metrics, level)
        rows = []
        for _, g in summary.groupby(by, dropna=False, sort=True) if by else [((), summary)]:
            first = g.iloc[0].to_dict()
            label = point_label(first, by)
            cells = [f"<td>{esc(label)}</td>", f'<td class="num">{int(g["n"].max())}</td>']
            for m in metrics:
                r = g[g["metric"] == m].iloc[0].to_dict()
                scale = METRICS[m][2]
                key = f"{sweep}|{label}|{m}"
                cells += [num_cell(r["mean"], f"{key}|mean", scale), num_cell(r["half_width"], f"{key}|half_width", scale)]
            rows.append(f"<tr>{''.join(cells)}</tr>")
        headers = ["point", "n"]
        for m in metrics:
            name, unit, _ = METRICS[m]
            headers += [f"{name}{f' ({unit})' if unit else ''}", f"± {level:.0%} CI"]
        out.append(table(headers, rows))
        # Figure: goodput per point with its interval.
        g = summary[summary["metric"] == "goodput_bps"].reset_index(drop=True)
        if len(g):
            fig, ax = plt.subplots(figsize=(8, 3.6), constrained_layout=True)
            labels = [point_label(r, by) for r in g.to_dict("records")]
            err = g["half_width"].fillna(0) / 1e6
            ax.errorbar(range(len(g)), g["mean"] / 1e6, yerr=err, fmt="o", capsize=3)
            ax.set_xticks(range(len(g)), labels, rotation=30 if len(g) > 3 else 0, ha="right" if len(g) > 3 else "center", fontsize=7)
            ax.set_ylabel("aggregate goodput (Mb/s)")
            ax.set_title(f"{sweep}: mean and {level:.0%} CI over seeds", fontsize=9)
            out.append(f"<figure>{svg(fig)}<figcaption>Aggregate goodput per point (mean, {level:.0%} Student-t interval).</figcaption></figure>")
    failed = runs[runs["status"] != "ok"]
    if len(failed):
        rows = [
            f"<tr><td><code>{esc(r['hash'][:12])}</code></td><td>{esc(point_label(r, by))}</td><td>{esc(r['seed'])}</td><td>{esc(r['error_kind'])}</td><td>{esc(r['error'])}</td></tr>"
            for r in failed.to_dict("records")
        ]
        out.append("<h3>Failed runs</h3>" + table(["run", "point", "seed", "error", "message"], rows))
    return "\n".join(out)


def comparison_section(store: Store, reproduction: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = store.query("SELECT * FROM comparisons WHERE reproduction = ? ORDER BY point", [reproduction])
    out = [f'<h2 id="reproduction-{esc(reproduction)}">Reproduction <code>{esc(reproduction)}</code>: published vs ours</h2>']
    rows = []
    for r in c.to_dict("records"):
        key = f"{reproduction}|{r['point']}|{r['metric']}"
        diff = r["ours"] / r["published"] - 1 if r["published"] else math.nan
        verdict = '<td class="yes">yes</td>' if r["matched"] else '<td class="no">NO</td>'
        rows.append(
            f"<tr><td>{esc(r['point'])}</td><td>{esc(r['metric'])}</td>{num_cell(r['ours'], key + '|ours')}{num_cell(r['ci_low'], key + '|ci_low')}"
            f"{num_cell(r['ci_high'], key + '|ci_high')}<td class=\"num\">{r['n']}</td>{num_cell(r['published'], key + '|published')}"
            f"<td>{esc(r['source'])}</td>{num_cell(diff * 100, key + '|diff_pct')}<td class=\"num\">±{r['tolerance']:.0%}</td>{verdict}</tr>"
        )
    out.append(table(["point", "metric", "ours (mean)", "CI low", "CI high", "n", "published", "source", "diff %", "tolerance", "matched"], rows))
    missed = c[~c["matched"]]
    if len(missed):
        out.append('<p class="no">Not matched: ' + "; ".join(esc(p) for p in missed["point"]) + "</p>")
    else:
        out.append('<p class="yes">Every point matched within its tolerance.</p>')
    if len(c):
        fig, ax = plt.subplots(figsize=(8, 3.6), constrained_layout=True)
        x = range(len(c))
        lo = (c["ours"] - c["ci_low"]).fillna(0)
        hi = (c["ci_high"] - c["ours"]).fillna(0)
        ax.errorbar(x, c["ours"], yerr=[lo, hi], fmt="o", capsize=3, label="ours (mean, CI)")
        ax.plot(x, c["published"], "s", mfc="none", label="published / peer")
        ax.set_xticks(list(x), list(c["point"]), rotation=30, ha="right", fontsize=7)
        ax.set_ylabel(str(c["metric"].iloc[0]))
        ax.legend(fontsize=8)
        out.append(f"<figure>{svg(fig)}<figcaption>Ours beside the published numbers.</figcaption></figure>")
    return "\n".join(out)


def render(store: Store, sweep: str | None = None, level: float = 0.95, title: str | None = None) -> str:
    """The whole report as one HTML string."""
    from rttlab import __version__

    sweeps = [sweep] if sweep else store.sweeps()
    reproductions = [r[0] for r in store.db.execute("SELECT DISTINCT reproduction FROM comparisons ORDER BY 1").fetchall()]
    if sweep:
        reproductions = [r for r in reproductions if r == sweep]
    body = [f"<h1>{esc(title or f'rttlab report: {store.path.name}')}</h1>"]
    body.append(f'<p class="meta">Store <code>{esc(store.path)}</code>; written by rttlab {esc(__version__)}. Sweeps: ' + ", ".join(f'<a href="#sweep-{esc(s)}">{esc(s)}</a>' for s in sweeps) + ".</p>")
    for r in reproductions:
        body.append(comparison_section(store, r))
    for s in sweeps:
        body.append(sweep_section(store, s, level))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title or 'rttlab report')}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
