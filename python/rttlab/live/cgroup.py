"""cgroup v2: where it is mounted, and a cgroup of one's own for a run (``rttlab live --testbed``).

Sockets belong to the cgroup of the process that created them (sk_cgroup_data, set at socket
creation): a process moved into a cgroup before it opens its connections, and every child it
starts afterwards, is watched by a sock_ops program attached there.
"""

from __future__ import annotations

import os
from pathlib import Path

from rttlab._proc import alive
from rttlab.live.bpf import Unavailable

PREFIX = "rttlab-live-"


def mount_point() -> Path:
    """The cgroup v2 hierarchy (``/sys/fs/cgroup`` on a unified system, ``…/unified`` on a
    hybrid one)."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split()
        if len(parts) > 2 and parts[2] == "cgroup2":
            return Path(parts[1])
    raise Unavailable("no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup)")


def check(path: str | Path) -> Path:
    """``path`` if it is a directory of the cgroup v2 hierarchy, else one line saying why not."""
    p = Path(path)
    root = mount_point()
    if not (p / "cgroup.procs").exists() or not (
        p.resolve() == root.resolve() or root.resolve() in p.resolve().parents
    ):
        raise Unavailable(f"{p}: not a cgroup v2 directory (the hierarchy is mounted at {root})")
    return p


def own_cgroup() -> Path:
    """The cgroup v2 directory this process is in."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return mount_point() / line[3:].lstrip("/")
    raise Unavailable("this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")


def remove_stale() -> list[str]:
    """Remove the run cgroups of ``rttlab live`` processes that are gone (a SIGKILLed run
    leaves its empty cgroup behind; its BPF link went with it)."""
    removed = []
    root = mount_point()
    for d in root.glob(PREFIX + "*"):
        try:
            pid = int(d.name[len(PREFIX) :].split("-")[0])
        except ValueError:
            continue
        if not alive(pid):
            try:
                d.rmdir()
                removed.append(d.name)
            except OSError:
                pass
    return removed


class RunCgroup:
    """A fresh cgroup named after this process; ``enter`` moves this process (and so the
    children it starts next) into it, ``close`` moves it back and removes the cgroup."""

    def __init__(self) -> None:
        remove_stale()
        self.path = mount_point() / f"{PREFIX}{os.getpid()}"
        self._home = own_cgroup()
        try:
            self.path.mkdir()
        except OSError as e:
            raise Unavailable(f"{self.path}: cannot create a cgroup ({e.strerror})") from None

    def enter(self) -> None:
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        try:
            (self._home / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            pass
        try:
            self.path.rmdir()
        except OSError:
            pass  # a child still in it (killed runs are swept by remove_stale)

    def __enter__(self) -> RunCgroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
