"""Terminal tables that never lose data: every command's tables go through :func:`show`.

A cell is never wrapped or cut: an address, a number or a label is printed whole or its column
is left out. Each column has a priority (0: always shown); when the table is wider than the
terminal, the columns of the highest priority number are left out first, and a line under the
table names them and points to ``--json``/``--csv``, which always hold every column. Only
columns marked ``prose`` (a sentence, such as a parameter's meaning, or a list of settings such as
a reproduction's point) wrap, between words only.

Piped output (stdout not a terminal and no ``COLUMNS`` in the environment) has no width to fit:
the table is printed as wide as it needs, every column shown. ``COLUMNS=N`` sets the width as
rich reads it, for a terminal and for a pipe alike."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from rttlab.cli.common import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

#: A prose column is given at least this many cells before lower-priority columns are dropped.
PROSE_MIN = 24


@dataclass(frozen=True)
class Col:
    """A column: its header, alignment, priority (0 = never dropped; higher numbers go first),
    style, and whether it holds prose that may wrap."""

    header: str
    justify: str = "left"
    priority: int = 0
    style: str | None = None
    prose: bool = False


def num(header: str, priority: int = 0) -> Col:
    """A right-aligned column of numbers."""
    return Col(header, "right", priority)


def _width(cell: str) -> int:
    from rich.text import Text

    return max((Text.from_markup(line).cell_len for line in cell.split("\n")), default=0)


def width() -> int | None:
    """The width to fit, or None for as wide as needed (a pipe with no COLUMNS)."""
    from rttlab.cli.common import console

    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        return None
    return console.width


def _longest_word(cols: Sequence[Col], rows: Sequence[Sequence[str]], i: int) -> int:
    """A prose column wraps between words only: its narrowest is its longest word."""
    return max([_width(w) for r in rows for w in r[i].split()] + [_width(cols[i].header)])


def _widths(cols: Sequence[Col], rows: Sequence[Sequence[str]]) -> list[int]:
    out = []
    for i, c in enumerate(cols):
        natural = max([_width(c.header)] + [_width(r[i]) for r in rows])
        out.append(
            max(min(natural, PROSE_MIN), _longest_word(cols, rows, i)) if c.prose else natural
        )
    return out


def _total(cols: Sequence[Col], rows: Sequence[Sequence[str]], keep: list[int]) -> int:
    widths = _widths(cols, rows)
    return sum(widths[i] for i in keep) + 3 * len(keep) + 1


def fit(cols: Sequence[Col], rows: Sequence[Sequence[str]], available: int | None) -> list[int]:
    """Indices of the columns to show: all of them, or the lowest priorities that fit in
    ``available`` cells (rich's default box: 3 cells per column and 1 more)."""
    keep = list(range(len(cols)))
    if available is None:
        return keep
    widths = _widths(cols, rows)

    def total(ix: list[int]) -> int:
        return sum(widths[i] for i in ix) + 3 * len(ix) + 1

    for priority in sorted({c.priority for c in cols if c.priority > 0}, reverse=True):
        if total(keep) <= available:
            break
        # Within a priority, the rightmost column goes first.
        for i in reversed([i for i in keep if cols[i].priority == priority]):
            if total(keep) <= available:
                break
            keep.remove(i)
    return keep


def show(
    cols: Sequence[Col],
    rows: Iterable[Sequence[str]],
    *,
    title: str | None = None,
    caption: str | None = None,
    formats: str = "--json or --csv",
) -> list[str]:
    """Print the table fitted to the terminal; returns the headers left out (also named under
    the table, with where to find them: ``formats``)."""
    from rich.table import Table

    from rttlab.cli.common import console

    rows = [list(r) for r in rows]
    available = width()
    keep = fit(cols, rows, available)
    # Prose may wrap down to its longest word when nothing else can go (a 60-column terminal).
    tight = sum(
        _longest_word(cols, rows, i) if cols[i].prose else _widths(cols, rows)[i] for i in keep
    )
    fits = (
        available is None
        or _total(cols, rows, keep) <= available
        or tight + 3 * len(keep) + 1 <= available
    )
    # A table narrower than its title is widened to it (up to the terminal), so the title is not
    # wrapped into a column of words over a narrow table.
    heading = max((_width(line) for line in (title or "").split("\n")), default=0)
    table = Table(
        title=title,
        caption=caption,
        title_justify="left",
        caption_justify="left",
        min_width=min(heading, available or heading) or None,
    )
    for i in keep:
        c = cols[i]
        table.add_column(
            c.header,
            justify=c.justify,
            style=c.style,
            no_wrap=not c.prose,
            overflow="fold",
            min_width=_longest_word(cols, rows, i) if c.prose else None,
        )
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    dropped = [cols[i].header for i in range(len(cols)) if i not in keep]
    if available is None or not fits:
        # A pipe, or columns that may not be dropped wider than the terminal: as wide as the
        # table is, so nothing is cut or folded (the terminal wraps the lines, not rich).
        from rich.console import Console

        wide = Console(
            file=sys.stdout,
            width=max(
                console.width,
                console.measure(table, options=console.options.update(width=10**5)).maximum,
            ),
            force_terminal=False,
            color_system=None,
        )
        wide.print(table)
    else:
        console.print(table)
    if dropped:
        console.print(
            f"[dim]not shown at {available} columns: {', '.join(dropped)} (a wider terminal or {formats} shows every column)[/]",
            highlight=False,
        )
    return dropped
