"""``rttlab train regression CAPTURES…``: print what :func:`rttlab.trace.regression_train.train`
returns (the fit lives there) and check the published coefficients against the project's own
published predictions (the ``regression-sanity`` reproduction's first table)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from rttlab.cli.common import console, fail, print_json, stderr

SCHEMA = "rttlab.train/1"
MODELS = ("regression",)


def train(
    model: str = typer.Argument(
        ...,
        help="What to train: regression (Baddam et al.'s linear model, the `regression` estimator's coefficients).",
        show_default=False,
    ),
    captures: list[Path] = typer.Argument(
        ...,
        help="pcap/pcapng captures; every connection with a path-RTT series and an IP TTL is a flow to fit on.",
        show_default=False,
    ),
    window: int = typer.Option(
        25,
        "--window",
        "-w",
        help="Samples per window: min_rtt and max_rtt are taken over it (25 = the project's hping3 -c 25).",
    ),
    target: str = typer.Option(
        "mean",
        "--target",
        help="What is predicted: mean (the window's mean RTT: the project's code) or next (the sample after the window: what an estimator needs).",
    ),
    split: str = typer.Option(
        "time",
        "--split",
        help="Held-out scoring: time (fit on the first --train-fraction of every flow, score the rest) or flow (leave each flow out in turn).",
    ),
    train_fraction: float = typer.Option(
        0.7,
        "--train-fraction",
        help="With --split time: the share of each flow's samples fitted on.",
    ),
    path_features: bool = typer.Option(
        True,
        "--path-features/--no-path-features",
        help="Fit hops and ttl too (the paper's model) or min and max alone (hops and ttl fixed at 0).",
    ),
    out: Path = typer.Option(
        None,
        "--out",
        "-o",
        help="Write the fit: FILE.json (everything printed) or FILE.toml (a scenario's [tcp.rto] table with the coefficients).",
    ),
    as_json: bool = typer.Option(
        False, "--json", help=f"Print JSON (schema {SCHEMA}) instead of tables."
    ),
) -> None:
    """Fit the regression estimator's linear model on your captures; print held-out MAPE per flow and the coefficients to use.

    Features as the paper's code builds them: hop count and TTL of the far endpoint (from the IP
    TTL), min and max RTT over a window of path-RTT samples; target the window's mean RTT (or
    the next sample). Prints each flow's held-out MAPE beside the published Cubic coefficients'
    on the same windows, and `-p regression.coef=...` for `rttlab evaluate`/`tune`. docs/train.md."""
    from rttlab.trace.regression_train import TrainError
    from rttlab.trace.regression_train import train as fit

    if model not in MODELS:
        fail(f"train: cannot train {model!r} (trainable: {', '.join(MODELS)})")
    if out is not None and out.suffix not in (".json", ".toml"):
        fail(f"--out {out}: expected a .json or .toml file")
    for p in captures:
        if not p.is_file():
            fail(f"{p}: no such file")
    check = published_check()
    try:
        t = fit(
            [str(p) for p in captures],
            window=window,
            target=target,
            split=split,
            train_fraction=train_fraction,
            path_features=path_features,
        )
    except TrainError as e:
        fail(str(e))
    doc = {
        "schema": SCHEMA,
        "model": model,
        "target": t.target,
        "split": t.split,
        "window": t.window,
        "path_features": t.path_features,
        "train_fraction": train_fraction if split == "time" else None,
        "coefficients": t.coefficients,
        "coef": t.coef_text,
        "dropped": t.dropped,
        "mape": t.mape,
        "mape_cubic": t.mape_cubic,
        "train_windows": t.train_rows,
        "test_windows": t.test_rows,
        "flows": t.flows,
        "skipped": t.skipped,
        "check": check,
    }
    if out is not None:
        out.write_text(
            json.dumps(_clean(doc), indent=1) + "\n"
            if out.suffix == ".json"
            else scenario_toml(t.coef_text, t)
        )
    if as_json:
        print_json(_clean(doc))
        return
    show(t, check, train_fraction)
    if out is not None:
        console.print(f"written: {out}", highlight=False)


def published_check() -> dict:
    """The published Cubic coefficients against the project's nine published predictions."""
    from rttlab.experiments.reproduce import Reproduction
    from rttlab.papers.baddam_regression import SANITY

    rows = Reproduction.load(SANITY).models()[0]["rows"]
    return {
        "matched": sum(r["matched"] for r in rows),
        "rows": len(rows),
        "max_abs_diff_ms": max(abs(r["ours"] - r["published"]) for r in rows),
    }


