"""The run folder: run.json, predictions.jsonl (append + flush), task_scores.json, summary.json,
and its lock.

``predictions.jsonl`` is written one complete line per example, in example order, flushed
after each line. A crash can leave at most one torn last line; :func:`read_predictions`
detects it and :func:`repair_predictions` cuts it off before a resumed run appends. A
repeated example (two runners on one folder, before the run lock existed) is not an error:
:func:`drop_duplicates` keeps the first line of each and says which ids repeated.

One process at a time holds a run folder (:class:`RunLock`): ``fcntl.flock`` on
``runs/<run_id>/run.lock``, not the file's existence: the kernel releases a
flock when its process dies, however it dies (``kill -9`` included), so a dead holder can
never block a run. The holder writes its pid, host and start time into the file for the
"in use by" message, and empties it when it lets go; a file that still names a holder
while nobody holds the lock was left by a process that died, and the next runner says so
and takes over. flock needs a local file system (or NFSv4, where Linux maps it to a
byte-range lock); on a system without ``fcntl`` (Windows) runs are not locked.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import socket
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from yoxla.run.errors import Log, RunError, writing

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

RUN_JSON = "run.json"
PREDICTIONS = "predictions.jsonl"
TASK_SCORES = "task_scores.json"
SUMMARY = "summary.json"


class CorruptRun(ValueError):
    """The run folder cannot be read back (a broken line in the middle, a missing run.json)."""


# One encoder for every line: json.dumps with options builds a new one per call. A record is a
# tree of JSON values built here (never circular), so the cycle check is skipped too.
_LINE_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False
)


def dumps_line(record: dict[str, Any]) -> str:
    return _LINE_ENCODER.encode(record) + "\n"


def _replace_atomically(path: Path, write: Any) -> None:
    """Write through ``write(fh)`` into PATH.tmp, then rename it over ``path``; no .tmp is left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> Path:
    """Atomic write of pretty, deterministic JSON (sorted keys, no NaN)."""
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True, allow_nan=False) + "\n"
    _replace_atomically(path, lambda fh: fh.write(text))
    return path


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptRun(f"{path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise CorruptRun(f"{path} is not valid JSON: {exc}") from None


def read_predictions(path: Path) -> tuple[list[dict[str, Any]], int]:
    """(records, byte length of the good prefix). A torn or unparsable *last* line is dropped."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
    good = 0
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            break  # torn last line: no newline
        line = data[pos:end]
        try:
            records.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError):
            if data[end + 1 :].strip():
                raise CorruptRun(f"{path}: line {len(records) + 1} is not valid JSON") from None
            break  # a broken last line
        pos = end + 1
        good = pos
    return records, good


def drop_duplicates(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """(records with the first line of each (task, id) only, the ``task/id`` of every dropped line)."""
    seen: set[tuple[str, str]] = set()
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    for r in records:
        key = (str(r.get("task")), str(r.get("id")))
        if key in seen:
            dropped.append("/".join(key))
        else:
            seen.add(key)
            kept.append(r)
    return kept, dropped


def duplicates_note(path: Path, dropped: list[str]) -> str:
    shown = ", ".join(dict.fromkeys(dropped[:5])) + (", …" if len(dropped) > 5 else "")
    return f"{path}: {len(dropped)} repeated example line(s) ignored, the first of each kept (ids: {shown})"


def repair_predictions(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Read the records and truncate a torn tail; returns (records, bytes discarded)."""
    records, good = read_predictions(path)
    size = path.stat().st_size if path.exists() else 0
    if size > good:
        with path.open("r+b") as fh:
            fh.truncate(good)
    return records, size - good


class PredictionWriter:
    """Appends one line per example and flushes it, so a killed run loses nothing on disk.

    Each line goes down in one unbuffered ``write``: a failed write (disk full) leaves at
    most a torn last line, which the next resume cuts off, and nothing stays in a buffer to
    fail again at close.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh: IO[bytes] = path.open("ab", buffering=0)

    def append(self, record: dict[str, Any]) -> None:
        view = memoryview(dumps_line(record).encode("utf-8"))
        try:
            while view:
                written = self._fh.write(view)
                if not written:
                    raise OSError(errno.EIO, "nothing written", str(self.path))
                view = view[written:]
        except OSError as exc:
            exc.filename = exc.filename or str(self.path)  # say which file the disk refused
            raise

    def close(self) -> None:
        if not self._fh.closed:
            try:
                os.fsync(self._fh.fileno())
            finally:
                self._fh.close()


def rewrite_predictions(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace the whole file atomically (--retry-errors merging answers, duplicates dropped)."""
    _replace_atomically(path, lambda fh: fh.writelines(dumps_line(r) for r in records))


SUITE_KIND = "suite"  # run.json "kind" of every run this version makes


def refuse_builtin(run_dir: Path) -> None:
    """A run folder that the built-in engine of an older YOXLA made (its run.json has no ``"kind":
    "suite"``) is neither continued nor re-scored: one line naming it and what to do instead
    (:class:`~yoxla.run.errors.RunError`), raised before anything in the folder is touched."""
    try:
        info = read_json(run_dir / RUN_JSON)
    except CorruptRun:
        return  # not a run folder this check can read: the caller says what is wrong with it
    if not isinstance(info, dict) or info.get("kind") == SUITE_KIND:
        return
    settings = info.get("settings")
    settings = settings if isinstance(settings, dict) else {}
    argv = ["--edition", str(info.get("edition") or settings.get("edition") or "v1")]
    for key in ("provider", "model"):
        if isinstance(info.get(key), str) and info[key]:
            argv += [f"--{key}", info[key]]
    raise RunError(
        f"{run_dir} was made by the built-in engine of an older YOXLA, which this version no longer "
        f"resumes, retries or re-scores; re-run it with `python runner.py {shlex.join(argv)}` "
        "(its result file, if one was written, stays readable and admissible)"
    )


# The lock ------------------------------------------------------------------------------------

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
