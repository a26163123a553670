"""The manifest's fields, as typed records with every limit.

The surface follows the MKA1 eval-suite manifest field for field; what YOXLA adds where the
reference leaves a gap is marked "YOXLA" where it is declared (docs/suites.md lists it). A
manifest that uses none of it loads, renders and hashes exactly as before it existed.

Validation is strict (no coercion: ``"3"`` is not a number) and closed (unknown keys are
refused, so a misspelt field never silently does nothing). Messages are made readable by
:func:`yoxla.contract.loader.validation_problems`.

The records are in four modules by what they describe; this one holds the task and the suite:
``spec_base`` (limits, the base record), ``spec_data`` (datasets, few-shot), ``spec_grading``
(Python code, graders, metrics) and ``spec_answers`` (extraction, the answer space).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, field_validator, model_validator

from yoxla.contract.spec_answers import (
    AnswerSpaceSpec,
    Extraction,
    LabelSet,
    NoneExtraction,
    StrictExtraction,
)
from yoxla.contract.spec_base import (
    ID_PATTERN,
    MAX_CHOICE,
    MAX_CHOICES,
    MAX_DESCRIPTION,
    MAX_FEWSHOT,
    MAX_GRADERS,
    MAX_METRICS,
    MAX_NAME,
    MAX_SOURCE,
    MAX_TASKS,
    Id,
    Spec,
    TemplateText,
    check_metadata,
)
from yoxla.contract.spec_data import Dataset, Fewshot, HubDataset, LocalDataset
from yoxla.contract.spec_grading import (
    BUILTIN_GRADERS,
    BuiltinGrader,
    Grader,
    Metric,
    Preprocess,
    PythonGrader,
)
from yoxla.prompt.generation import GenerationSettings

# The suite's records, with those of the siblings that the rest of the package reaches as ``spec.X``.
__all__ = [
    "BUILTIN_GRADERS",
    "ID_PATTERN",
    "MAX_SOURCE",
    "MAX_TASKS",
    "Analysis",
    "AnalysisGate",
    "BuiltinGrader",
    "Group",
    "Headline",
    "HubDataset",
    "LabelSet",
    "LocalDataset",
    "Manifest",
    "Metric",
    "PythonGrader",
    "StrictExtraction",
    "TaskAnalysis",
    "TaskSpec",
]

BREAKDOWN_FIELD = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
# Task metrics that metadata.group_field and metadata.control_field add (yoxla.score.replay).
GROUP_METRICS = ("group_consistency", "groups")
CONTROL_METRICS = ("controls", "control_valid_rate")

TaskType = Literal[
    "classification",
    "multiple_choice",
    "qa",
    "summarization",
    "semantic_similarity",
    "llm_judge",
    "numeric",
    "math",
    "custom",
]


# Task and manifest ---------------------------------------------------------------------------


_FIELD = Annotated[str, Field(pattern=BREAKDOWN_FIELD.pattern)]
_TEXT = Annotated[str, Field(min_length=1, max_length=4 * MAX_DESCRIPTION)]
MAX_ROW_IDS = 100_000
_ROW_IDS = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_NAME)]],
    Field(min_length=1, max_length=MAX_ROW_IDS),
]
ROW_ID = "id"  # the row field that the analysis section's row ids name


def row_id(row: Any) -> str | None:
    """The id the analysis section names a row by: its ``id`` field as text (None: it has none)."""
    value = row.get(ROW_ID) if isinstance(row, Mapping) else None
    return None if value is None else str(value).strip()


def _known_strategies(names: list[str]) -> list[str]:
    from yoxla.contract.spec_base import SUITE_STRATEGIES

    unknown = [n for n in names if n not in SUITE_STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategy {unknown[0]!r}; known: {', '.join(SUITE_STRATEGIES)}")
    if len(set(names)) != len(names):
        raise ValueError("a strategy is named twice")
    return names


_STRATEGIES = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=32)]],
    Field(min_length=1, max_length=16),
    AfterValidator(_known_strategies),
]


class TaskAnalysis(Spec):
    """YOXLA: what a task's board analyses, declared apart from what is asked and judged.

    The same keys as the task ``metadata``'s (a task declares each in one place only); hashed in
    the suite's analysis hash, never in the task's: declaring a breakdown changes no task hash.
    """

    breakdowns: Annotated[list[_FIELD], Field(max_length=50)] = Field(default_factory=list)
    group_field: _FIELD | None = None
    control_field: _FIELD | None = None
    control_values: (
        Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]], Field(max_length=100)] | None
    ) = None
    # YOXLA: groups and controls by row id (the rows' ``id``), for rows no column groups or marks;
    # each instead of its field form.
    group_ids: Annotated[dict[Id, _ROW_IDS], Field(min_length=1, max_length=MAX_ROW_IDS)] | None = None
    control_ids: _ROW_IDS | None = None
    gate_threshold: Annotated[float, Field(ge=0, le=100)] | None = None
    gate_reason: Annotated[str, Field(min_length=1, max_length=MAX_DESCRIPTION)] | None = None
    # YOXLA: the gated strategies the threshold is declared for (None: every gated strategy;
    # the others keep chance + the margin).
    gate_strategies: _STRATEGIES | None = None
    note: _TEXT | None = None  # free text for people; derives nothing
    _members: dict[str, str] = PrivateAttr(default_factory=dict)  # row id → group (group_ids)
    _controls: frozenset[str] = PrivateAttr(default=frozenset())  # control_ids, as a set

    @model_validator(mode="after")
    def _pairs(self) -> TaskAnalysis:
        if self.control_values is not None and self.control_field is None:
            raise ValueError("control_values needs control_field")
        if self.group_ids is not None and self.group_field is not None:
            raise ValueError("give either group_field or group_ids, not both")
        if self.control_ids is not None and self.control_field is not None:
            raise ValueError("give either control_field (and control_values) or control_ids, not both")
        self._controls = frozenset(self.control_ids or ())
        if len(self._controls) != len(self.control_ids or ()):
            raise ValueError("control_ids: a row id is listed twice")
        members: dict[str, str] = {}  # built afresh: pydantic runs this again on a nested instance
        for name, ids in (self.group_ids or {}).items():
            for rid in ids:
                other = members.get(rid)
                if other is not None:
                    where = (
                        f"in groups {other!r} and {name!r}" if other != name else f"twice in group {name!r}"
                    )
                    raise ValueError(f"group_ids: row {rid!r} is listed {where}")
                members[rid] = name
        self._members = members
        if (self.gate_threshold is None) != (self.gate_reason is None):
            raise ValueError("gate_threshold and gate_reason go together")
        if self.gate_strategies is not None and self.gate_threshold is None:
            raise ValueError("gate_strategies needs gate_threshold")
        return self


class AnalysisGate(Spec):
    """YOXLA: the suite's shortcut gate: which cue-only strategies are gated, and the margin over
    chance each may reach (a task's declared ``gate_threshold`` overrides it for that task)."""

    margin: Annotated[float, Field(ge=0, le=100)] | None = None
    strategies: _STRATEGIES | None = None


class Analysis(Spec):
    """YOXLA: the suite's analysis section (per task, the shortcut gate, the board's ranking order)."""

    tasks: Annotated[dict[Id, TaskAnalysis], Field(max_length=MAX_TASKS)] = Field(default_factory=dict)
    ranking: (
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=64)]], Field(min_length=1, max_length=10)
        ]
        | None
    ) = None
    gate: AnalysisGate | None = None
    about: _TEXT | None = None  # free text for people; derives nothing

    @field_validator("ranking")
    @classmethod
    def _order(cls, value: list[str] | None) -> list[str] | None:
        from yoxla.score.calibration.ranking import check_order

        return value if value is None else list(check_order(value))


