"""Plain argument lists of the capture commands and ``evaluate``, read without typer.

Importing typer (its vendored click, `inspect`, its coercion machinery) costs ≈ 55 ms, a sixth of
`rttlab samples` on a 1 GB capture with two cores (BENCHMARKS.md), and these commands
are the ones run on big captures by scripts and benchmarks. So `read` takes an argument list of
`rttlab flows` or `rttlab samples` made only of capture paths and the commands' own options, in
the forms click reads (``--opt value``, ``--opt=value``, ``-o value``, in any order), and returns
the call typer would have made. Anything else — ``--help``, an unknown or misspelt option,
``-ofile``, ``--``, a value not converted here exactly as typer converts it (``--threads 2.0``,
``--flow -1``), no capture named — gives None, and typer reads the whole list as before: its help
and its error messages stay the only ones. tests/test_cli_direct.py checks that both readers
make the same call for the same list and that the options here are the commands' options.
"""

from __future__ import annotations

from pathlib import Path

from rttlab.cli.common import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

#: How an option's value is read: a flag takes none (``flag-off``: the ``--no-`` form, False);
#: "int" and "ints" (repeatable) take ASCII digits only (typer would also take "+3", " 3", "3.0"
#: or "3_0": those go to typer); "texts" is a repeatable text.
FLAG, FLAG_OFF, INT, INTS, TEXT, TEXTS, PATH = (
    "flag",
    "flag-off",
    "int",
    "ints",
    "text",
    "texts",
    "path",
)

THREADS = ("threads", INT)

#: Command → (module holding a function of the command's name, how it takes its positional
#: arguments: "many" as a list of one or more paths first — ``flows(captures, **options)`` —,
#: "any" as a list of paths that may be empty — ``evaluate(inputs, **options)``, whose
#: ``--sample`` needs none).
TARGETS: dict[str, tuple[str, str]] = {
    "flows": ("rttlab.cli.capture", "many"),
    "samples": ("rttlab.cli.capture", "many"),
    "evaluate": ("rttlab.cli.evaluate", "any"),
}

#: Command → its options: token → (parameter, kind).
COMMANDS: dict[str, dict[str, tuple[str, str]]] = {
    "flows": {"--json": ("as_json", FLAG), "--csv": ("as_csv", FLAG), "--threads": THREADS},
    "samples": {
        "--output": ("output", PATH),
        "-o": ("output", PATH),
        "--method": ("method", TEXT),
        "-m": ("method", TEXT),
        "--flow": ("flow", INTS),
        "--include-ambiguous": ("include_ambiguous", FLAG),
        "--path": ("path", FLAG),
        "--threads": THREADS,
    },
    # `rttlab evaluate SERIES -e rfc6298` on a million samples is mostly start-up: typer alone
    # would cost as much as reading and replaying the series (BENCHMARKS.md).
    "evaluate": {
        "--sample": ("sample", FLAG),
        "--estimators": ("estimators", TEXT),
        "-e": ("estimators", TEXT),
        "--param": ("param", TEXTS),
        "-p": ("param", TEXTS),
        "--unit": ("unit", TEXT),
        "--columns": ("columns", TEXT),
        "--tick": ("tick", TEXT),
        "--min-rto": ("min_rto", TEXT),
        "--timer-granularity": ("timer_granularity", TEXT),
        "--timestamps": ("timestamps", FLAG),
        "--no-timestamps": ("timestamps", FLAG_OFF),
        "--sort": ("sort", TEXT),
        "--json": ("as_json", FLAG),
        "--csv": ("as_csv", FLAG),
        "--plot": ("plot", PATH),
        "--flow": ("flow", INT),
    },
}


def parse(argv: list[str]) -> tuple[str, list[Path], dict[str, object]] | None:
    """(command, captures, options given) for a plain argument list, else None."""
    if not argv or argv[0] not in COMMANDS:
        return None
    known = COMMANDS[argv[0]]
    captures: list[Path] = []
    options: dict[str, object] = {}
    rest = iter(argv[1:])
    for token in rest:
        if not token.startswith("-"):
            if not token:
                return None
            captures.append(Path(token))
            continue
        name, equals, value = token.partition("=")
        entry = known.get(name)
        if entry is None or (equals and not name.startswith("--")):
            return None  # unknown, "--", "-", or "-o=x" (click reads the value "=x")
        parameter, kind = entry
        if kind in (FLAG, FLAG_OFF):
            if equals:
                return None
            options[parameter] = kind == FLAG
            continue
        if not equals:
            value = next(rest, None)
            if value is None or value.startswith("-"):
                return None
        if not value:
            return None
        if kind in (INT, INTS):
            if not (value.isascii() and value.isdigit()):
                return None
            number = int(value)
            if kind == INTS:
                options.setdefault(parameter, []).append(number)  # type: ignore[attr-defined]
            else:
                options[parameter] = number
        elif kind == TEXTS:
            options.setdefault(parameter, []).append(value)  # type: ignore[attr-defined]
        else:
            options[parameter] = Path(value) if kind == PATH else value
    if not captures and TARGETS[argv[0]][1] == "many":
        return None
    return argv[0], captures, options


def read(argv: list[str]) -> Callable[[], None] | None:
    """The command call for a plain argument list (see the module's doc), else None."""
    parsed = parse(argv)
    if parsed is None:
        return None
    name, captures, options = parsed

    module_name = TARGETS[name][0]

    def call() -> None:
        import importlib

        function = getattr(importlib.import_module(module_name), name)
        function(captures, **options)

    return call
