"""``rttlab flows`` and ``rttlab samples``: TCP connections and RTT samples of a pcap/pcapng.

Both stream: samples leave the Rust core in batches and are written batch by batch (CSV, Parquet
or JSON lines), and ``flows`` never builds the sample table at all, so memory stays bounded
whatever the capture's length. CSV, Parquet and ``flows --json`` are written by the core itself
(no NumPy, pandas or pyarrow import); pandas is imported only for JSON lines, ``--path`` and
the flows table.

`flows` and `samples` are plain functions; `register` wraps them in typer commands with their
options and help, and `rttlab.cli.direct` calls them for plain argument lists without typer."""

from __future__ import annotations

import math
from contextlib import nullcontext
from pathlib import Path

from rttlab.cli.common import TYPE_CHECKING, clean, fail

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

    import pandas as pd
    import typer

FLOWS_SCHEMA = "rttlab.flows/1"

# Above this size reading takes about a second or more: show a spinner.
BUSY_BYTES = 200 << 20

#: The flows table shows at most this many connections (the largest by packets); --json has all.
TABLE_ROWS = 200

#: Output suffixes `samples -o` writes.
SAMPLE_FORMATS = (".csv", ".parquet", ".jsonl")

METHODS = ("seq", "ts", "syn")


def _check(captures: list[Path]) -> None:
    for capture in captures:
        if not capture.exists():
            fail(f"{capture}: no such file")
        if capture.is_dir():
            fail(f"{capture}: is a directory, not a capture file")


def _warn(capture: Path, warnings: list[str]) -> None:
    if not warnings:
        return  # no rich import
    from rich.markup import escape

    from rttlab.cli.common import stderr

    for w in warnings:
        prefix = "" if str(w).startswith(str(capture)) else f"{capture}: "
        stderr.print(
            f"[yellow]rttlab: warning:[/] {escape(f'{prefix}{w}')}", highlight=False, soft_wrap=True
        )


def _busy(captures: list[Path], quiet: bool):
    """A spinner on stderr while a large capture is read, for a person watching: not when
    stderr is a file or pipe (a script or benchmark then pays no rich import)."""
    import sys

    if quiet or not sys.stderr.isatty() or sum(c.stat().st_size for c in captures) < BUSY_BYTES:
        return nullcontext()
    from rttlab.cli.common import stderr

    label = captures[0].name if len(captures) == 1 else f"{len(captures)} captures"
    return stderr.status(f"reading {label}")


