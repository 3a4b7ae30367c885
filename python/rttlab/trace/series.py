"""RTT series files → :class:`RttSeries` (parsing and validation happen in Rust)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rttlab import _core

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclass(frozen=True, eq=False)
class RttSeries:
    """RTT samples as :func:`rttlab.read_series` read them from ``path``: arrival times and RTTs,
    validated (times non-decreasing, RTTs positive) and held in Rust (``data``) exactly as read,
    in ns.

    ``time_ns`` and ``rtt_ns`` are those columns as uint64 arrays, ``time`` and ``rtt`` the same
    in seconds (float64), and ``frame`` a DataFrame of ``time`` and ``rtt``; each is made on first
    use, so reading and replaying a series imports neither NumPy nor pandas. Indexed as the
    DataFrame ``read_series`` used to return: ``series["rtt"]`` (an array), ``len(series)``
    (samples), ``"time" in series``; :func:`rttlab.replay` and :func:`rttlab.evaluate` take it
    as it is (no conversion)."""

    data: _core.SeriesData = field(repr=False)
    path: str | None = None
    #: What the reader found doubtful without refusing it (an implausible median RTT for the
    #: unit read: :func:`unit_warning`); :func:`rttlab.read_series` also warns with them.
    warnings: tuple[str, ...] = ()
    #: Column names, as a DataFrame's.
    columns: tuple[str, ...] = field(default=("time", "rtt"), init=False)

    @cached_property
    def time_ns(self) -> np.ndarray:
        """When each sample was taken (ns since the series' origin; uint64)."""
        return self.data.times_ns()

    @cached_property
    def rtt_ns(self) -> np.ndarray:
        """Each sample's RTT (ns; uint64)."""
        return self.data.rtts_ns()

    @cached_property
    def time(self) -> np.ndarray:
        """When each sample was taken (s; float64)."""
        return self.time_ns / 1e9

    @cached_property
    def rtt(self) -> np.ndarray:
        """Each sample's RTT (s; float64)."""
        return self.rtt_ns / 1e9

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The samples as a DataFrame with columns ``time`` and ``rtt`` (s)."""
        import pandas as pd

        return pd.DataFrame({"time": self.time, "rtt": self.rtt})

    def __getitem__(self, column: str) -> np.ndarray:
        if column == "time":
            return self.time
        if column == "rtt":
            return self.rtt
        raise KeyError(f"{column!r}: an RTT series has the columns 'time' and 'rtt' (s)")

    def __contains__(self, column: object) -> bool:
        return column in self.columns

    def __iter__(self) -> Iterator[str]:
        """The column names, as iterating a DataFrame gives."""
        return iter(self.columns)

    def keys(self) -> tuple[str, ...]:
        return self.columns

    def __len__(self) -> int:
        """The number of samples."""
        return len(self.data)

    def __repr__(self) -> str:
        return f"RttSeries({len(self):,} samples{f' from {self.path}' if self.path else ''})"


def sample_path() -> Path:
    """The bundled synthetic series (scripts/make_sample.py made it; one RTT in ms per line)."""
    from importlib import resources  # ≈ 10 ms of imports (zipfile, tempfile): only when asked

    return Path(str(resources.files("rttlab") / "data" / "sample_rtt.csv"))


def read_series(
    path: str | Path,
    unit: str | None = None,
    columns: str | Mapping[str, str] | None = None,
) -> RttSeries:
    """Read an RTT series: one RTT per line (ms unless ``unit``), or a CSV whose header names
    the columns — ``rtt``, and ``time``, ``timestamp`` or ``t`` — in seconds unless the name
    carries a unit (``rtt_ms``, ``rtt_us``, ``time_ms``) or ``unit`` is given (``s``, ``ms``,
    ``us``, ``ns``; for the RTTs). ``columns`` chooses the header's columns by name:
    ``"time=COL,rtt=COL"`` or ``{"time": COL, "rtt": COL}`` (either or both). Returns an
    :class:`RttSeries` (``time`` and ``rtt`` in seconds; ``.frame`` for a DataFrame).

    Raises :class:`rttlab.InputError` naming the file, line and field of the first bad value,
    and :class:`rttlab.ParameterError` for a bad ``unit`` or ``columns``. Warns (``UserWarning``)
    when the median RTT is implausible for the unit read, naming the likely one
    (:func:`unit_warning`); the numbers are read as given either way."""
    import warnings

    series = read_series_quietly(path, unit, columns)
    for warning in series.warnings:
        warnings.warn(warning, stacklevel=2)
    return series


def read_series_quietly(
    path: str | Path,
    unit: str | None = None,
    columns: str | Mapping[str, str] | None = None,
) -> RttSeries:
    """:func:`read_series` without ``warnings.warn``: its warnings only in ``.warnings`` (for
    callers that report them their own way, as the CLI does)."""
    time_column, rtt_column = column_names(columns)
    data = _core.read_series_data(str(path), unit, time_column, rtt_column)
    warning = unit_warning(str(path), data)
    return RttSeries(data, str(path), (warning,) if warning else ())


def read_series_ns(
    path: str | Path,
    unit: str | None = None,
    columns: str | Mapping[str, str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`read_series`, as (times_ns, rtts_ns) uint64 columns (no warning)."""
    return _core.read_series(str(path), unit, *column_names(columns))


def column_names(columns: str | Mapping[str, str] | None) -> tuple[str | None, str | None]:
    """``columns`` as :func:`read_series` takes it → (time column, RTT column), either None.
    Raises :class:`rttlab.ParameterError` naming what cannot be read."""
    from rttlab import ParameterError

    if columns is None:
        return None, None
    if isinstance(columns, str):
        try:
            return _core.parse_columns(columns)
        except ParameterError as e:
            raise ParameterError(f"columns {columns!r}: {e}") from None
    if not isinstance(columns, Mapping):
        raise ParameterError(
            f"columns must be 'time=COL,rtt=COL' or a mapping such as {{'rtt': 'rtt_ms'}}, got {type(columns).__name__}"
        )
    unknown = sorted(set(columns) - {"time", "rtt"})
    if unknown:
        raise ParameterError(f"columns: unknown role {unknown[0]!r} (the roles are time and rtt)")
    for role, name in columns.items():
        if not isinstance(name, str) or not name.strip():
            raise ParameterError(f"columns: {role} must name a column, got {name!r}")
    return columns.get("time"), columns.get("rtt")


#: How each unit reads in a message, and by how much a value in seconds is multiplied to be in it.
_UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
_PER_SECOND = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _likely_unit(median_ns: int | None, unit: str) -> str | None:
    """The unit values read in ``unit`` were likely written in, when their median RTT is
    implausible for a network path (the core's rule, ``_core.unit_doubt``: outside 10 µs – 30 s)
    and another unit makes it plausible; None otherwise."""
    doubt = None if median_ns is None else _core.unit_doubt(median_ns, unit)
    return None if doubt is None else doubt[1]


def unit_warning(name: str, data: _core.SeriesData) -> str | None:
    """The warning for a series file whose median RTT is implausible for a network path in the
    unit it was read in, naming the likely unit and how to say it; None when nothing is in
    doubt. The numbers are never changed."""
    median = data.median_ns()
    likely = _likely_unit(median, data.unit)
    if likely is None or median is None:
        return None
    from rttlab.units import duration

    column = data.rtt_column
    why = {
        "default": "the default under a header"
        if column is not None
        else "the default for one RTT per line",
        "given": "the unit given",
        "header": f"as the column name {column!r} says",
    }[data.unit_from]
    if data.unit_from == "header":
        how = f"rename the column {column!r} to carry the unit, e.g. rtt_{likely}"
    elif column is None:
        how = f"--unit {likely}, or a first line rtt_{likely}"
    else:
        how = f"--unit {likely}, or the header rtt_{likely}"
    return (
        f"{name}: median RTT {duration(median / 1e9)}, read in {_UNIT_WORDS[data.unit]} ({why}), is implausible "
        f"for a network path; if the values are {_UNIT_WORDS[likely]}, say so: {how}"
    )


def samples_unit_warning(rtts_ns: np.ndarray, where: str) -> str | None:
    """As :func:`unit_warning` for RTTs given in seconds (arrays, DataFrames): the warning when
    their median is implausible, saying what to divide them by; None otherwise."""
    import numpy as np

    median = int(np.median(rtts_ns)) if len(rtts_ns) else None
    likely = _likely_unit(median, "s")
    if likely is None or median is None:
        return None
    from rttlab.units import duration

    return (
        f"{where}: median RTT {duration(median / 1e9)}, read in seconds (RTTs given as numbers are seconds), is implausible "
        f"for a network path; if they are {_UNIT_WORDS[likely]}, divide them by {_PER_SECOND[likely]:,} first"
    )


#: Largest time or RTT accepted, in seconds (2^62 ns ≈ 146 years; the Rust reader's MAX_NS).
MAX_SECONDS = 2**62 / 1e9


def check_replay_args(samples: object, estimators: object) -> None:
    """What :func:`rttlab.replay` checks first, so a wrong argument is named in the error rather
    than surfacing as a NumPy or PyO3 conversion message."""
    from rttlab.trace.estimators import Spec

    if isinstance(samples, (str, Path)) or hasattr(samples, "__fspath__"):
        raise TypeError(
            f"samples must be a DataFrame with 'rtt' (and 'time') columns in seconds or a 1-D array of RTTs, "
            f"got the path {str(samples)!r}: read it first, e.g. rttlab.replay(rttlab.read_series({str(samples)!r}), ...)"
        )
    if isinstance(estimators, (Spec, str)):
        return
    if not hasattr(estimators, "__iter__"):
        raise TypeError(
            f"estimators must be an estimator name, a spec, or a list of them, got {type(estimators).__name__}"
        )
    for i, e in enumerate(estimators):
        if not isinstance(e, (Spec, str)):
            raise TypeError(
                f"estimators[{i}] must be an estimator name such as 'rfc6298' or a spec such as rttlab.estimators.Rfc6298(), got {type(e).__name__} {e!r}"
            )


def _column(samples: object, name: str) -> np.ndarray:
    """One column of a DataFrame, a :class:`Samples` or a mapping, as float64 seconds."""
    import numpy as np

    value = samples[name]  # type: ignore[index]
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"samples[{name!r}] must be a 1-D sequence of numbers (seconds), got {type(value).__name__}"
        ) from None


