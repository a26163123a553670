"""A task's counts over its scored samples: the metrics every task has, its breakdowns, groups
and controls (docs/suites.md, "Metrics", says what each metric means).

:class:`Tally` is filled by :class:`yoxla.score.replay.TaskScorer` one sample at a time, or in
bulk (:meth:`Tally.add_all`, each count taken in one pass in C) when the samples allow; both give
the same tally. :func:`control_marks` says which rows are controls (``control_field`` or ``control_ids``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, is_, is_not, itemgetter
from typing import TYPE_CHECKING, Any

from yoxla.contract import spec as S
from yoxla.extract.extractors import ERROR, Extracted
from yoxla.prompt.templates import lookup
from yoxla.score import graders as B

if TYPE_CHECKING:
    from yoxla.prompt.prepare import Item
    from yoxla.score.replay import ScoringPlan
    from yoxla.score.samples import SampleResult


def as_extracted(r: SampleResult) -> Extracted:
    if r.source is not None:
        return r.source
    return Extracted(r.extracted, r.valid, r.reason, r.near_miss, r.abstained, r.number)


_count = itemgetter(1)
BULK = 16  # samples from which a tally is counted in bulk (below, one at a time costs less)
_OUTCOME, _VALID, _EXTRACTED, _NEAR = (attrgetter(a) for a in ("outcome", "valid", "extracted", "near_miss"))
_REASON, _GRADER_ERROR, _SOURCE = attrgetter("reason"), attrgetter("grader_error"), attrgetter("source")
_SCORES, _SCORE, _TARGET = attrgetter("scores"), attrgetter("score"), attrgetter("target")
_ROW = attrgetter("row")
_NOT_NONE, _IS_NONE = partial(is_not, None), partial(is_, None)
_NOT_CONTROL = frozenset({"", "0", "false", "no", "yox", "none", "null"})


def is_control(task: S.TaskSpec, row: Mapping[str, Any]) -> bool:
    """Is ``row`` a control of ``task`` (``control_field`` / ``control_values``, or ``control_ids``)?"""
    return control_marks(task, [row])[0]


def control_marks(task: S.TaskSpec, rows: Sequence[Mapping[str, Any]]) -> tuple[bool, ...]:
    """Which of ``rows`` are controls of ``task`` (what the task declares, read once for all rows)."""
    name = task.control_field
    if name is None:
        ids = task.control_ids
        return tuple(S.row_id(row) in ids for row in rows) if ids else (False,) * len(rows)
    values = task.control_values
    return tuple(marked(lookup(row, [name]), values) for row in rows)


def analysis_problems(task: S.TaskSpec, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the task's groups and controls name that its rows lack: a column no row has, a row id
    no row has (one line each)."""
    problems = []
    for key, name in (("group_field", task.group_field), ("control_field", task.control_field)):
        if name is not None and rows and not any(lookup(r, [name]) is not None for r in rows):
            problems.append(f"{key} {name!r} is a column of none of the task's rows")
    named = set(task.group_ids) | task.control_ids
    if named:
        unknown = sorted(named - {S.row_id(r) for r in rows})
        if unknown:
            shown = ", ".join(map(repr, unknown[:5])) + (
                f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            )
            problems.append(f"analysis row id(s) {shown} are ids of none of the task's rows")
    return problems


def marked(value: Any, values: tuple[str, ...]) -> bool:
    if value is None:
        return False
    if values:
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return text.strip() in values
    if isinstance(value, str):
        return value.strip().lower() not in _NOT_CONTROL
    return bool(value)


