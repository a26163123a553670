"""Matching an answer's text against the labels, the way the strict parser reads an answer.

Surrounding white space and the parser's symmetric wrappers (``**``, backticks, « ») are
removed, labels compare in Azerbaijani case (and ASCII case for ASCII labels), letters are
never folded. :func:`classify_text` says how one token path's text stands to the labels: the label
it spells, those it is on the way to, and those whose next letter unshown bytes may begin
(a letter of two or more bytes split across tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from yoxla.text import az_lower, az_upper, collapse_ws, nfc

# The parser's symmetric wrappers, in its order (yoxla.parsing._WRAPPERS).
WRAPPERS = (("```", "```"), ("**", "**"), ("`", "`"), ('"', '"'), ("'", "'"), ("«", "»"), ("“", "”"))


@dataclass(frozen=True)
class LabelKeys:
    """The comparison forms of one label, as the strict parser compares it."""

    label: str
    az: str  # NFC, collapsed white space, Azerbaijani lower case
    ascii: str | None  # English lower case, for ASCII labels only


def label_keys(space: Sequence[str]) -> list[LabelKeys]:
    return [
        LabelKeys(lb, az_lower(collapse_ws(nfc(lb))), lb.lower() if lb.isascii() else None) for lb in space
    ]


def _split_wrappers(text: str) -> tuple[str, str]:
    """(body, closers): leading white space and opening wrappers removed, as the parser would.

    A dangling part of an opener (``*`` of ``**``) leaves an empty body: any label may follow.
    """
    body, closers = text.lstrip(), ""
    stripped = True
    while stripped:
        stripped = False
        for left, right in WRAPPERS:
            if body.startswith(left):
                body, closers = body[len(left) :].lstrip(), closers + right
                stripped = True
                break
    if body and any(left.startswith(body) for left, _ in WRAPPERS):
        return "", closers
    return body, closers


def _norm(body: str) -> str:
    """NFC and collapsed white space, keeping one trailing space (a prefix may end in one)."""
    text = nfc(body)
    core = collapse_ws(text)
    return core + " " if core and text[-1:].isspace() else core


# Characters outside ASCII the parser strips around a label: wrappers and white space.
_MARKS = "«»“”\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _opens_unshown(c: str) -> bool:
    """Whether unshown bytes (the start of a letter of two or more bytes) may begin ``c`` as
    the parser compares it: a letter outside ASCII in some case (``i`` is ``İ`` upper case),
    or white space (``\u00a0`` is white space to the parser)."""
    return c.isspace() or any(not v.isascii() for v in (c, c.upper(), az_upper(c)))


@dataclass(frozen=True)
class PathClass:
    """How one path's text stands to the labels."""

    complete: str | None  # the label it spells
    compat: frozenset[str]  # the labels it spells or is on the way to
    soft: frozenset[str]  # those whose next letter unshown bytes may begin
    open_start: bool  # no letter of a label yet: unshown bytes may be a wrapper (« “) or white space


def classify_text(text: str, pending: bytes, keys: list[LabelKeys]) -> PathClass:
    """How ``text`` (and ``pending``, the bytes of a letter not finished yet) stands to the labels."""
    body, closers = _split_wrappers(text)
    norm = _norm(body)
    done = collapse_ws(nfc(body.rstrip(closers + " \t\r\n\f\v")))  # the answer once closed
    # Each label in the forms the parser compares: Azerbaijani case, and English case for ASCII.
    forms = [(k.label, k.az, az_lower(norm), az_lower(done)) for k in keys]
    forms += [(k.label, k.ascii, norm.lower(), done.lower()) for k in keys if k.ascii is not None]
    compat: set[str] = set()
    soft: set[str] = set()
    complete = None
    separator = bool(pending) and any(m.encode("utf-8").startswith(pending) for m in _MARKS)
    for label, key, have, finished in forms:
        if pending:  # a letter split across tokens: a prefix whose next letter starts so
            if len(key) > len(have) and key.startswith(have):
                c = key[len(have)]
                if any(v.encode("utf-8").startswith(pending) for v in {c, c.upper(), az_upper(c)}):
                    compat.add(label)
                    soft.add(label)
            if separator:  # or a wrapper (« “ ” ») or white space outside ASCII
                if not have:
                    compat.add(label)
                    soft.add(label)
                elif complete is None and finished == key:
                    complete = label
                    compat.add(label)
            continue
        if key.startswith(have):
            compat.add(label)
            if len(key) > len(have) and _opens_unshown(key[len(have)]):
                soft.add(label)
        if complete is None and finished == key:
            complete = label
            compat.add(label)
    return PathClass(complete, frozenset(compat), frozenset(soft), not pending and not norm.strip())