def to_nanos(
    samples: pd.DataFrame | np.ndarray | Mapping[str, object],
) -> tuple[np.ndarray, np.ndarray]:
    """Samples as (times_ns, rtts_ns) uint64 columns. A DataFrame (or a mapping of column name
    to values) needs ``rtt`` (and optionally ``time``) in seconds; a 1-D array is RTTs in
    seconds, arriving back to back. An :class:`RttSeries` gives its columns as read."""
    import numpy as np

    if isinstance(samples, RttSeries):
        return samples.time_ns, samples.rtt_ns
    if hasattr(samples, "columns") or isinstance(samples, Mapping):  # a DataFrame or its columns
        if "rtt" not in samples:  # type: ignore[operator]
            kind = "DataFrame" if hasattr(samples, "columns") else "mapping"
            raise ValueError(
                f"samples: a {kind} needs an 'rtt' column (seconds) and optionally 'time'; got {', '.join(map(repr, list(samples)[:8])) or 'no columns'}"
            )  # type: ignore[call-overload]
        rtt = _column(samples, "rtt")
        time = _column(samples, "time") if "time" in samples else np.cumsum(rtt)  # type: ignore[operator]
        if rtt.ndim != 1 or time.shape != rtt.shape:
            raise ValueError(
                f"samples: 'rtt' and 'time' must be 1-D columns of one length, got shapes {rtt.shape} and {time.shape}"
            )
    else:
        try:
            rtt = np.asarray(samples, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"samples must be a DataFrame or mapping with 'rtt' (and 'time') columns in seconds, or a 1-D array of RTTs in seconds; got {type(samples).__name__}"
            ) from None
        if rtt.ndim != 1:
            raise ValueError("samples must be a DataFrame or a 1-D array of RTTs in seconds")
        time = np.cumsum(rtt)
    if not np.all(np.isfinite(rtt)) or np.any(rtt <= 0):
        bad = int(np.flatnonzero(~np.isfinite(rtt) | (rtt <= 0))[0])
        raise ValueError(f"sample {bad}: rtt must be positive and finite, got {rtt[bad]}")
    # Checked before the cast: NumPy would wrap or warn, never say which sample.
    if np.any(rtt > MAX_SECONDS):
        bad = int(np.flatnonzero(rtt > MAX_SECONDS)[0])
        raise ValueError(
            f"sample {bad}: rtt {rtt[bad]:g} s is outside the representable range (1 ns .. 146 years)"
        )
    if not np.all(np.isfinite(time)) or np.any(time < 0) or np.any(np.diff(time) < 0):
        raise ValueError("time must be finite, non-negative and non-decreasing")
    if np.any(time > MAX_SECONDS):
        bad = int(np.flatnonzero(time > MAX_SECONDS)[0])
        raise ValueError(
            f"sample {bad}: time {time[bad]:g} s is outside the representable range (0 .. 146 years)"
        )
    return np.rint(time * 1e9).astype(np.uint64), np.maximum(np.rint(rtt * 1e9), 1).astype(
        np.uint64
    )
