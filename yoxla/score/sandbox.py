"""Where a suite's Python runs: inside ``bwrap`` (sandboxed) or, where it cannot run, reduced.

**Sandboxed**: new namespaces (no network, its own PID namespace), every capability dropped,
a read-only view of the system, its Python, the ``yoxla`` package and the suite's own folder,
and one private writable ``/tmp``. **Reduced** (no usable ``bwrap``): the parent is
non-dumpable and each worker a capability-less child subreaper whose tree is ended with it;
files, the network and the home are **not** protected, and this is announced once per process.
docs/suites.md ("The worker process, and what it does not protect against") has the tables.

``YOXLA_CODE_ISOLATION=reduced`` forces the reduced mode (tests, or a machine where the
sandbox is known to be unwanted); any other value, or none, probes ``bwrap`` once.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

FORCE_ENV = "YOXLA_CODE_ISOLATION"
PACKAGE = Path(__file__).resolve().parent.parent  # the yoxla package folder
PROBE_TIMEOUT_S = 10.0
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
)
SANDBOX_TMP = "/tmp"  # the private folder, mounted here
SANDBOX_HOME = "/tmp/home"  # HOME, TMPDIR and the working folder: kept apart from mount points


@dataclass(frozen=True)
class Isolation:
    sandboxed: bool
    reason: str  # why the mode was chosen (what failed, for the reduced mode)

    def line(self) -> str:
        if self.sandboxed:
            return "code isolation: suite Python runs inside bwrap (no network, no home, read-only system)"
        return (
            f"warning: code isolation is reduced ({self.reason}): suite Python runs as this user "
            "without capabilities and cannot read this process's memory or environment, but it can "
            "read and write this user's files and use the network (see docs/suites.md)"
        )


_lock = threading.Lock()
_chosen: Isolation | None = None
_announced = False
_undumpable = False


def _existing(paths: Iterable[str]) -> list[str]:
    """Absolute, existing, de-duplicated paths, without those inside another one of them."""
    seen: list[str] = []
    for p in sorted({os.path.abspath(p) for p in paths if p and os.path.exists(p)}, key=len):
        if not any(p == s or p.startswith(s.rstrip("/") + "/") for s in seen):
            seen.append(p)
    return seen


def python_paths() -> list[str]:
    """What the worker's interpreter needs: its prefixes, standard library and site-packages."""
    exe = os.path.realpath(sys.executable)
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(exe)]
    paths += [
        v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib")
    ]
    paths += site.getsitepackages()
    return _existing(p for p in paths if p != "/")


def _safe_folder(folder: Path | None) -> str | None:
    """A folder to show read-only (resolved), or None for one that would show too much."""
    if folder is None:
        return None
    try:
        real = folder.resolve(strict=True)
    except OSError:
        return None
    home = Path.home().resolve()
    checkout = PACKAGE.parent
    # Never a folder that holds the home, the checkout's root or the whole system.
    if real == Path(real.anchor) or real in (home, checkout) or home.is_relative_to(real):
        return None
    if checkout.is_relative_to(real) or (real / ".git").exists():
        return None
    return str(real)


def bwrap_argv(bwrap: str, tmp: str, folder: Path | None) -> list[str]:
    """The ``bwrap`` command line that precedes the worker's own command."""
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    # The private folder first: what is shown below may lie under /tmp (mounted over it, not hidden).
    argv += ["--bind", tmp, SANDBOX_TMP, "--proc", "/proc", "--dev", "/dev"]
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            argv += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            argv += ["--ro-bind", d, d]
    for f in SYSTEM_FILES:
        argv += ["--ro-bind-try", f, f]
    # Python's folders pass the same test as the suite's: never the home or the checkout's root
    # (a Python that then cannot start fails the probe, and the mode is reduced).
    wanted = [*(Path(p) for p in python_paths()), folder]
    shown = [str(PACKAGE), *(p for p in map(_safe_folder, wanted) if p is not None)]
    for p in _existing(shown):
        if not any(p == d or p.startswith(d + "/") for d in SYSTEM_DIRS):
            argv += ["--ro-bind", p, p]
    return [*argv, "--dir", SANDBOX_HOME, "--chdir", SANDBOX_HOME, "--"]


