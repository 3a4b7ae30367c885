"""Durations read one way everywhere, and numbers written with the unit their range calls for.

Reading: :func:`seconds` takes what a user writes for a duration — ``"200ms"``, ``"1.5s"``,
``"250us"``/``"250µs"``, ``"10ns"``, ``"2min"``, ``"1h"``, or a bare number of seconds — through
the core's one parser (``src/time.rs`` ``parse_duration``), the same one the command line's
options, ``--set``, scenario and sweep files and estimator parameters use (docs/scenarios.md,
"Units"). Writing: :func:`duration`, :func:`rate`, :func:`size` and :func:`count` pick the unit
for the value's range (``12.3 ms``, ``18.9 Mb/s``, ``1 TCP connection``)."""

from __future__ import annotations

import math

#: The units a duration may be written in (src/time.rs DURATION_UNITS, in the same order).
DURATION_UNITS = ("ns", "us", "µs", "ms", "s", "min", "h")

#: What every duration error says it wanted.
DURATION_HINT = (
    "a duration such as 200ms or 1h (units ns, us, ms, s, min, h; a bare number is seconds)"
)

#: Values the core writes for "no limit" (Linux's TCP_INFINITE_SSTHRESH is 0x7fffffff; the
#: simulator's unset ssthresh is u64::MAX / 4 = 4611686018427387903): shown as ∞ in tables.
#: Files keep the number (a column's type cannot change row by row); docs/schema.md says so.
INFINITE = (0x7FFFFFFF, 4611686018427387903, 2**64 - 1, 2**63 - 1)


def seconds(value: object, what: str) -> float:
    """A duration as a user writes it (text with a unit, or a number of seconds) → seconds (a
    float ≥ 0). Raises ValueError naming ``what`` (the argument or option) otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected {DURATION_HINT}, got {value!r}")
    if isinstance(value, (int, float)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{what}: expected {DURATION_HINT}, got {value!r}")
        return float(value)
    if isinstance(value, str):
        from rttlab import _core

        ns = _core.parse_duration(value)
        if ns is None:
            raise ValueError(f"{what}: cannot read {value!r} as {DURATION_HINT}")
        return ns / 1e9
    raise ValueError(f"{what}: expected {DURATION_HINT}, got {type(value).__name__} {value!r}")


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant figures, no exponent for the ranges a table shows."""
    if x == 0:
        return "0"
    places = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:.{places}f}"
    # Rounding may add a digit (999.6 → 1000): fine; never an exponent. No trailing zeros
    # (4 ms, not 4.00 ms), as %g writes them.
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def duration(s: float | None, digits: int = 3) -> str:
    """Seconds in s, ms, µs or ns as their range calls for: ``1.23 s``, ``45.6 ms``, ``780 µs``."""
    if _missing(s):
        return "—"
    a = abs(s)
    if a == 0:
        return "0 s"
    for scale, unit in ((3600.0, "h"), (60.0, "min")):
        if a >= 2 * scale:
            return f"{_sig(s / scale, digits)} {unit}"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if a >= scale * 0.9995:
            return f"{_sig(s / scale, digits)} {unit}"
    return f"{_sig(s * 1e9, digits)} ns"


def rate(bps: float | None, digits: int = 3) -> str:
    """Bits per second in b/s, kb/s, Mb/s or Gb/s (decimal prefixes, as link rates are given)."""
    if _missing(bps):
        return "—"
    return _decimal(bps, digits, ("Gb/s", "Mb/s", "kb/s")) or f"{_sig(bps, digits)} b/s"


def size(n: float | None, digits: int = 3) -> str:
    """Bytes in B, kB, MB or GB (decimal prefixes)."""
    if _missing(n):
        return "—"
    return _decimal(n, digits, ("GB", "MB", "kB")) or f"{int(n)} B"


def _decimal(x: float, digits: int, units: tuple[str, str, str]) -> str | None:
    """``x`` in the largest of the giga, mega and kilo ``units`` it reaches (rounding included);
    None below a thousand, for the caller's own base unit."""
    for scale, unit in zip((1e9, 1e6, 1e3), units):
        if abs(x) >= scale * 0.9995:
            return f"{_sig(x / scale, digits)} {unit}"
    return None


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 TCP connection``, ``2 TCP connections`` (thousands separated)."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def number(v: object) -> str:
    """A cell: ∞ for the core's no-limit sentinels, thousands separated integers, 4 significant
    figures for other floats (never an exponent below 10¹⁵), — when missing."""
    if _missing(v):
        return "—"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu"):
        n = int(v)  # type: ignore[call-overload]
        return "∞" if n in INFINITE else f"{n:,}"
    if isinstance(v, float) or hasattr(v, "dtype"):
        x = float(v)  # type: ignore[arg-type]
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if x.is_integer() and abs(x) < 1e15:
            return "∞" if int(x) in INFINITE else f"{int(x):,}"
        if abs(x) >= 1e15 or abs(x) < 1e-4:
            return f"{x:.4g}"
        if abs(x) >= 999.95:  # whole at 4 significant figures: separated as the integers beside it
            return f"{round(x):,}"
        return _sig(x, 4)
    return str(v)
