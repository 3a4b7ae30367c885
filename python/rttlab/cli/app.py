"""The typer application: every command, each imported only when it runs, so that ``rttlab
--help`` loads neither NumPy, pandas, pyarrow nor matplotlib. `rttlab.cli.main` imports this
module only for argument lists `rttlab.cli.direct` leaves to typer."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    # Annotations only: typer carries its own click, and importing the click package costs
    # ~30 ms of every command's start.
    import click

#: Command → (module that registers it, the one-line summary `rttlab --help` lists). The summary
#: is the first line of the command's own docstring (tests/test_cli_startup.py checks they agree),
#: written here so that listing the commands imports none of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "estimators": (
        "rttlab.cli.estimators",
        "List the RTT estimators with every parameter's default, accepted range and meaning.",
    ),
    "evaluate": (
        "rttlab.cli.evaluate",
        "Replay estimators over RTT samples: prediction error and the retransmission timer their sender would have run.",
    ),
    "tune": (
        "rttlab.cli.tune",
        "Tune every estimator's parameters on your traces; recommend what holds on traffic it was not tuned on, and how to apply it.",
    ),
    "train": (
        "rttlab.cli.train",
        "Fit the regression estimator's linear model on your captures; print held-out MAPE per flow and the coefficients to use.",
    ),
    "flows": (
        "rttlab.cli.capture",
        "List the TCP connections of a capture with their traffic, handshake and path RTT.",
    ),
    "samples": (
        "rttlab.cli.capture",
        "Write the RTT samples of a capture as CSV, Parquet or JSON lines, one row per sample.",
    ),
    "simulate": (
        "rttlab.cli.simulate",
        "Simulate TCP flows over a dumbbell or graph with the scenario's estimator, queues and error models.",
    ),
    "components": (
        "rttlab.cli.components",
        "List the simulator's components by family with every parameter's default, range and meaning.",
    ),
    "sweep": (
        "rttlab.cli.sweep",
        "Run every parameter point × seed of a sweep on Dask; each finished run is stored at once.",
    ),
    "results": (
        "rttlab.cli.results",
        "Query a results store (DuckDB) written by `rttlab sweep`, `rttlab reproduce` or `rttlab tune --store`.",
    ),
    "reproduce": (
        "rttlab.cli.reproduce",
        "Run a shipped reproduction of a paper and print our results beside the published numbers.",
    ),
    "red-dimension": (
        "rttlab.cli.red_dimension",
        "Dimension an ECN-capable RED gateway as SpecTCP's §5 does: buffer (eq. 3), max_th (eq. 8), flow bound (eqs. 10, 21).",
    ),
    "testbed": (
        "rttlab.cli.testbed",
        "Run a scenario in real time: Linux TCP between namespaces through rttlab's own queues and error models.",
    ),
    "live": (
        "rttlab.cli.live",
        "Stream the kernel's RTT samples and timeouts from a BPF sock_ops program to every estimator, live.",
    ),
    "report": (
        "rttlab.cli.report",
        "Write a results store as one self-contained HTML file to read or send to a colleague.",
    ),
}


def load_command(name: str) -> click.Command:
    """Import the command's module and build its click command (what typer would have built)."""
    module = importlib.import_module(COMMANDS[name][0])
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode="rich")
    module.register(sub)
    command = typer.main.get_group(sub).commands[name]
    _plain_help(command)
    return command


#: What rich would read as a markup tag (rich.markup's own pattern): `[sweep]`, `[default: x]`.
_TAG = None


