"""What counts as a number in a model's answer (the ``number`` extraction), one rule in one place.

The rule (what is read, what is skipped, and the refused kinds ``ambiguous_separator``,
``power_or_fraction``, ``formula``, ``too_large``) is docs/suites.md, "What counts as a
number"; its cases are tests/suites/cases/number_cases.yaml. The text is scanned once
(linear time).
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

FORMULA = "formula"
AMBIGUOUS = "ambiguous_separator"
POWER = "power_or_fraction"
TOO_LARGE = "too_large"

_SP = "[ \u00a0\u202f]"
_NUMBER = re.compile(
    rf"""
    (?P<sign>[-+−])?
    (?P<body>
        \d{{1,3}}(?:{_SP}\d{{3}}){{1,6}}(?!\d)(?:[.,]\d+)?   # 12 500, 12 500,5
      | \d{{1,3}}(?:,\d{{3}}){{2,6}}(?![\d,])(?:\.\d+)?   # 1,000,000(.5)
      | \d{{1,3}}(?:\.\d{{3}}){{2,6}}(?![\d.])(?:,\d+)?   # 1.000.000(,5)
      | \d{{1,3}}(?:,\d{{3}}){{1,6}}\.\d+                    # 1,234.5
      | \d{{1,3}}(?:\.\d{{3}}){{1,6}},\d+                    # 1.234,5
      | \d+(?:[.,]\d+)?
      | \.\d+
    )
    (?P<exp>[eE][-+−]?\d+)?
    """,
    re.VERBOSE | re.ASCII,
)  # group repetition is bounded (to 10**21) so that a long run of groups costs linear time
_OPERATORS = frozenset("=+-−*/^×÷<>:")
_NAME = re.compile(r"[^\W\d_]{1,40}")
_CHUNK = re.compile(r"\S+")


@dataclass(frozen=True)
class Found:
    """The number a text gives, or why the number it shows is refused (``refused`` is a kind)."""

    value: float | None
    text: str | None = None  # the number as written
    refused: str | None = None


def _operand(c: str) -> bool:
    return c.isalnum() or c in ")]"


def _infix(chunk: str, k: int) -> bool:
    """Is ``chunk[k]`` (an operator character) used between two operands?"""
    c = chunk[k]
    if k == 0 or k == len(chunk) - 1:
        return False
    left, right = chunk[k - 1], chunk[k + 1]
    if c in "-−:":  # 5-ci, COVID-19, e-poçt and "Cavab:" are words, 2020-2021 and 12:30 are not
        return (left.isdigit() or left in ")]") and (right.isdigit() or right in "(.")
    if c == "/" and right.isalpha():  # km/saat
        return False
    return _operand(left) and (right.isalnum() or right in "(.-+−")


def _value(sign: str | None, body: str, exp: str | None) -> float:
    """The value of a matched number (grouping dropped, the decimal mark made a point)."""
    body = re.sub(_SP, "", body)
    if "," in body and "." in body:
        group, mark = (",", ".") if body.rfind(".") > body.rfind(",") else (".", ",")
        body = body.replace(group, "").replace(mark, ".")
    elif body.count(",") > 1 or body.count(".") > 1:
        body = body.replace(",", "").replace(".", "")
    else:
        body = body.replace(",", ".")
    text = ("-" if sign in ("-", "−") else "") + body + (exp or "").replace("−", "-")
    return float(text)


def _ambiguous(body: str) -> bool:
    """One comma or point, then exactly three digits, after a 1-3 digit integer part (not 0)."""
    m = re.fullmatch(r"([1-9]\d{0,2})[.,](\d{3})", body)
    return m is not None


def _glued_power(c: str) -> bool:
    return unicodedata.category(c) == "No" or (c.isdigit() and not c.isascii())


class _Chunks:
    """The white-space separated chunks of a text, each judged once (formula or not)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._spans: list[tuple[int, int]] | None = None
        self._formula: dict[int, int | None] = {}

    @property
    def spans(self) -> list[tuple[int, int]]:
        if self._spans is None:  # made on first use: most answers' first number needs none
            self._spans = [(m.start(), m.end()) for m in _CHUNK.finditer(self.text)]
            self.starts = [s for s, _ in self._spans]
        return self._spans

    def index(self, pos: int) -> int:
        self.spans  # noqa: B018 (makes the starts)
        return bisect_right(self.starts, pos) - 1

    def word(self, k: int) -> str:
        s, e = self.spans[k]
        return self.text[s:e]

    def same_line(self, a: int, b: int) -> bool:
        return "\n" not in self.text[self.spans[a][1] : self.spans[b][0]]

    def first_infix(self, k: int) -> int | None:
        """Offset of the first infix operator of chunk ``k`` (None when it has none)."""
        if k not in self._formula:
            w = self.word(k)
            self._formula[k] = next((i for i, c in enumerate(w) if c in _OPERATORS and _infix(w, i)), None)
        return self._formula[k]

    def lone_operator(self, k: int) -> bool:
        """Is chunk ``k`` an operator standing between two operands on its line?"""
        if not (0 < k < len(self.spans) - 1):
            return False
        w = self.word(k)
        if len(w) != 1 or w not in _OPERATORS or w == ":":
            return False
        before, after = self.word(k - 1), self.word(k + 1)
        return (
            _operand(before[-1])
            and (after[0].isalnum() or after[0] in "(.-+−")
            and self.same_line(k - 1, k)
            and self.same_line(k, k + 1)
        )

    def formula(self, start: int, end: int) -> bool:
        """Is the number at ``text[start:end]`` part of an expression (assignments excepted)?"""
        first, last = self.index(start), self.index(end - 1)
        w = self.word(first)
        offset = start - self.spans[first][0]
        op = self.first_infix(first)
        if op is not None or (last != first and self.first_infix(last) is not None):
            # a glued assignment: NAME=number, with no operator after the "="
            name = w[:op] if op is not None else ""
            rest = w[op + 1 :] if op is not None else ""
            ok = (
                op is not None
                and last == first
                and w[op] == "="
                and _NAME.fullmatch(name) is not None
                and offset == op + 1
                and not any(c in _OPERATORS and _infix(rest, i) for i, c in enumerate(rest))
                and not self.lone_operator(first - 1)
            )
            if not ok:
                return True
        if self.lone_operator(last + 1):
            return True
        if offset == 0 and self.lone_operator(first - 1):
            # a spaced assignment: NAME = number, the name not itself after an operator
            assignment = (
                self.word(first - 1) == "="
                and _NAME.fullmatch(self.word(first - 2)) is not None
                and not self.lone_operator(first - 3)
            )
            return not assignment
        return False


