"""Entry point: ``rttlab COMMAND ...``. A plain argument list of a capture command runs at once
(`rttlab.cli.direct`); every other goes to the typer application (`rttlab.cli.app`), which
imports each command only when it runs."""

from __future__ import annotations

import errno
import os
import signal
import sys


def _error(message: str) -> None:
    from rich.markup import escape

    from rttlab.cli.common import stderr

    # The message may hold user text with brackets (file bytes, TOML): never read it as markup.
    stderr.print(
        f"[bold red]rttlab: error:[/] {escape(message)}",
        highlight=False,
        markup=True,
        soft_wrap=True,
    )


def _quiet_broken_pipe() -> None:
    """The reader went away (`rttlab samples ... | head -1`): what it wanted was written. Point
    stdout at /dev/null so the interpreter's final flush does not fail again (the convention
    the Python docs give for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _stdout_name() -> str:
    """What stdout is connected to (`/dev/full`, a file), for an error naming it."""
    try:
        return os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
    except (OSError, ValueError):
        return "<stdout>"


def main() -> None:
    """Run the CLI; user errors become one line on stderr and exit status 2, never a traceback.
    A closed pipe on stdout ends the program by SIGPIPE as any Unix filter (where there is no
    SIGPIPE: quietly, status 0); an output error (disk full, unwritable path) is one line naming
    the path and exit status 1."""
    from rttlab._core import InputError, ParameterError, ScenarioError
    from rttlab.cli import direct
    from rttlab.cli.common import CliError

    call = direct.read(sys.argv[1:])
    if hasattr(signal, "SIGPIPE"):
        # As every Unix filter does: a reader that closes the pipe (`| head -1`) ends the
        # program by SIGPIPE (status 141 in the shell), silently, instead of an exception.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        try:
            if call is not None:
                # When the process exits, what is still alive dies with it: frozen, it is not
                # walked by the interpreter's final collection (≈ 3 ms of every run; in-process
                # callers of main() are untouched until they exit). Outputs are closed by then.
                import atexit
                import gc

                atexit.register(gc.freeze)
                call()
            else:
                from rttlab.cli.app import app

                app()
        finally:
            # Output buffered for stdout fails here on a full disk (`> /dev/full`), inside
            # the handlers below rather than at interpreter exit.
            sys.stdout.flush()
    except (CliError, InputError, ParameterError, ScenarioError) as e:
        _error(str(e))
        sys.exit(2)
    except KeyboardInterrupt:
        _error("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        _quiet_broken_pipe()
        sys.exit(0)
    except OSError as e:
        if e.errno == errno.EPIPE:
            _quiet_broken_pipe()
            sys.exit(0)
        stdout = _stdout_name()
        _quiet_broken_pipe()  # drop what stdout still buffers: it cannot be written
        if e.filename is not None:
            _error(f"{e.filename}: {e.strerror or e}")
        elif e.errno is not None and e.strerror:
            _error(
                f"{stdout}: {e.strerror}"
                if e.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT)
                else e.strerror
            )
        else:
            _error(str(e).splitlines()[0] if str(e) else type(e).__name__)
        sys.exit(1)


if __name__ == "__main__":
    main()
