"""Run a suite's Python (graders, preprocessors) in a separate worker process.

A separate interpreter (``python -s -P -B``, never a fork of the runner), importing nothing of
``yoxla``, in a fresh temporary folder, with an allow-listed environment (never the parent's
keys or tokens), a memory limit and a soft and a hard time limit per call; inside ``bwrap``
where it can run (:mod:`yoxla.score.sandbox`). The protocol is read as hostile: a bad line
gives the element in flight one error and the worker is restarted for the rest. A crash, a
timeout or an exception is a per-call error, never an exception in the caller. What each mode
protects and what it does not: docs/suites.md, "The worker process, and what it does not
protect against".

One :class:`Worker` serves every sample of a task (start-up is paid once); calls are
serialized by a lock, so runner threads may share it.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from yoxla.safe.strictjson import StrictJSONError, check_tree
from yoxla.score import sandbox

CHILD = Path(__file__).with_name("_child.py")
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ")
CHUNK = 256  # elements per map request
MAX_DEPTH = 100  # nesting of one protocol line (rows and results are far flatter)

JudgeHandler = Callable[[int, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class WorkerLimits:
    memory_mb: int = 2048  # address space of the worker process (RLIMIT_AS); 0: no limit
    load_timeout_s: float = 60.0  # running the module's top level (imports)
    grace_s: float = 2.0  # the hard deadline is the call's timeout plus this
    max_response_bytes: int = 256 * 1024 * 1024


@dataclass(frozen=True)
class CallResult:
    ok: bool
    value: Any = None
    error: str | None = None
    timed_out: bool = False


class _Dead(Exception):
    """The worker process went away (or had to be killed)."""


def worker_env(home: str) -> dict[str, str]:
    """The worker's whole environment: an allow-list, never the parent's keys or tokens."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.update(
        HOME=home,
        TMPDIR=home,
        PYTHONHASHSEED="0",
        PYTHONIOENCODING="utf-8",
        PYTHONDONTWRITEBYTECODE="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    return env


def _parse(line: bytes) -> dict[str, Any]:
    """One protocol line as an object; _Dead with the reason for anything else."""
    try:
        msg = json.loads(line.decode("utf-8"))
        check_tree(msg, MAX_DEPTH, surrogates=False)
    except RecursionError:
        raise _Dead(f"the worker wrote a line nested more than {MAX_DEPTH} levels deep") from None
    except StrictJSONError as exc:
        raise _Dead(f"the worker wrote a line {exc}") from None
    except ValueError:  # not UTF-8, not JSON
        raise _Dead("the worker wrote something that is not a protocol line") from None
    if not isinstance(msg, dict):
        raise _Dead("the worker wrote something that is not a protocol line")
    return msg


def _index(msg: dict[str, Any]) -> int | None:
    i = msg.get("i")
    return i if type(i) is int else None


