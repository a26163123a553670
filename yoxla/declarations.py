"""Analysis declarations of an edition: groups, controls, shortcut-gate thresholds, ranking order.

They live *outside* the frozen task contracts, in ``yoxla/editions/<edition>.declarations.json``,
because they say how to read an edition's rows, not what is asked: adding a group field to
a task's contract would change its hash and make every published result incomparable.
An edition without the file gets the defaults (no groups, no controls, default gate and
ranking). The format (unknown keys are refused, so a typo cannot pass silently)::

    {
      "edition": "sample",
      "about": "free text",
      "ranking": ["accuracy", "group_consistency", "high_confidence_error_rate", "mean_gold_p"],
      "gate": {"margin": 15.0, "strategies": ["first", "majority", ...]},
      "tasks": {
        "<task id>": {
          "groups": {"field": "<column>"}  or  {"ids": {"<group>": ["<row id>", ...]}},
          "controls": {"field": "<column>", "values": [...]}  or  {"ids": ["<row id>", ...]},
          "gate": {"threshold": 60.0, "reason": "why this task may be above chance + margin",
                   "strategies": ["overlap"]},
          "note": "free text"
        }
      }
    }

Groups name rows that are minimal edits of each other (group consistency); controls are
rows that are ambiguous by construction (run, not scored). A task's gate threshold applies
to the strategies it names (all gated strategies when it names none); the others keep
chance + margin. Row ids and columns are checked against the rows by
:func:`check_declarations`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from yoxla.calibration.ranking import DEFAULT_ORDER, check_order

DEFAULT_MARGIN = 15.0
# "random" is left out of the gate: it reads no cue, its expected score *is* chance, and its
# one seeded draw on a small edition is noise around it.
DEFAULT_GATE_STRATEGIES = (
    "first",
    "majority",
    "overlap",
    "longest",
    "most_linked",
    "none_of_them",
    "abstain",
)


class DeclarationError(ValueError):
    """A declarations file breaks its format."""


@dataclass(frozen=True)
class TaskDeclarations:
    group_field: str | None = None
    group_ids: Mapping[str, str] = field(default_factory=dict)  # row id → group
    control_field: str | None = None
    control_values: tuple[Any, ...] = ()
    control_ids: frozenset[str] = frozenset()
    gate_threshold: float | None = None  # None: chance + the edition's margin
    gate_reason: str | None = None
    gate_applies_to: tuple[str, ...] = ()  # the strategies the threshold is declared for; (): all
    id_field: str = "id"

    def threshold_for(self, strategy: str) -> float | None:
        """The declared gate threshold for ``strategy``; None: chance + the edition's margin."""
        if self.gate_threshold is None or (self.gate_applies_to and strategy not in self.gate_applies_to):
            return None
        return self.gate_threshold

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
    gate_margin: float = DEFAULT_MARGIN
    gate_strategies: tuple[str, ...] = DEFAULT_GATE_STRATEGIES
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


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise DeclarationError(f"{where}: expected a number")
    return float(value)


def _id_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise DeclarationError(f"{where}: expected a list of row ids")
    if len(set(value)) != len(value):
        raise DeclarationError(f"{where}: a row id is listed twice")
    return list(value)


def _task(entry: Any, where: str, id_field: str) -> TaskDeclarations:
    entry = _keys(entry, where, {"groups", "controls", "gate", "note"})
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
    if "gate" in entry:
        gate = _keys(
            entry["gate"], f"{where}.gate", {"threshold", "reason", "strategies"}, {"threshold", "reason"}
        )
        threshold = _number(gate["threshold"], f"{where}.gate.threshold")
        if not 0.0 <= threshold <= 100.0:
            raise DeclarationError(f"{where}.gate.threshold: must lie in [0, 100]")
        out["gate_threshold"] = threshold
        out["gate_reason"] = _text(gate["reason"], f"{where}.gate.reason")
        if "strategies" in gate:
            from yoxla.suites.baselines import STRATEGIES

            named = gate["strategies"]
            if not isinstance(named, list) or not named or any(x not in STRATEGIES for x in named):
                raise DeclarationError(
                    f"{where}.gate.strategies: expected a non-empty list of {', '.join(STRATEGIES)}"
                )
            out["gate_applies_to"] = tuple(named)
    if "note" in entry:
        _text(entry["note"], f"{where}.note")
    return TaskDeclarations(**out)


def parse_declarations(data: Any) -> EditionDeclarations:
    """Typed declarations from a parsed file; :class:`DeclarationError` on any format problem."""
    from yoxla.suite import load_suite
    from yoxla.suites.baselines import STRATEGIES

    suite = load_suite()

    top = _keys(data, "declarations", {"edition", "about", "ranking", "gate", "tasks"}, {"edition"})
    ranking = top.get("ranking", list(DEFAULT_ORDER))
    if not isinstance(ranking, list):
        raise DeclarationError("ranking: expected a list of metric names")
    try:
        order = check_order(ranking)
    except ValueError as exc:
        raise DeclarationError(f"ranking: {exc}") from None
    gate = _keys(top.get("gate", {}), "gate", {"margin", "strategies"})
    margin = _number(gate.get("margin", DEFAULT_MARGIN), "gate.margin")
    strategies = gate.get("strategies", list(DEFAULT_GATE_STRATEGIES))
    if not isinstance(strategies, list) or not strategies or any(s not in STRATEGIES for s in strategies):
        raise DeclarationError(f"gate.strategies: expected a non-empty list of {', '.join(STRATEGIES)}")
    tasks = top.get("tasks", {})
    if not isinstance(tasks, Mapping):
        raise DeclarationError("tasks: expected an object")
    return EditionDeclarations(
        edition=_text(top["edition"], "edition"),
        ranking=order,
        gate_margin=margin,
        gate_strategies=tuple(strategies),
        tasks={
            tid: _task(entry, f"tasks.{tid}", suite.tasks[tid].id_field if tid in suite.tasks else "id")
            for tid, entry in tasks.items()
        },
        about=str(top.get("about", "")),
    )


def declarations_path(edition: str) -> Any:
    return resources.files("yoxla").joinpath("editions", f"{edition}.declarations.json")


@cache
def load_declarations(edition: str) -> EditionDeclarations:
    """The bundled declarations of an edition; defaults when the edition has no file."""
    path = declarations_path(edition)
    if not path.is_file():
        return EditionDeclarations(edition=edition)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DeclarationError(f"{edition}.declarations.json is not valid JSON: {exc}") from None
    decl = parse_declarations(data)
    if decl.edition != edition:
        raise DeclarationError(f"{edition}.declarations.json declares edition {decl.edition!r}")
    return decl


def edition_declarations(edition: Any) -> EditionDeclarations:
    """The declarations of an edition: its own (an edition made in code), else the bundled file."""
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
