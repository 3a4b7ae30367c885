"""The system side of a testbed: what the machine must offer, network namespaces named after the
run, their addresses, routes and TCP sysctls, and their removal.

Every object a run creates is named ``rtb<pid>-...`` (namespaces) or ``rtb<pid>t<port>`` (TUN
devices, at most 15 bytes), so two testbeds run side by side, and a run can tell what a dead run
left behind: a namespace whose pid no longer lives is removed at the next start
(:func:`remove_stale`). TUN devices need no cleaning: they vanish with the emulator's file
descriptors when its process ends, however it ends.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
from pathlib import Path

from rttlab._proc import alive

PREFIX = "rtb"
_OWNED = re.compile(rf"^{PREFIX}(\d+)-")
ADDR_BASE = 0x0A01_0000  # 10.1.0.0: node k is ADDR_BASE + k + 1 (src/testbed/emulator.rs)
PORT_BASE = 5000
#: rttlab's sender of flow f sends from port RTTLAB_SPORT_BASE + f (SPORT_BASE, src/testbed/stack.rs);
#: a namespace whose host also runs such senders reserves these ports from its kernel.
RTTLAB_SPORT_BASE = 40000


class Unavailable(Exception):
    """The machine cannot run a testbed (not root, no namespaces, no TUN): the message says why."""


def node_addr(node: int) -> str:
    a = ADDR_BASE + node + 1
    return ".".join(str((a >> s) & 255) for s in (24, 16, 8, 0))


def unavailable() -> str | None:
    """Why the testbed cannot run here (the first thing missing), or None where it can."""
    try:
        check_machine()
    except Unavailable as e:
        return str(e)
    return None


def check_machine() -> None:
    """Raise :class:`Unavailable` naming the first thing missing."""
    if os.geteuid() != 0:
        raise Unavailable(
            "the testbed needs root (network namespaces and TUN devices); run it as root"
        )
    if not Path("/proc/self/ns/net").exists():
        raise Unavailable("this kernel has no network namespaces (/proc/self/ns/net is missing)")
    if not Path("/dev/net/tun").exists():
        raise Unavailable("no TUN device (/dev/net/tun is missing; load the tun module)")
    try:
        subprocess.run(["ip", "-V"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise Unavailable("the `ip` command (iproute2) is not installed") from None


def ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", *(["-n", ns] if ns else []), *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise OSError(errno.EIO, f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")
    return r


def namespaces() -> list[str]:
    r = ip("netns", "list", check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def remove_namespace(name: str) -> None:
    """Kill what runs inside (traffic generators of a killed run), then delete the namespace."""
    r = ip("netns", "pids", name, check=False)
    for pid in r.stdout.split():
        try:
            os.kill(int(pid), 9)
        except (ProcessLookupError, ValueError):
            pass
    ip("netns", "del", name, check=False)


def remove_stale() -> list[str]:
    """Remove the namespaces of testbed runs whose process is gone; returns their names."""
    gone = []
    for name in namespaces():
        m = _OWNED.match(name)
        if m and int(m.group(1)) != os.getpid() and not alive(int(m.group(1))):
            remove_namespace(name)
            gone.append(name)
    return gone


def sysctl(ns: str, values: dict[str, str]) -> None:
    args = [f"{k}={v}" for k, v in values.items()]
    r = subprocess.run(
        ["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *args], capture_output=True, text=True
    )
    if r.returncode != 0:
        raise OSError(errno.EIO, f"sysctl in {ns} failed: {r.stderr.strip()}")


class Namespaces:
    """The namespaces of one run: one per host node of the scenario, holding that host's TUN."""

    def __init__(self) -> None:
        self.run = f"{PREFIX}{os.getpid()}"
        self.created: list[str] = []

    def ns(self, node: int) -> str:
        return f"{self.run}-n{node}"

    def tun(self, port: int) -> str:
        return f"{self.run}t{port}"

    def create(self, node: int) -> str:
        name = self.ns(node)
        ip("netns", "add", name)
        self.created.append(name)
        ip("link", "set", "lo", "up", ns=name)
        return name

    def attach(
        self, port: int, node: int, mtu: int, init_cwnd: int, gso_max_segs: int | None = None
    ) -> None:
        """Move TUN ``port`` into node's namespace, address it and route the testbed through it;
        ``gso_max_segs`` (1: no TSO/GSO super-packets from this host's TCP) if given."""
        name, dev, addr = self.ns(node), self.tun(port), node_addr(node)
        ip("link", "set", dev, "netns", name)
        ip("addr", "add", f"{addr}/32", "dev", dev, ns=name)
        ip("link", "set", dev, "mtu", str(mtu), "up", ns=name)
        if gso_max_segs is not None:
            ip("link", "set", dev, "gso_max_segs", str(gso_max_segs), ns=name)
        # initcwnd: the scenario's initial window (Linux takes it per route, RFC 6928's knob).
        ip(
            "route",
            "add",
            "10.1.0.0/16",
            "dev",
            dev,
            "src",
            addr,
            "initcwnd",
            str(init_cwnd),
            "initrwnd",
            str(max(init_cwnd, 10)),
            ns=name,
        )

    def remove(self) -> None:
        for name in reversed(self.created):
            remove_namespace(name)
        self.created.clear()