def _kill(proc: subprocess.Popen[bytes], folder: str, log: IO[bytes], tree: bool) -> None:
    if proc.poll() is None:
        if tree:  # reduced isolation: the worker is a subreaper; end what it started
            sandbox.end_tree(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not wait
            pass
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    log.close()
    shutil.rmtree(folder, ignore_errors=True)


class Worker:
    """One worker process running one piece of code (a grader or a preprocessor)."""

    def __init__(
        self, source: str, filename: str, limits: WorkerLimits | None = None, folder: Path | None = None
    ) -> None:
        self.source = source
        self.filename = filename
        self.folder = folder  # the suite's folder: shown read-only inside the sandbox
        self.limits = limits or WorkerLimits()
        self.sandboxed: bool | None = None  # known once started
        self.load_error: str | None = None
        self.starts = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = bytearray()
        self._log: IO[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._finalizer: weakref.finalize | None = None  # type: ignore[type-arg]

    # life cycle ---------------------------------------------------------------------------------
    def _start(self) -> None:
        mode = sandbox.isolation()
        sandbox.announce(mode)
        folder = tempfile.mkdtemp(prefix="yoxla-worker-")
        log = tempfile.TemporaryFile()
        cmd = [sys.executable, "-s", "-P", "-B", str(CHILD), str(self.limits.memory_mb)]
        env = worker_env(folder)
        if mode.sandboxed:
            cmd = sandbox.bwrap_argv(shutil.which("bwrap") or "bwrap", folder, self.folder) + cmd
            env = worker_env(sandbox.SANDBOX_HOME)
        else:
            sandbox.make_undumpable()  # the worker must not read this process's /proc entries
        self.sandboxed = mode.sandboxed

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=folder,
                env=env,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )

        # bwrap --die-with-parent ends the sandbox when the *thread* that started it ends: start
        # it from one long-lived thread, so a worker outlives the runner thread that asked first.
        proc = sandbox.in_spawner(start) if mode.sandboxed else start()
        self._proc, self._log, self._buf = proc, log, bytearray()
        self._finalizer = weakref.finalize(self, _kill, proc, folder, log, not mode.sandboxed)
        self.starts += 1
        self._send({"op": "load", "source": self.source, "filename": self.filename})
        reply = self._receive(time.monotonic() + self.limits.load_timeout_s, None, 0, None)
        if reply is not None:
            self._check_reply(reply)
        if reply is None:
            self._stop()
            self.load_error = f"loading the code timed out after {self.limits.load_timeout_s:g} s"
        elif not reply.get("ok"):
            self._stop()
            self.load_error = str(reply.get("error"))

    def _stop(self) -> None:
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if self._finalizer is not None:
            self._finalizer()
        self._proc = None
        self._finalizer = None

    def close(self) -> None:
        with self._lock:
            self._stop()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _ensure(self) -> str | None:
        """Start the worker when needed; the load error when the code cannot be loaded."""
        if self.load_error is None and not self.alive:
            self._stop()
            try:
                self._start()
            except _Dead as exc:
                self._stop()
                self.load_error = f"the worker process died while loading the code ({exc})"
            except OSError as exc:  # pragma: no cover - cannot start a process at all
                self.load_error = f"could not start the worker process: {exc}"
        return self.load_error

    # pipes --------------------------------------------------------------------------------------
    def _send(self, obj: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        data = json.dumps(obj, ensure_ascii=False, allow_nan=True).encode("utf-8") + b"\n"
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Dead(self._death()) from None

    def _death(self) -> str:
        """Why the process went away: exit status and the tail of what it wrote to stderr."""
        proc = self._proc
        code = proc.poll() if proc is not None else None
        if code is None and proc is not None:
            try:
                code = proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                code = None
        if code is not None and self.sandboxed and 128 < code < 128 + 65:
            code = 128 - code  # bwrap passes on a signal that ended the worker as 128 + its number
        what = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        tail = ""
        if self._log is not None:
            try:
                self._log.seek(0, os.SEEK_END)
                size = self._log.tell()
                self._log.seek(max(0, size - 400))
                lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
                tail = lines[-1] if lines else ""
            except (OSError, ValueError):
                tail = ""
        return f"the worker process ended ({what})" + (f": {tail[:300]}" if tail else "")

    def _read_line(self, deadline: float) -> bytes | None:
        """One protocol line, or None at the deadline; _Dead when the process ends."""
        assert self._proc is not None and self._proc.stdout is not None
        start = 0
        while True:
            nl = self._buf.find(b"\n", start)
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line
            start = len(self._buf)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self._selector is None:
                self._selector = selectors.DefaultSelector()
                self._selector.register(self._proc.stdout.fileno(), selectors.EVENT_READ)
            if not self._selector.select(remaining):
                continue
            chunk = os.read(self._proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise _Dead(self._death())
            self._buf += chunk
            if len(self._buf) > self.limits.max_response_bytes:
                raise _Dead(f"a result is larger than {self.limits.max_response_bytes} bytes")

    def _receive(
        self, deadline: float, judge: JudgeHandler | None, base: int, index: int | None
    ) -> dict[str, Any] | None:
        """The next reply that is not a judge request (those are answered here).

        ``index``: the element in flight (its position in a map chunk), whose judge requests
        alone are answered; None while loading (no judge) or in a single call (element 0).
        """
        while True:
            line = self._read_line(deadline)
            if line is None:
                return None
            msg = _parse(line)
            if msg.get("op") != "judge":
                return msg
            if _index(msg) != (index or 0):
                raise _Dead("the worker sent a judge request for another item")
            self._send(self._judge_reply(msg, judge, base))
            deadline = max(deadline, time.monotonic() + self.limits.grace_s)

    @staticmethod
    def _judge_reply(msg: dict[str, Any], judge: JudgeHandler | None, base: int) -> dict[str, Any]:
        if judge is None:
            return {"ok": False, "error": "ctx.responses_create is not available here (no judge)"}
        request = msg.get("request")
        if not isinstance(request, dict):
            return {"ok": False, "error": "responses_create takes keyword arguments"}
        try:
            return {"ok": True, "response": judge(base + (_index(msg) or 0), request)}
        except Exception as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}

    @staticmethod
    def _check_reply(msg: dict[str, Any], index: int | None = None) -> None:
        """A result line must answer the question asked: _Dead otherwise."""
        if index is not None and _index(msg) != index:
            raise _Dead(f"the worker wrote a result for another item (expected item {index})")
        if index is None and "i" in msg:
            raise _Dead("the worker wrote a result for an item it was not asked about")
        if type(msg.get("ok")) is not bool:
            raise _Dead("the worker wrote a line that is not a result")
        if not msg["ok"] and not isinstance(msg.get("error"), str):
            raise _Dead("the worker wrote a failed result without its error")

    # calls --------------------------------------------------------------------------------------
    @staticmethod
    def _result(msg: dict[str, Any]) -> CallResult:
        if msg["ok"]:
            return CallResult(True, msg.get("value"))
        return CallResult(False, error=str(msg["error"])[:2000], timed_out=msg.get("timeout") is True)

    def call(
        self,
        functions: Sequence[str],
        args: list[Any],
        timeout: float,
        judge: JudgeHandler | None = None,
    ) -> CallResult:
        """Call the first of ``functions`` the code defines, with ``args``."""
        with self._lock:
            problem = self._ensure()
            if problem is not None:
                return CallResult(False, error=problem)
            try:
                self._send(
                    {"op": "call", "fn": list(functions), "args": args, "timeout": timeout, "ctx": True}
                )
                msg = self._receive(time.monotonic() + timeout + self.limits.grace_s, judge, 0, None)
                if msg is not None:
                    self._check_reply(msg)
            except _Dead as exc:
                self._stop()
                return CallResult(False, error=str(exc))
            if msg is None:
                self._stop()
                return CallResult(
                    False, error=f"timed out after {timeout:g} s (worker killed)", timed_out=True
                )
            return self._result(msg)

    def map(
        self,
        functions: Sequence[str],
        args_list: Sequence[list[Any]],
        timeout: float,
        judge: JudgeHandler | None = None,
        *,
        stop_on_error: bool = False,
    ) -> list[CallResult]:
        """One call per element of ``args_list``, each with its own time limit, results in order.

        Elements travel in chunks; results come back one line each, so the hard deadline is
        per element. An element that kills or stalls the worker gets the error; the worker
        restarts for the elements after it. ``stop_on_error``: return at the first error
        (fewer results than elements; the worker is stopped and restarts when next used).
        """
        with self._lock:
            out: list[CallResult] = []
            while len(out) < len(args_list):
                if stop_on_error and out and not out[-1].ok:
                    break
                problem = self._ensure()
                if problem is not None:
                    out.extend(CallResult(False, error=problem) for _ in range(len(args_list) - len(out)))
                    break
                base = len(out)
                chunk = list(args_list[base : base + CHUNK])
                try:
                    self._map_chunk(functions, chunk, timeout, judge, base, out, stop_on_error)
                except _Dead as exc:
                    self._stop()
                    out.append(CallResult(False, error=str(exc)))
            return out

    def _map_chunk(
        self,
        functions: Sequence[str],
        chunk: list[list[Any]],
        timeout: float,
        judge: JudgeHandler | None,
        base: int,
        out: list[CallResult],
        stop_on_error: bool,
    ) -> None:
        self._send({"op": "map", "fn": list(functions), "args": chunk, "timeout": timeout, "ctx": True})
        while True:
            k = len(out) - base  # the element in flight
            msg = self._receive(time.monotonic() + timeout + self.limits.grace_s, judge, base, k)
            if msg is None:
                self._stop()
                out.append(
                    CallResult(False, error=f"timed out after {timeout:g} s (worker killed)", timed_out=True)
                )
                return
            if "done" in msg:
                if k < len(chunk) or msg["done"] != len(chunk):
                    raise _Dead(f"the worker ended a batch early (after {k} of {len(chunk)} elements)")
                return
            if k >= len(chunk):
                raise _Dead("the worker wrote more results than it was asked for")
            self._check_reply(msg, k)
            out.append(self._result(msg))
            if stop_on_error and not out[-1].ok:
                self._stop()  # the rest of the chunk is still running: never read it as a reply
                return


class WorkerPool:
    """The workers of a run, one per piece of code, kept alive for all samples; close() ends them."""

    def __init__(self, limits: WorkerLimits | None = None) -> None:
        self.limits = limits or WorkerLimits()
        self._workers: dict[tuple[str, str, str], Worker] = {}
        self._lock = threading.Lock()

    def get(self, source: str, filename: str, folder: Path | None = None) -> Worker:
        """The worker of one piece of code; ``folder`` (the suite's) is shown to it read-only."""
        key = (source, filename, str(folder))
        with self._lock:
            worker = self._workers.get(key)
            if worker is None:
                worker = self._workers[key] = Worker(source, filename, self.limits, folder)
            return worker

    def close(self) -> None:
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            worker.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
