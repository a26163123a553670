"""Output extraction: a model's raw text -> ``extracted_output`` (and a validity verdict).

Every extractor first drops reasoning (``<think>…</think>``, :func:`yoxla.parsing.answer_text`).

* ``none``: trims white space and symmetric wrappers (```` ``` ````, ``**``, quotes, « »).
* ``take_first``: the first ``lines`` non-empty lines (after the same trimming).
* ``regex`` / ``regex_last``: the first / last match's ``group``; untrusted patterns run on
  the ``regex`` module with a time limit, on at most :data:`MAX_REGEX_INPUT` characters
  (the start for ``regex``, the end for ``regex_last``) and at most :data:`MAX_MATCHES`
  matches, so a catastrophic pattern costs a fraction of a second, never the run.
* ``label_set``: the label that occurs first in the text as a whole word (ties: the longer
  label); case-insensitive matching follows Azerbaijani rules (``İ``↔``i``, ``I``↔``ı``) for
  Azerbaijani labels and English rules for ASCII labels.
* ``number``: the first (or last) number; ``3,5`` and ``3.5`` are both 3.5.
* ``strict``: :func:`yoxla.parsing.parse` over the task's closed answer space (choices, a
  numeric range, free text, or text with an abstention phrase), with its invalid reasons and
  near-miss kinds. Anything outside the space is invalid. A row-dependent ``answer_space``
  gives each item its own choices (:meth:`StrictExtractor.extract_in`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from yoxla.parsing import answer_text, parse, strip_wrappers
from yoxla.suite import AnswerSpace, Label, Task
from yoxla.text import az_lower, nfc

if TYPE_CHECKING:
    from yoxla.suites.spec import TaskSpec

MAX_REGEX_INPUT = 100_000  # characters a manifest regex (or label search) may look at
MAX_MATCHES = 10_000  # matches regex_last iterates at most
REGEX_TIMEOUT_S = 0.25  # per extraction
MAX_PATTERN = 1_000

# Reasons an extraction gives no valid value (strict adds yoxla.parsing's own).
EMPTY = "empty_output"
NO_MATCH = "no_match"
ERROR = "extraction_error"

_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL", "x": "VERBOSE", "u": ""}
_NUMBER = re.compile(r"(?<![\w.,])[-+−]?(?:\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+)(?:[.,]\d+)?(?![\w])")


@dataclass(frozen=True)
class Extracted:
    """What extraction made of one output."""

    value: str | None  # extracted_output given to graders; None when nothing valid was found
    valid: bool
    reason: str | None = None  # why not valid
    near_miss: str | None = None  # strict only (diagnostics)
    abstained: bool = False  # strict text_or_abstain only
    number: float | None = None  # the numeric value (number, strict numeric)
    error: str | None = None  # the extraction itself failed (a regex that hit its time limit)


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


def number_text(value: float) -> str:
    """Canonical text of a number: ``3`` for 3.0, ``3.5`` for 3.5."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def parse_number(text: str) -> float | None:
    """A number written as ``3``, ``-2``, ``3,5``, ``3.5``, ``12 500``; None when it is not one."""
    t = text.strip().replace("−", "-")
    t = re.sub(r"(?<=\d)[ \u00a0\u202f](?=\d{3}\b)", "", t)
    if not re.fullmatch(r"[-+]?\d+(?:[.,]\d+)?", t):
        return None
    return float(t.replace(",", "."))


class Extractor:
    """Base: ``extract(raw)`` for one stored output (None when the request failed)."""

    closed = False  # is the answer space closed (labels), so that answer shares mean something?

    def extract(self, raw: str | None) -> Extracted:
        raise NotImplementedError


def _missing(text: str, reason: str = NO_MATCH) -> Extracted:
    return Extracted(None, False, EMPTY if not text.strip() else reason)


class NoneExtractor(Extractor):
    def extract(self, raw: str | None) -> Extracted:
        text = strip_wrappers(answer_text(raw))
        return Extracted(text, True) if text else _missing(text)


class TakeFirstExtractor(Extractor):
    def __init__(self, lines: int) -> None:
        self.lines = lines

    def extract(self, raw: str | None) -> Extracted:
        text = strip_wrappers(answer_text(raw))
        found = [line.strip() for line in text.splitlines() if line.strip()][: self.lines]
        return Extracted("\n".join(found), True) if found else _missing(text)


