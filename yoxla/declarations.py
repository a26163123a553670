"""Analysis declarations of an edition as the board and the calibration read them: groups,
controls and the ranking order.

A benchmark edition's declarations are its package suite's ``analysis`` section
(``yoxla/editions/yoxla-<edition>.yaml``, hashed apart from the frozen task contracts: adding a
group field there changes no task hash): its ``ranking`` and, per task, ``group_field``,
``control_field`` and ``control_values``. The shortcut gate's strategies and thresholds are
read from the same section by :mod:`yoxla.gate`. An edition made in code (tests, synthetic
editions) carries its own, parsed from this format by :func:`parse_declarations` (unknown keys
are refused, so a typo cannot pass silently)::

    {
      "edition": "sample",
      "about": "free text",
      "ranking": ["accuracy", "group_consistency", "high_confidence_error_rate", "mean_gold_p"],
      "tasks": {
        "<task id>": {
          "groups": {"field": "<column>"}  or  {"ids": {"<group>": ["<row id>", ...]}},
          "controls": {"field": "<column>", "values": [...]}  or  {"ids": ["<row id>", ...]},
          "note": "free text"
        }
      }
    }

Groups name rows that are minimal edits of each other (group consistency); controls are
rows that are ambiguous by construction (run, not scored). Row ids and columns are checked
against the rows by :func:`check_declarations`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from yoxla.calibration.ranking import DEFAULT_ORDER, check_order
from yoxla.editions import ID_FIELD


class DeclarationError(ValueError):
    """A declarations file breaks its format."""


@dataclass(frozen=True)
class TaskDeclarations:
    group_field: str | None = None
    group_ids: Mapping[str, str] = field(default_factory=dict)  # row id → group
    control_field: str | None = None
    control_values: tuple[Any, ...] = ()
    control_ids: frozenset[str] = frozenset()
    id_field: str = "id"

    def group_of(self, row: Mapping[str, Any]) -> str | None:
        """The row's group id, or None when it belongs to no group."""
        if self.group_field is not None:
            value = row.get(self.group_field)
            return None if value is None or value == "" else str(value)
        return self.group_ids.get(str(row.get(self.id_field)))

    def is_control(self, row: Mapping[str, Any]) -> bool:
        if str(row.get(self.id_field)) in self.control_ids:
            return True
        return self.control_field is not None and row.get(self.control_field) in self.control_values

    @property
    def has_groups(self) -> bool:
        return self.group_field is not None or bool(self.group_ids)

    @property
    def has_controls(self) -> bool:
        return self.control_field is not None or bool(self.control_ids)


@dataclass(frozen=True)
class EditionDeclarations:
    edition: str
    ranking: tuple[str, ...] = DEFAULT_ORDER
    tasks: Mapping[str, TaskDeclarations] = field(default_factory=dict)
    about: str = ""

    def task(self, task_id: str, id_field: str = "id") -> TaskDeclarations:
        found = self.tasks.get(task_id)
        if found is None:
            return TaskDeclarations(id_field=id_field)
        return found


def _keys(
    obj: Any, where: str, allowed: AbstractSet[str], required: AbstractSet[str] = frozenset()
) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise DeclarationError(f"{where}: expected an object")
    unknown = set(obj) - allowed
    if unknown:
        raise DeclarationError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    missing = required - set(obj)
    if missing:
        raise DeclarationError(f"{where}: missing key(s) {', '.join(sorted(missing))}")
    return obj


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DeclarationError(f"{where}: expected non-empty text")
    return value


def _id_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise DeclarationError(f"{where}: expected a list of row ids")
    if len(set(value)) != len(value):
        raise DeclarationError(f"{where}: a row id is listed twice")
    return list(value)


