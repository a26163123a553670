"""The manifest's fields, as typed records with every limit.

The surface follows the MKA1 eval-suite manifest field for field (``schema_version``,
``tasks``, ``metadata``; per task ``id``, ``name``, ``type``, ``dataset``,
``prompt_template``, ``target_template``, ``choices``, ``num_fewshot`` | ``fewshot``,
``preprocess``, ``output_extraction``, ``metrics``, ``grader``, ``generation``,
``metadata``). YOXLA adds a few things where the reference leaves a gap, each marked below:
``strict`` extraction, built-in graders (``type: builtin``), local files by ``path``, a
row-dependent ``answer_space``, per-sample STS options of the ``spearman`` grader
(``closeness``, ``correct_within``), and a suite's ``groups`` and ``headline``. A manifest
that uses none of them loads, renders and hashes exactly as before they existed.

Validation is strict (no coercion: ``"3"`` is not a number) and closed (unknown keys are
refused, so a misspelt field never silently does nothing). Messages are made readable by
:func:`yoxla.suites.loader.format_validation_error`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

from yoxla.suites.generation import GenerationSettings, bounded_json
from yoxla.suites.patterns import MAX_PATTERN, compile_pattern

# Limits --------------------------------------------------------------------------------------
MAX_TASKS = 100  # tasks per suite (MKA1: 1 to 100)
MAX_FEWSHOT = 100  # few-shot examples per sample (MKA1: 0 to 100)
MAX_ROWS = 1_000_000  # Hugging Face max_rows (MKA1: up to 1,000,000); also rows of a local file
MAX_METADATA_KEY = 64  # MKA1
MAX_METADATA_VALUE = 512  # MKA1
MAX_METADATA_ENTRIES = 64
MAX_TEMPLATE = 100_000  # characters of one template
MAX_CHOICES = 1_000
MAX_CHOICE = 1_000  # characters of one choice or label
MAX_SOURCE = 1_000_000  # characters of a grader's or preprocessor's source
MAX_METRICS = 50
MAX_GRADERS = 10
MAX_TIMEOUT_S = 3600.0
MAX_NAME = 200
MAX_DESCRIPTION = 2_000
MAX_PATH = 1_000

ID_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"
_ID = re.compile(ID_PATTERN)
BREAKDOWN_FIELD = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
# Task metrics that metadata.group_field and metadata.control_field add (yoxla.suites.scoring).
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
TASK_TYPES: tuple[str, ...] = get_args(TaskType)
BUILTIN_GRADERS: tuple[str, ...] = get_args(BuiltinGraderName)
LOCAL_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
# A path ending like a file is a local file (then only .jsonl/.ndjson/.csv are readable);
# anything else without a source is a Hugging Face dataset id (the reference's inference).
FILE_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".json", ".parquet", ".tsv", ".txt", ".gz", ".xlsx")

Id = Annotated[str, Field(pattern=ID_PATTERN)]
TemplateText = Annotated[str, Field(max_length=MAX_TEMPLATE)]
Seconds = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)]
RelPath = Annotated[str, Field(min_length=1, max_length=MAX_PATH)]
SourceText = Annotated[str, Field(min_length=1, max_length=MAX_SOURCE)]


class Spec(BaseModel):
    """Base of every manifest record: strict, closed, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


def _no_upload_ids(data: Any, what: str) -> Any:
    if isinstance(data, dict) and "file_id" in data:
        raise ValueError(
            f"file_id names a file uploaded to the MKA1 gateway; in YOXLA {what} is a local file "
            "given by path (relative to the manifest's folder)"
        )
    return data


