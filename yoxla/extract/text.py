"""Text helpers with Azerbaijani rules.

Two promises hold everywhere in this module:

* Case mapping follows Azerbaijani (``İ``↔``i``, ``I``↔``ı``) and is length-preserving,
  so character offsets computed on a lower-cased string are valid on the original.
* Letters are never folded to ASCII in anything that affects a score. ``fold_letters`` and
  ``turkish_spelling`` exist only to *diagnose* near misses.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal

Form = Literal["NFC", "NFD", "NFKC", "NFKD"]

_AZ_LOWER = {"I": "ı", "İ": "i"}
_AZ_UPPER = {"i": "İ", "ı": "I"}

# Unicode normalisation in linear time ------------------------------------------------------
#
# CPython puts combining marks in canonical order with an insertion sort, so a letter followed
# by a long run of marks in the wrong order (``"a" + "\u0301\u0316" * 10**6``) costs time
# quadratic in the run. Text shorter than _DIRECT, or without a run of at least _LONG_RUN
# mark-bearing characters, cannot get there and goes straight to ``unicodedata``. Otherwise
# the text is decomposed and put in canonical order here (a stable sort on the combining class
# within each run of marks: the Unicode algorithm itself, vectorised), and the result, which is
# canonically equivalent to the input, is normalised by ``unicodedata``, now in linear time.
# Either way the output is exactly ``unicodedata.normalize(form, text)``.

_DIRECT = 1024
_LONG_RUN = 32
_FEW = 2048  # above this many distinct characters, whole-Unicode tables are cheaper


@lru_cache(maxsize=65536)
def _decomposed(form: Form, ch: str) -> str:
    return unicodedata.normalize(form, ch)


@lru_cache(maxsize=65536)
def _bears_marks(form: Form, ch: str) -> bool:
    """Does the decomposition of ``ch`` hold a non-starter (a character with a combining class)?"""
    return any(unicodedata.combining(c) for c in _decomposed(form, ch))


_HANGUL = range(0xAC00, 0xD7A4)  # syllables: decomposed by algorithm, not by the table


@lru_cache(maxsize=2)
def _unicode_tables(form: str) -> tuple[Any, Any, Any]:
    """For every code point: its combining class, whether it decomposes, whether that bears marks.

    Built once (about half a second), and only for text with very many distinct characters.
    """
    import numpy as np

    size = 0x110000
    ccc = np.fromiter(map(unicodedata.combining, map(chr, range(size))), np.uint8, size)
    decomposes = np.fromiter(map(bool, map(unicodedata.decomposition, map(chr, range(size)))), bool, size)
    decomposes[_HANGUL.start : _HANGUL.stop] = True
    marked = ccc > 0
    for cp in np.flatnonzero(decomposes).tolist():
        marked[cp] = _bears_marks(form, chr(cp))
    return ccc, decomposes, marked


_TABLE = {"ccc": 0, "decomposes": 1, "marked": 2}


def _lookup(form: Form, cps: Any, what: str) -> Any:
    """A table indexed by code point, right at least on ``cps`` (sorted): "ccc", "decomposes" or "marked"."""
    import numpy as np

    if len(cps) > _FEW:
        return _unicode_tables(form)[_TABLE[what]]
    table = np.zeros(int(cps[-1]) + 1, dtype=np.uint8 if what == "ccc" else bool)
    for cp in cps.tolist():
        ch = chr(cp)
        if what == "ccc":
            table[cp] = unicodedata.combining(ch)
        elif what == "marked":
            table[cp] = _bears_marks(form, ch)
        else:
            table[cp] = _decomposed(form, ch) != ch
    return table


def _longest_run(mask: Any) -> int:
    import numpy as np

    if not mask.any():
        return 0
    edges = np.diff(np.concatenate(([0], mask.view(np.int8), [0])))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


def _codes(text: str) -> Any:
    import numpy as np

    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _canonical_decomposition(form: Form, codes: Any, present: Any) -> str:
    """NFD (or NFKD) of the text whose code points are ``codes``: decompose, then order the marks."""
    import numpy as np

    size = int(present[-1]) + 1
    lens = np.ones(size, dtype=np.int64)
    offsets = np.zeros(size, dtype=np.int64)
    decomposes = _lookup(form, present, "decomposes")[:size]
    pieces, at = [], 0
    for cp in present[decomposes[present]].tolist():
        d = _decomposed(form, chr(cp))
        lens[cp], offsets[cp] = len(d), at
        pieces.append(d)
        at += len(d)
    n = lens[codes]
    out = np.repeat(codes, n)  # each character, as many times as its decomposition is long
    if pieces:
        within = np.arange(len(out)) - np.repeat(np.cumsum(n) - n, n)
        spread = np.repeat(decomposes[codes], n)
        out[spread] = _codes("".join(pieces))[offsets[out[spread]] + within[spread]]
    ccc = _lookup(form, np.flatnonzero(np.bincount(out)), "ccc")[out].astype(np.int64)
    order = np.argsort(np.cumsum(ccc == 0) * 256 + ccc, kind="stable")
    return out[order].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


def normalize(form: Form, text: str, *, direct: int = _DIRECT, long_run: int = _LONG_RUN) -> str:
    """``unicodedata.normalize(form, text)``, in time linear in the length of ``text``.

    ``direct`` and ``long_run`` exist for the tests (small values force the long path).
    """
    if len(text) <= direct or text.isascii():
        return unicodedata.normalize(form, text)
    if unicodedata.is_normalized(form, text):  # linear: a quick check, else marks already in order
        return text
    return _normalize_long(form, text, long_run)


@lru_cache(maxsize=4)  # the same long answer is normalised for its key, its tokens, its span
def _normalize_long(form: Form, text: str, long_run: int) -> str:
    import numpy as np

    decomposition: Form = "NFKD" if form in ("NFKC", "NFKD") else "NFD"
    codes = _codes(text)
    present = np.flatnonzero(np.bincount(codes))
    if _longest_run(_lookup(decomposition, present, "marked")[codes]) < long_run:
        return unicodedata.normalize(form, text)
    return unicodedata.normalize(form, _canonical_decomposition(decomposition, codes, present))


def nfc(text: str) -> str:
    return normalize("NFC", text)


def _replaced(text: str, pairs: dict[str, str]) -> str:
    """``text.translate(str.maketrans(pairs))`` for single characters, where no replacement is a
    key of ``pairs``: a few ``str.replace`` scans, several times faster than ``translate``
    (a dictionary look-up per character) once the text is not ASCII."""
    for old, new in pairs.items():
        text = text.replace(old, new)
    return text


def _az_case(pairs: dict[str, str], convert: Callable[[str], str]) -> Callable[[str], str]:
    """``convert`` (``str.lower`` or ``str.upper``) after the Azerbaijani ``pairs``, one character
    in, one character out (a character ``convert`` makes several of stays as it is)."""

    def case(text: str) -> str:
        fast = convert(_replaced(text, pairs))
        if len(fast) == len(text):  # no character converted to several (the usual case)
            return fast
        out = []
        for ch in text:
            mapped = pairs.get(ch)
            if mapped is None:
                converted = convert(ch)
                mapped = converted if len(converted) == 1 else ch
            out.append(mapped)
        return "".join(out)

    return case


az_lower = _az_case(_AZ_LOWER, str.lower)
az_lower.__doc__ = "Lower-case with Azerbaijani rules, one character in, one character out."
az_upper = _az_case(_AZ_UPPER, str.upper)
az_upper.__doc__ = "Upper-case with Azerbaijani rules, one character in, one character out."


def collapse_ws(text: str) -> str:
    """Runs of white space as one space, none at the ends (``re.sub(r"\\s+", " ", text).strip()``:
    ``\\s`` and ``str.split`` know the same white space)."""
    return " ".join(text.split())


def flatten(text: str) -> str:
    """NFC and collapsed white space: the canonical form spans are located in."""
    if len(text) > _DIRECT:
        return _flatten_long(text)
    return collapse_ws(nfc(text))


@lru_cache(maxsize=4)  # a long answer is flattened for its label key and again for its span
def _flatten_long(text: str) -> str:
    return collapse_ws(nfc(text))


def az_key(text: str) -> str:
    """Comparison key for labels: NFC, collapsed white space, Azerbaijani lower case."""
    return az_lower(flatten(text))


# Diagnostics only -------------------------------------------------------------

_FOLD = {"ə": "e", "ş": "s", "ı": "i", "ö": "o", "ü": "u", "ç": "c", "ğ": "g"}


def fold_letters(text: str) -> str:
    """ASCII-ish folding of Azerbaijani letters (diagnostic near-miss detection only)."""
    return _replaced(az_lower(text), _FOLD)


_TURKISH = {"x": "k", "q": "k", "ə": "e"}


def turkish_spelling(text: str) -> str:
    """Map an Azerbaijani spelling onto the way Turkish spells the same sounds (x, q → k; ə → e).

    Applied to both sides of a comparison, then letter-folded and with spaces removed,
    so ``YOKDUR`` meets ``YOXDUR`` and ``HEÇ BİRİ`` written as one word is caught.
    """
    return fold_letters(_replaced(az_lower(text), _TURKISH)).replace(" ", "")


_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(az_lower(nfc(text)))


def token_count(lowered: str) -> int:
    """``len(tokens(text))`` for ``lowered = az_lower(nfc(text))``, without making the list."""
    return _TOKEN.subn("", lowered)[1]


@lru_cache(maxsize=1024)
def words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """Where these words follow one another as whole words of a text lower-cased like ``tokens``.

    The check that no word character comes before the first word is written after it (a
    lookbehind over that word too), so that the pattern starts with a literal, which the
    regular-expression engine finds by a fast scan.
    """
    first = re.escape(words[0])
    rest = "".join(r"\W+" + re.escape(w) for w in words[1:])
    return re.compile(first + r"(?<!\w" + first + ")" + rest + r"(?!\w)")
