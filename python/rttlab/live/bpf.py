"""Build, load and attach the sock_ops program (``bpf/rtt_events.bpf.c``) and read its ring buffer.

How it is built and loaded (docs/live.md, "Build and load"): the C source ships inside the
package; at first use it is compiled with ``clang -target bpf`` into a cache directory keyed by
the source's hash and clang's version (``$XDG_CACHE_HOME/rttlab/bpf``, else
``~/.cache/rttlab/bpf``), and loaded with the system's libbpf (``libbpf.so.1``, Debian
``libbpf1``) through ctypes. libbpf relocates the program's CO-RE field reads against the
running kernel's BTF, so one object fits any kernel with BTF. No network, no Rust loader, no
generated ``vmlinux.h``; a ``pip install`` without clang still works and ``rttlab live`` then
says in one line what is missing.

The program is attached with a ``bpf_link`` (BPF_LINK_CREATE) that is never pinned: the link's
only reference is this process's file descriptor, so when the process ends — SIGKILL included —
the kernel closes it and detaches the program (kernel/bpf/cgroup.c, bpf_cgroup_link_release).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Callable
from pathlib import Path

from rttlab.testbed.lock import lock_holder

SOURCE = Path(__file__).resolve().parent / "bpf" / "rtt_events.bpf.c"
#: The program's name in the kernel (BPF_OBJ_NAME_LEN = 16 with the NUL): how a second
#: ``rttlab live`` recognises the first on a cgroup.
PROG_NAME = "rttlab_sockops"
#: The per-ACK sample program (tp_btf/tcp_probe).
PROBE_NAME = "rttlab_probe"

BPF_CGROUP_SOCK_OPS = 3  # enum bpf_attach_type
BPF_F_QUERY_EFFECTIVE = 1


class Unavailable(Exception):
    """What the machine lacks to run ``rttlab live`` (not root, no BPF, no cgroup v2, no clang
    or libbpf): one line naming it."""


class AlreadyAttached(Unavailable):
    """Another ``rttlab live`` already watches this cgroup (or one above it)."""


def check_root() -> None:
    if os.geteuid() != 0:
        raise Unavailable(
            "rttlab live needs root (it loads a BPF program and attaches it to a cgroup)"
        )


def _clang() -> str:
    clang = shutil.which("clang")
    if clang is None:
        raise Unavailable(
            "clang is missing (it compiles the BPF program at first use; Debian: apt-get install clang libbpf-dev)"
        )
    return clang


def _include_dirs() -> list[str]:
    # <asm/types.h> sits in the multiarch directory on Debian (linux-libc-dev).
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    return (
        [f"/usr/include/{multiarch}"]
        if multiarch and Path(f"/usr/include/{multiarch}").is_dir()
        else []
    )


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rttlab" / "bpf"


def build(cache: Path | None = None) -> Path:
    """The compiled object, built if the cache lacks it (keyed by source and clang version)."""
    clang = _clang()
    if not Path("/usr/include/bpf/bpf_helpers.h").exists():
        raise Unavailable(
            "libbpf's headers are missing (/usr/include/bpf/bpf_helpers.h; Debian: apt-get install libbpf-dev)"
        )
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(SOURCE.read_bytes() + version.encode()).hexdigest()[:16]
    cache = cache or cache_dir()
    obj = cache / f"rtt_events-{key}.o"
    if obj.exists():
        return obj
    cache.mkdir(parents=True, exist_ok=True)
    tmp = obj.with_suffix(f".{os.getpid()}.tmp")
    cmd = [
        clang,
        "-O2",
        "-g",
        "-target",
        "bpf",
        *(f"-I{d}" for d in _include_dirs()),
        "-c",
        str(SOURCE),
        "-o",
        str(tmp),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = next(
            (line for line in r.stderr.splitlines() if "error" in line), r.stderr.strip()[:200]
        )
        raise Unavailable(f"compiling {SOURCE.name} failed: {first}")
    os.replace(tmp, obj)
    return obj


_SAMPLE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


def _libbpf() -> ctypes.CDLL:
    name = ctypes.util.find_library("bpf") or "libbpf.so.1"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        raise Unavailable(
            "libbpf is missing (libbpf.so.1; Debian: apt-get install libbpf1)"
        ) from None
    vp, i, u32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32
    for fn, res, args in [
        ("bpf_object__open_file", vp, [ctypes.c_char_p, vp]),
        ("bpf_object__load", i, [vp]),
        ("bpf_object__close", None, [vp]),
        ("bpf_object__find_program_by_name", vp, [vp, ctypes.c_char_p]),
        ("bpf_program__set_autoload", i, [vp, ctypes.c_bool]),
        ("bpf_program__attach", vp, [vp]),
        ("bpf_object__find_map_fd_by_name", i, [vp, ctypes.c_char_p]),
        ("bpf_program__attach_cgroup", vp, [vp, i]),
        ("bpf_link__destroy", i, [vp]),
        ("ring_buffer__new", vp, [i, _SAMPLE_FN, vp, vp]),
        ("ring_buffer__poll", i, [vp, i]),
        ("ring_buffer__free", None, [vp]),
        ("bpf_map_lookup_elem", i, [i, vp, vp]),
        ("libbpf_num_possible_cpus", i, []),
        (
            "bpf_prog_query",
            i,
            [i, i, u32, ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.POINTER(u32)],
        ),
        ("bpf_prog_get_fd_by_id", i, [u32]),
        ("bpf_obj_get_info_by_fd", i, [i, vp, ctypes.POINTER(u32)]),
        ("libbpf_set_print", vp, [vp]),
    ]:
        f = getattr(lib, fn)
        f.restype = res
        f.argtypes = args
    lib.libbpf_set_print(None)  # errors are reported from errno, in one line
    return lib


def _oserror(what: str) -> str:
    e = ctypes.get_errno()
    return f"{what}: {os.strerror(e) if e else 'failed'}"


def lock_cgroup(fd: int, cgroup: Path) -> None:
    """Take the cgroup's instance lock: an exclusive ``flock`` on its directory, held on ``fd``
    for the program's life. The kernel drops it with the descriptor however the process ends,
    so nothing stale is ever left. Two ``rttlab live`` started in the same instant both pass
    the attached-program check below before either attaches; the lock lets exactly one on."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = lock_holder(fd)
        who = f" (pid {pid})" if pid else ""
        raise AlreadyAttached(
            f"{cgroup}: another rttlab live is already attached or attaching{who}; stop it first (its programs go when it exits)"
        ) from None


