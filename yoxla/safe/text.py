"""Showing and comparing untrusted names and text.

Model names, display names, ids and reasons that quote a result file come from whoever
sent the file. They reach terminals (escape sequences), CI logs (GitHub Actions runs a line
that starts with ``::``, after leading white space, and ``##[`` anywhere in a line, as a
workflow command), plot labels and tables (bidirectional controls reorder what is shown,
zero-width characters hide differences). Three small tools:

* :func:`one_line`: any text as one printable line, every invisible character written out;
* :func:`name_problems`: why a string is not acceptable as a model or display name;
* :func:`skeleton`: a key under which look-alike names collide (for collision checks only,
  never for scoring).
"""

from __future__ import annotations

import re
import unicodedata

from yoxla.extract.text import normalize

# Escapes ---------------------------------------------------------------------------------

_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(ch: str) -> str:
    """A character as shown: itself if printable, else an escape (``\\x1b``, ``\\u202e``).

    ``str.isprintable`` is false exactly for control (Cc), format (Cf: bidirectional
    controls, zero-width characters, the BOM, soft hyphen, tags), surrogate (Cs),
    private-use (Co), unassigned (Cn) characters, line and paragraph separators and every
    space but U+0020. The backslash is doubled, so that an escape cannot be forged.
    """
    escape = _ESCAPES.get(ch)
    if escape is not None:
        return escape
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def one_line(text: str, limit: int = 300) -> str:
    """``text`` as a single printable line of at most ``limit`` characters, plus a length note.

    Invisible and control characters are escaped (:func:`_shown`); a cut line ends with
    ``… (N characters)``, N being the length of ``text``. The line never starts, after
    spaces, with ``::`` and never holds ``##[`` (the two forms of GitHub Actions workflow
    commands): their first ``:`` or their ``[`` is written ``\\x3a`` or ``\\x5b``. Only the
    characters that are kept are looked at, so a 5 MB text costs no more than a short one.
    """
    pieces: list[str] = []
    size = 0
    leading = True  # only spaces so far
    cut = False
    for i, ch in enumerate(text):
        piece = _shown(ch)
        if leading and ch == ":" and text[i + 1 : i + 2] == ":":
            piece = "\\x3a"
        elif ch == "[" and i >= 2 and text[i - 2 : i] == "##":
            piece = "\\x5b"
        leading = leading and ch == " "
        if size + len(piece) > limit:
            cut = True
            break
        pieces.append(piece)
        size += len(piece)
    line = "".join(pieces)
    if cut:
        line += f"… ({len(text)} characters)"
    return line


# Names -------------------------------------------------------------------------------------

MAX_NAME_LENGTH = 128
_SCANNED = 4096  # characters examined one by one for the reasons below

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")


def _code_points(chars: list[str]) -> str:
    shown = ", ".join(f"U+{ord(c):04X}" for c in chars[:3])
    return shown + (", …" if len(chars) > 3 else "")


def name_problems(name: str, max_len: int = MAX_NAME_LENGTH) -> list[str]:
    """Why ``name`` is not acceptable as a model or display name: one short line per reason.

    An empty list means acceptable. Letters of any script (``ə ğ ı İ ö ü ş ç``, Cyrillic,
    CJK), digits, punctuation, ``/ - . _ :``, parentheses and plain spaces inside are fine;
    not fine: nothing visible, too long, white space at either end, control characters,
    bidirectional controls, zero-width and other invisible format characters, lone
    surrogates, private-use or unassigned code points, spaces other than U+0020, and text
    not in Unicode NFC form (two spellings of one name would look the same).
    """
    problems: list[str] = []
    if not name.strip():
        return ["is empty or blank"]
    if len(name) > max_len:
        problems.append(f"is too long: {len(name)} characters (at most {max_len})")
    if name != name.strip():
        problems.append("has white space at the start or end")
    if not name.isprintable():
        found: dict[str, list[str]] = {}
        for ch in dict.fromkeys(name[:_SCANNED]):
            kind = _kind(ch)
            if kind is not None:
                found.setdefault(kind, []).append(ch)
        for kind in _KINDS:
            if kind in found:
                problems.append(f"contains {kind}: {_code_points(found[kind])}")
        if not found:  # beyond the characters scanned one by one
            problems.append(f"contains non-printable characters after the first {_SCANNED}")
    if not unicodedata.is_normalized("NFC", name):
        problems.append("is not in Unicode NFC form (write composed characters)")
    return problems


_KINDS = (
    "control characters",
    "bidirectional controls",
    "zero-width characters",
    "invisible format characters",
    "lone surrogates",
    "private-use or unassigned code points",
    "white space other than a plain space",
)