_ANALYSIS_KEYS = (
    "breakdowns",
    "group_field",
    "control_field",
    "control_values",
    "gate_threshold",
    "gate_reason",
)


class TaskSpec(Spec):
    id: Id
    name: Annotated[str, Field(min_length=1, max_length=MAX_NAME)] | None = None
    type: TaskType = Field(default="custom", description="a label for people; scoring never depends on it")
    dataset: Dataset
    prompt_template: TemplateText
    target_template: TemplateText | None = None
    choices: (
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=MAX_CHOICE)]], Field(max_length=MAX_CHOICES)
        ]
        | None
    ) = None
    answer_space: AnswerSpaceSpec | None = Field(default=None, description="YOXLA: instead of choices")
    num_fewshot: Annotated[int, Field(ge=0, le=MAX_FEWSHOT)] | None = None
    fewshot: Fewshot | None = None
    preprocess: Preprocess | None = None
    output_extraction: Extraction = Field(default_factory=lambda: NoneExtraction(type="none"))
    metrics: Annotated[list[Metric], Field(min_length=1, max_length=MAX_METRICS)] | None = None
    grader: Grader | Annotated[list[Grader], Field(min_length=1, max_length=MAX_GRADERS)] | None = None
    generation: GenerationSettings | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    _analysis: TaskAnalysis | None = PrivateAttr(default=None)  # set by the manifest

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> dict[str, str]:
        return check_metadata(value, "metadata")

    @field_validator("choices")
    @classmethod
    def _choices(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("choices repeat")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        if self.num_fewshot is not None and self.fewshot is not None:
            raise ValueError("give either num_fewshot or fewshot, not both")
        if self.metrics is not None:
            ids = [m.id for m in self.metrics]
            if len(set(ids)) != len(ids):
                raise ValueError("metric ids repeat")
        for field in self.breakdowns:
            if not BREAKDOWN_FIELD.fullmatch(field):
                raise ValueError(f"metadata.breakdowns: {field!r} is not a lower-case field name")
        for key in ("group_field", "control_field"):
            if key in self.metadata and not BREAKDOWN_FIELD.fullmatch(self.metadata[key].strip()):
                raise ValueError(f"metadata.{key}: {self.metadata[key]!r} is not a lower-case field name")
        if "control_values" in self.metadata and (
            "control_field" not in self.metadata or not self.control_values
        ):
            raise ValueError("metadata.control_values needs metadata.control_field and at least one value")
        reserved = (GROUP_METRICS if self.group_field else ()) + (
            CONTROL_METRICS if self.control_field else ()
        )
        clash = [m.id for m in self.metrics or () if m.id in reserved]
        if clash:
            raise ValueError(
                f"metric id {clash[0]!r} is reported by metadata.group_field/control_field; name the metric otherwise"
            )
        extraction = self.output_extraction
        graders = self.graders
        if self.answer_space is not None:
            if self.choices is not None:
                raise ValueError("give either choices or answer_space, not both")
            if not isinstance(extraction, StrictExtraction) or self.strict_mode != "choice":
                raise ValueError("answer_space needs output_extraction strict in choice mode")
        if (
            isinstance(extraction, StrictExtraction)
            and self.strict_mode == "choice"
            and not self.closed_space
        ):
            raise ValueError("strict extraction in choice mode needs the task's choices")
        for g in graders:
            if (
                isinstance(g, BuiltinGrader)
                and g.closeness
                and (not isinstance(extraction, StrictExtraction) or extraction.range is None)
            ):
                raise ValueError("closeness needs output_extraction strict, mode numeric, with a range")
        for g in graders:
            if (
                isinstance(g, BuiltinGrader)
                and g.name == "abstention"
                and self.strict_mode != "text_or_abstain"
            ):
                raise ValueError("the abstention grader needs output_extraction strict, mode text_or_abstain")
        names = [g.name for g in graders if isinstance(g, BuiltinGrader)]
        if len(set(names)) != len(names):
            raise ValueError("a built-in grader is named twice")
        return self

    @property
    def graders(self) -> tuple[PythonGrader | BuiltinGrader, ...]:
        if self.grader is None:
            return ()
        return tuple(self.grader) if isinstance(self.grader, list) else (self.grader,)

    @property
    def fewshot_settings(self) -> Fewshot | None:
        if self.fewshot is not None:
            return self.fewshot if self.fewshot.count > 0 else None
        if self.num_fewshot:
            return Fewshot(count=self.num_fewshot)
        return None

    @property
    def closed_space(self) -> bool:
        """Does the task declare a closed answer space (``choices`` or ``answer_space``)?"""
        return bool(self.choices) or self.answer_space is not None

    @property
    def fixed_choices(self) -> tuple[str, ...]:
        """The answers every row shares: ``choices``, or the labels of ``answer_space``."""
        if self.answer_space is not None:
            return self.answer_space.label_values
        return tuple(self.choices or ())

    @property
    def strict_mode(self) -> str | None:
        ex = self.output_extraction
        if not isinstance(ex, StrictExtraction):
            return None
        return ex.mode or ("choice" if self.closed_space else "text")

    @property
    def declared_breakdowns(self) -> tuple[str, ...]:
        """Row fields named in ``metadata.breakdowns`` (comma-separated; part of the task's hash)."""
        text = self.metadata.get("breakdowns", "")
        return tuple(f.strip() for f in text.split(",") if f.strip())

    @property
    def breakdowns(self) -> tuple[str, ...]:
        """Row fields with per-value scores: ``metadata.breakdowns``, then the analysis section's."""
        extra = self._analysis.breakdowns if self._analysis is not None else []
        return tuple(dict.fromkeys((*self.declared_breakdowns, *extra)))

    @property
    def group_field(self) -> str | None:
        """``metadata.group_field`` (or the analysis section's): rows sharing its value are minimal
        edits of each other."""
        found = self.metadata.get("group_field", "").strip() or None
        return found or (self._analysis.group_field if self._analysis is not None else None)

    @property
    def control_field(self) -> str | None:
        """``metadata.control_field`` (or the analysis section's): rows marked by it are controls
        (run, not scored)."""
        found = self.metadata.get("control_field", "").strip() or None
        return found or (self._analysis.control_field if self._analysis is not None else None)

    @property
    def control_values(self) -> tuple[str, ...]:
        """``metadata.control_values`` (comma-separated; or the analysis section's); (): any truthy
        value marks a control."""
        if self._analysis is not None and self._analysis.control_field is not None:
            return tuple(self._analysis.control_values or ())
        text = self.metadata.get("control_values", "")
        return tuple(v.strip() for v in text.split(",") if v.strip())

    @property
    def group_ids(self) -> Mapping[str, str]:
        """The analysis section's ``group_ids`` as row id → group ({}: none declared)."""
        return self._analysis._members if self._analysis is not None else {}

    @property
    def control_ids(self) -> frozenset[str]:
        """The analysis section's ``control_ids`` (the rows that are controls, by id)."""
        return self._analysis._controls if self._analysis is not None else frozenset()

    @property
    def has_groups(self) -> bool:
        return self.group_field is not None or bool(self.group_ids)

    @property
    def has_controls(self) -> bool:
        return self.control_field is not None or bool(self.control_ids)

    def group_of(self, row: Mapping[str, Any]) -> str | None:
        """The row's group (its ``group_field`` value, else its group in ``group_ids``); None: none."""
        field = self.group_field
        if field is None:
            return self.group_ids.get(row_id(row) or "")
        value = row.get(field) if isinstance(row, Mapping) else None
        return None if value is None or value == "" else str(value)

    @property
    def gate_applies_to(self) -> tuple[str, ...]:
        """The strategies the declared gate threshold is for (``analysis``' ``gate_strategies``);
        (): every gated strategy."""
        named = self._analysis.gate_strategies if self._analysis is not None else None
        return tuple(named or ())

    @property
    def gate(self) -> tuple[str | None, str | None]:
        """The declared gate threshold and its reason, as text (metadata, or the analysis section)."""
        if self._analysis is not None and self._analysis.gate_threshold is not None:
            return str(self._analysis.gate_threshold), self._analysis.gate_reason
        return self.metadata.get("gate_threshold"), self.metadata.get("gate_reason")


class Group(Spec):
    """YOXLA: a named group of tasks (the benchmark's blocks); its score is the mean of its tasks'."""

    id: Id
    name: Annotated[str, Field(min_length=1, max_length=MAX_NAME)] | None = None
    tasks: Annotated[list[Id], Field(min_length=1, max_length=MAX_TASKS)]


class Headline(Spec):
    """YOXLA: the suite's one number: its name and how it is made from the scores."""

    name: Annotated[str, Field(min_length=1, max_length=MAX_NAME)] | None = None
    rule: Literal["mean_of_tasks", "mean_of_groups"] | None = Field(
        default=None, description="default: mean_of_groups when groups are declared, else mean_of_tasks"
    )


class Manifest(Spec):
    schema_version: Annotated[str, Field(min_length=1, max_length=64)]
    tasks: Annotated[list[TaskSpec], Field(min_length=1, max_length=MAX_TASKS)]
    metadata: dict[str, str] = Field(default_factory=dict)
    groups: Annotated[list[Group], Field(min_length=1, max_length=MAX_TASKS)] | None = Field(
        default=None, description="YOXLA: groups of tasks, each scored by the mean of its tasks"
    )
    headline: Headline | None = Field(default=None, description="YOXLA: the suite score's name and rule")
    analysis: Analysis | None = Field(
        default=None, description="YOXLA: breakdowns, controls, gate thresholds and ranking, hashed apart"
    )

    @model_validator(mode="after")
    def _analysis(self) -> Manifest:
        if self.analysis is None:
            return self
        if self.analysis.ranking is not None and "ranking" in self.metadata:
            raise ValueError("analysis.ranking: the ranking is already given in metadata.ranking")
        by_id = {t.id: t for t in self.tasks}
        for tid, declared in self.analysis.tasks.items():
            task = by_id.get(tid)
            if task is None:
                raise ValueError(f"analysis.tasks: {tid!r} is not a task of the suite")
            given = declared.model_dump(exclude_none=True, exclude_defaults=True)
            both = [k for k in _ANALYSIS_KEYS if k in given and k in task.metadata]
            if both:
                raise ValueError(f"analysis.tasks.{tid}.{both[0]}: already declared in the task's metadata")
            groups = declared.group_field or declared.group_ids
            controls = declared.control_field or declared.control_ids
            if (groups or controls) and (task.group_field or task.control_field):
                raise ValueError(
                    f"analysis.tasks.{tid}: declare groups and controls in one place (metadata or analysis)"
                )
            reserved = (GROUP_METRICS if groups else ()) + (CONTROL_METRICS if controls else ())
            clash = [m.id for m in task.metrics or () if m.id in reserved]
            if clash:
                raise ValueError(f"analysis.tasks.{tid}: metric id {clash[0]!r} is reported by the analysis")
            task._analysis = declared
        return self

    @model_validator(mode="after")
    def _groups(self) -> Manifest:
        ids = {t.id for t in self.tasks}
        seen_groups: set[str] = set()
        owner: dict[str, str] = {}
        for group in self.groups or ():
            if group.id in seen_groups:
                raise ValueError(f"groups: group id {group.id!r} appears twice")
            seen_groups.add(group.id)
            for tid in group.tasks:
                if tid not in ids:
                    raise ValueError(f"groups: group {group.id!r} names task {tid!r}, which the suite lacks")
                if tid in owner:
                    raise ValueError(f"groups: task {tid!r} is in group {owner[tid]!r} and {group.id!r}")
                owner[tid] = group.id
        if self.headline is not None and self.headline.rule == "mean_of_groups" and not self.groups:
            raise ValueError("headline: rule mean_of_groups needs groups")
        return self

    @property
    def headline_rule(self) -> str:
        rule = self.headline.rule if self.headline is not None else None
        return rule or ("mean_of_groups" if self.groups else "mean_of_tasks")

    @model_validator(mode="before")
    @classmethod
    def _version_text(cls, data: Any) -> Any:
        # YAML reads an unquoted date (2026-05-27) as a date: take it as the text it was.
        import datetime

        if isinstance(data, dict) and isinstance(data.get("schema_version"), datetime.date):
            data = {**data, "schema_version": data["schema_version"].isoformat()}
        return data

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> dict[str, str]:
        return check_metadata(value, "metadata")

    @property
    def ranking(self) -> tuple[str, ...] | None:
        """``metadata.ranking`` (comma-separated metric names: the suite keys) or
        ``analysis.ranking`` (YOXLA: any ranking metric; a metric a model's result lacks ranks
        it after those that have it), checked; None when not declared."""
        from yoxla.score.calibration.ranking import check_order, suite_order

        if self.analysis is not None and self.analysis.ranking is not None:
            return check_order(tuple(self.analysis.ranking))
        return suite_order(self.metadata)

    @model_validator(mode="after")
    def _ranking(self) -> Manifest:
        try:
            _ = self.ranking
        except ValueError as exc:
            raise ValueError(f"metadata.ranking: {exc}") from None
        return self

    @model_validator(mode="after")
    def _unique_ids(self) -> Manifest:
        seen: set[str] = set()
        for task in self.tasks:
            if task.id in seen:
                raise ValueError(f"task id {task.id!r} appears twice")
            seen.add(task.id)
        return self
