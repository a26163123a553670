"""Reading untrusted JSON files: only regular files, bounded size, strict and bounded parsing.

Result files come from pull requests, so every byte is hostile until checked. Before any
other check, :func:`read_regular_file` refuses what is not a regular file (FIFOs, devices,
sockets, symbolic links that leave the folder they were found in, loops) and anything over
the size limit, reading at most that many bytes; :func:`loads_strict` refuses duplicate
keys (parsers disagree on which one wins), nesting deeper than :data:`MAX_DEPTH`, integers
longer than :data:`MAX_INT_DIGITS` digits, NaN and infinities, and lone surrogates (text
that is not valid Unicode). Both return a reason instead of raising.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MAX_DEPTH = 32
MAX_INT_DIGITS = 20
MAX_FLOAT_CHARS = 40
_SURROGATE = re.compile("[\ud800-\udfff]")


class StrictJSONError(ValueError):
    """The text is JSON this project does not accept; the message says why in one line."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or a mix of absolute and relative paths
        return False


def read_regular_file(
    path: str | os.PathLike[str], max_bytes: int, root: str | os.PathLike[str] | None = None
) -> tuple[bytes | None, str | None]:
    """(bytes, None) or (None, reason). Never blocks on a FIFO, never reads past ``max_bytes``.

    With ``root``, a symbolic link is followed only when its target lies inside ``root``.
    """
    p = os.fspath(path)
    try:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(p, strict=True)
            if root is not None and not _inside(target, os.path.realpath(root)):
                return None, "is a symbolic link that leads outside the results folder"
            st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            return None, f"is {_kind(st.st_mode)}, not a regular file"
        if st.st_size > max_bytes:
            return None, f"the file is {st.st_size / 2**20:.1f} MB, over the {max_bytes // 2**20} MB limit"
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(p, flags)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            return None, "is a symbolic link loop"
        return None, f"cannot be read: {exc.strerror or type(exc).__name__}"
    except (ValueError, UnicodeError):  # a NUL byte or a lone surrogate: no file has this name
        return None, "cannot be read: the path holds a NUL byte or a character no file name can hold"
    try:
        st = os.fstat(fd)  # the file opened may not be the one looked at: check again
        if not stat.S_ISREG(st.st_mode):
            return None, f"is {_kind(st.st_mode)}, not a regular file"
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or type(exc).__name__}"
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        return None, f"the file is over the {max_bytes // 2**20} MB limit"
    return data, None


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise StrictJSONError(f"the key {dup[:60]!r} appears twice in one object")
    return d


