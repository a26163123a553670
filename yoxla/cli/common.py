"""What every command of the ``yoxla`` command line shares: the one-line error, tables, the data flags.

It imports none of the command modules that import it, so there is no import circle between them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from yoxla.data.editions import EDITIONS


class UsageError(Exception):
    """Bad input from the user, or a failure the user can fix: one line, exit status ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


Command = Callable[[argparse.Namespace], int]


def one_line_errors(*kinds: type[BaseException], code: int = 2) -> Callable[[Command], Command]:
    """Decorate a command so that ``kinds`` (and any OSError) end as one line with exit ``code``.

    An OSError reaching this point is a file the user can fix (disk full, read-only folder,
    missing permission), so it is reported by its reason and file name, not by a traceback.
    """

    def decorate(func: Command) -> Command:
        def wrapped(args: argparse.Namespace) -> int:
            try:
                return int(func(args))
            except UsageError:
                raise
            except kinds as exc:
                raise UsageError(str(exc), code) from None
            except OSError as exc:
                where = f"{exc.filename}: " if exc.filename else ""
                raise UsageError(f"{where}{exc.strerror or exc}", code) from None

        wrapped.__name__ = func.__name__
        wrapped.__doc__ = func.__doc__
        return wrapped

    return decorate


def report(exc: UsageError) -> int:
    """Print the one line of a failed command; returns its exit status."""
    print(f"yoxla: error: {exc}", file=sys.stderr)
    return exc.code


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with aligned columns (numbers right-aligned)."""
    cells = [[str(h) for h in headers]] + [
        [f"{c:.2f}" if isinstance(c, float) else str(c) for c in r] for r in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(isinstance(r[i], int | float) for r in rows) and rows for i in range(len(headers))]

    def line(r: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


def task_ids(args: argparse.Namespace, edition_tasks: list[str]) -> list[str]:
    """The ``--task`` ids asked for (each checked against the benchmark's tasks and the edition), else all."""
    from yoxla.data.editions import frozen_contracts

    ids = list(getattr(args, "task", None) or [])
    known = frozen_contracts()[1]
    for tid in ids:
        if tid not in known:
            raise UsageError(f"unknown task {tid!r}; known tasks: {', '.join(known)}")
        if tid not in edition_tasks:
            raise UsageError(f"task {tid} is not part of this edition")
    return ids or edition_tasks


def add_data_args(p: argparse.ArgumentParser, default_edition: str = "v1") -> None:
    """``--edition``, ``--data-dir``, ``--revision`` and ``--task``, as every data command takes them."""
    p.add_argument("--edition", choices=EDITIONS, default=default_edition)
    p.add_argument("--data-dir", help="a local copy of the dataset in the Hub layout")
    p.add_argument("--revision", help="pin the Hub dataset to this revision")
    p.add_argument("--task", action="append", help="only this task (repeatable)")
