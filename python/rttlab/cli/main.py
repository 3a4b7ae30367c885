"""Entry point: ``rttlab COMMAND ...``. Each command group lives in its own module."""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from rttlab import InputError, ParameterError, ScenarioError
from rttlab.cli import capture as capture_cmd
from rttlab.cli import components as components_cmd
from rttlab.cli import estimators as estimators_cmd
from rttlab.cli import evaluate as evaluate_cmd
from rttlab.cli import simulate as simulate_cmd
from rttlab.cli import report as report_cmd
from rttlab.cli import reproduce as reproduce_cmd
from rttlab.cli import results as results_cmd
from rttlab.cli import sweep as sweep_cmd
from rttlab.cli.common import CliError, stderr

app = typer.Typer(
    name="rttlab",
    help="Which RTT estimator, RTO and loss response should my stack use, and what does each cost?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

estimators_cmd.register(app)
evaluate_cmd.register(app)
capture_cmd.register(app)
simulate_cmd.register(app)
components_cmd.register(app)
sweep_cmd.register(app)
results_cmd.register(app)
reproduce_cmd.register(app)
report_cmd.register(app)


def main() -> None:
    """Run the CLI; user errors become one line on stderr and exit status 2, never a traceback."""
    try:
        app()
    except (CliError, InputError, ParameterError, ScenarioError) as e:
        # The message may hold user text with brackets (file bytes, TOML): never read it as markup.
        stderr.print(f"[bold red]rttlab: error:[/] {escape(str(e))}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        stderr.print("rttlab: interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
