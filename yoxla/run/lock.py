"""One process at a time per run folder: ``runs/<run_id>/run.lock``.

The lock is ``fcntl.flock`` on that file, not the file's existence: the kernel releases a
flock when its process dies, however it dies (``kill -9`` included), so a dead holder can
never block a run. The holder writes its pid, host and start time into the file for the
"in use by" message, and empties it when it lets go; a file that still names a holder
while nobody holds the lock was left by a process that died, and the next runner says so
and takes over. flock needs a local file system (or NFSv4, where Linux maps it to a
byte-range lock); on a system without ``fcntl`` (Windows) runs are not locked.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from yoxla.run.errors import Log, RunError, writing

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "run.lock"


class RunBusy(RunError):
    """Another live process holds the run folder."""


def _holder_text(raw: str) -> str:
    try:
        h: dict[str, Any] = json.loads(raw)
        return f"pid {h.get('pid')} on {h.get('host')} (since {h.get('started_at')})"
    except (json.JSONDecodeError, AttributeError):
        return "another process"


class RunLock:
    """``with RunLock(run_dir, log):`` holds the run folder (created when missing) or raises RunBusy."""

    def __init__(self, run_dir: Path, log: Log | None = None) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_FILE
        self.log = log
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        with writing(self.path, "the run folder must be writable"):
            self.run_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = _holder_text(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
                    raise RunBusy(
                        f"run {self.run_dir.name!r} is in use by {holder}; "
                        "wait for it to finish (or stop it), then try again"
                    ) from None
            stale = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
            if stale and self.log:
                self.log(
                    f"run {self.run_dir.name}: took over the lock left by {_holder_text(stale)}, "
                    "which is no longer running"
                )
            me = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            }
            with writing(self.path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # an empty file: released cleanly, nothing stale
        except OSError:
            pass  # the next holder then reports a stale lock: harmless
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
