"""What every command of the ``yoxla`` command line shares: the one-line error, tables.

``yoxla.cli`` (the parser) and the command modules it registers (``yoxla.run.commands``)
import this module; it imports neither, so there is no import circle between them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any


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
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(isinstance(r[i], int | float) for r in rows) and rows for i in range(len(headers))]

    def line(r: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)