def _int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > MAX_INT_DIGITS:
        raise StrictJSONError(f"an integer has {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_FLOAT_CHARS:
        raise StrictJSONError(f"a number is written with {len(text)} characters (at most {MAX_FLOAT_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"the number {text} overflows (NaN and infinities are not allowed)")
    return value


def _constant(name: str) -> Any:
    raise StrictJSONError(f"contains {name} (NaN or an infinite number), which is not allowed")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def check_tree(doc: Any, max_depth: int = MAX_DEPTH, surrogates: bool = True) -> None:
    """Depth (and, with ``surrogates``, text) checks over a parsed document, iteratively."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    search = _SURROGATE.search
    while stack:
        node, depth = stack.pop()
        t = type(node)
        if t is dict or t is list:
            if depth > max_depth:
                raise StrictJSONError(f"nested more than {max_depth} levels deep")
            values = node.values() if t is dict else node
            for v in values:
                tv = type(v)
                if tv is dict or tv is list:
                    stack.append((v, depth + 1))
                elif surrogates and tv is str and not v.isascii() and search(v):
                    raise StrictJSONError("a text contains a lone surrogate (not valid Unicode text)")
            if surrogates and t is dict:
                for k in node:
                    if not k.isascii() and search(k):
                        raise StrictJSONError("a key contains a lone surrogate (not valid Unicode text)")
        elif surrogates and t is str and not node.isascii() and search(node):
            raise StrictJSONError("a text contains a lone surrogate (not valid Unicode text)")


_CONTAINERS = frozenset((dict, list))
_INT_LIMIT = 10**MAX_INT_DIGITS  # an integer of more than MAX_INT_DIGITS digits is at least this
# A key's closing quote followed by white space before its colon: the fast path's count misses it.
_SPACED_KEY = re.compile(rb'"[ \t\n\r]+:')


def _keys_if_plain(doc: Any, max_depth: int) -> int | None:
    """The number of keys in every object of ``doc``, or None where only the strict parse can
    judge it (nested too deep, an integer that may be too long)."""
    t = type(doc)
    if t is not dict and t is not list:
        return None if t is int and not -_INT_LIMIT < doc < _INT_LIMIT else 0
    keys = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > max_depth:
            return None
        if type(node) is dict:
            keys += len(node)
            values = node.values()
        else:
            values = node
        kinds = set(map(type, values))  # in C: most objects hold no container and no integer
        if kinds.isdisjoint(_CONTAINERS) and int not in kinds:
            continue
        for v in values:
            tv = type(v)
            if tv is dict or tv is list:
                push((v, depth + 1))
            elif tv is int and not -_INT_LIMIT < v < _INT_LIMIT:
                return None
    return keys


def _key_ends(data: bytes) -> int:
    """At least the number of keys in the JSON text ``data``: the quotes followed by a colon.

    Every key ends in a quote that is not escaped, and (``_SPACED_KEY`` aside) its colon comes
    next. A quote escaped inside a text (``\\":``) is not counted where no quote follows two
    backslashes (``\\\\":``: an escaped backslash, or an escaped quote after one); where one
    does, every ``":`` is counted.
    """
    ends = data.count(b'":')
    if data.count(b'\\\\":'):
        return ends
    return ends - data.count(b'\\":')


def _loads_plain(text: str, data: bytes, max_depth: int) -> Any:
    """The document, when a parse without the duplicate-key hook can vouch for it; else _UNSURE.

    The parsed objects hold every key of the text but the repeated ones, and
    :func:`_key_ends` counts every key and more (a text that starts with a colon), so the two
    counts are equal only when no key is repeated. Any doubt (white space before a colon, a
    surrogate escape, an error, an integer that may be too long, deep nesting, counts that
    differ) goes to the strict parse, which decides with its exact reason.
    """
    if _SPACED_KEY.search(data) is not None or _SURROGATE_ESCAPE.search(text) is not None:
        return _UNSURE
    try:
        doc = json.loads(text, parse_float=_float, parse_constant=_constant)
    except (ValueError, RecursionError):  # JSONDecodeError and StrictJSONError are ValueErrors
        return _UNSURE
    if _keys_if_plain(doc, max_depth) != _key_ends(data):
        return _UNSURE
    return doc


_UNSURE = object()


def loads_strict(data: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """Parse UTF-8 JSON bytes under this project's rules; StrictJSONError in one line otherwise.

    Most documents are taken on a fast path (:func:`_loads_plain`: no Python call per object);
    what it cannot vouch for is parsed again with every check, which gives the reason.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    doc = _loads_plain(text, data, max_depth)
    if doc is not _UNSURE:
        return doc
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_int,
            parse_float=_float,
            parse_constant=_constant,
        )
    except RecursionError:
        raise StrictJSONError(f"nested more than {max_depth} levels deep") from None
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated")
        hint = "; the file looks truncated" if truncated else ""
        raise StrictJSONError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}){hint}"
        ) from None
    # Valid UTF-8 cannot encode a surrogate: one can only come from a \\uD8xx-\\uDFxx escape.
    check_tree(doc, max_depth, surrogates=_SURROGATE_ESCAPE.search(text) is not None)
    return doc


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for one document's parse and checks.

    A parsed result file and what is derived from it are a few hundred thousand objects,
    freed by reference counting when the check ends; meanwhile the collector would walk them
    again and again (about a tenth of admitting a file). Restored as found: a collector that
    was already off stays off.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def parse_file(
    path: str | os.PathLike[str], max_bytes: int, root: str | os.PathLike[str] | None = None
) -> tuple[Any, bytes | None, str | None]:
    """(document, bytes, None) or (None, bytes or None, reason) for one file on disk."""
    data, problem = read_regular_file(Path(path), max_bytes, root)
    if data is None:
        return None, None, problem
    try:
        return loads_strict(data), data, None
    except StrictJSONError as exc:
        return None, data, str(exc)