def attached_programs(lib: ctypes.CDLL, cgroup_fd: int) -> list[tuple[int, str]]:
    """(id, name) of the sock_ops programs in force on the cgroup (its own and inherited)."""
    ids = (ctypes.c_uint32 * 64)()
    cnt = ctypes.c_uint32(64)
    flags = ctypes.c_uint32(0)
    if (
        lib.bpf_prog_query(
            cgroup_fd,
            BPF_CGROUP_SOCK_OPS,
            BPF_F_QUERY_EFFECTIVE,
            ctypes.byref(flags),
            ids,
            ctypes.byref(cnt),
        )
        != 0
    ):
        return []
    out = []
    for k in range(cnt.value):
        fd = lib.bpf_prog_get_fd_by_id(ids[k])
        if fd < 0:
            continue
        try:
            # struct bpf_prog_info up to its name (offset 64, 16 bytes): the kernel fills what fits.
            info = (ctypes.c_uint8 * 80)()
            size = ctypes.c_uint32(80)
            if lib.bpf_obj_get_info_by_fd(fd, info, ctypes.byref(size)) == 0:
                out.append((ids[k], bytes(info[64:80]).split(b"\0")[0].decode(errors="replace")))
        finally:
            os.close(fd)
    return out


class LiveProgram:
    """The loaded program attached to one cgroup; ``poll`` hands each event's bytes to
    ``on_event``. ``close`` (or the process's end) detaches it."""

    def __init__(
        self, cgroup: str | Path, on_event: Callable[[bytes], None], obj_path: Path | None = None
    ) -> None:
        check_root()
        self._lib = _libbpf()
        obj_path = obj_path or build()
        self._obj = self._rb = self._link = None
        self._cgroup_fd = -1
        self.cgroup = Path(cgroup)
        try:
            self._cgroup_fd = os.open(self.cgroup, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise Unavailable(f"{self.cgroup}: cannot open the cgroup ({e.strerror})") from None
        try:
            lock_cgroup(self._cgroup_fd, self.cgroup)
            others = [
                i for i, name in attached_programs(self._lib, self._cgroup_fd) if name == PROG_NAME
            ]
            if others:
                raise AlreadyAttached(
                    f"{self.cgroup}: another rttlab live is already attached (program id {others[0]}); stop it first (its programs go when it exits)"
                )
            #: Every RTT sample (the tcp_probe tracepoint program attached), or only the
            #: once-per-RTT callback's (docs/live.md, "Per-ACK samples").
            self.per_ack = True
            self._obj = self._open(obj_path)
            if self._lib.bpf_object__load(self._obj) != 0:
                # Without BTF tracepoints: the sock_ops program alone.
                self._lib.bpf_object__close(self._obj)
                self._obj = self._open(obj_path)
                self._lib.bpf_program__set_autoload(
                    self._lib.bpf_object__find_program_by_name(self._obj, PROBE_NAME.encode()),
                    False,
                )
                self.per_ack = False
                if self._lib.bpf_object__load(self._obj) != 0:
                    raise Unavailable(
                        _oserror(
                            "loading the BPF program (the kernel needs BPF, BTF at /sys/kernel/btf/vmlinux and sock_ops with ring buffers, Linux ≥ 5.8)"
                        )
                    )
            prog = self._lib.bpf_object__find_program_by_name(self._obj, PROG_NAME.encode())
            self._events_fd = self._lib.bpf_object__find_map_fd_by_name(self._obj, b"events")
            self._overruns_fd = self._lib.bpf_object__find_map_fd_by_name(self._obj, b"overruns")
            ctypes.set_errno(0)
            self._link = self._lib.bpf_program__attach_cgroup(prog, self._cgroup_fd)
            if not self._link:
                raise Unavailable(
                    _oserror(
                        f"{self.cgroup}: attaching the sock_ops program (a cgroup v2 directory is needed)"
                    )
                )
            self._probe_link = None
            if self.per_ack:
                self._probe_link = self._lib.bpf_program__attach(
                    self._lib.bpf_object__find_program_by_name(self._obj, PROBE_NAME.encode())
                )
                self.per_ack = bool(self._probe_link)

            def sample(_ctx: int, data: int, size: int) -> int:
                on_event(ctypes.string_at(data, size))
                return 0

            self._callback = _SAMPLE_FN(sample)  # kept: libbpf holds the pointer
            self._rb = self._lib.ring_buffer__new(self._events_fd, self._callback, None, None)
            if not self._rb:
                raise Unavailable(_oserror("opening the ring buffer"))
            self._ncpu = max(1, self._lib.libbpf_num_possible_cpus())
        except BaseException:
            self.close()
            raise

    def _open(self, obj_path: Path) -> int:
        ctypes.set_errno(0)
        obj = self._lib.bpf_object__open_file(str(obj_path).encode(), None)
        if not obj:
            raise Unavailable(_oserror(f"{obj_path}: opening the BPF object"))
        return obj

    def poll(self, timeout_ms: int = 100) -> int:
        """Deliver the events waiting (or arriving within ``timeout_ms``); their number."""
        n = self._lib.ring_buffer__poll(self._rb, timeout_ms)
        if n < 0 and -n != errno.EINTR:
            raise OSError(-n, f"ring buffer poll: {os.strerror(-n)}")
        return max(n, 0)

    def overruns(self) -> int:
        """Events the kernel could not queue (the ring buffer was full), summed over CPUs."""
        key = ctypes.c_uint32(0)
        values = (ctypes.c_uint64 * self._ncpu)()
        if self._lib.bpf_map_lookup_elem(self._overruns_fd, ctypes.byref(key), values) != 0:
            return 0
        return int(sum(values))

    def close(self) -> None:
        if self._rb:
            self._lib.ring_buffer__free(self._rb)
            self._rb = None
        if getattr(self, "_probe_link", None):
            self._lib.bpf_link__destroy(self._probe_link)
            self._probe_link = None
        if self._link:
            self._lib.bpf_link__destroy(self._link)
            self._link = None
        if self._obj:
            self._lib.bpf_object__close(self._obj)
            self._obj = None
        if self._cgroup_fd >= 0:
            os.close(self._cgroup_fd)
            self._cgroup_fd = -1

    def __enter__(self) -> LiveProgram:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def kernel_hz(wait_s: float = 0.2) -> int:
    """The kernel's HZ (``icsk_rto`` is in jiffies), from /proc/timer_list's jiffies counter
    read twice against CLOCK_MONOTONIC, snapped to the values Linux offers."""
    import time

    def read() -> tuple[int, float]:
        for line in Path("/proc/timer_list").read_text().splitlines():
            if line.startswith("jiffies:"):
                return int(line.split()[1]), time.monotonic()
        raise Unavailable("/proc/timer_list has no jiffies line: cannot tell the kernel's HZ")

    try:
        j0, t0 = read()
        time.sleep(wait_s)
        j1, t1 = read()
    except OSError as e:
        raise Unavailable(f"/proc/timer_list: {e.strerror} (needed for the kernel's HZ)") from None
    rate = (j1 - j0) / (t1 - t0)
    return min((100, 250, 300, 1000), key=lambda hz: abs(hz - rate))
