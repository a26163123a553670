"""A task's answer space per row (YOXLA's ``answer_space``; MKA1's fixed ``choices`` otherwise).

A task with ``answer_space.options_field`` answers each row by the number of one of the
row's options (``1`` to the length of the row's list) or by one of the fixed labels, so every
item has its own space: templates render it (``{{choices}}``, ``{{choice_list}}``,
``{{answer_space}}``), the strict extractor reads answers against it, and graders see it
as the item's ``choices``. A task without ``answer_space`` has the task's ``choices`` for
every row, as in the MKA1 format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from yoxla.contract.spec import TaskSpec
from yoxla.contract.spec_base import MAX_CHOICES
from yoxla.prompt.templates import lookup


@cache
def _numbers(n: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(1, n + 1))


def row_dependent(spec: TaskSpec) -> bool:
    return spec.answer_space is not None and spec.answer_space.options_field is not None


def item_space(spec: TaskSpec, row: Mapping[str, Any]) -> tuple[str, ...]:
    """The valid answers for ``row``: option numbers (a row-dependent space), then the fixed labels."""
    space = spec.answer_space
    if space is None:
        return tuple(spec.choices or ())
    if space.options_field is None:
        return space.label_values
    options = lookup(row, space.options_field.split("."))
    n = len(options) if isinstance(options, list) else 0
    return _numbers(n) + space.label_values


def probability_space(spec: TaskSpec, choices: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The closed answer space answer probabilities are taken over for one item (``choices``:
    the item's own space, None: the task's), or None for an open answer.

    Closed: strict extraction in choice mode (the task's ``choices`` or its ``answer_space``,
    row-dependent or not), and a case-insensitive ``label_set`` (its labels). A case-sensitive
    label set is not: the probability reader accepts every casing of a label (as the strict
    parser does), which such an extraction refuses. ``regex``, ``take_first``, ``number`` and
    ``none`` extraction accept answers outside any list, so they have no closed space.
    """
    from yoxla.contract.spec_answers import LabelSet
    from yoxla.extract.text import nfc

    ex = spec.output_extraction
    if isinstance(ex, LabelSet):
        return None if ex.case_sensitive else tuple(nfc(label) for label in ex.labels)
    if spec.strict_mode != "choice":
        return None
    space = choices if choices is not None else spec.fixed_choices
    return space or None


def calibration_inputs(
    spec: TaskSpec, items: Sequence[Any]
) -> tuple[list[str], list[tuple[str, ...] | None], list[str | None]]:
    """What a suite task's calibration reads of its items (prepared items, in prediction order):
    their targets, their :func:`probability_space`, and their group (:meth:`TaskSpec.group_of`;
    None where the task declares no groups or the row is in none)."""
    groups = [spec.group_of(item.row) for item in items]
    return [i.target for i in items], [probability_space(spec, i.choices) for i in items], groups


def space_problem(spec: TaskSpec, row: Mapping[str, Any]) -> str | None:
    """Why ``row`` cannot have a row-dependent space (its field is no list, or too long); None: it can."""
    space = spec.answer_space
    if space is None or space.options_field is None:
        return None
    options = lookup(row, space.options_field.split("."))
    if not isinstance(options, list):
        found = "missing" if options is None else f"a {type(options).__name__}, not a list"
        return f"answer_space.options_field {space.options_field!r} is {found}"
    if len(options) > MAX_CHOICES:
        return f"answer_space.options_field {space.options_field!r} has {len(options)} options (at most {MAX_CHOICES})"
    return None


def describe(spec: TaskSpec) -> str:
    """``{{answer_space}}``: one line per answer kind, ``- value: description`` for the labels."""
    space = spec.answer_space
    if space is None:
        return ""
    lines = [f"- {space.options_description}"] if space.options_description else []
    lines.extend(
        f"- {label.value}: {label.description}" if label.description else f"- {label.value}"
        for label in space.labels
    )
    return "\n".join(lines)


def template_extra(spec: TaskSpec) -> dict[str, str] | None:
    """What ``{{answer_space}}`` renders to (only for a task that declares one)."""
    return {"answer_space": describe(spec)} if spec.answer_space is not None else None