class Tally:
    """A task's counts, taken one scored sample at a time; controls are counted apart.

    The samples counted (:meth:`add`) are the task metrics' samples: the graded ones (no
    grader error) are kept, aligned, for the built-in graders' aggregates.
    """

    def __init__(self, plan: ScoringPlan) -> None:
        self.n = self.n_valid = self.grader_errors = self.extraction_errors = 0
        # plain dicts, counted with get (three Counters cost more to make than a small task to count)
        self.outcomes: dict[str, int] = {}
        self.near: dict[str, int] = {}
        self.answers: dict[str, int] = {}  # counted for a closed answer space only (its modal answer)
        self._closed = plan.closed
        self.targets: list[str] = []
        self.extracted: list[Extracted] = []
        self.scores: list[dict[str, float]] = []
        # per breakdown field: its name, its path, and the keys and scores of the samples that have both
        self._cells: list[tuple[str, tuple[str, ...], list[Any], list[float]]] = [
            (fld, path, [], []) for fld, path in plan.breakdowns
        ]
        self._group = (plan.group_field,) if plan.group_field is not None else None
        self._group_ids = plan.group_ids or None  # row id → group, when groups are named by id
        self._groups: dict[str, list[bool]] = {}
        self._controls = [0, 0] if plan.has_controls else None  # controls, valid ones

    def add(self, item: Item, r: SampleResult) -> None:
        self.n += 1
        outcomes = self.outcomes
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        if r.valid:
            self.n_valid += 1
            if r.extracted is not None and self._closed:
                answers = self.answers
                answers[r.extracted] = answers.get(r.extracted, 0) + 1
        if r.near_miss:
            self.near[r.near_miss] = self.near.get(r.near_miss, 0) + 1
        if r.grader_error is None:
            self.targets.append(item.target)
            self.extracted.append(r.source if r.source is not None else as_extracted(r))
            self.scores.append(r.scores)
        else:
            self.grader_errors += 1
        if r.reason == ERROR:
            self.extraction_errors += 1
        row = item.row
        plain = type(row) is dict  # a top-level field of a plain row is its get (what lookup gives)
        if r.score is not None and self._cells:
            for _, path, keys, values in self._cells:
                key = row.get(path[0]) if plain and len(path) == 1 else lookup(row, path)
                if key is not None:  # rows without the field are left out
                    keys.append(key)
                    values.append(r.score)
        if self._group is not None:
            value = row.get(self._group[0]) if plain else lookup(row, self._group)
            if value is not None and value != "":
                self._groups.setdefault(str(value), []).append(r.outcome == "correct")
        elif self._group_ids is not None and (group := self._group_ids.get(S.row_id(row) or "")) is not None:
            self._groups.setdefault(group, []).append(r.outcome == "correct")

    def add_all(self, items: Sequence[Item], results: Sequence[SampleResult]) -> None:
        """:meth:`add` of every sample in order, into a fresh tally, each count taken in one pass
        in C where the samples allow (plain rows, no groups): the same tally."""
        rows = list(map(_ROW, items))
        if self.n or self._group is not None or self._group_ids or set(map(type, rows)) - {dict}:
            for item, r in zip(items, results, strict=True):
                self.add(item, r)
            return
        self.n = len(results)
        self.outcomes = dict(Counter(map(_OUTCOME, results)))
        valid = list(map(_VALID, results))
        self.n_valid = sum(valid)
        if self._closed:  # the valid answers in order: the modal answer is the first counted most
            self.answers = dict(Counter(filter(_NOT_NONE, compress(map(_EXTRACTED, results), valid))))
        self.near = dict(Counter(filter(None, map(_NEAR, results))))
        self.extraction_errors = list(map(_REASON, results)).count(ERROR)
        errors = list(map(_GRADER_ERROR, results))
        sources = list(map(_SOURCE, results))
        if all(map(_IS_NONE, errors)) and all(map(_NOT_NONE, sources)):
            self.targets = list(map(_TARGET, items))
            self.extracted = sources
            self.scores = list(map(_SCORES, results))
        else:
            for item, r, err in zip(items, results, errors, strict=True):
                if err is None:
                    self.targets.append(item.target)
                    self.extracted.append(r.source if r.source is not None else as_extracted(r))
                    self.scores.append(r.scores)
                else:
                    self.grader_errors += 1
        if not self._cells:
            return
        scores = list(map(_SCORE, results))
        scored = all(map(_NOT_NONE, scores))
        for _, path, keys, values in self._cells:
            found = (
                list(map(dict.get, rows, repeat(path[0])))
                if len(path) == 1
                else [lookup(r, path) for r in rows]
            )
            if scored and all(map(_NOT_NONE, found)):
                keys.extend(found)
                values.extend(scores)
                continue
            for key, score in zip(found, scores, strict=True):
                if key is not None and score is not None:  # rows without the field are left out
                    keys.append(key)
                    values.append(score)

    def add_control(self, r: SampleResult) -> None:
        if self._controls is not None:
            self._controls[0] += 1
            self._controls[1] += r.valid

    def counts(self, closed: bool) -> dict[str, Any]:
        """The metrics every task has (see the module), in the result's order."""
        n, n_valid = self.n, self.n_valid
        m: dict[str, Any] = {
            "n": n,
            "n_valid": n_valid,
            "invalid_output_rate": 1.0 - n_valid / n if n else 0.0,
            "generation_errors": self.outcomes.get("generation_error", 0),
            "truncated": self.outcomes.get("truncated", 0),
            "grader_errors": self.grader_errors,
            "extraction_errors": self.extraction_errors,
            "near_miss": dict(sorted(self.near.items())),
            "outcomes": dict(sorted(self.outcomes.items())),
        }
        if closed:
            answers = self.answers
            total = sum(answers.values())
            m["modal_answer_share"] = max(answers.values()) / total if total else 0.0
            # Counter.most_common(1): the first answer counted of those counted most often
            m["modal_answer"] = max(answers.items(), key=_count)[0] if answers else None
        return m

    def breakdowns(self, suffix: str) -> dict[str, Any]:
        """``per_<field>_<suffix>`` of each breakdown field."""
        return {f"per_{fld}_{suffix}": B.cells(keys, values) for fld, _, keys, values in self._cells}

    def groups(self) -> dict[str, Any]:
        """``group_consistency`` and ``groups`` of the counted samples (see the module)."""
        if self._group is None and self._group_ids is None:
            return {}
        real = [g for g in self._groups.values() if len(g) >= 2]
        return {
            "group_consistency": sum(all(g) for g in real) / len(real) if real else None,
            "groups": len(real),
        }

    def controls(self) -> dict[str, Any]:
        """``controls`` and ``control_valid_rate`` of the control samples (see the module)."""
        if self._controls is None:
            return {}
        count, valid = self._controls
        return {"controls": count, "control_valid_rate": valid / count if count else None}
