"""The runner's one-line errors and log lines.

The command line prints an error as ``yoxla: error: …`` and exits non-zero; log lines
(a resumed run, a dropped duplicate, a stale lock) go to stderr as they happen.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath

Log = Callable[[str], None]


def log_stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class RunError(Exception):
    """The run cannot start or go on; the message says why in one line."""


class ValidationFailed(RunError):
    """The benchmark rows broke a validation rule: no model is called."""


def os_reason(exc: OSError) -> str:
    """``No space left on device`` rather than ``[Errno 28] No space left on device: '/x'``."""
    return exc.strerror or str(exc) or type(exc).__name__


@contextmanager
def writing(path: Path | str, hint: str = "") -> Iterator[None]:
    """Turn a failed write (disk full, read-only folder, …) into a one-line :class:`RunError`."""
    try:
        yield
    except OSError as exc:
        raise RunError(f"cannot write {path}: {os_reason(exc)}{'; ' + hint if hint else ''}") from None


def shown_path(path: str | os.PathLike[str]) -> str:
    """A file as a message quotes it: an absolute path relative to the working directory when
    it is under it, else only its name (a message does not spell out the user's folders); a
    relative path as given."""
    given = Path(path)
    if not given.is_absolute():
        return os.fspath(path)
    try:
        return given.relative_to(Path.cwd()).as_posix()
    except (OSError, ValueError):
        return given.name


def quoting(message: str, path: str | os.PathLike[str]) -> str:
    """``message`` with the absolute ``path`` it quotes (a manifest's, as the loader names it)
    shown as :func:`shown_path` shows it."""
    full = os.fspath(path)
    return message.replace(full, shown_path(full)) if Path(full).is_absolute() else message


def resume_command(run_dir: Path, kind: str = "resume") -> str:
    """The command that continues the run in ``run_dir`` (``kind`` "retry_errors": re-asks its failures)."""
    where = "" if PurePath(run_dir.parent) == PurePath("runs") else f" --runs-dir {run_dir.parent}"
    if kind == "retry_errors":
        return f"python runner.py --retry-errors {run_dir.name}{where}"
    return f"python runner.py --run-id {run_dir.name}{where} --resume"