def _escape(text: str | None) -> str | None:
    """Help text as written: brackets are text (`[sweep]` in a TOML example), never rich markup."""
    global _TAG
    if not text or "[" not in text:
        return text
    if _TAG is None:
        import re

        _TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
    return _TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def _type_label(param: object, ctx: click.Context) -> str | None:
    """The type column of a command's help in words a user reads (DURATION, FILE, NUMBER…) with
    no Python type noise (`<list[str]>`); flags have none; a repeatable option says so."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    desc = getattr(param, "type_descriptor", None)
    label = getattr(param, "metavar", None)
    if label is None:
        annotation = getattr(desc, "annotation", str)
        from typing import get_args, get_origin

        if get_origin(annotation) is list:
            annotation = get_args(annotation)[0]
        label = {str: "TEXT", int: "INTEGER", float: "NUMBER", bool: "BOOLEAN"}.get(
            annotation, "PATH" if getattr(desc, "is_path", False) else "VALUE"
        )
    if getattr(desc, "is_list", False) and getattr(param, "param_type_name", "") == "option":
        label += " (repeatable)"
    return label


def _fold_help_tables() -> None:
    """A word too long for its help column (a long default, a scenario key, an option's name in
    an 80-column terminal) folds onto the next line instead of ending in '…': rich cuts a cell
    that overflows, and typer sets no overflow. Installed when a command's help is drawn (typer's
    rich help module is not imported by commands that run)."""
    import typer.rich_utils as ru
    from rich.table import Table

    if getattr(ru.Table, "folds", False):
        return

    class FoldingTable(Table):
        folds = True

        def add_row(self, *cells: Any, **kw: Any) -> None:
            super().add_row(*cells, **kw)
            for column in self.columns:
                column.overflow = "fold"

    ru.Table = FoldingTable
    # An option's help is a rich Columns of Text items, each cut on its own unless told to fold.
    parameter_help = ru._get_parameter_help

    def folding_help(*args: Any, **kw: Any) -> Any:
        columns = parameter_help(*args, **kw)
        for item in getattr(columns, "renderables", []):
            if hasattr(item, "overflow"):
                item.overflow = "fold"
        return columns

    ru._get_parameter_help = folding_help


def _reflow(text: str | None) -> str | None:
    """A docstring's paragraphs as one line each, for rich to wrap at the terminal's width (typer's
    rich mode keeps the source's line breaks, which break mid-sentence in an 80-column terminal).
    A paragraph with an indented or list line (an example, a list) keeps its lines."""
    if not text:
        return text
    import inspect

    def keeps(par: str) -> bool:
        return any(
            line[:1].isspace() or line.lstrip()[:2] in ("- ", "* ", "$ ")
            for line in par.splitlines()
        )

    return "\n\n".join(
        par if keeps(par) else " ".join(par.split()) for par in inspect.cleandoc(text).split("\n\n")
    )


#: Narrower than this, help is click's plain layout instead of rich's panels.
NARROW = 100


def _narrow() -> bool:
    import shutil

    return shutil.get_terminal_size((200, 24)).columns < NARROW


def _plain_help(command: click.Command) -> None:
    for c in [command, *getattr(command, "commands", {}).values()]:
        raw = {c: _reflow(c.help)} | {p: getattr(p, "help", None) for p in c.params}
        c.help = _escape(raw[c])
        if c is not command and raw[c]:
            # A group lists its commands by their first sentence, whole: click would cut it at
            # 45 characters with "...".
            c.short_help = raw[c].strip().split("\n\n")[0]

        def format_help(
            ctx: Any, formatter: Any, _draw: Any = c.format_help, _c: Any = c, raw: Any = raw
        ) -> None:
            if _narrow():
                # Below 100 columns rich's four-column option table leaves help a dozen
                # characters (issue 42); click's own layout puts long options' help on the
                # next line, indented, and wraps it at the terminal.
                # Its text is plain: the brackets rich needed escaped are written as they are.
                shown = {o: o.help for o in raw}
                try:
                    for o, text in raw.items():
                        o.help = text
                    super(type(_c), _c).format_help(ctx, formatter)
                finally:
                    for o, text in shown.items():
                        o.help = text
                return
            _fold_help_tables()
            _draw(ctx, formatter)

        c.format_help = format_help  # type: ignore[method-assign]
        for param in c.params:
            if hasattr(param, "help"):
                param.help = _escape(param.help)
    # The help option typer adds to each command is no parameter of it: the class answers for it.
    from typer.core import TyperArgument, TyperOption

    for cls in (TyperOption, TyperArgument):
        cls.display_type_rich = _type_label  # type: ignore[method-assign,assignment]


_PLAIN_INSTALLED = False


def _plain_coercion() -> None:
    """Convert plain parameters (bool, str, int, float, Path and lists of them, with no bounds,
    parser or choices) without pydantic: typer ≥ 0.2x builds a pydantic TypeAdapter per
    parameter (`--help` included), and importing pydantic costs ~0.13 s of every run — more than
    the rest of the start-up. Values and error messages are pydantic's for what a command line
    can hold (an int from a decimal string; "Input should be a valid integer, unable to parse
    string as an integer"). Any other parameter, or a typer whose internals differ, keeps typer's
    own conversion."""
    global _PLAIN_INSTALLED
    if _PLAIN_INSTALLED:
        return
    _PLAIN_INSTALLED = True
    try:
        from typer._click.exceptions import BadParameter
        from typer._coercion import RuntimeParam
        from typer._param_types import coerce_cli_path
        from typer.core import _TyperParameter
    except ImportError:
        return
    from dataclasses import dataclass
    from pathlib import Path
    from typing import get_args, get_origin

    numbers = {int: ("integer", "an integer", int), float: ("number", "a number", float)}
    # pydantic's lax bool strings.
    truths = {
        "1": True,
        "on": True,
        "t": True,
        "true": True,
        "y": True,
        "yes": True,
        "0": False,
        "off": False,
        "f": False,
        "false": False,
        "n": False,
        "no": False,
    }

    @dataclass(frozen=True)
    class Plain(RuntimeParam):  # type: ignore[misc]
        leaf: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if isinstance(value, (list, tuple)):
                return [self._one(v, param, ctx) for v in value]
            return self._one(value, param, ctx)

        def _one(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.leaf is str:
                return value if isinstance(value, str) else str(value)
            if self.leaf is Path:
                return coerce_cli_path(
                    value if isinstance(value, Path) else Path(value),
                    self.parameter_info,
                    path_type=Path,
                    param=param,
                    ctx=ctx,
                )
            if self.leaf is bool:
                if isinstance(value, bool):
                    return value
                text = str(value).strip().lower()
                if text in truths or not text:
                    return truths.get(text, False)
                raise BadParameter(
                    "Input should be a valid boolean, unable to interpret input",
                    ctx=ctx,
                    param=param,
                )
            kind, article, convert = numbers[self.leaf]
            if isinstance(value, convert) and not isinstance(value, bool):
                return value
            text = str(value).strip()
            try:
                if not text.isascii():  # pydantic reads ASCII digits only
                    raise ValueError(text)
                head, point, zeros = text.partition(".")
                if convert is int and point and zeros and not zeros.strip("0"):
                    text = head  # pydantic takes "3.0" as the integer 3 (but not "1e3")
                return convert(text)
            except ValueError:
                raise BadParameter(
                    f"Input should be a valid {kind}, unable to parse string as {article}",
                    ctx=ctx,
                    param=param,
                ) from None

    def plain(param: Any) -> Any:
        desc = getattr(param, "type_descriptor", None)
        info = getattr(desc, "parameter_info", None)
        if desc is None or info is None:
            return None
        annotation = desc.annotation
        if get_origin(annotation) is list and len(get_args(annotation)) == 1:
            annotation = get_args(annotation)[0]
        bounded = any(
            getattr(info, attr, None) is not None for attr in ("parser", "min", "max")
        ) or getattr(info, "clamp", False)
        if (
            annotation not in (bool, str, int, float, Path)
            or bounded
            or desc.is_file
            or desc.is_choice
        ):
            return None
        return Plain(parameter_info=info, annotation=desc.annotation, leaf=annotation)

    original = _TyperParameter.get_runtime_param

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", 0) is None:
            try:
                self._runtime_param = plain(self)
            except Exception:  # typer's internals moved: its own conversion
                self._runtime_param = None
        return original(self)

    _TyperParameter.get_runtime_param = get_runtime_param


class LazyGroup(TyperGroup):
    """A typer group whose commands are imported on first use; the top-level help lists them from
    :data:`COMMANDS` without importing any."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Plain help for the command list, written here: typer's rich help costs ~0.1 s of
        # imports (rich, markdown-it) that `rttlab --help` need not pay, and borrowing click's
        # Group.format_help breaks whenever typer's vendored click and click itself drift apart
        # (click 8.5 added format_arguments). Each command's own help stays rich.
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        options = [
            record for param in self.get_params(ctx) if (record := param.get_help_record(ctx))
        ]
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary) for name, (_, summary) in COMMANDS.items()])


app = typer.Typer(
    name="rttlab",
    cls=LazyGroup,
    help="Which RTT estimator, RTO and loss response should my stack use, and what does each cost?",
    no_args_is_help=True,
    # --install-completion / --show-completion for bash, zsh, fish and PowerShell (README).
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _print_version(value: bool) -> None:
    if value:
        from rttlab import __version__

        print(f"rttlab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print rttlab's version and exit.",
    ),
) -> None:
    """Which RTT estimator, RTO and loss response should my stack use, and what does each cost?"""


# Every command parsed through `app` converts its plain parameters without pydantic.
_plain_coercion()
