"""The manifest's answers: how an output is read (extraction) and the closed answer space.

``output_extraction`` names one extractor (MKA1's ``none``, ``take_first``, ``regex``,
``regex_last``, ``label_set``, ``number``, and YOXLA's ``strict`` parser over a closed answer
space); a regex is checked to compile when the suite loads. ``answer_space`` (YOXLA) is a
closed space that may depend on the row.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from yoxla.contract.patterns import MAX_PATTERN, compile_pattern
from yoxla.contract.spec_base import MAX_CHOICE, MAX_CHOICES, MAX_DESCRIPTION, Spec

# Output extraction ---------------------------------------------------------------------------


class NoneExtraction(Spec):
    type: Literal["none"]


class TakeFirst(Spec):
    type: Literal["take_first"]
    lines: Annotated[int, Field(ge=1, le=100)] = 1


class RegexExtraction(Spec):
    type: Literal["regex", "regex_last"]
    pattern: Annotated[str, Field(min_length=1, max_length=MAX_PATTERN)]
    group: (
        Annotated[int, Field(ge=0, le=99)] | Annotated[str, Field(pattern=r"^[A-Za-z_]\w{0,63}$")] | None
    ) = Field(default=None, description="default: 1 when the pattern has a group, else the whole match")
    flags: Annotated[str, Field(pattern=r"^[imsxu]{0,5}$")] = ""

    @model_validator(mode="after")
    def _compiles(self) -> RegexExtraction:
        compiled = compile_pattern(self.pattern, self.flags)  # raises ValueError with the reason
        if isinstance(self.group, int) and self.group > compiled.groups:
            raise ValueError(f"group {self.group} does not exist (the pattern has {compiled.groups})")
        if isinstance(self.group, str) and self.group not in compiled.groupindex:
            raise ValueError(f"the pattern has no group named {self.group!r}")
        return self


class LabelSet(Spec):
    type: Literal["label_set"]
    labels: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_CHOICE)]],
        Field(min_length=1, max_length=MAX_CHOICES),
    ]
    case_sensitive: bool = False

    @field_validator("labels")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if any(not label.strip() for label in value):
            raise ValueError("a label is blank")
        if len(set(value)) != len(value):
            raise ValueError("labels repeat")
        return value


class NumberExtraction(Spec):
    type: Literal["number"]
    position: Literal["first", "last"] = Field(default="first", description="YOXLA: which number to take")


class StrictExtraction(Spec):
    """YOXLA: this project's strict parser over a closed answer space (anything else is invalid)."""

    type: Literal["strict"]
    mode: Literal["choice", "numeric", "text", "text_or_abstain"] | None = Field(
        default=None, description="default: choice when the task has choices, else text"
    )
    range: Annotated[list[float], Field(min_length=2, max_length=2)] | None = Field(
        default=None, description="numeric: [min, max]"
    )
    abstain: Annotated[str, Field(min_length=1, max_length=MAX_CHOICE)] | None = Field(
        default=None, description="text_or_abstain: the abstention phrase"
    )

    @model_validator(mode="after")
    def _mode_fields(self) -> StrictExtraction:
        if self.mode == "numeric":
            if self.range is None:
                raise ValueError("strict numeric extraction needs range: [min, max]")
            if not self.range[0] < self.range[1]:
                raise ValueError("range must be [min, max] with min < max")
        elif self.range is not None:
            raise ValueError("range applies only to mode numeric")
        if (self.mode == "text_or_abstain") != (self.abstain is not None):
            raise ValueError("abstain is given exactly when mode is text_or_abstain")
        return self


Extraction = Annotated[
    NoneExtraction | TakeFirst | RegexExtraction | LabelSet | NumberExtraction | StrictExtraction,
    Field(discriminator="type"),
]


# Answer space (YOXLA) ------------------------------------------------------------------------


class SpaceLabel(Spec):
    """A fixed answer with what it means (the description is shown to the model by ``{{answer_space}}``)."""

    value: Annotated[str, Field(min_length=1, max_length=MAX_CHOICE)]
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION)] = ""

    @field_validator("value")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a label is blank")
        return value


class AnswerSpaceSpec(Spec):
    """YOXLA: a closed answer space that may depend on the row.

    ``options_field`` names a row field holding a list: its items are the options, answered
    by number (``1`` to the list's length, so each row has its own space); ``labels`` are
    fixed answers added after the numbers (e.g. ``HEÇ BİRİ``). Without ``options_field`` the
    space is just the labels (the task's ``choices``, with descriptions).
    """

    options_field: (
        Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)*$", max_length=200)]
        | None
    ) = Field(default=None, description="a row field holding a list (nested.field allowed)")
    options_description: Annotated[str, Field(min_length=1, max_length=MAX_DESCRIPTION)] | None = None
    labels: Annotated[list[SpaceLabel], Field(max_length=MAX_CHOICES)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> AnswerSpaceSpec:
        if self.options_field is None and not self.labels:
            raise ValueError("an answer space needs options_field, labels, or both")
        if self.options_description is not None and self.options_field is None:
            raise ValueError("options_description describes options_field, which is missing")
        values = [label.value for label in self.labels]
        if len(set(values)) != len(values):
            raise ValueError("labels repeat")
        if self.options_field is not None:
            numeric = [v for v in values if v.strip().isdigit()]
            if numeric:
                raise ValueError(f"label {numeric[0]!r} would be read as an option number")
        return self

    @property
    def label_values(self) -> tuple[str, ...]:
        return tuple(label.value for label in self.labels)