def _task(entry: Any, where: str, id_field: str) -> TaskDeclarations:
    entry = _keys(entry, where, {"groups", "controls", "note"})
    out: dict[str, Any] = {"id_field": id_field}
    if "groups" in entry:
        g = _keys(entry["groups"], f"{where}.groups", {"field", "ids"})
        if len(g) != 1:
            raise DeclarationError(f"{where}.groups: give exactly one of field, ids")
        if "field" in g:
            out["group_field"] = _text(g["field"], f"{where}.groups.field")
        else:
            ids = g["ids"]
            if not isinstance(ids, Mapping) or not ids:
                raise DeclarationError(f"{where}.groups.ids: expected an object of group → row ids")
            members: dict[str, str] = {}
            for name, rows in ids.items():
                for rid in _id_list(rows, f"{where}.groups.ids.{name}"):
                    if rid in members:
                        raise DeclarationError(f"{where}.groups: row {rid} is in two groups")
                    members[rid] = str(name)
            out["group_ids"] = members
    if "controls" in entry:
        c = _keys(entry["controls"], f"{where}.controls", {"field", "values", "ids"})
        if "ids" in c:
            if set(c) != {"ids"}:
                raise DeclarationError(f"{where}.controls: give either ids, or field and values")
            out["control_ids"] = frozenset(_id_list(c["ids"], f"{where}.controls.ids"))
        else:
            _keys(c, f"{where}.controls", {"field", "values"}, {"field", "values"})
            if not isinstance(c["values"], list) or not c["values"]:
                raise DeclarationError(f"{where}.controls.values: expected a non-empty list")
            out["control_field"] = _text(c["field"], f"{where}.controls.field")
            out["control_values"] = tuple(c["values"])
    if "note" in entry:
        _text(entry["note"], f"{where}.note")
    return TaskDeclarations(**out)


def parse_declarations(data: Any) -> EditionDeclarations:
    """Typed declarations from a parsed file; :class:`DeclarationError` on any format problem."""
    top = _keys(data, "declarations", {"edition", "about", "ranking", "tasks"}, {"edition"})
    ranking = top.get("ranking", list(DEFAULT_ORDER))
    if not isinstance(ranking, list):
        raise DeclarationError("ranking: expected a list of metric names")
    try:
        order = check_order(ranking)
    except ValueError as exc:
        raise DeclarationError(f"ranking: {exc}") from None
    tasks = top.get("tasks", {})
    if not isinstance(tasks, Mapping):
        raise DeclarationError("tasks: expected an object")
    return EditionDeclarations(
        edition=_text(top["edition"], "edition"),
        ranking=order,
        tasks={tid: _task(entry, f"tasks.{tid}", ID_FIELD) for tid, entry in tasks.items()},
        about=str(top.get("about", "")),
    )


@cache
def load_declarations(edition: str) -> EditionDeclarations:
    """The declarations of a benchmark edition: its package suite's analysis section (its
    ranking, else the default; its tasks' groups and controls by field)."""
    from yoxla.suites.loader import load_manifest
    from yoxla.suites.registry import manifest_path

    spec = load_manifest(manifest_path(edition)).spec
    analysis = spec.analysis if spec is not None else None
    if analysis is None:
        return EditionDeclarations(edition=edition)
    tasks = {
        tid: TaskDeclarations(
            group_field=t.group_field,
            control_field=t.control_field,
            control_values=tuple(t.control_values or ()),
            id_field=ID_FIELD,
        )
        for tid, t in analysis.tasks.items()
        if t.group_field is not None or t.control_field is not None
    }
    ranking = check_order(analysis.ranking) if analysis.ranking is not None else DEFAULT_ORDER
    return EditionDeclarations(edition=edition, ranking=ranking, tasks=tasks, about=analysis.about or "")


def edition_declarations(edition: Any) -> EditionDeclarations:
    """The declarations of an edition: its own (an edition made in code), else its package suite's."""
    own = getattr(edition, "declarations", None)
    return own if own is not None else load_declarations(edition.name)


def check_declarations(
    decl: EditionDeclarations, rows_by_task: Mapping[str, Sequence[Mapping[str, Any]]]
) -> list[str]:
    """Problems of the declarations against the rows: unknown tasks, columns and row ids."""
    problems: list[str] = []
    for tid, td in decl.tasks.items():
        if tid not in rows_by_task:
            problems.append(f"{tid}: declared but not a task of edition {decl.edition}")
            continue
        rows = rows_by_task[tid]
        ids = {str(r.get(td.id_field)) for r in rows}
        columns = set().union(*(r.keys() for r in rows)) if rows else set()
        for name, col in (("groups.field", td.group_field), ("controls.field", td.control_field)):
            if col is not None and col not in columns:
                problems.append(f"{tid}: {name} {col!r} is not a column of the task's rows")
        for rid in sorted(set(td.group_ids) | set(td.control_ids)):
            if rid not in ids:
                problems.append(f"{tid}: row id {rid!r} is not in the task's rows")
        if td.has_groups:
            sizes: dict[str, int] = {}
            for r in rows:
                g = td.group_of(r)
                if g is not None:
                    sizes[g] = sizes.get(g, 0) + 1
            if not any(n >= 2 for n in sizes.values()):
                problems.append(f"{tid}: the declared groups have no group of two or more rows")
    return problems
