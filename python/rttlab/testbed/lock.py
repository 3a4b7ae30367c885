"""One real-time run per machine. Two testbed runs sharing the CPU both give degraded numbers
(the emulator's timing is the measurement), and a starting run removes stale namespaces, which
another live run would lose. So every testbed run — `rttlab testbed`, `rttlab live --testbed`, a
sweep's testbed points — holds an exclusive ``flock`` on :data:`LOCK` from before it touches the
machine until everything it made is removed. The kernel drops the lock with the descriptor
however the process ends, so a crashed run never leaves it stale.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: The machine-wide lock of real-time runs.
LOCK = "/run/lock/rttlab-testbed.lock"


def lock_holder(fd: int) -> int | None:
    """The pid holding an flock on the file open as ``fd`` (/proc/locks), if one is listed."""
    st = os.fstat(fd)
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        for line in Path("/proc/locks").read_text().splitlines():
            parts = line.split()
            if len(parts) > 5 and parts[1] == "FLOCK" and parts[5] == key:
                return int(parts[4])
    except (OSError, ValueError):
        pass
    return None


def describe(pid: int | None) -> str:
    """``pid 1234 (rttlab testbed examples/…)``: who holds the lock, as far as /proc tells."""
    if pid is None:
        return "another process"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        cmd = ""
    return f"pid {pid}" + (f" ({cmd[:120]})" if cmd else "")


def say(text: str) -> None:
    print(f"rttlab: {text}", file=sys.stderr, flush=True)


@contextmanager
def machine_lock(
    wait: Callable[[str], None] | None = say, path: str | None = None
) -> Iterator[None]:
    """Hold the machine-wide lock for the block. When another run holds it, ``wait`` is told
    who, once, and the block starts when that run ends (Ctrl-C gives up waiting)."""
    fd = os.open(path or LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait:
                wait(
                    f"the testbed is in use by {describe(lock_holder(fd))}; waiting for that run to end (one real-time run per machine; Ctrl-C to give up)"
                )
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
