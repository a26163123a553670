"""Row checks that a task's built-in graders declare: a malformed row is refused before scoring.

Each built-in grader name declares the checks its scoring relies on (:data:`GRADER_CHECKS`; the
rules are tabled in docs/suites.md, *Built-in graders*, "Row checks"): gold in the answer space,
compared as the grader compares an extracted answer (a look-alike letter, Cyrillic ``А`` for
Latin ``A``, is another letter); span locatable; number in range. :data:`STRICTER` is the form
``yoxla validate-benchmark`` holds the frozen rows to (a gold span occurs exactly once).
:func:`row_problems` gives one :class:`RowProblem` per bad item (its first broken rule), every
other item still checked; the one row validator (:mod:`yoxla.data.validate`) calls the same checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from yoxla.contract.errors import DatasetError
from yoxla.contract.spec import TaskSpec
from yoxla.contract.spec_answers import LabelSet, StrictExtraction
from yoxla.contract.spec_grading import BuiltinGrader
from yoxla.extract.numbers import parse_number
from yoxla.extract.text import az_lower, flatten, nfc
from yoxla.prompt.templates import lookup
from yoxla.safe.text import one_line
from yoxla.score.spans import occurrences, trim_quote

MAX_SHOWN = 20  # bad rows listed in one report; the count says how many more
SHOWN_VALUE = 60  # characters of a row's value a message quotes


@dataclass(frozen=True)
class RowProblem:
    """One item that breaks a rule of one of its task's graders."""

    task: str
    item: str
    rule: str

    def __str__(self) -> str:
        return f"task {self.task}: item {one_line(self.item, 80)}: {self.rule}"


class RowCheckError(DatasetError):
    """Rows of a suite break their graders' rules: ``problems`` lists one line per bad item."""


def _shown(value: Any) -> str:
    return one_line(repr(value), SHOWN_VALUE)


# The checks --------------------------------------------------------------------------------------
# Each takes the task, the grader that declares it, the item's row, its target and its answer
# space, and returns what is wrong (one line) or None.
Check = Callable[[TaskSpec, BuiltinGrader, Mapping[str, Any], str, Sequence[str]], str | None]


def answer_space(spec: TaskSpec, choices: Sequence[str] | None) -> tuple[str, ...]:
    """An item's closed answer space (``choices``: its own, None: the task's); empty when open."""
    if choices is not None:
        return tuple(choices)
    if spec.fixed_choices:
        return spec.fixed_choices
    ex = spec.output_extraction
    return tuple(ex.labels) if isinstance(ex, LabelSet) else ()


@dataclass(frozen=True)
class _Labels:
    """A closed space's labels in the forms graders compare them in (built once per space)."""

    exact: frozenset[str]  # as extraction gives them: what accuracy and macro_f1 compare
    trimmed: frozenset[str]  # trimmed, NFC: what a case-sensitive exact_match compares
    folded: frozenset[str]  # trimmed, NFC, Azerbaijani lower case: a case-blind exact_match


@lru_cache(maxsize=256)
def _labels(space: tuple[str, ...], normalised: bool) -> _Labels:
    """``normalised``: extraction gives a label in NFC (``label_set``); else as declared."""
    exact = frozenset(nfc(s) for s in space) if normalised else frozenset(space)
    trimmed = frozenset(nfc(s).strip() for s in space)
    return _Labels(exact, trimmed, frozenset(az_lower(s) for s in trimmed))


def _scoreable(grader: BuiltinGrader, target: str, labels: _Labels) -> bool:
    """Can an answer from the space score on ``target``, as ``grader`` compares them? Extraction
    gives a ``label_set`` label in NFC, a strict choice as declared; ``exact_match`` trims and
    NFCs both sides (case-blind only with ``case_sensitive: false``); ``accuracy`` and
    ``macro_f1`` compare exactly."""
    if grader.name != "exact_match":
        return target in labels.exact
    gold = nfc(target.strip())
    return gold in labels.trimmed or (grader.case_sensitive is False and az_lower(gold) in labels.folded)


