"""``rttlab flows`` and ``rttlab samples``: TCP connections and RTT samples of a pcap/pcapng."""

from __future__ import annotations

import math
from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import typer
from rich.markup import escape
from rich.table import Table

from rttlab.capture import METHODS, path_samples, read_captures
from rttlab.cli.common import console, fail, print_json, stderr

FLOWS_SCHEMA = "rttlab.flows/1"

# Above this size reading takes about a second or more: show a spinner.
BUSY_BYTES = 200 << 20


def _read(captures: list[Path], include_ambiguous: bool = False, quiet: bool = False) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """Read every capture (in parallel, one per core); warnings go to stderr."""
    for capture in captures:
        if not capture.exists():
            fail(f"{capture}: no such file")
        if capture.is_dir():
            fail(f"{capture}: is a directory, not a capture file")
    busy = not quiet and sum(c.stat().st_size for c in captures) >= BUSY_BYTES
    label = captures[0].name if len(captures) == 1 else f"{len(captures)} captures"
    status = stderr.status(f"reading {label}") if busy else nullcontext()
    with status:
        results = read_captures(captures, include_ambiguous=include_ambiguous)
    for capture, (samples, _) in zip(captures, results):
        for w in samples.attrs["warnings"]:
            prefix = "" if str(w).startswith(str(capture)) else f"{capture}: "
            stderr.print(f"[yellow]rttlab: warning:[/] {escape(f'{prefix}{w}')}", highlight=False, soft_wrap=True)
    return results


def _ms(v: float) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 1e3:.1f}"


def flows(
    captures: list[Path] = typer.Argument(..., help="pcap or pcapng file(s); several are read in parallel.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help=f"Print JSON (schema {FLOWS_SCHEMA}; a list of such objects for several files) instead of a table."),
) -> None:
    """List the TCP connections of a capture: endpoints, traffic each way, retransmissions,
    SACK/timestamp use, handshake RTT, where the capture point sits (near sender, near receiver,
    middle) and which sample method gives the path RTT there.

    fwd is src → dst; src is the initiator when the handshake was captured."""
    results = _read(captures, quiet=as_json)
    if as_json:
        docs = [
            {
                "schema": FLOWS_SCHEMA,
                "capture": str(capture),
                "counters": samples.attrs["counters"],
                "warnings": samples.attrs["warnings"],
                "flows": conns.to_dict(orient="records"),
            }
            for capture, (samples, conns) in zip(captures, results)
        ]
        print_json(docs[0] if len(docs) == 1 else docs)
        return
    for capture, (samples, conns) in zip(captures, results):
        _flows_table(capture, samples, conns)


def _flows_table(capture: Path, samples: pd.DataFrame, conns: pd.DataFrame) -> None:
    table = Table(title=f"{capture.name}: {len(conns)} TCP connections, {len(samples)} RTT samples", title_justify="left")
    # (header, justify, no_wrap): numbers and labels stay whole, endpoints fold if narrow.
    for col, just, whole in [
        ("id", "right", True),
        ("src", "left", False),
        ("dst", "left", False),
        ("pkts fwd/rev", "right", False),
        ("bytes fwd/rev", "right", False),
        ("rtx", "right", True),
        ("SACK/TS", "center", True),
        ("hs ms", "right", True),
        ("vantage", "left", True),
        ("path RTT from", "left", True),
        ("med/min/max ms", "right", False),
        ("hops", "right", True),
        ("samples", "right", True),
    ]:
        table.add_column(col, justify=just, no_wrap=whole, overflow="fold")
    for r in conns.itertuples(index=False):
        hops = "/".join("-" if pd.isna(h) else str(int(h)) for h in (r.hops_fwd, r.hops_rev))
        table.add_row(
            str(r.conn),
            r.src,
            r.dst,
            f"{r.packets_fwd}/{r.packets_rev}",
            f"{r.bytes_fwd}/{r.bytes_rev}",
            f"{r.retransmissions_fwd}/{r.retransmissions_rev}",
            f"{'y' if r.sack_permitted else 'n'}/{'y' if r.ts_fwd and r.ts_rev else 'n'}",
            "amb." if r.handshake_ambiguous else _ms(r.handshake_rtt),
            r.vantage,
            r.path_rtt_method,
            f"{_ms(r.path_rtt)}/{_ms(r.min_rtt)}/{_ms(r.max_rtt)}",
            hops,
            str(r.samples),
        )
    console.print(table)


def samples(
    captures: list[Path] = typer.Argument(..., help="pcap or pcapng file(s); with several, a first column 'capture' names each row's file.", show_default=False),
    output: Path = typer.Option(None, "--output", "-o", help="Write to FILE.csv or FILE.parquet instead of printing CSV."),
    method: str = typer.Option("all", "--method", "-m", help="seq, ts, syn or all."),
    flow: list[int] = typer.Option([], "--flow", help="Only this connection id (see `rttlab flows`); repeatable."),
    include_ambiguous: bool = typer.Option(False, "--include-ambiguous", help="Keep samples Karn's rule rejects, flagged in column 'ambiguous'."),
    path: bool = typer.Option(False, "--path", help="Only each connection's path-RTT series (see `rttlab flows`), sorted by time: input for `rttlab evaluate`."),
) -> None:
    """Write the RTT samples of a capture, one row per sample: conn, direction, time (s),
    rtt (s), method, ambiguous, seq_start, seq_end, frame, ref_frame.

    `rttlab samples CAP --path --flow ID -o s.csv` then `rttlab evaluate s.csv` scores the
    estimators on one connection's path RTT."""
    if method not in (*METHODS, "all"):
        fail(f"--method: '{method}' is not one of {', '.join(METHODS)}, all")
    if output is not None and output.suffix.lower() not in (".csv", ".parquet"):
        fail(f"--output: '{output}' must end in .csv or .parquet")
    if path and include_ambiguous:
        fail("--path and --include-ambiguous exclude each other (the path series is unambiguous samples only)")
    parts = []
    for capture, (df, conns) in zip(captures, _read(captures, include_ambiguous, quiet=output is None)):
        unknown = sorted(set(flow) - set(conns["conn"]))
        if unknown and len(captures) == 1:
            fail(f"--flow: no connection {unknown[0]} in {capture} (ids 0..{len(conns) - 1})")
        if path:
            df = path_samples(df, conns)
        if method != "all":
            df = df[df["method"] == method]
        if flow:
            df = df[df["conn"].isin(flow)]
        if len(captures) > 1:
            df = df.assign(capture=str(capture))[["capture", *df.columns]]
        parts.append(df)
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if output is None:
        df.to_csv(console.file, index=False, float_format="%.9f")
        return
    try:
        if output.suffix.lower() == ".parquet":
            df.to_parquet(output, index=False)
        else:
            df.to_csv(output, index=False, float_format="%.9f")
    except OSError as e:
        fail(f"{output}: cannot write: {e.strerror or e}")
    stderr.print(f"wrote {len(df)} samples to {output}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("flows")(flows)
    app.command("samples")(samples)
