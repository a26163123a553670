"""The manifest's graders and metrics: Python code (a grader or a preprocessor) and built-in graders.

Python code is given by ``source`` or by ``path`` (a .py file next to the manifest) and runs
in the sandbox; a built-in grader (YOXLA, ``type: builtin``) needs no Python, and each of its
options applies only to the graders named beside it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import Field, Tag, model_validator

from yoxla.contract.spec_base import (
    MAX_DESCRIPTION,
    Id,
    RelPath,
    Seconds,
    SourceText,
    Spec,
    kind_of,
    refuse_upload_ids,
)

BuiltinGraderName = Literal[
    "exact_match",
    "accuracy",
    "macro_f1",
    "numeric_tolerance",
    "token_f1",
    "spearman",
    "span",
    "abstention",
]
BUILTIN_GRADERS: tuple[str, ...] = get_args(BuiltinGraderName)


# Python code ---------------------------------------------------------------------------------


class _PythonCode(Spec):
    type: Literal["python"]
    source: SourceText | None = None
    path: RelPath | None = None

    @model_validator(mode="before")
    @classmethod
    def _before(cls, data: Any) -> Any:
        return refuse_upload_ids(data, "Python code")

    @model_validator(mode="after")
    def _one_source(self) -> _PythonCode:
        if (self.source is None) == (self.path is None):
            raise ValueError("give exactly one of source (the code) or path (a .py file)")
        return self


class Preprocess(_PythonCode):
    contract: Literal["row", "batch"] = "row"
    timeout_seconds: Seconds = 120.0


class PythonGrader(_PythonCode):
    contract: Literal["sample", "batch"] = "sample"
    metric_id: Id = "score"
    timeout_seconds: Seconds = Field(default=30.0, description="YOXLA: per sample (per batch for batch)")


# Which built-in graders each option applies to.
_BUILTIN_OPTIONS: dict[str, tuple[str, ...]] = {
    "metric_id": ("exact_match", "accuracy", "numeric_tolerance", "token_f1"),
    "case_sensitive": ("exact_match",),
    "per_class": ("accuracy",),
    "tolerance": ("numeric_tolerance",),
    "relative_tolerance": ("numeric_tolerance",),
    "impute": ("spearman",),
    "closeness": ("spearman",),
    "correct_within": ("spearman",),
    "passage_field": ("span", "abstention"),
    "answer_start_field": ("span", "abstention"),
}


class BuiltinGrader(Spec):
    """YOXLA: a grader that needs no Python. Options apply only to the graders named beside them."""

    type: Literal["builtin"]
    name: BuiltinGraderName
    metric_id: Id | None = Field(
        default=None, description="exact_match, accuracy, numeric_tolerance, token_f1"
    )
    case_sensitive: bool | None = Field(default=None, description="exact_match (default true)")
    per_class: bool | None = Field(default=None, description="accuracy: per_class_accuracy")
    tolerance: Annotated[float, Field(ge=0)] | None = Field(default=None, description="numeric_tolerance")
    relative_tolerance: Annotated[float, Field(ge=0)] | None = Field(
        default=None, description="numeric_tolerance"
    )
    impute: float | None = Field(default=None, description="spearman: value for an invalid answer")
    closeness: bool | None = Field(
        default=None,
        description="YOXLA, spearman: per-sample closeness 1 - |prediction - target| / (max - min) "
        "of the strict range (an invalid answer imputed), the sample's score",
    )
    correct_within: Annotated[float, Field(ge=0)] | None = Field(
        default=None,
        description="YOXLA, spearman: a sample is correct when |prediction - target| is at most this",
    )
    passage_field: Annotated[str, Field(max_length=200)] | None = Field(
        default=None, description="span, abstention"
    )
    answer_start_field: Annotated[str, Field(max_length=200)] | None = Field(
        default=None, description="span, abstention"
    )

    @model_validator(mode="after")
    def _options(self) -> BuiltinGrader:
        for option, names in _BUILTIN_OPTIONS.items():
            if getattr(self, option) is not None and self.name not in names:
                raise ValueError(f"option {option} does not apply to the {self.name} grader")
        if self.closeness is False:
            raise ValueError("closeness is true or absent")
        if self.name in ("span", "abstention") and not self.passage_field:
            raise ValueError(f"the {self.name} grader needs passage_field (the row field with the passage)")
        return self


def _grader_kind(data: Any) -> str:
    if isinstance(data, dict):
        kind = data.get("type")
        if kind is None and "file_id" in data:
            return "python"
        return kind if kind in ("python", "builtin") else "unknown"
    return "python" if isinstance(data, PythonGrader) else "builtin"


Grader = Annotated[
    Annotated[PythonGrader, Tag("python")] | Annotated[BuiltinGrader, Tag("builtin")],
    kind_of(_grader_kind, "grader_type", "grader type must be python or builtin"),
]


# Metrics -------------------------------------------------------------------------------------


class Metric(Spec):
    id: Id
    aggregation: Literal["mean", "none"] = "mean"
    higher_is_better: bool = True
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION)] | None = None