def gold_in_space(
    spec: TaskSpec, grader: BuiltinGrader, row: Mapping[str, Any], target: str, space: Sequence[str]
) -> str | None:
    if not space:
        return None  # an open answer: nothing to be inside
    labels = _labels(tuple(space), isinstance(spec.output_extraction, LabelSet))
    if _scoreable(grader, target, labels):
        return None
    listed = ", ".join(space[:8]) + ("…" if len(space) > 8 else "")
    near = az_lower(nfc(target.strip())) in labels.folded
    why = (
        " (another casing, spacing or Unicode form of a label, which this grader tells apart)" if near else ""
    )
    return f"gold {_shown(target)} is not in the answer space ({one_line(listed, 200)}){why} [{grader.name}]"


@lru_cache(maxsize=64)
def _flat(passage: str) -> tuple[str, str]:
    """The passage as spans are located in it (NFC, collapsed white space) and lower-cased."""
    flat = flatten(passage)
    return flat, az_lower(flat)


def _in_passage(passage: str, target: str) -> bool:
    """Does scoring find the gold in the passage (:func:`yoxla.score.spans.locate_gold` is not None)?
    One search each way, not every occurrence: a gold that occurs 10⁵ times costs one find."""
    gold = trim_quote(target)
    if not gold:
        return False
    flat, lower = _flat(passage)
    return gold in flat or az_lower(gold) in lower


def _span_problem(grader: BuiltinGrader, row: Mapping[str, Any], target: str, once: bool) -> str | None:
    """What keeps ``target`` from being located in the row's passage (``once``: exactly once, as
    written, not just found as scoring finds it), or None."""
    field = grader.passage_field or ""
    passage = lookup(row, field.split("."))
    if not isinstance(passage, str):
        return f"the row has no text in {field!r} (the passage the {grader.name} grader reads)"
    if target == "":
        if grader.name == "abstention":
            return None  # unanswerable: the model should abstain, nothing to locate
        return f"the gold span is empty [{grader.name}]"
    start = None
    if grader.answer_start_field:
        value = lookup(row, grader.answer_start_field.split("."))
        if value is not None and not (
            isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= len(passage)
        ):
            return (
                f"{grader.answer_start_field} {_shown(value)} is not a character offset in {field!r} "
                f"(an integer from 0 to {len(passage)}) [{grader.name}]"
            )
        start = value
    if once:
        hits = len(occurrences(flatten(passage), flatten(target)))
        if hits != 1:
            where = "not found" if not hits else f"found {hits} times"
            return (
                f"gold span {_shown(target)} must occur exactly once in {field!r} "
                f"(NFC, collapsed white space); {where} [{grader.name}]"
            )
    elif not _in_passage(passage, target):
        return f"gold span {_shown(target)} is not found in {field!r} [{grader.name}]"
    if start is not None and passage[start : start + len(target)] != target:
        return (
            f"{grader.answer_start_field} {start} does not point at the gold span {_shown(target)} "
            f"in {field!r} [{grader.name}]"
        )
    return None


def span_locatable(
    spec: TaskSpec, grader: BuiltinGrader, row: Mapping[str, Any], target: str, space: Sequence[str]
) -> str | None:
    return _span_problem(grader, row, target, once=False)


def span_located_once(
    spec: TaskSpec, grader: BuiltinGrader, row: Mapping[str, Any], target: str, space: Sequence[str]
) -> str | None:
    """The stricter span rule: the gold occurs exactly once in the passage, as written (NFC,
    collapsed white space), so its place is not ambiguous (``yoxla validate-benchmark``)."""
    return _span_problem(grader, row, target, once=True)


