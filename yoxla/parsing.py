"""Strict parsing of model answers.

Only the requested format counts. An answer that is not in the answer space is a result
(invalid, scored as wrong), never a reason to ask again. Beside the strict verdict every
invalid output gets a *near-miss kind* so that diagnostics can show, for instance, a model
that wrote ``YOKDUR`` thirty times. Near-miss kinds never change a score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from yoxla.suite import Task
from yoxla.text import az_key, flatten, fold_letters, tokens, turkish_spelling

# Reasons an output is invalid.
EMPTY = "empty_output"
NOT_IN_SPACE = "not_in_answer_space"
NOT_A_NUMBER = "not_a_number"
OUT_OF_RANGE = "out_of_range"

# Near-miss kinds (diagnostics only).
NEAR_MISS_KINDS = (
    "empty",
    "trailing_punctuation",
    "option_with_text",
    "letter_folded",
    "turkish_spelling",
    "label_in_extra_words",
    "other",
)

_WRAPPERS = (("```", "```"), ("**", "**"), ("`", "`"), ('"', '"'), ("'", "'"), ("«", "»"), ("“", "”"))
_TRAILING = ".!?,;:…。"
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
_OPTION_WITH_TEXT = re.compile(r"^(\d+)\s*[.):\-–—]\s*\S")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Parsed:
    valid: bool
    value: Any = None  # canonical label, a float, or the quoted text
    abstained: bool = False
    reason: str | None = None
    near_miss: str | None = None
    text: str = ""  # the answer after removing wrappers


def answer_text(raw: str | None) -> str:
    """The part of a raw output that is scored: reasoning in <think> tags is removed.

    An unterminated ``<think>`` means the model never reached its answer: nothing is scored.
    """
    if not raw:
        return ""
    text = _THINK.sub("", raw)
    low = text.lower()
    if "<think>" in low:
        text = text[: low.index("<think>")]
    return text


def strip_wrappers(text: str) -> str:
    """Remove surrounding white space and symmetric wrappers, repeatedly."""
    prev = None
    while prev != text:
        prev = text
        text = text.strip()
        for left, right in _WRAPPERS:
            if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : len(text) - len(right)]
                break
    return text


def parse(task: Task, raw: str | None, row: dict[str, Any] | None = None) -> Parsed:
    """Parse one raw output for one row of a task (``row`` matters for numbered options)."""
    text = strip_wrappers(answer_text(raw))
    mode = task.answer.mode
    if mode == "choice":
        return _parse_choice(text, task.answer.values_for(row))
    if mode == "numeric":
        assert task.answer.range is not None
        return _parse_number(text, *task.answer.range)
    return _parse_text(text, task.answer.abstain.value if task.answer.abstain else None)


def _invalid(text: str, reason: str, near_miss: str) -> Parsed:
    return Parsed(valid=False, reason=reason, near_miss=near_miss, text=text)


def _parse_choice(text: str, values: tuple[str, ...]) -> Parsed:
    if not text:
        return _invalid(text, EMPTY, "empty")
    keys = {az_key(v): v for v in values}
    hit = keys.get(az_key(text))
    if hit is None:
        # English (ASCII) labels also follow English case rules: ENTAILMENT is entailment.
        # Azerbaijani labels never do, so HEÇ BIRI stays invalid.
        hit = {v.lower(): v for v in values if v.isascii()}.get(flatten(text).lower())
    if hit is not None:
        return Parsed(valid=True, value=hit, text=text)
    return _invalid(text, NOT_IN_SPACE, near_miss_kind(text, values))


def near_miss_kind(text: str, values: tuple[str, ...]) -> str:
    """Classify an invalid choice output. The first matching kind wins."""
    if not text.strip():
        return "empty"
    keys = {az_key(v) for v in values}
    stripped = strip_wrappers(text.rstrip(_TRAILING + " "))
    if stripped != text and az_key(stripped) in keys:
        return "trailing_punctuation"
    m = _OPTION_WITH_TEXT.match(text)
    if m and m.group(1) in values:
        return "option_with_text"
    folded = fold_letters(stripped)
    if any(fold_letters(v) == folded for v in values):
        return "letter_folded"
    turkish = turkish_spelling(stripped)
    if any(turkish_spelling(v) == turkish for v in values):
        return "turkish_spelling"
    words = " " + " ".join(tokens(text)) + " "
    if any(" " + " ".join(tokens(v)) + " " in words for v in values if tokens(v)):
        return "label_in_extra_words"
    return "other"


def _parse_number(text: str, lo: float, hi: float) -> Parsed:
    if not text:
        return _invalid(text, EMPTY, "empty")
    if not _NUMBER.fullmatch(text):
        if _NUMBER.fullmatch(text.rstrip(_TRAILING + " ")):
            kind = "trailing_punctuation"
        elif _NUMBER.search(text):
            kind = "label_in_extra_words"
        else:
            kind = "other"
        return _invalid(text, NOT_A_NUMBER, kind)
    value = float(text.replace(",", "."))
    if not lo <= value <= hi:
        return _invalid(text, OUT_OF_RANGE, "other")
    return Parsed(valid=True, value=value, text=text)


def _parse_text(text: str, abstain: str | None) -> Parsed:
    if not text:
        return _invalid(text, EMPTY, "empty")
    if abstain is not None:
        if az_key(text) == az_key(abstain):
            return Parsed(valid=True, value=abstain, abstained=True, text=text)
        # "Cavab yoxdur." is neither the abstain value nor a quote: an invalid near miss.
        kind = near_miss_kind(text, (abstain,))
        if kind in ("trailing_punctuation", "letter_folded", "turkish_spelling"):
            return _invalid(text, NOT_IN_SPACE, kind)
    return Parsed(valid=True, value=text, text=text)
