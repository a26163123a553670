"""The ``yoxla-result`` version 2 body (the built-in engine's, read, no longer written by runs):
:class:`ResultFileV2` and its task records. Only the test boards of
:mod:`yoxla.testing.synthetic` still write one (through the replay admission uses).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    model_validator,
)

from yoxla.extract.parsing import NearMiss
from yoxla.record.base import (
    LEGACY_FORMAT_VERSION,
    MAX_BREAKDOWN_VALUES,
    MAX_COMMAND,
    MAX_PREDICTIONS,
    MAX_RAW,
    MAX_TASKS,
    Block,
    Calibration,
    Correlation,
    Count,
    DatasetInfo,
    Distribution,
    ErrorText,
    ExampleId,
    Hash,
    Label,
    MetricName,
    ModelInfo,
    Outcome,
    RawText,
    Reason,
    Record,
    RunBasics,
    Score,
    Signature,
    SystemPrompt,
    TaskId,
    Timestamp,
    Unit,
    Usage,
)
from yoxla.score.graders import SPAN_METRICS

# The metrics a v2 task stores, by the built-in evaluator that scored it, in their order (mae
# and rmse only with a valid answer), and the one row field a task breaks its score down by.
_ABSTAIN = ("overall_score", "answerability_accuracy", "unanswerable_accuracy", "abstention_rate")
_COMMON = ("n", "n_valid", "invalid_output_rate", "generation_errors", "truncated", "near_miss", "outcomes")
LEGACY_METRICS: dict[str, tuple[str, ...]] = {
    "classification": (
        *_COMMON,
        "accuracy",
        "macro_f1",
        "per_class_accuracy",
        "modal_answer_share",
        "modal_answer",
    ),
    "span": (*_COMMON, *SPAN_METRICS),
    "abstention": (*_COMMON, *_ABSTAIN, *SPAN_METRICS, "n_answerable"),
    "correlation": (*_COMMON, "spearman", "pearson", "spearman_valid", "pearson_valid", "mae", "rmse"),
}
LEGACY_BREAKDOWNS = {
    "minimal_pairs_v1": "phenomenon",
    "az_tr_interference_v1": "interference_type",
    "knowledge_choice_v1": "category",
    "rag_verification_v1": "claim_type",
    "rag_selection_v1": "item_type",
}


class PredictionV2(Record):
    """One example: the stored answer and what scoring derived from it."""

    id: ExampleId
    raw: RawText | None = Field(description="the model's output as returned; reasoning kept inside <think>")
    parsed: Annotated[str, Field(max_length=MAX_RAW)] | float | None = Field(
        description="the parsed answer (label, number or quote); null when invalid"
    )
    valid: bool
    abstained: bool
    outcome: Outcome
    reason: Reason | None = Field(description="why the answer is invalid; null when valid")
    near_miss: NearMiss | None = Field(description="diagnostic kind of an invalid answer")
    score: Unit = Field(description="the example's score in [0, 1]")
    finish_reason: Annotated[str, Field(max_length=64)] | None
    error: ErrorText | None = Field(description="the generation error; null when the request succeeded")
    distribution: Distribution | None = Field(
        default=None, description="probabilities over the answer space; absent when not available"
    )
    control: Literal[True] | None = Field(
        default=None, description="true for a declared control row: run, not scored; absent otherwise"
    )


class CellV2(Record):
    """One value of a breakdown: its accuracy (or mean score) and how many examples."""

    accuracy: Unit
    n: Count


class TaskMetricsV2(Record):
    """A v2 task's metrics, typed (laid out from the replay by :func:`yoxla.admission.v2.legacy_task`).

    Breakdowns by a row field are the extra keys ``per_<field>_accuracy`` or
    ``per_<field>_score``, each a mapping of value → :class:`CellV2`.
    """

    model_config = ConfigDict(
        strict=True, extra="allow", allow_inf_nan=False, frozen=True, validate_default=False
    )
    __pydantic_extra__: dict[str, dict[Label, CellV2]] = Field(init=False)  # type: ignore[assignment]

    n: Count
    n_valid: Count
    invalid_output_rate: Unit
    generation_errors: Count
    truncated: Count
    near_miss: dict[NearMiss, Count]
    outcomes: dict[Outcome, Count]
    # classification
    accuracy: Unit | None = None
    macro_f1: Unit | None = None
    per_class_accuracy: dict[Label, CellV2] | None = None
    modal_answer_share: Unit | None = None
    modal_answer: Label | None = None
    # spans (extractive QA, and the answerable part of QA with abstention)
    span_recall: Unit | None = None
    span_precision: Unit | None = None
    exact_span_rate: Unit | None = None
    unsupported_rate: Unit | None = None
    over_sentence_rate: Unit | None = None
    token_f1: Unit | None = None
    normalized_em: Unit | None = None
    strict_em: Unit | None = None
    # abstention
    overall_score: Unit | None = None
    answerability_accuracy: Unit | None = None
    unanswerable_accuracy: Unit | None = None
    abstention_rate: Unit | None = None
    n_answerable: Count | None = None
    # correlation (STS)
    spearman: Correlation | None = None
    pearson: Correlation | None = None
    spearman_valid: Correlation | None = None
    pearson_valid: Correlation | None = None
    mae: Annotated[float, Field(ge=0.0, le=1e6)] | None = None
    rmse: Annotated[float, Field(ge=0.0, le=1e6)] | None = None

    @model_validator(mode="after")
    def _breakdown_names(self) -> TaskMetricsV2:
        extra = self.__pydantic_extra__ or {}
        for key, cells in extra.items():
            if not re.fullmatch(r"per_[a-z][a-z0-9_]{0,60}_(accuracy|score)", key):
                raise ValueError(f"unknown metric {key[:80]!r}")
            if len(cells) > MAX_BREAKDOWN_VALUES:
                raise ValueError(f"{key} has more than {MAX_BREAKDOWN_VALUES} values")
        return self

    def get(self, key: str, default: Any = None) -> Any:
        """Read a metric by name (breakdowns included), as the views do."""
        if key in type(self).model_fields:
            value = getattr(self, key)
            return default if value is None else value
        return (self.__pydantic_extra__ or {}).get(key, default)


class TaskResultV2(Record):
    """One task of a run: its identity (what was asked, on which rows) and its results."""

    block: Block
    rows: Count = Field(description="examples scored (= len(predictions))")
    fingerprint: Hash = Field(description="SHA-256 over the task's rows as read")
    contract_hash: Hash
    prompt_hash: Hash
    primary: MetricName = Field(description="the metric the task score is taken from")
    score: Score
    metrics: TaskMetricsV2
    predictions: Annotated[list[PredictionV2], Field(max_length=MAX_PREDICTIONS)]
    calibration: Calibration | None = Field(
        default=None,
        description="answer probabilities, group consistency and controls; absent when the task has "
        "none of them (no distribution stored, no groups or controls declared)",
    )


class RunConditionsV2(Record):
    """What changes comparability. The board ranks only runs under the same conditions."""

    thinking: bool = Field(description="reasoning was asked for (the benchmark's standard is off)")
    thinking_budget: Annotated[int, Field(ge=0, le=10**7)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=10.0)] | None = Field(
        default=None, description="an override of every task's temperature; null: each task's own (0)"
    )
    system_prompt: SystemPrompt = Field(
        default="contract", description="contract: each task's frozen system prompt, sent as is"
    )
    limit: Annotated[int, Field(ge=1)] | None = Field(default=None, description="first N rows per task")
    filters: dict[MetricName, Annotated[list[Label], Field(max_length=1000)]] = Field(
        default_factory=dict, description="row filters of a partial run (never on the board)"
    )

    @property
    def group(self) -> str:
        """The board a run is ranked on: standard, thinking, or non-standard."""
        if self.temperature is not None or self.system_prompt != "contract":
            return "non-standard"
        return "thinking" if self.thinking else "standard"


class RunInfoV2(RunBasics):
    dataset: DatasetInfo
    chat_template_hash: Hash | None
    command: Annotated[str, Field(max_length=MAX_COMMAND)]
    conditions: RunConditionsV2


class ScoresV2(Record):
    yoxla: Score
    blocks: dict[Block, Score]
    tasks: Annotated[dict[TaskId, Score], Field(max_length=MAX_TASKS)]


class ResultFileV2(Record):
    """One model on one edition: metadata, scores, every prediction, digest, optional signature."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        title="YOXLA result file",
        json_schema_extra={
            "$id": f"urn:yoxla:result-format:{LEGACY_FORMAT_VERSION}",
            "description": "One self-contained result of one model on one edition of the YOXLA "
            f"benchmark, format version {LEGACY_FORMAT_VERSION} (the built-in engine's; read, no "
            "longer written by runs). Generated from yoxla/record/result.py; "
            "see docs/result-format.md.",
        },
    )

    format: Literal["yoxla-result"]
    format_version: Literal[2]
    edition: Literal["v1", "sample"]
    model: ModelInfo
    run: RunInfoV2
    suite_hash: Hash
    tasks: Annotated[dict[TaskId, TaskResultV2], Field(min_length=1, max_length=MAX_TASKS)]
    scores: ScoresV2
    usage: Usage
    generation_errors: Count
    created_at: Timestamp
    content_sha256: Hash
    signature: Signature | None = None