def _strict_range(spec: TaskSpec) -> tuple[float, float] | None:
    ex = spec.output_extraction
    if isinstance(ex, StrictExtraction) and ex.range is not None:
        return float(ex.range[0]), float(ex.range[1])
    return None


def number_in_range(
    spec: TaskSpec, grader: BuiltinGrader, row: Mapping[str, Any], target: str, space: Sequence[str]
) -> str | None:
    value = parse_number(target) if len(target) <= 200 else None
    if value is None:
        return f"gold {_shown(target)} is not a number [{grader.name}]"
    bounds = _strict_range(spec)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        return f"gold {value:.12g} is outside the range {bounds[0]:.12g}–{bounds[1]:.12g} [{grader.name}]"
    return None


# The hooks: which checks each built-in grader declares (its scoring relies on them).
GRADER_CHECKS: dict[str, tuple[Check, ...]] = {
    "exact_match": (gold_in_space,),
    "accuracy": (gold_in_space,),
    "macro_f1": (gold_in_space,),
    "numeric_tolerance": (number_in_range,),
    "spearman": (number_in_range,),
    "span": (span_locatable,),
    "abstention": (span_locatable,),
    "token_f1": (),
}


# The stricter form of a check, for a caller that asks for it (``strict``): a frozen benchmark's
# rows are held to more than scoring needs.
STRICTER: dict[Check, Check] = {span_locatable: span_located_once}


def declared_checks(graders: Iterable[Any], strict: bool = False) -> list[tuple[BuiltinGrader, Check]]:
    """(grader, check) for every check the task's built-in graders declare, in grader order
    (``strict``: each in its :data:`STRICTER` form where it has one)."""
    out: list[tuple[BuiltinGrader, Check]] = []
    for g in graders:
        if isinstance(g, BuiltinGrader):
            checks = GRADER_CHECKS.get(g.name, ())
            out.extend((g, STRICTER.get(c, c) if strict else c) for c in checks)
    return out


def row_problems(prepared: Any) -> list[RowProblem]:
    """Every item of a prepared task that breaks a check of its graders (its first broken rule)."""
    task = prepared.task
    checks = declared_checks(task.graders)
    if not checks:
        return []
    spec = task.spec
    out: list[RowProblem] = []
    for item in prepared.items:
        found = first_problem(checks, spec, item.row, item.target, answer_space(spec, item.choices))
        if found is not None:
            out.append(RowProblem(task.id, item.id, found[1]))
    return out


def first_problem(
    checks: Sequence[tuple[BuiltinGrader, Check]],
    spec: TaskSpec,
    row: Mapping[str, Any],
    target: str,
    space: Sequence[str],
) -> tuple[BuiltinGrader, str] | None:
    """The first of ``checks`` one row breaks: (the grader that declares it, what is wrong)."""
    for grader, check in checks:
        try:
            problem = check(spec, grader, row, target, space)
        except Exception as exc:  # a hostile row never stops the other rows
            problem = f"the row cannot be checked ({type(exc).__name__}) [{grader.name}]"
        if problem is not None:
            return grader, problem
    return None


def report(problems: Sequence[RowProblem]) -> tuple[list[str], str]:
    """(the lines to list, one per bad item up to :data:`MAX_SHOWN`; the one-line summary)."""
    lines = [str(p) for p in problems[:MAX_SHOWN]]
    if len(problems) > MAX_SHOWN:
        lines.append(f"… and {len(problems) - MAX_SHOWN} more bad row(s)")
    if len(problems) == 1:
        return [], lines[0]
    tasks = sorted({p.task for p in problems})
    summary = f"{len(problems)} row(s) of task(s) {', '.join(tasks)} break their graders' rules"
    return lines, summary


def refuse(problems: Sequence[RowProblem]) -> None:
    """Raise :class:`RowCheckError` when there are problems (one line; every line in ``problems``)."""
    if problems:
        lines, summary = report(problems)
        raise RowCheckError(summary, lines or [summary])
