"""Packet captures (pcap/pcapng) → RTT samples and per-connection summaries.

All parsing, connection tracking and sample matching happen in Rust (``src/capture``); the core
hands its tables over as Arrow (the columns ``src/capture/tables.rs`` declares, docs/capture.md)
and this module makes them DataFrames. Python never loops over packets.

Sample methods (column ``method``):

- ``seq``: a data segment and the first ACK (cumulative, or a SACK block) that covers it exactly;
  Karn's rule drops samples whose ACK covers retransmitted data unless ``include_ambiguous``.
- ``ts``: RFC 7323 TSval first seen in one direction, matched with the first TSecr echoing it
  from the other (pping-style); each direction gives one partial RTT of the capture point.
- ``syn``: SYN → SYN/ACK (``fwd``) and SYN/ACK → ACK (``rev``); with a retransmitted SYN or
  SYN/ACK the answer's TSecr names the transmission answered, else the leg is ambiguous.

``idle_echo`` flags ``ts`` samples that RFC 7323 §4's RTTM rule does not accept as a path
measurement (they may span an application pause); they are left out of path series.

``direction`` is ``fwd`` when the timed packet went from the connection's ``src`` (the
initiator, when the handshake was seen) to ``dst``, ``rev`` otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rttlab import _core

if TYPE_CHECKING:
    import pandas as pd

METHODS = ("seq", "ts", "syn")
#: Evidence on whether a retransmission was needed (docs/capture.md, src/capture/loss.rs), in the
#: core's order.
EVIDENCE = ("acked", "dsack", "ts-original", "ts-resend", "unacked", "unknown")
#: The evidence values that say the earlier transmission was really lost.
NEEDED = ("ts-resend", "unacked")

#: Connection columns that are integers but may be missing (no SYN seen, TTL 0): nullable ints,
#: so JSON shows ``1460`` and ``null``, never ``1460.0``. Declared in src/capture/tables.rs.
NULLABLE_INT_COLUMNS = tuple(
    name for name, kind, _unit, _doc in _core.connection_columns() if kind == "opt_int"
)


def _check_path(path: object, what: str = "path") -> str:
    """A file path as a string, or a TypeError naming the argument (a DataFrame or a list
    passed where one file is expected)."""
    if isinstance(path, (str, Path)) or hasattr(path, "__fspath__"):
        return str(Path(path))
    raise TypeError(f"{what} must be a capture file path (str or Path), got {type(path).__name__}")


def capture_format(path: str | Path) -> str | None:
    """``"pcap"`` or ``"pcapng"`` from the file's first bytes (the Rust reader's own check, so
    every magic it reads counts, the modified/Kuznetsov pcap included), or None for any other
    file. A gzip/zstd/xz/bzip2-compressed file raises :class:`rttlab.InputError` saying so."""
    return _core.capture_format(_check_path(path))


def is_capture(path: str | Path) -> bool:
    """True for a pcap/pcapng file (by content, not name); see :func:`capture_format`."""
    return capture_format(path) is not None


def analyze(path: str | Path, include_ambiguous: bool = False, sack_samples: bool = True) -> dict:
    """The raw result of the Rust analysis: ``samples``, ``connections`` and ``retransmissions``
    as pyarrow Tables (columns: docs/capture.md), plus ``counters``, ``read`` and ``warnings``.
    Raises :class:`rttlab.InputError` if the file cannot be read at all."""
    return _tables(_core.analyze_capture(_check_path(path), include_ambiguous, sack_samples))


def _tables(raw: dict) -> dict:
    """The core's result with its Arrow tables as pyarrow Tables (no copy of the columns)."""
    import pyarrow as pa

    return {k: pa.table(v) if k in TABLES else v for k, v in raw.items()}


#: The result's tables, handed over as Arrow.
TABLES = ("samples", "connections", "retransmissions")


def _frame(table: Any) -> pd.DataFrame:
    """An Arrow table from the core → a DataFrame: int64, float64 and bool columns, categoricals
    from the dictionary columns (``direction``, ``method``, ``evidence``), text as str."""
    import pyarrow as pa

    return pa.table(table).to_pandas()


def _samples_frame(s: Any) -> pd.DataFrame:
    """Sample columns from the core → the documented DataFrame."""
    return _frame(s)


def _retransmissions_frame(raw: dict) -> pd.DataFrame:
    """Retransmission columns from the core → the documented DataFrame (one row per resent
    packet; docs/capture.md "Retransmissions")."""
    return _frame(raw["retransmissions"])


def _connections_frame(raw: dict) -> pd.DataFrame:
    """Connection columns from the core → the documented DataFrame: ``conn`` int64, counts
    uint64, integers that may be unknown as nullable ``Int64``, unknown seconds NaN."""
    connections = _frame(raw["connections"])
    connections["conn"] = connections["conn"].astype("int64")
    for column in NULLABLE_INT_COLUMNS:
        connections[column] = connections[column].astype("Int64")
    connections.attrs.update(_attrs(raw))
    return connections


