"""Placeholder until the safetext branch lands (one_line, skeleton, name_problems)."""

from __future__ import annotations

import unicodedata


def one_line(text: str, limit: int = 300) -> str:
    n = len(text)
    cut = text[:limit]
    out = "".join(
        c if unicodedata.category(c)[0] != "C" and c not in "\u2028\u2029" else f"\\u{ord(c):04x}"
        for c in cut
    )
    if n > limit:
        out += f"… ({n} characters)"
    return ("\u2024" + out) if out.startswith("::") else out


def skeleton(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()