def _kind(ch: str) -> str | None:
    if ch.isprintable():
        return None
    if ch in BIDI_CONTROLS:
        return "bidirectional controls"
    if ch in ZERO_WIDTH:
        return "zero-width characters"
    category = unicodedata.category(ch)
    if category in ("Cc", "Zl", "Zp"):
        return "control characters"
    if category == "Cf":
        return "invisible format characters"
    if category == "Cs":
        return "lone surrogates"
    if category in ("Co", "Cn"):
        return "private-use or unassigned code points"
    return "white space other than a plain space"  # Zs


# Look-alike names ------------------------------------------------------------------------
#
# Letters of other scripts that look like Latin letters, written for this module (a short,
# deliberate list, not Unicode's confusables table): Cyrillic, Greek, Armenian, Cherokee and
# a few Latin IPA letters, mapped on their own case before case folding, so that Greek Η
# (looks like H) and η (looks like n) each meet their own look-alike.
_LOOK_ALIKE = {
    # Cyrillic
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ү": "Y", "Һ": "H", "Ԛ": "Q",
    "Ԝ": "W", "Ӏ": "I", "Ԁ": "D", "Ғ": "F", "Ә": "Ə",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i",
    "ј": "j", "ԁ": "d", "ү": "y", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "к": "k", "ә": "ə",
    "ғ": "f",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϳ": "J",
    "α": "a", "γ": "y", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ω": "w", "η": "n", "ϳ": "j",
    # Armenian
    "Օ": "O", "օ": "o", "Ս": "U", "ս": "u", "ո": "n", "հ": "h", "զ": "q", "Լ": "L",
    # Cherokee
    "Ꭺ": "A", "Ᏼ": "B", "Ꮯ": "C", "Ꭼ": "E", "Ꮋ": "H", "Ꮶ": "K", "Ꮇ": "M", "Ꮲ": "P",
    "Ꮪ": "S", "Ꭲ": "T", "Ꮃ": "W", "Ꮓ": "Z",
    # Latin letters from phonetics
    "ɑ": "a", "ɡ": "g", "ɩ": "i", "ɪ": "i", "ʏ": "y",
    # Slashes and colons
    "⁄": "/", "∕": "/", "⧸": "/", "∶": ":", "꞉": ":", "։": ":",
}  # fmt: skip
# Invisible characters NFKC keeps and that are not format characters: the combining grapheme
# joiner, variation selectors, Hangul fillers, Khmer inherent vowels, Mongolian selectors.
_INVISIBLE = [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x3164, 0xFFA0]
_INVISIBLE += [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
_SKELETON_TABLE: dict[int, str | None] = {
    **{ord(k): v for k, v in _LOOK_ALIKE.items()},
    **dict.fromkeys(_INVISIBLE),
}
_SEPARATORS = re.compile(r"[\s\-_\u2010\u2011\u2012\u2013\u2014\u2015\u2212]+")


def skeleton(name: str) -> str:
    """A key for look-alike detection: two names are confusable when their skeletons are equal.

    NFKC (fullwidth ``Ｑｗｅｎ``, ligatures, styled letters); invisible characters removed;
    letters of other scripts that look Latin mapped to Latin (Cyrillic ``а``, Greek ``ο``,
    Cyrillic ``ә`` to Latin ``ə``); case folded with ``İ``, ``I``, ``ı`` and ``i`` all as
    ``i`` (Azerbaijani and English casing meet, so ``QWEN`` meets ``Qwen`` and ``İNCİ``
    meets ``INCI``); ``l`` read as ``i`` (``l`` and ``I`` look the same in many fonts, and
    case is folded) and ``rn`` as ``m``; runs of white space, ``-``, ``_`` and dashes as
    one ``-``, none at the ends.

    Digits are not folded: ``A1`` and ``Al``, ``O`` and ``0`` stay apart, since model names
    differ by digits far more often than anyone fakes one (fewer false alarms). Diacritics
    are kept: ``ş`` is not ``s``. For collision checks only, never for scoring.
    """
    text = normalize("NFKC", name)
    if not text.isprintable():
        text = "".join(_visible_or_space(ch) for ch in text)
    text = text.translate(_SKELETON_TABLE)
    text = text.replace("İ", "i").replace("I", "i").replace("ı", "i").casefold()
    text = text.replace("l", "i").replace("rn", "m")
    return _SEPARATORS.sub("-", text).strip("-")


def _visible_or_space(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in ("Zs", "Zl", "Zp") or ch in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85":
        return " "
    if category in ("Cc", "Cf"):
        return ""
    return ch


_PLAIN_HTTPS = re.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~/%+=-]*)?$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
MAX_LINK = 300


def plain_https(url: object) -> bool:
    """An https address that is safe to write into a link as it is: a host, an optional port and
    path of plain characters (no spaces, quotes, brackets, query, fragment or user info)."""
    return isinstance(url, str) and len(url) <= MAX_LINK and bool(_PLAIN_HTTPS.match(url))


def repo_id(text: object) -> bool:
    """A Hugging Face ``owner/name`` (letters, digits, ``._-``; no ``..``)."""
    return isinstance(text, str) and bool(_REPO_ID.match(text)) and ".." not in text