def scenario_toml(coef: str, t) -> str:
    return (
        f"# rttlab train regression: target {t.target}, window {t.window}, split {t.split}, held-out MAPE {t.mape:.2f} % (published Cubic: {t.mape_cubic:.2f} %)\n"
        "# Set hops and ttl for the path (the far endpoint's IP TTL and the routers it crossed).\n"
        "[tcp.rto]\n"
        'estimator = "regression"\n'
        f'coef = "{coef}"\n'
    )


def _clean(doc: dict) -> dict:
    from rttlab.cli.common import clean

    return clean(doc)


def show(t, check: dict, train_fraction: float) -> None:
    from rich.markup import escape

    from rttlab.cli.table import Col, num
    from rttlab.cli.table import show as show_table

    ok = check["matched"] == check["rows"]
    console.print(
        f"check: the published Cubic coefficients give {check['matched']} of the project's {check['rows']} published predictions to 1e-6 ms "
        f"(largest difference {check['max_abs_diff_ms']:.1e} ms; `rttlab reproduce regression-sanity`)"
        + ("" if ok else " — [bold red]NOT reproduced[/]"),
        highlight=False,
    )
    how = (
        f"first {train_fraction:.0%} of each flow fitted, the windows after it scored"
        if t.split == "time"
        else "each flow left out in turn, scored on a fit to the others"
    )
    cols = [
        Col("capture", prose=True),
        num("conn", 1),
        Col("far end", priority=2),
        num("ttl", 1),
        num("hops", 1),
        num("samples", 1),
        num("fit on", 3),
        num("scored", 1),
        num("MAPE %"),
        num("Cubic MAPE %"),
    ]
    rows = [
        [
            escape(r["capture"]),
            str(r["conn"]),
            escape(r["dst"]),
            str(r["ttl"]),
            str(r["hops"]),
            str(r["samples"]),
            str(r["train_windows"]),
            str(r["test_windows"]),
            f"{r['mape']:.2f}",
            f"{r['mape_cubic']:.2f}",
        ]
        for r in t.flows
    ]
    show_table(
        cols,
        rows,
        title=f"held-out MAPE per flow (target {t.target}, window {t.window}; split by {t.split}: {how})",
        formats="--json",
    )
    console.print(
        f"held-out MAPE over {t.test_rows} windows: {t.mape:.2f} % (the published Cubic coefficients on the same windows: {t.mape_cubic:.2f} %)",
        highlight=False,
    )
    if not t.path_features:
        console.print(
            "hops and ttl left out (--no-path-features): coefficients fixed at 0", highlight=False
        )
    if t.dropped:
        console.print(
            f"not identifiable on these flows, coefficient fixed at 0: {', '.join(t.dropped)} (hops and ttl are constant within a flow)",
            highlight=False,
        )
    if t.skipped:
        stderr.print(
            f"{len(t.skipped)} flow{'s' if len(t.skipped) != 1 else ''} left out: "
            + "; ".join(t.skipped[:3])
            + ("; …" if len(t.skipped) > 3 else ""),
            highlight=False,
            markup=False,
        )
    fitted = "the training part" if t.split == "time" else "every flow"
    console.print(
        f"coefficients [intercept, hops, min_rtt, max_rtt, ttl] fitted on {fitted} ({t.train_rows} windows):",
        highlight=False,
        markup=False,
    )
    console.print(f"  -p regression.coef={t.coef_text}", highlight=False, markup=False)
    console.print(
        f'  scenario: rto = {{ estimator = "regression", coef = "{t.coef_text}", hops = H, ttl = T }}  (H, T: the path hop count and TTL)',
        highlight=False,
        markup=False,
    )
    if any(math.isnan(r["mape"]) for r in t.flows):
        stderr.print(
            "some flows have no positive RTT in their held-out windows (MAPE undefined)",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command("train")(train)