def _cores() -> int:
    """The cores this process may run on (`taskset` narrows them), not the machine's count."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# A file smaller than this is read on one thread by default: measured on 2 idle cores (core
# alone, hyperfine, 20 runs), two threads took the same wall time as one on 2.9 MB and 12.7 MB
# prefixes of the benchmark capture (3.0 vs 3.0 ms, 5.4 vs 5.3 ms, more CPU) and were 1.28×
# faster on 35 MB (15.8 vs 12.3 ms) (BENCHMARKS.md).
PIPELINE_BYTES = 16 << 20


def _threads(threads: int | None, capture: Path, at_once: int = 1) -> int:
    """Threads for one file: as asked (--threads), else 2 (the reading-and-decoding / tracking
    pipeline, `Stream::open_threads` in src/capture/mod.rs) when the file is a regular file of at
    least PIPELINE_BYTES and this process may run on two cores for each of the `at_once` files
    read at the same time (`taskset -c 0` gives 1), else 1."""
    if threads is not None:
        return threads
    import stat

    try:
        st = capture.stat()
    except OSError:
        return 1  # the core reports why it cannot open the file
    big = stat.S_ISREG(st.st_mode) and st.st_size >= PIPELINE_BYTES
    return 2 if big and _cores() >= 2 * at_once else 1


def _check_threads(threads: int | None) -> None:
    if threads is not None and threads < 1:
        fail(f"--threads: must be at least 1, got {threads}")


def _summaries(captures: list[Path], quiet: bool, threads: int | None = None) -> list:
    """Each capture's core summary (`_core.CaptureSummary`: connections, counters, warnings, kept
    in Rust; no NumPy array or DataFrame), read in parallel (one file per core: the Rust core
    releases the GIL), the samples dropped inside the core; warnings go to stderr."""
    from rttlab import _core

    _check(captures)
    _check_threads(threads)
    streams = [
        _core.CaptureStream(str(c), False, True, _threads(threads, c, len(captures)))
        for c in captures
    ]
    with _busy(captures, quiet):
        if len(streams) == 1:
            results = [streams[0].summary()]  # no pool (its import, with logging, costs ~8 ms)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=max(1, min(len(streams), _cores()))) as pool:
                results = list(pool.map(lambda s: s.summary(), streams))
    for capture, summary in zip(captures, results):
        _warn(capture, summary.warnings())
    return results


THREADS_HELP = "Threads per file (same output for any N): 1 does everything on one thread; 2 reads and decodes on a second thread while the first tracks connections; 3 or more split the file's connections across N threads. Default: 2 for a file of 16 MB or more when 2 cores per file are free, else 1."


def flows(
    captures: list[Path], as_json: bool = False, threads: int | None = None, as_csv: bool = False
) -> None:
    """List the TCP connections of a capture with their traffic, handshake and path RTT.

    Each connection's endpoints, traffic each way, retransmissions, SACK/timestamp use,
    handshake RTT, where the capture point sits (near sender, near receiver, middle) and which
    sample method gives the path RTT there.

    fwd is src → dst; src is the initiator when the handshake was captured. The table shows the
    200 largest connections and leaves out what the terminal has no room for (named under it);
    --json and --csv list every connection with every column."""
    import sys

    from rttlab.cli.common import one_format

    one_format(as_json, as_csv)
    results = _summaries(captures, quiet=as_json or as_csv, threads=threads)
    if as_csv:
        _flows_csv(captures, results)
        return
    if as_json:
        out = sys.stdout
        if len(results) > 1:
            out.write("[\n")
        for i, (capture, summary) in enumerate(zip(captures, results)):
            _flows_json(out, capture, summary, indent="  " if len(results) > 1 else "")
            out.write(",\n" if i + 1 < len(results) else "\n")
        if len(results) > 1:
            out.write("]\n")
        return
    from rttlab.trace.capture import _connections_frame

    for capture, summary in zip(captures, results):
        _flows_table(capture, _connections_frame(summary.to_dict()))


def _flows_json(out: TextIO, capture: Path, summary: Any, indent: str) -> None:
    """One `rttlab.flows/1` object: the head (schema, capture, counters, warnings) by json here,
    the connection records by the core (`src/capture/flows_json.rs`: one compact line per
    connection, byte for byte what `json.dumps(record)` gave), streamed to ``out`` in pieces (a
    capture with 300,000 connections never becomes one big list or string)."""
    import json

    head = {
        "schema": FLOWS_SCHEMA,
        "capture": str(capture),
        "counters": summary.counters(),
        "warnings": summary.warnings(),
    }
    body = json.dumps(clean(head), indent=2)[:-2]  # without the closing "\n}"
    out.write(
        "\n".join(indent + line for line in body.splitlines()) + ",\n" + indent + '  "flows": ['
    )
    summary.write_flows_json(out, indent)


def _rtts(values: Sequence[Any]) -> str:
    """Durations in seconds sharing one unit, chosen for the largest: ``71.1/70.2/80.3 ms``."""
    from rttlab.units import duration

    present = [v for v in values if not (v is None or (isinstance(v, float) and math.isnan(v)))]
    if not present:
        return "—"
    unit = duration(max(present)).split(" ")[1]
    scale = {"h": 3600.0, "min": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]
    return "/".join("—" if v not in present else f"{v / scale:.3g}" for v in values) + f" {unit}"


#: The flows table's columns, most important first in priority (0: always shown).
def _flows_columns() -> list:
    from rttlab.cli.table import Col, num

    return [
        num("id"),
        Col("src"),
        Col("dst"),
        num("pkts fwd/rev", 1),
        num("bytes fwd/rev", 3),
        num("rtx fwd/rev", 2),
        Col("SACK/TS", "center", 5),
        num("handshake", 4),
        Col("vantage", priority=4),
        Col("path RTT from", priority=2),
        num("path RTT", 0),
        num("min/max RTT", 3),
        num("hops", 5),
        num("samples all/path", 1),
    ]


def _flows_table(capture: Path, conns: pd.DataFrame) -> None:
    import pandas as pd
    from rich.markup import escape

    from rttlab.cli.common import console
    from rttlab.cli.table import show
    from rttlab.units import count, size

    samples = int(conns["samples"].sum())
    shown = conns
    if len(conns) > TABLE_ROWS:
        shown = (
            conns.assign(_p=conns["packets_fwd"] + conns["packets_rev"])
            .nlargest(TABLE_ROWS, "_p", keep="first")
            .sort_values("conn")
        )
    rows = []
    for r in shown.itertuples(index=False):
        hops = "/".join("-" if pd.isna(h) else str(int(h)) for h in (r.hops_fwd, r.hops_rev))
        rows.append(
            [
                str(r.conn),
                escape(r.src),
                escape(r.dst),
                f"{r.packets_fwd:,}/{r.packets_rev:,}",
                f"{size(r.bytes_fwd)}/{size(r.bytes_rev)}",
                f"{r.retransmissions_fwd:,}/{r.retransmissions_rev:,}",
                f"{'y' if r.sack_permitted else 'n'}/{'y' if r.ts_fwd and r.ts_rev else 'n'}",
                "amb." if r.handshake_ambiguous else _rtts([r.handshake_rtt]),
                r.vantage,
                r.path_rtt_method,
                _rtts([r.path_rtt]),
                _rtts([r.min_rtt, r.max_rtt]),
                hops,
                f"{r.samples:,}/{r.path_samples:,}",
            ]
        )
    path = int(conns["path_samples"].sum())
    title = f"{escape(capture.name)}: {count(len(conns), 'TCP connection')}, {count(samples, 'RTT sample')} ({path:,} on path-RTT series)"
    left_out = show(_flows_columns(), rows, title=title, formats="`rttlab flows --json` or --csv")
    if "samples all/path" not in left_out:
        # The two counts differ by design (docs/capture.md): say which one evaluate scores.
        console.print(
            "[dim]samples all/path: every RTT sample of the connection (each method and direction) / those of its "
            "path-RTT series, which `rttlab evaluate` replays (all but the first scored)[/]"
        )
    if len(shown) < len(conns):
        console.print(
            f"[dim]showing the {len(shown)} largest of {len(conns):,} connections (by packets); `rttlab flows --json` or --csv lists all[/]"
        )


def _flows_csv(captures: list[Path], results: list) -> None:
    """Every connection of every capture, one CSV row each, every column of the table in full
    (seconds, bytes); a first column 'capture' names the file when there are several."""
    import sys

    from rttlab.trace.capture import _connections_frame

    for i, (capture, summary) in enumerate(zip(captures, results)):
        frame = _connections_frame(summary.to_dict())
        if len(captures) > 1:
            frame.insert(0, "capture", str(capture))
        frame.to_csv(sys.stdout, index=False, header=i == 0)


class _SampleWriter:
    """Writes sample batches to stdout (CSV) or a .csv/.parquet/.jsonl file, batch by batch."""

    def __init__(self, output: Path | None) -> None:
        self.output = output
        self.kind = "csv" if output is None else output.suffix.lower().lstrip(".")
        self.rows = 0
        self._file: TextIO | None = None
        self._parquet = None
        self._empty: pd.DataFrame | None = None

    def write(self, df: pd.DataFrame) -> None:
        import sys

        if self._empty is None:
            self._empty = df.iloc[0:0]
        if df.empty:
            return
        if self.kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(df, preserve_index=False)
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self.output, table.schema)
            self._parquet.write_table(table)
        else:
            if self._file is None:
                self._file = (
                    sys.stdout
                    if self.output is None
                    else open(self.output, "w", encoding="utf-8", newline="")
                )
            if self.kind == "jsonl":
                text = df.to_json(orient="records", lines=True)
                self._file.write(text if text.endswith("\n") else text + "\n")
            else:
                df.to_csv(self._file, index=False, header=self.rows == 0, float_format="%.9f")
        self.rows += len(df)

    def close(self) -> None:
        import sys

        if self.rows == 0 and self._empty is not None:
            # Nothing matched: still a valid, empty file with the columns (a CSV header).
            if self.kind == "parquet":
                self._empty.to_parquet(self.output, index=False)
            elif self.kind == "csv":
                self._empty.to_csv(sys.stdout if self.output is None else self.output, index=False)
            elif self.output is not None:
                self.output.write_text("")
        if self._parquet is not None:
            self._parquet.close()
        if self._file is not None and self._file is not sys.stdout:
            self._file.close()


def samples(
    captures: list[Path],
    output: Path | None = None,
    method: str = "all",
    flow: Sequence[int] = (),
    include_ambiguous: bool = False,
    path: bool = False,
    threads: int | None = None,
) -> None:
    """Write the RTT samples of a capture as CSV, Parquet or JSON lines, one row per sample.

    Columns: conn, direction, time (s, from the capture's clock), rtt (s), method, ambiguous,
    seq_start, seq_end (sequence numbers), frame, ref_frame (frame numbers), idle_echo
    (docs/capture.md).

    Samples are streamed batch by batch, so memory stays bounded on any capture (--path needs
    each connection's summary first and holds the samples in memory).
    `rttlab samples CAP --path --flow ID -o s.csv` then `rttlab evaluate s.csv` scores the
    estimators on one connection's path RTT."""
    flow = list(flow)
    if method not in (*METHODS, "all"):
        fail(f"--method: '{method}' is not one of {', '.join(METHODS)}, all")
    if output is not None and output.suffix.lower() not in SAMPLE_FORMATS:
        fail(
            f"--output: '{output}' must end in {', '.join(SAMPLE_FORMATS[:-1])} or {SAMPLE_FORMATS[-1]}"
        )
    if path and include_ambiguous:
        fail(
            "--path and --include-ambiguous exclude each other (the path series is unambiguous samples only)"
        )
    _check(captures)
    _check_threads(threads)
    kind = "csv" if output is None else output.suffix.lower().lstrip(".")
    try:
        with _busy(captures, quiet=output is None):
            if path or kind == "jsonl":
                rows = _samples_frames(
                    captures, output, method, flow, include_ambiguous, path, threads
                )
            else:
                rows = _samples_direct(
                    captures, output, kind, method, flow, include_ambiguous, threads
                )
    except OSError as e:
        if output is None:
            raise  # stdout: main() reports it (or a closed pipe ends the program quietly)
        fail(f"{output}: cannot write: {e.strerror or str(e).splitlines()[0]}")
    if output is not None:
        import sys

        # Plain text: no markup to read in a file name, and no rich import.
        which = (
            "the path-RTT series, as `rttlab evaluate` replays them"
            if path
            else "every method and direction; `rttlab evaluate` replays only each connection's path-RTT series (--path writes those)"
        )
        sys.stderr.write(f"wrote {rows:,} samples to {output} ({which})\n")


def _finish_capture(
    capture: Path, warnings: list[str], n: int, flow: list[int], several: bool
) -> None:
    """Warnings of one capture (of ``n`` connections), and the error for a --flow it does not
    have."""
    _warn(capture, warnings)
    unknown = sorted(set(flow) - set(range(n)))
    if unknown and not several:
        fail(f"--flow: no connection {unknown[0]} in {capture} (ids 0..{n - 1})")


def _samples_direct(
    captures: list[Path],
    output: Path | None,
    kind: str,
    method: str,
    flow: list[int],
    include_ambiguous: bool,
    threads: int | None,
) -> int:
    """CSV and Parquet: every batch is filtered and written by the core (CSV text, or Parquet
    through the `parquet` crate: `src/capture/parquet_file.rs`), never a NumPy column, a
    DataFrame or a pyarrow table. Returns the rows written."""
    import sys

    from rttlab import _core

    methods = None if method == "all" else [method]
    several = len(captures) > 1
    rows = 0
    sink = None
    for i, capture in enumerate(captures):
        n = _threads(threads, capture)
        stream = _core.CaptureStream(str(capture), include_ambiguous, True, n)
        name = str(capture) if several else None
        if kind == "parquet" and sink is None:
            # Created once the first capture opened: a capture that cannot be opened leaves
            # no file. With a second thread, Parquet is encoded beside the analysis (same file).
            sink = _core.ParquetSink(str(output), several, n >= 2)
        if kind == "csv":
            if output is None:
                sys.stdout.flush()  # the core writes to the same file descriptor
            rows += stream.write_csv(
                None if output is None else str(output),
                header=i == 0,
                append=i > 0,
                methods=methods,
                conns=flow,
                capture=name,
            )
        else:
            rows += stream.write_parquet(sink, methods=methods, conns=flow, capture=name)
        summary = stream.summary()
        _finish_capture(capture, summary.warnings(), summary.connection_count(), flow, several)
    if sink is not None:
        sink.close()  # a file with no rows still has the columns
    return rows


def _samples_frames(
    captures: list[Path],
    output: Path | None,
    method: str,
    flow: list[int],
    include_ambiguous: bool,
    path: bool,
    threads: int | None,
) -> int:
    """JSON lines and --path: through DataFrames (pandas' JSON writer; the path series needs
    every connection's summary before any sample is written). Returns the rows written."""
    from rttlab.trace.capture import CaptureReader

    writer = _SampleWriter(output)
    for capture in captures:
        reader = CaptureReader(
            capture, include_ambiguous=include_ambiguous, threads=_threads(threads, capture)
        )
        if path:
            import pandas as pd

            from rttlab.trace.capture import path_samples

            parts = list(reader.batches())
            conns = reader.connections()
            every = pd.concat(parts, ignore_index=True) if parts else None
            batches = [path_samples(every, conns)] if every is not None else []
        else:
            batches = reader.batches()
        for df in batches:
            if method != "all":
                df = df[df["method"] == method]
            if flow:
                df = df[df["conn"].isin(flow)]
            if len(captures) > 1:
                df = df.assign(capture=str(capture))[["capture", *df.columns]]
            writer.write(df)
        raw = reader.result()
        _finish_capture(capture, raw["warnings"], len(raw["connections"]), flow, len(captures) > 1)
    writer.close()
    return writer.rows


def register(app: typer.Typer) -> None:
    """The commands as typer sees them: each option with its help, calling the plain function
    (whose docstring is the command's help)."""
    import typer

    def flows_command(
        captures: list[Path] = typer.Argument(
            ..., help="pcap or pcapng file(s); several are read in parallel.", show_default=False
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help=f"Print JSON (schema {FLOWS_SCHEMA}; a list of such objects for several files) instead of a table.",
        ),
        threads: int = typer.Option(None, "--threads", help=THREADS_HELP, show_default=False),
        as_csv: bool = typer.Option(
            False,
            "--csv",
            help="Print CSV, one row per connection with every column (times in s, sizes in bytes), instead of a table.",
        ),
    ) -> None:
        flows(captures, as_json, threads, as_csv)

    def samples_command(
        captures: list[Path] = typer.Argument(
            ...,
            help="pcap or pcapng file(s); with several, a first column 'capture' names each row's file.",
            show_default=False,
        ),
        output: Path = typer.Option(
            None,
            "--output",
            "-o",
            help="Write to FILE.csv, FILE.parquet or FILE.jsonl (JSON lines) instead of printing CSV.",
        ),
        method: str = typer.Option("all", "--method", "-m", help="seq, ts, syn or all."),
        flow: list[int] = typer.Option(
            [], "--flow", help="Only this connection id (see `rttlab flows`); repeatable."
        ),
        include_ambiguous: bool = typer.Option(
            False,
            "--include-ambiguous",
            help="Keep samples Karn's rule rejects, flagged in column 'ambiguous'.",
        ),
        path: bool = typer.Option(
            False,
            "--path",
            help="Only each connection's path-RTT series (see `rttlab flows`), sorted by time: input for `rttlab evaluate`.",
        ),
        threads: int = typer.Option(None, "--threads", help=THREADS_HELP, show_default=False),
    ) -> None:
        samples(captures, output, method, flow, include_ambiguous, path, threads)

    flows_command.__doc__ = flows.__doc__
    samples_command.__doc__ = samples.__doc__
    app.command("flows")(flows_command)
    app.command("samples")(samples_command)