def _attrs(raw: dict) -> dict:
    return {"counters": raw["counters"], "read": raw["read"], "warnings": list(raw["warnings"])}


class CaptureReader:
    """A capture read in batches, so memory stays bounded whatever its length::

        reader = rttlab.capture.CaptureReader("big.pcap")
        for batch in reader.batches():      # DataFrames of `batch_rows` samples
            ...                             # (the columns of read_capture's samples)
        connections = reader.connections()  # after the last batch; .attrs as read_capture's

    The Rust core hands each batch over and forgets it; it keeps only live connections and, per
    connection, the RTTs its summary's medians need. ``threads=2`` reads and decodes on a second
    thread while the first tracks connections; ``threads=N`` ≥ 3 splits a file's connections
    across N threads (docs/capture.md; every result identical to one thread). Raises
    :class:`rttlab.InputError` (from the constructor or the first batch) when the file cannot be
    read at all."""

    def __init__(
        self,
        path: str | Path,
        include_ambiguous: bool = False,
        sack_samples: bool = True,
        batch_rows: int = 1 << 16,
        threads: int = 1,
    ) -> None:
        if not isinstance(batch_rows, int) or batch_rows < 1:
            raise ValueError(f"batch_rows must be a positive integer, got {batch_rows!r}")
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self.path = _check_path(path)
        # threads: 2 is the read/decode + track pipeline, 3+ shard connections (identical
        # results; worth it for files of several MB and more, see docs/capture.md).
        self._stream = _core.CaptureStream(self.path, include_ambiguous, sack_samples, threads)
        self._rows = batch_rows
        self._raw: dict | None = None

    def batches(self):
        """Sample DataFrames in capture order, each of exactly ``batch_rows`` rows (the last
        may be shorter); an empty capture yields nothing."""
        while (batch := self._stream.next_batch(self._rows)) is not None:
            yield _samples_frame(batch)

    def drain(self) -> int:
        """Read to the end without building DataFrames (for the summaries alone); returns the
        number of samples skipped."""
        return self._stream.drain()

    def connections(self) -> pd.DataFrame:
        """The connection summaries (``read_capture``'s second frame), once every batch was read."""
        return _connections_frame(self.result())

    def result(self) -> dict:
        """The core's result once every batch was read (samples not taken are dropped): the
        dict :func:`analyze` returns — ``connections`` and ``retransmissions`` as the core's Arrow
        tables (``pa.table`` takes them), ``counters``, ``read``, ``warnings`` — without building
        a DataFrame (no pandas import)."""
        if self._raw is None:
            self.drain()
            self._raw = self._stream.finish()
        return self._raw


@dataclass(frozen=True, eq=False)
class Capture:
    """What :func:`read_capture` read from one capture file: three tables (DataFrames, made on
    first use from the Arrow tables the Rust core returned) and what the reader counted.

    ``samples``: one row per RTT sample; ``connections``: one row per TCP connection;
    ``retransmissions``: one row per resent packet (columns: :func:`read_capture`, docs/capture.md).
    ``counters``: capture-wide counts (frames, malformed, non-TCP, fragments, negative RTTs, ...);
    ``read``: how much of the file was read; ``warnings``: where a damaged file stopped being
    read, link types skipped. Each table's ``attrs`` carries ``counters``, ``read`` and
    ``warnings`` too.

    Unpacks as the tuple ``read_capture`` used to return: ``samples, connections = capture``, or
    with ``read_capture(..., retransmissions=True)``, ``samples, connections, retransmissions``."""

    path: str
    counters: dict[str, Any]
    read: dict[str, Any]
    warnings: list[str]
    #: The core's result behind the tables (its tables as Arrow).
    raw: dict[str, Any] = field(repr=False)
    #: What unpacking yields: (samples, connections), plus retransmissions when asked for.
    unpack_retransmissions: bool = field(default=False, repr=False)

    @classmethod
    def from_raw(
        cls, path: str, raw: dict[str, Any], unpack_retransmissions: bool = False
    ) -> Capture:
        return cls(
            path, raw["counters"], raw["read"], list(raw["warnings"]), raw, unpack_retransmissions
        )

    @cached_property
    def samples(self) -> pd.DataFrame:
        """One row per RTT sample (:func:`read_capture` lists the columns)."""
        samples = _samples_frame(self.raw["samples"])
        samples.attrs.update(_attrs(self.raw))
        return samples

    @cached_property
    def connections(self) -> pd.DataFrame:
        """One row per TCP connection (:func:`read_capture` lists the columns)."""
        return _connections_frame(self.raw)

    @cached_property
    def retransmissions(self) -> pd.DataFrame:
        """One row per resent packet (:func:`read_capture` lists the columns)."""
        rtx = _retransmissions_frame(self.raw)
        rtx.attrs.update(_attrs(self.raw))
        return rtx

    def __iter__(self) -> Iterator[pd.DataFrame]:
        yield self.samples
        yield self.connections
        if self.unpack_retransmissions:
            yield self.retransmissions

    def __len__(self) -> int:
        """How many tables unpacking yields (2, or 3 with ``retransmissions=True``)."""
        return 3 if self.unpack_retransmissions else 2

    def __getitem__(self, index: int) -> pd.DataFrame:
        """``capture[0]`` is ``samples``, ``[1]`` ``connections`` (``[2]`` ``retransmissions``), as the tuple's."""
        return tuple(self)[index]