def _metadata(value: Any, where: str) -> dict[str, str]:
    """Metadata: at most 64 entries, keys ≤ 64 characters, scalar values ≤ 512 characters."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping")
    if len(value) > MAX_METADATA_ENTRIES:
        raise ValueError(f"{where} has {len(value)} entries (at most {MAX_METADATA_ENTRIES})")
    out: dict[str, str] = {}
    for key, val in value.items():
        if not isinstance(key, str) or not key or len(key) > MAX_METADATA_KEY:
            shown = str(key)[:80]
            raise ValueError(f"{where} key {shown!r} must be 1 to {MAX_METADATA_KEY} characters")
        if isinstance(val, bool) or not isinstance(val, str | int | float):
            raise ValueError(f"{where}.{key} must be a string (found {type(val).__name__})")
        text = str(val)
        if len(text) > MAX_METADATA_VALUE:
            raise ValueError(f"{where}.{key} is {len(text)} characters long (at most {MAX_METADATA_VALUE})")
        out[key] = text
    return out


# Datasets ------------------------------------------------------------------------------------


class LocalDataset(Spec):
    """A JSONL or CSV file next to the manifest (YOXLA's form of MKA1's uploaded file)."""

    source: Literal["local"] = "local"
    path: RelPath = Field(description="relative to the manifest's folder")
    format: Literal["jsonl", "csv"] | None = Field(default=None, description="inferred from the suffix")
    max_rows: Annotated[int, Field(ge=1, le=MAX_ROWS)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _before(cls, data: Any) -> Any:
        return _no_upload_ids(data, "a dataset")

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", value) or "://" in value:
            raise ValueError("must be a path relative to the manifest's folder")
        return value

    @model_validator(mode="after")
    def _format(self) -> LocalDataset:
        if self.format is None:
            suffix = "." + self.path.rsplit(".", 1)[-1].lower() if "." in self.path else ""
            if suffix not in LOCAL_SUFFIXES:
                raise ValueError(
                    f"cannot infer the format of {self.path!r} from its suffix; "
                    "name it .jsonl or .csv, or give format: jsonl|csv"
                )
        return self

    @property
    def resolved_format(self) -> str:
        if self.format is not None:
            return self.format
        return LOCAL_SUFFIXES["." + self.path.rsplit(".", 1)[-1].lower()]


DataFiles = str | list[str] | dict[str, str | list[str]]


class HubDataset(Spec):
    """A Hugging Face dataset, loaded through the one loading path (pinned revision, by content)."""

    source: Literal["huggingface"] = "huggingface"
    path: Annotated[str, Field(min_length=1, max_length=200)] = Field(
        description="the dataset repo (owner/name), or json/csv with data_files"
    )
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    split: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")] | None = Field(
        default=None, description="default test (train for a few-shot dataset)"
    )
    revision: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-/]{1,100}$")] | None = None
    max_rows: Annotated[int, Field(ge=1, le=MAX_ROWS)] | None = None
    data_files: DataFiles | None = None
    dataset_kwargs: dict[str, Any] | None = None

    @field_validator("path")
    @classmethod
    def _repo(cls, value: str) -> str:
        if value in ("json", "csv"):
            return value
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9][A-Za-z0-9_.\-]*)?", value):
            raise ValueError(f"{value!r} is not a Hugging Face dataset id (owner/name), json or csv")
        return value

    @field_validator("dataset_kwargs")
    @classmethod
    def _kwargs(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else bounded_json(value, "dataset_kwargs")

    @model_validator(mode="after")
    def _builder(self) -> HubDataset:
        files = self.all_data_files
        if self.path in ("json", "csv") and files is None:
            raise ValueError(f"the {self.path} builder needs data_files")
        if self.path not in ("json", "csv") and files is not None:
            raise ValueError("data_files is only for the json and csv builders")
        if self.data_files is not None and (self.dataset_kwargs or {}).get("data_files") is not None:
            raise ValueError("give data_files once: either data_files or dataset_kwargs.data_files")
        return self

    @property
    def all_data_files(self) -> Any:
        if self.data_files is not None:
            return self.data_files
        return (self.dataset_kwargs or {}).get("data_files")


def _dataset_kind(data: Any) -> str:
    """``source`` when given; otherwise local for a path with a file suffix or a format, else Hub."""
    if isinstance(data, dict):
        if data.get("source") in ("local", "huggingface"):
            return str(data["source"])
        if "source" in data:
            return "unknown"
        path = data.get("path")
        if "format" in data or "file_id" in data:
            return "local"
        if isinstance(path, str) and (
            path.lower().endswith(FILE_SUFFIXES) or path.startswith(".") or path.count("/") > 1
        ):
            return "local"
        return "huggingface"
    return "local" if isinstance(data, LocalDataset) else "huggingface"


def _kind_of(tell: Callable[[Any], str], error: str, message: str) -> Discriminator:
    """The member of a tagged union that ``tell`` names; any other value is one ``error``."""
    return Discriminator(tell, custom_error_type=error, custom_error_message=message)


Dataset = Annotated[
    Annotated[LocalDataset, Tag("local")] | Annotated[HubDataset, Tag("huggingface")],
    _kind_of(_dataset_kind, "dataset_source", "source must be local or huggingface"),
]


# Few-shot ------------------------------------------------------------------------------------


class Fewshot(Spec):
    count: Annotated[int, Field(ge=0, le=MAX_FEWSHOT)]
    dataset: Dataset | None = Field(default=None, description="default: the task's own rows")
    prompt_template: TemplateText | None = None
    target_template: TemplateText | None = None
    example_template: TemplateText = "{{prompt}}\n{{target}}"
    separator: Annotated[str, Field(max_length=1_000)] = "\n\n"
    strategy: Literal["first", "random"] = "first"
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 0


# Python code ---------------------------------------------------------------------------------


class _PythonCode(Spec):
    type: Literal["python"]
    source: SourceText | None = None
    path: RelPath | None = None

    @model_validator(mode="before")
    @classmethod
    def _before(cls, data: Any) -> Any:
        return _no_upload_ids(data, "Python code")

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
    _kind_of(_grader_kind, "grader_type", "grader type must be python or builtin"),
]


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


# Metrics -------------------------------------------------------------------------------------


class Metric(Spec):
    id: Id
    aggregation: Literal["mean", "none"] = "mean"
    higher_is_better: bool = True
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION)] | None = None


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


# Task and manifest ---------------------------------------------------------------------------


_FIELD = Annotated[str, Field(pattern=BREAKDOWN_FIELD.pattern)]


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
    gate_threshold: Annotated[float, Field(ge=0, le=100)] | None = None
    gate_reason: Annotated[str, Field(min_length=1, max_length=MAX_DESCRIPTION)] | None = None

    @model_validator(mode="after")
    def _pairs(self) -> TaskAnalysis:
        if self.control_values is not None and self.control_field is None:
            raise ValueError("control_values needs control_field")
        if (self.gate_threshold is None) != (self.gate_reason is None):
            raise ValueError("gate_threshold and gate_reason go together")
        return self


class Analysis(Spec):
    """YOXLA: the suite's analysis section (per task, and the board's ranking order)."""

    tasks: Annotated[dict[Id, TaskAnalysis], Field(max_length=MAX_TASKS)] = Field(default_factory=dict)
    ranking: (
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=64)]], Field(min_length=1, max_length=10)
        ]
        | None
    ) = None


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
        return _metadata(value, "metadata")

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


HEADLINE_RULES = ("mean_of_tasks", "mean_of_groups")


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
            if (declared.group_field or declared.control_field) and (task.group_field or task.control_field):
                raise ValueError(
                    f"analysis.tasks.{tid}: declare groups and controls in one place (metadata or analysis)"
                )
            reserved = (GROUP_METRICS if declared.group_field else ()) + (
                CONTROL_METRICS if declared.control_field else ()
            )
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
        return _metadata(value, "metadata")

    @property
    def ranking(self) -> tuple[str, ...] | None:
        """``metadata.ranking`` (comma-separated metric names) or ``analysis.ranking``, checked;
        None when not declared."""
        from yoxla.calibration.ranking import check_suite_order, suite_order

        if self.analysis is not None and self.analysis.ranking is not None:
            return check_suite_order(tuple(self.analysis.ranking))
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
