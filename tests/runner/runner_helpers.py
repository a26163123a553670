"""Helpers of the runner tests: the one-line error check, and a file system that refuses writes."""

from __future__ import annotations

import builtins
import errno
import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def one_error_line(rc: int, err: str, *needles: str) -> str:
    """The command failed with one ``yoxla: …`` line containing ``needles``, and no traceback."""
    assert rc != 0
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("yoxla: "), err
    for needle in needles:
        assert needle in last, err
    return last


@contextmanager
def denied_writes(under: Path, code: int = errno.EROFS) -> Iterator[None]:
    """Every attempt to create, open for writing, rename or remove a path under ``under`` fails
    with ``OSError(code)``, as on a read-only or full file system. (The tests run as root, where
    ``chmod`` does not stop writes, so the refusal is made at the system-call wrappers.)"""
    root = os.path.realpath(under)

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            return False
        real = os.path.realpath(os.fsdecode(os.fspath(path)))
        return real == root or real.startswith(root + os.sep)

    def refuse(path: Any) -> None:
        raise OSError(code, os.strerror(code), os.fsdecode(os.fspath(path)))

    real_open, real_os_open = io.open, os.open

    def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+") and inside(file):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & WRITE_FLAGS and inside(path):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    def guard(real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(path: Any, *args: Any, **kwargs: Any) -> Any:
            targets = [path, *(a for a in args[:1] if isinstance(a, str | os.PathLike))]
            if any(inside(t) for t in targets):
                refuse(path)
            return real(path, *args, **kwargs)

        return wrapped

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(io, "open", fake_open)
        mp.setattr(builtins, "open", fake_open)
        mp.setattr(os, "open", fake_os_open)
        for name in ("mkdir", "replace", "rename", "unlink", "rmdir"):
            mp.setattr(os, name, guard(getattr(os, name)))
        yield
