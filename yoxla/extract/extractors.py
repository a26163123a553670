"""Output extraction: a model's raw text -> ``extracted_output`` (and a validity verdict).

Every extractor first drops reasoning (``<think>…</think>``, :func:`yoxla.extract.parsing.answer_text`);
each type's rule is tabled in docs/suites.md ("Output extraction"). Untrusted regexes (and the
label search) run on the ``regex`` module with a time limit, on at most :data:`MAX_REGEX_INPUT`
characters and :data:`MAX_MATCHES` matches: a cap that is reached is an extraction error with
its reason, never a value.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yoxla.contract import spec_answers
from yoxla.contract.patterns import compile_pattern
from yoxla.extract.numbers import find_number
from yoxla.extract.parsing import answer_text, parse, strip_wrappers
from yoxla.extract.text import az_lower, nfc

if TYPE_CHECKING:
    from yoxla.contract.spec import TaskSpec

MAX_REGEX_INPUT = 100_000  # characters a manifest regex (or label search) may look at
MAX_MATCHES = 10_000  # matches regex_last iterates at most
REGEX_TIMEOUT_S = 0.25  # per extraction

# Reasons an extraction gives no valid value (strict adds yoxla.extract.parsing's own).
EMPTY = "empty_output"
NO_MATCH = "no_match"
ERROR = "extraction_error"
NOT_A_NUMBER = "not_a_number"  # number: the number shown is refused (near_miss says why)


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


def number_text(value: float) -> str:
    """Canonical text of a number: ``3`` for 3.0, ``3.5`` for 3.5."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


class Extractor:
    """Base: ``extract(raw)`` for one stored output (None when the request failed)."""

    closed = False  # is the answer space closed (labels), so that answer shares mean something?

    def extract(self, raw: str | None) -> Extracted:
        raise NotImplementedError


def _missing(text: str, reason: str = NO_MATCH) -> Extracted:
    return Extracted(None, False, EMPTY if not text.strip() else reason)


def _failed(why: str) -> Extracted:
    """The extraction itself failed (a cap was reached): an error with its reason, never a value."""
    return Extracted(None, False, ERROR, error=why)


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
                    if n > MAX_MATCHES:
                        return _failed(f"the regex matched more than {MAX_MATCHES:,} times")
                    if time.monotonic() - start > REGEX_TIMEOUT_S:
                        raise TimeoutError
                    match = m
            else:
                match = self.compiled.search(hay, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            return _failed(f"the regex hit its time limit ({REGEX_TIMEOUT_S:g} s)")
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
    """One search per case rule: an alternation of the labels (longest first, then in order),
    each with its word boundaries, on the ``regex`` module under the regex time limit."""

    closed = True

    def __init__(self, labels: list[str], case_sensitive: bool) -> None:
        import regex

        self.labels = [nfc(label) for label in labels]
        self.case_sensitive = case_sensitive
        groups: dict[bool, list[tuple[str, int]]] = {False: [], True: []}
        for order, label in enumerate(self.labels):
            needle, english = self._needle(label)
            groups[english].append((needle, order))
        self._searches = []
        self._longest = max((len(n) for ns in groups.values() for n, _ in ns), default=0)
        for english, needles in groups.items():
            if not needles:
                continue
            needles.sort(key=lambda x: (-len(x[0]), x[1]))
            alts = []
            for k, (needle, _) in enumerate(needles):
                left = r"(?<![\p{L}\p{N}_])" if _word_char(needle[0]) else ""
                right = r"(?![\p{L}\p{N}_])" if _word_char(needle[-1]) else ""
                alts.append(f"(?P<l{k}>{left}{regex.escape(needle)}{right})")
            pattern = regex.compile("|".join(alts), regex.VERSION0)
            self._searches.append((english, pattern, [order for _, order in needles]))

    def _needle(self, label: str) -> tuple[str, bool]:
        if self.case_sensitive:
            return label, False
        return (_en_lower(label), True) if label.isascii() else (az_lower(label), False)

    def extract(self, raw: str | None) -> Extracted:
        text = nfc(answer_text(raw))[:MAX_REGEX_INPUT]
        if not text.strip():
            return _missing(text)
        best: tuple[int, int, int] | None = None
        start = time.monotonic()
        for english, pattern, orders in self._searches:
            if self.case_sensitive:
                hay = text
            else:
                hay = _en_lower(text) if english else az_lower(text)
            left = max(REGEX_TIMEOUT_S - (time.monotonic() - start), 0.001)
            # a later match than the best so far cannot win: search no further than it
            end = len(hay) if best is None else min(len(hay), best[0] + self._longest)
            try:
                m = pattern.search(hay, 0, end, timeout=left)
            except TimeoutError:
                return _failed(f"the label search hit its time limit ({REGEX_TIMEOUT_S:g} s)")
            if m is not None:
                order = orders[int(m.lastgroup[1:])]
                key = (m.start(), -(m.end() - m.start()), order)
                if best is None or key < best:
                    best = key
        if best is None:
            return _missing(text)
        return Extracted(self.labels[best[2]], True)


class NumberExtractor(Extractor):
    def __init__(self, position: str) -> None:
        self.last = position == "last"

    def extract(self, raw: str | None) -> Extracted:
        text = answer_text(raw)
        hay = text[-MAX_REGEX_INPUT:] if self.last else text[:MAX_REGEX_INPUT]
        found = find_number(hay, last=self.last)
        if found.refused is not None:
            return Extracted(None, False, NOT_A_NUMBER, near_miss=found.refused)
        if found.value is None:
            return _missing(text)
        return Extracted(number_text(found.value), True, number=found.value)


class StrictExtractor(Extractor):
    """:func:`yoxla.extract.parsing.parse` by the task's strict rule (its mode resolved) over the task's
    fixed choices, or over one item's own (:meth:`extract_in`, a row-dependent answer space)."""

    def __init__(self, rule: spec_answers.StrictExtraction, mode: str, choices: tuple[str, ...]) -> None:
        self.closed = mode == "choice"
        self.rule = rule if rule.mode == mode else rule.model_copy(update={"mode": mode})
        self.choices = choices if self.closed else ()

    def extract(self, raw: str | None) -> Extracted:
        return self._extracted(parse(self.rule, raw, self.choices))

    def extract_in(self, raw: str | None, choices: tuple[str, ...]) -> Extracted:
        """Extract against one item's own choices (a row-dependent answer space)."""
        return self._extracted(parse(self.rule, raw, choices))

    @staticmethod
    def _extracted(p: Any) -> Extracted:
        if not p.valid:
            return Extracted(None, False, p.reason, p.near_miss)
        if isinstance(p.value, float):
            return Extracted(number_text(p.value), True, number=p.value)
        return Extracted(str(p.value), True, abstained=p.abstained)


def build_extractor(task: TaskSpec) -> Extractor:
    """The extractor a task's ``output_extraction`` describes."""
    ex = task.output_extraction
    if isinstance(ex, spec_answers.TakeFirst):
        return TakeFirstExtractor(ex.lines)
    if isinstance(ex, spec_answers.RegexExtraction):
        return RegexExtractor(ex.pattern, ex.flags, ex.group, ex.type == "regex_last")
    if isinstance(ex, spec_answers.LabelSet):
        return LabelSetExtractor(ex.labels, ex.case_sensitive)
    if isinstance(ex, spec_answers.NumberExtraction):
        return NumberExtractor(ex.position)
    if isinstance(ex, spec_answers.StrictExtraction):
        return StrictExtractor(ex, task.strict_mode or "text", task.fixed_choices)
    return NoneExtractor()