def read_capture(
    path: str | Path,
    include_ambiguous: bool = False,
    sack_samples: bool = True,
    retransmissions: bool = False,
) -> Capture:
    """Read a pcap/pcapng capture → a :class:`Capture` with the tables ``samples``,
    ``connections`` and ``retransmissions``. It unpacks as the tuple this function returned
    before: ``samples, connections = read_capture(path)``, and with ``retransmissions=True``
    ``samples, connections, retransmissions``.

    ``samples``: one row per RTT sample — ``conn, direction, time, rtt, method, ambiguous,
    seq_start, seq_end, frame, ref_frame`` (times in seconds from the first packet; ``frame`` is
    the packet that completed the sample, ``ref_frame`` the one it timed; 1-based as in
    Wireshark).

    ``connections``: one row per TCP connection — endpoints, packets/bytes/retransmissions per
    direction, SACK/TS use, handshake RTT, vantage point guess and which method gives the path
    RTT there, TTL and hop estimate, min/max/median path RTT, malformed count.

    ``retransmissions``: one row per resent packet — ``conn, direction, seq_start, seq_end,
    sent`` (the transmission it repeats; NaN when the capture holds none), ``resent``,
    ``timer_start`` (when the sender's timer covering that data last started), ``attempt``,
    ``dupacks``, ``evidence`` and ``needed`` (whether the capture shows the earlier transmission
    was really lost; docs/capture.md), ``frame``, ``ref_frame``.

    A file damaged part-way is read up to the damage; ``samples.attrs["warnings"]`` says where.
    ``attrs["counters"]`` has capture-wide counts (malformed frames, non-TCP, fragments, ...).
    Raises :class:`rttlab.InputError` if the file cannot be read at all."""
    raw = analyze(path, include_ambiguous, sack_samples)
    return Capture.from_raw(_check_path(path), raw, retransmissions)


def read_captures(
    paths: list[str | Path],
    include_ambiguous: bool = False,
    sack_samples: bool = True,
    threads: int | None = None,
) -> list[Capture]:
    """:func:`read_capture` for several files at once, one per core: the Rust analysis releases
    the GIL, so files are read in parallel threads. Results come back in the order given; an
    unreadable file raises :class:`rttlab.InputError` (naming it) after the others finish."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    if isinstance(paths, (str, Path)) or hasattr(paths, "__fspath__"):
        raise TypeError(
            f"paths must be a list of capture files, got one path {str(paths)!r}: use read_capture, or read_captures([{str(paths)!r}])"
        )
    try:
        paths = [_check_path(p, "each of paths") for p in paths]
    except TypeError as e:
        if not hasattr(paths, "__iter__"):
            raise TypeError(
                f"paths must be a list of capture files, got {type(paths).__name__}"
            ) from None
        raise e

    workers = max(1, min(len(paths), threads or os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(analyze, p, include_ambiguous, sack_samples) for p in paths]
        raws = [f.result() for f in futures]
    return [Capture.from_raw(p, raw) for p, raw in zip(paths, raws)]


def path_samples(samples: pd.DataFrame, connections: pd.DataFrame) -> pd.DataFrame:
    """Only the samples that measure each connection's end-to-end path RTT from where the capture
    sits: the series named in ``connections["path_rtt_method"]`` when it is a single series
    (``seq fwd``, ``ts rev``, ...). Connections whose path RTT is only a sum of partial RTTs
    (capture in the middle) or unknown contribute nothing. Rows are sorted by connection and
    time, ready for :func:`rttlab.replay` one connection at a time, or for
    ``rttlab evaluate`` after ``rttlab samples --path --flow ID -o FILE.csv``. TS echoes flagged
    ``idle_echo`` (RFC 7323 §4's RTTM rule) are never part of a path series."""
    import pandas as pd

    keep = []
    for conn, how in zip(connections["conn"], connections["path_rtt_method"]):
        parts = how.split()
        if len(parts) == 2 and parts[0] in METHODS:
            keep.append((conn, parts[0], parts[1]))
    if not keep:
        return samples.iloc[0:0]
    want = pd.DataFrame(keep, columns=["conn", "method", "direction"])
    key = samples[["conn", "method", "direction"]].astype({"method": str, "direction": str})
    mask = key.merge(want, how="left", indicator=True)["_merge"].eq("both").to_numpy()
    out = samples[mask & ~samples["ambiguous"].to_numpy() & ~samples["idle_echo"].to_numpy()]
    return out.sort_values(["conn", "time"], kind="stable").reset_index(drop=True)
