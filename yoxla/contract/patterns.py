"""Manifest regexes: how long one may be, its flags, and compiling it with the ``regex`` module.

The manifest format (``yoxla.contract.spec``) checks a pattern compiles when a suite loads, and the
extractors (``yoxla.extract.extractors``) run it; both import this module, neither the other.
``regex`` is imported when a pattern is compiled, so loading a suite without one never loads it.
"""

from __future__ import annotations

from typing import Any

MAX_PATTERN = 1_000  # characters of one regex

_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL", "x": "VERBOSE", "u": ""}


def compile_pattern(pattern: str, flags: str = "") -> Any:
    """Compile a manifest regex with the ``regex`` module; ValueError says why it cannot be used."""
    import regex

    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"the regex is {len(pattern)} characters long (at most {MAX_PATTERN})")
    value = regex.VERSION0
    for letter in flags:
        if letter not in _FLAGS:
            raise ValueError(f"unknown regex flag {letter!r} (use i, m, s, x)")
        if _FLAGS[letter]:
            value |= getattr(regex, _FLAGS[letter])
    try:
        return regex.compile(pattern, value)
    except regex.error as exc:
        raise ValueError(f"the regex does not compile: {exc}") from None