class RegexExtractor(Extractor):
    def __init__(self, pattern: str, flags: str, group: int | str | None, last: bool) -> None:
        self.compiled = compile_pattern(pattern, flags)
        self.group: int | str = group if group is not None else (1 if self.compiled.groups else 0)
        self.last = last

    def extract(self, raw: str | None) -> Extracted:
        text = answer_text(raw)
        if not text.strip():
            return _missing(text)
        hay = text[-MAX_REGEX_INPUT:] if self.last else text[:MAX_REGEX_INPUT]
        start = time.monotonic()
        try:
            if self.last:
                match = None
                for n, m in enumerate(self.compiled.finditer(hay, timeout=REGEX_TIMEOUT_S), start=1):
                    match = m
                    if n >= MAX_MATCHES or time.monotonic() - start > REGEX_TIMEOUT_S:
                        break
            else:
                match = self.compiled.search(hay, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            return Extracted(
                None, False, ERROR, error=f"the regex hit its time limit ({REGEX_TIMEOUT_S:g} s)"
            )
        value = match.group(self.group) if match is not None else None
        if value is None or not value.strip():
            return _missing(text)
        return Extracted(value.strip(), True)


def _en_lower(text: str) -> str:
    """Lower case with English rules (and İ -> i), one character in, one out."""
    text = text.replace("İ", "i")
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


class LabelSetExtractor(Extractor):
    closed = True

    def __init__(self, labels: list[str], case_sensitive: bool) -> None:
        self.labels = [nfc(label) for label in labels]
        self.case_sensitive = case_sensitive

    def _needle(self, label: str) -> tuple[str, bool]:
        if self.case_sensitive:
            return label, False
        return (_en_lower(label), True) if label.isascii() else (az_lower(label), False)

    def extract(self, raw: str | None) -> Extracted:
        text = nfc(answer_text(raw))[:MAX_REGEX_INPUT]
        if not text.strip():
            return _missing(text)
        az_hay = text if self.case_sensitive else az_lower(text)
        en_hay = text if self.case_sensitive else _en_lower(text)
        best: tuple[int, int, int] | None = None
        for order, label in enumerate(self.labels):
            needle, english = self._needle(label)
            hay = en_hay if english else az_hay
            i = hay.find(needle)
            while i >= 0:
                end = i + len(needle)
                left_ok = i == 0 or not (_word_char(hay[i - 1]) and _word_char(needle[0]))
                right_ok = end == len(hay) or not (_word_char(hay[end]) and _word_char(needle[-1]))
                if left_ok and right_ok:
                    key = (i, -len(needle), order)
                    if best is None or key < best:
                        best = key
                    break
                i = hay.find(needle, i + 1)
        if best is None:
            return _missing(text)
        return Extracted(self.labels[best[2]], True)


class NumberExtractor(Extractor):
    def __init__(self, position: str) -> None:
        self.last = position == "last"

    def extract(self, raw: str | None) -> Extracted:
        text = answer_text(raw)
        hay = text[-MAX_REGEX_INPUT:] if self.last else text[:MAX_REGEX_INPUT]
        found = None
        for m in _NUMBER.finditer(hay):
            found = m.group(0)
            if not self.last:
                break
        value = parse_number(found) if found is not None else None
        if value is None:
            return _missing(text)
        return Extracted(number_text(value), True, number=value)


@dataclass(frozen=True)
class _Holder:
    """What :func:`yoxla.parsing.parse` reads of a task: its answer space."""

    answer: AnswerSpace


class StrictExtractor(Extractor):
    def __init__(
        self, mode: str, choices: tuple[str, ...], rng: list[float] | None, abstain: str | None
    ) -> None:
        self.closed = mode == "choice"
        self.space = AnswerSpace(
            mode=mode,
            labels=tuple(Label(c, "") for c in choices) if mode == "choice" else (),
            abstain=Label(abstain, "") if abstain is not None else None,
            range=(float(rng[0]), float(rng[1])) if rng is not None else None,
        )
        self._task = cast(Task, _Holder(self.space))
        self._holders: dict[tuple[str, ...], Task] = {}

    def extract(self, raw: str | None) -> Extracted:
        return self._extracted(parse(self._task, raw))

    def extract_in(self, raw: str | None, choices: tuple[str, ...]) -> Extracted:
        """Extract against one item's own choices (a row-dependent answer space)."""
        holder = self._holders.get(choices)
        if holder is None:
            space = AnswerSpace(mode="choice", labels=tuple(Label(c, "") for c in choices))
            holder = self._holders.setdefault(choices, cast(Task, _Holder(space)))
        return self._extracted(parse(holder, raw))

    @staticmethod
    def _extracted(p: Any) -> Extracted:
        if not p.valid:
            return Extracted(None, False, p.reason, p.near_miss)
        if isinstance(p.value, float):
            return Extracted(number_text(p.value), True, number=p.value)
        return Extracted(str(p.value), True, abstained=p.abstained)


def build_extractor(task: TaskSpec) -> Extractor:
    """The extractor a task's ``output_extraction`` describes."""
    from yoxla.suites import spec

    ex = task.output_extraction
    if isinstance(ex, spec.TakeFirst):
        return TakeFirstExtractor(ex.lines)
    if isinstance(ex, spec.RegexExtraction):
        return RegexExtractor(ex.pattern, ex.flags, ex.group, ex.type == "regex_last")
    if isinstance(ex, spec.LabelSet):
        return LabelSetExtractor(ex.labels, ex.case_sensitive)
    if isinstance(ex, spec.NumberExtraction):
        return NumberExtractor(ex.position)
    if isinstance(ex, spec.StrictExtraction):
        mode = task.strict_mode or "text"
        return StrictExtractor(mode, task.fixed_choices, ex.range, ex.abstain)
    return NoneExtractor()
