"""What every command shares: one-line errors, parameter parsing, JSON output."""

from __future__ import annotations

import sys

from rttlab.jsonable import clean

# typing's import costs ≈ 3 ms of every command's start; checkers treat this name as typing's.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, NoReturn

    from rich.console import Console

    console: Console
    stderr: Console


def __getattr__(name: str) -> Any:
    """``console`` and ``stderr`` are made on first use, so importing this module (every command
    does) costs no rich import until something is printed."""
    if name not in ("console", "stderr"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import os

    from rich.console import Console

    # Pipes and CI logs get 150 columns of text rather than 80 (tables are as wide as they need
    # there: rttlab.cli.table); COLUMNS, when set, is the width for a terminal and a pipe alike.
    sized = sys.stdout.isatty() or os.environ.get("COLUMNS", "").strip().isdigit()
    made = {"console": Console(width=None if sized else 150), "stderr": Console(stderr=True)}
    globals().update(made)
    return made[name]


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def fail(message: str) -> NoReturn:
    raise CliError(message)


def parse_duration(text: str, what: str) -> float:
    """'10ms', '1s', '250us', '2min', '1h' → seconds (the core's parser, the same one estimator
    parameters, --set, scenario files and the Python API use). On the command line a bare number
    is refused: `--min-rto 200` meant 200 ms far more often than 200 s, and read as seconds it
    failed later under a parameter name the user never typed."""
    from rttlab import _core

    try:
        bare = float(text)
    except ValueError:
        bare = None
    if bare is not None:
        fail(f"{what}: '{text}' has no unit; did you mean {text}ms or {text}s?")
    ns = _core.parse_duration(text)
    if ns is None:
        fail(
            f"{what}: cannot read '{text}' as a duration with its unit, such as 200ms or 1h (ns, us, ms, s, min, h)"
        )
    if ns == 0:
        fail(f"{what}: must be a positive duration, got '{text}'")
    return ns / 1e9


#: What --unit takes (the RTT unit of a series file).
UNITS = ("s", "ms", "us", "ns")


def check_unit(unit: str | None) -> None:
    if unit is not None and unit not in UNITS:
        fail(f"--unit: '{unit}' is not one of {', '.join(UNITS)}")


def check_columns(text: str | None) -> None:
    """``--columns time=COL,rtt=COL`` read by the core's reader of it, refused in one line."""
    if text is None:
        return
    from rttlab import ParameterError, _core

    try:
        _core.parse_columns(text)
    except ParameterError as e:
        fail(f"--columns '{text}': {e}")


#: The help of --unit and --columns, for every command that reads RTT series.
UNIT_HELP = "Unit of the RTTs in series: s, ms, us or ns [default: as the header's column name says (rtt_ms), else ms for one RTT per line, s with a header]."
COLUMNS_HELP = "Columns of a series' header to read, by name: time=COL,rtt=COL (either or both) [default: rtt, and time, timestamp or t, any with a unit suffix such as rtt_ms]."


def parse_params(items: list[str]) -> dict[str, dict[str, str]]:
    """['fixed-share.eta=2', ...] → {'fixed-share': {'eta': '2'}}."""
    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        name, dot, param = key.strip().rpartition(".")
        if not sep or not dot or not name or not param or not value.strip():
            fail(f"--param '{item}': expected ESTIMATOR.KEY=VALUE, e.g. rfc6298.min_rto=200ms")
        out.setdefault(name, {})[param] = value.strip()
    return out


def print_csv(rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
    """Rows as CSV on stdout (RFC 4180, a header line first): what a table shows, every column,
    numbers in full (seconds and bits per second, as in --json)."""
    import csv

    columns = columns or list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(
        sys.stdout, fieldnames=columns, extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for r in rows:
        writer.writerow(
            {
                k: ("" if v is None or (isinstance(v, float) and v != v) else v)
                for k, v in clean(r).items()
            }
        )


def one_format(as_json: bool, as_csv: bool) -> None:
    if as_json and as_csv:
        fail("--json and --csv: give one")


def print_json(obj: Any) -> None:
    import json

    sys.stdout.write(json.dumps(clean(obj), indent=2) + "\n")
