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

_WS = re.compile(r"\s+")

_AZ_LOWER = {"I": "ı", "İ": "i"}
_AZ_UPPER = {"i": "İ", "ı": "I"}


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


_AZ_LOWER_TABLE = str.maketrans(_AZ_LOWER)
_AZ_UPPER_TABLE = str.maketrans(_AZ_UPPER)


def az_lower(text: str) -> str:
    """Lower-case with Azerbaijani rules, one character in, one character out."""
    fast = text.translate(_AZ_LOWER_TABLE).lower()
    if len(fast) == len(text):  # no character lower-cased to several (the usual case)
        return fast
    out = []
    for ch in text:
        mapped = _AZ_LOWER.get(ch)
        if mapped is None:
            low = ch.lower()
            mapped = low if len(low) == 1 else ch
        out.append(mapped)
    return "".join(out)


def az_upper(text: str) -> str:
    fast = text.translate(_AZ_UPPER_TABLE).upper()
    if len(fast) == len(text):
        return fast
    out = []
    for ch in text:
        mapped = _AZ_UPPER.get(ch)
        if mapped is None:
            up = ch.upper()
            mapped = up if len(up) == 1 else ch
        out.append(mapped)
    return "".join(out)


def collapse_ws(text: str) -> str:
    return _WS.sub(" ", text).strip()


def flatten(text: str) -> str:
    """NFC and collapsed white space: the canonical form spans are located in."""
    return collapse_ws(nfc(text))


def az_key(text: str) -> str:
    """Comparison key for labels: NFC, collapsed white space, Azerbaijani lower case."""
    return az_lower(flatten(text))


# Diagnostics only -------------------------------------------------------------

_FOLD = str.maketrans({"ə": "e", "ş": "s", "ı": "i", "ö": "o", "ü": "u", "ç": "c", "ğ": "g"})


def fold_letters(text: str) -> str:
    """ASCII-ish folding of Azerbaijani letters (diagnostic near-miss detection only)."""
    return az_lower(text).translate(_FOLD)


_TURKISH = str.maketrans({"x": "k", "q": "k", "ə": "e"})


def turkish_spelling(text: str) -> str:
    """Map an Azerbaijani spelling onto the way Turkish spells the same sounds (x, q → k; ə → e).

    Applied to both sides of a comparison, then letter-folded and with spaces removed,
    so ``YOKDUR`` meets ``YOXDUR`` and ``HEÇ BİRİ`` written as one word is caught.
    """
    return fold_letters(az_lower(text).translate(_TURKISH)).replace(" ", "")


_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(az_lower(nfc(text)))