def find_number(text: str, *, last: bool = False) -> Found:
    """The first (or last) number of ``text`` by the module's rule, or the refusal that stops it."""
    chunks = _Chunks(text)
    matches = _NUMBER.finditer(text) if not last else reversed(list(_NUMBER.finditer(text)))
    for m in matches:
        found = _judge(m, text, chunks)
        if found is not None:
            return found
    return Found(None)


def _judge(m: re.Match[str], text: str, chunks: _Chunks) -> Found | None:
    """What one written number is: a value, a refusal, or None when it is no number (Q3)."""
    start, end = m.start(), m.end()
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if before and _glued_power(before):
        return Found(None, m.group(0), POWER)
    if before and (before.isalnum() or before in "_."):
        return None  # inside a word or code: Q3, x2, v1.5
    if before in "-−" and start >= 2 and text[start - 2].isalpha():
        return None  # COVID-19
    if after and _glued_power(after):
        return Found(None, m.group(0), POWER)
    if after in (".", ",") and end + 1 < len(text) and text[end + 1].isdigit():
        return Found(None, m.group(0), AMBIGUOUS)
    if m.group("exp") is None and _ambiguous(m.group("body")):
        return Found(None, m.group(0), AMBIGUOUS)
    if chunks.formula(start, end):
        return Found(None, m.group(0), FORMULA)
    value = _value(m.group("sign"), m.group("body"), m.group("exp"))
    if not math.isfinite(value):
        return Found(None, m.group(0), TOO_LARGE)
    return Found(value, m.group(0))


def parse_number(text: str) -> float | None:
    """The value of a text that is one number by this rule and nothing else (a target), or None."""
    t = text.strip()
    m = _NUMBER.fullmatch(t)
    if m is None or (m.group("exp") is None and _ambiguous(m.group("body"))):
        return None
    value = _value(m.group("sign"), m.group("body"), m.group("exp"))
    return value if math.isfinite(value) else None