def _probe() -> Isolation:
    if os.environ.get(FORCE_ENV, "").strip().lower() == "reduced":
        return Isolation(False, f"{FORCE_ENV}=reduced")
    if not sys.platform.startswith("linux"):
        return Isolation(False, f"bwrap needs Linux, this is {sys.platform}")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Isolation(False, "bwrap (the bubblewrap package) is not installed")
    try:
        with tempfile.TemporaryDirectory(prefix="yoxla-probe-") as tmp:
            cmd = [*bwrap_argv(bwrap, tmp, None), sys.executable, "-s", "-P", "-B", "-c", "pass"]
            done = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Isolation(False, f"bwrap cannot run here ({type(exc).__name__})")
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Isolation(False, "bwrap cannot run here" + (f": {tail[-1][:200]}" if tail else ""))
    return Isolation(True, "bwrap")


def isolation() -> Isolation:
    """The mode of this process, probed once (the result is cached)."""
    global _chosen
    with _lock:
        if _chosen is None:
            _chosen = _probe()
        return _chosen


def reset_for_tests() -> None:
    """Forget the probe (tests switch ``YOXLA_CODE_ISOLATION``)."""
    global _chosen, _announced
    with _lock:
        _chosen, _announced = None, False


def announce(mode: Isolation, write: Callable[[str], None] | None = None) -> None:
    """Say once per process that code isolation is reduced (the sandboxed mode stays quiet).

    ``write`` prints the line (the app's start-up log); stderr by default.
    """
    global _announced
    with _lock:
        if _announced or mode.sandboxed:
            return
        _announced = True
    if write is not None:
        write(mode.line())
    else:
        print(mode.line(), file=sys.stderr, flush=True)


def announce_for(tasks: Iterable[Any], write: Callable[[str], None] | None = None) -> None:
    """At start-up: announce a reduced isolation when one of ``tasks`` has Python code."""
    if any(t.preprocess_code is not None or t.grader_code for t in tasks):
        announce(isolation(), write)


def make_undumpable() -> bool:
    """``prctl(PR_SET_DUMPABLE, 0)`` on this process (Linux); True when it is in effect."""
    global _undumpable
    if _undumpable:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_dumpable, pr_get_dumpable = 4, 3
        if libc.prctl(pr_set_dumpable, 0, 0, 0, 0) != 0:
            return False
        _undumpable = libc.prctl(pr_get_dumpable, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    return _undumpable


# One long-lived thread starts the sandboxed workers -----------------------------------------------

_jobs: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None


def _after_fork_in_child() -> None:
    """A forked child has no spawner thread (only the forking thread survives a fork)."""
    global _spawner, _jobs, _lock
    _spawner, _jobs, _lock = None, queue.SimpleQueue(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _serve_spawns() -> None:
    while True:
        fn, box, done = _jobs.get()
        try:
            box.append((True, fn()))
        except BaseException as exc:
            box.append((False, exc))
        done.set()


def in_spawner(fn: Callable[[], T]) -> T:
    """``fn()`` run in the spawner thread, which lives as long as the process (a daemon)."""
    global _spawner
    with _lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_serve_spawns, name="yoxla-worker-spawner", daemon=True)
            _spawner.start()
    box: list[Any] = []
    done = threading.Event()
    _jobs.put((fn, box, done))
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


# Ending a process tree (the reduced mode) ---------------------------------------------------------


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    out: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2 :].split()  # the command name may hold spaces and ')'
        if len(rest) > 1:
            out[int(name)] = int(rest[1])
    return out


def descendants(root: int) -> set[int]:
    """Every process below ``root`` (not ``root`` itself), from one snapshot of /proc."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def end_tree(root: int, rounds: int = 200) -> None:
    """Stop every descendant of ``root`` (stopped processes cannot fork), then kill them all.

    ``root`` is a child subreaper, so what its code started (in a new session too) stays
    below it; a stopped tree cannot grow, so the rounds end when a snapshot finds nothing new.
    """
    stopped: set[int] = set()
    for _ in range(rounds):
        new = descendants(root) - stopped
        if not new:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        stopped |= new
        time.sleep(0.001)
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
