"""The result file as typed records: one writer, one reader, one published schema.

A result file is one self-contained JSON document per model and suite (an edition of the
benchmark is a suite). Every run writes ``format: yoxla-result``, ``format_version: 3`` with
the suite body (:class:`SuiteResultFile`, the suite section below). Two older formats are still
read: ``yoxla-suite-result`` version 1 (the same body, parsed into the same record) and
``yoxla-result`` version 2 (the built-in engine's body, :class:`ResultFile`). This module is the
only place that says what they hold:

* a run builds it with :func:`build_suite_document` (version 3; the built-in engine's
  version 2, for an older run folder and ``leaderboard/synthetic.py``, with
  :func:`build_task_result` and :func:`build_document`);
* admission reads it with :func:`parse_record` (the one reader, dispatching on ``format`` and
  ``format_version``), after the bytes have passed :mod:`yoxla.strictjson`;
* ``yoxla/schema/result.schema.json`` is :func:`json_schema` written out (a test fails when
  the committed schema and the generated one differ).

Every limit lives here: lengths of names, ids and texts, characters allowed in names (no
control, bidi or zero-width characters), numbers finite and in range, list sizes. Nesting
is bounded by the models themselves (every free-form mapping is typed), and by the reader's
depth limit before that.

Validation is strict: no coercion (``"12"`` is not a number, ``true`` is not 1).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from yoxla.alignment import align_by_id
from yoxla.parsing import NearMiss
from yoxla.suites.generation import GenerationSettings
from yoxla.suites.judge import JudgeRecord

FORMAT = "yoxla-result"
FORMAT_VERSION = 3  # what every run writes: the suite body (SuiteResultFile)
LEGACY_FORMAT_VERSION = 2  # the built-in engine's body (ResultFile): read; written only for older run folders
SUITE_FORMAT = "yoxla-suite-result"  # the suite body's first header: read, no longer written
SUITE_FORMAT_VERSION = 1
# (format, format_version) the reader accepts; every one but LEGACY_FORMAT_VERSION has the suite body.
ACCEPTED_FORMATS = (
    (FORMAT, FORMAT_VERSION),
    (FORMAT, LEGACY_FORMAT_VERSION),
    (SUITE_FORMAT, SUITE_FORMAT_VERSION),
)
SUITE_HEADERS = ((FORMAT, FORMAT_VERSION), (SUITE_FORMAT, SUITE_FORMAT_VERSION))
SIGNATURE_FIELDS = ("content_sha256", "signature")

# Limits ------------------------------------------------------------------------------------
MAX_NAME = 200  # model ids, reported model ids
MAX_DISPLAY_NAME = 80
MAX_PROVIDER = 64
MAX_ID = 200  # example ids, run ids
MAX_RAW = 1_000_000  # characters of one stored model output
MAX_ERROR = 2_000
MAX_COMMAND = 4_000
MAX_URL = 500
MAX_LABEL = 500  # a label, a breakdown value, a near-miss kind
MAX_TASKS = 100
MAX_PREDICTIONS = 1_000_000
MAX_BREAKDOWN_VALUES = 10_000
MAX_COUNT = 10**15
MAX_TEXT = 2_000  # short free texts (licence, framework version, …)
MAX_SPACE = 1_000  # labels of one answer space (a distribution's size)
ECE_BINS = 15  # bins of the stored reliability diagram (yoxla.calibration.metrics.ECE_BINS)

_HASH_RE = r"^sha256:[0-9a-f]{64}$"
_TIMESTAMP_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$"
_TASK_ID_RE = r"^[A-Za-z0-9_.\-]{1,64}$"
_PROVIDER_RE = r"^[a-z0-9][a-z0-9._\-]{0,63}$"
_METRIC_RE = r"^[A-Za-z0-9_.\-]{1,64}$"
_SECRET_QUERY = re.compile(r"(?i)(key|token|secret|password|passwd|auth|sig|signature|credential)")


def _name_validator(max_len: int) -> Any:
    from yoxla.safetext import name_problems

    def check(value: str) -> str:
        problems = name_problems(value, max_len)
        if problems:
            raise ValueError("the name " + "; ".join(problems))
        return value

    return AfterValidator(check)


def _public_url(value: str) -> str:
    """A stored base URL: http(s), no user info, no query, no fragment (credentials hide there)."""
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http(s) URL")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError("must not carry user info (credentials)")
    if parts.query or parts.fragment:
        raise ValueError("must not carry a query or fragment (keys hide there)")
    return value


# Lone surrogates never pass: pydantic refuses text that is not valid Unicode.
Text = Annotated[str, Field(max_length=MAX_TEXT)]
RawText = Annotated[str, Field(max_length=MAX_RAW)]
ErrorText = Annotated[str, Field(max_length=MAX_ERROR)]
Label = Annotated[str, Field(max_length=MAX_LABEL)]
# Ids: no control, format (bidi, zero-width), private-use or separator characters, no white
# space at either end; checked by a pattern (fast on 1,443 ids) that every JSON Schema
# validator understands (explicit ranges, no Unicode property classes).
_ID_BAD = r"\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ue000-\uf8ff\ufeff\ufff0-\uffff"
_ID_CHAR = f"[^{_ID_BAD}]"
_ID_END = f"[^\\s{_ID_BAD}]"
ExampleId = Annotated[
    str, Field(min_length=1, max_length=MAX_ID, pattern=f"^{_ID_END}(?:{_ID_CHAR}*{_ID_END})?$")
]
ModelName = Annotated[str, Field(min_length=1, max_length=MAX_NAME), _name_validator(MAX_NAME)]
DisplayName = Annotated[
    str, Field(min_length=1, max_length=MAX_DISPLAY_NAME), _name_validator(MAX_DISPLAY_NAME)
]
ProviderName = Annotated[str, Field(pattern=_PROVIDER_RE)]
TaskId = Annotated[str, Field(pattern=_TASK_ID_RE)]
MetricName = Annotated[str, Field(pattern=_METRIC_RE)]
Hash = Annotated[str, Field(pattern=_HASH_RE)]
Timestamp = Annotated[str, Field(pattern=_TIMESTAMP_RE, max_length=40)]
Url = Annotated[str, Field(max_length=MAX_URL), AfterValidator(_public_url)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Unit = Annotated[float, Field(ge=0.0, le=1.0)]
Score = Annotated[float, Field(ge=0.0, le=100.0)]
Correlation = Annotated[float, Field(ge=-1.0, le=1.0)]
Outcome = Literal["correct", "wrong", "invalid", "abstained", "truncated", "generation_error"]
Reason = Literal["empty_output", "not_in_answer_space", "not_a_number", "out_of_range", "generation_error"]
Block = Literal["understanding", "language", "knowledge", "rag"]


class Record(BaseModel):
    """Base of every stored record: strict, closed, finite, immutable."""

    model_config = ConfigDict(
        strict=True, extra="forbid", allow_inf_nan=False, frozen=True, validate_default=False
    )


# Predictions and metrics ---------------------------------------------------------------------


R = TypeVar("R", bound=Record)
P = ParamSpec("P")


class Distribution(Record):
    """One example's probabilities over its answer space (``LabelDistribution.to_dict()``).

    Stored data, like ``raw``: derived when the run was finished (from the provider's token
    logprobs, or by scoring every label with a local model) and checked on reading (sums to
    1, labels of the row's space, ``top`` the most probable). Absent when the provider gave
    none; a label in ``missing`` could not be recovered (absent, not zero).
    """

    method: Literal["token_logprobs", "label_scoring"]
    probs: Annotated[dict[Label, Unit], Field(min_length=1, max_length=MAX_SPACE)] = Field(
        description="recovered labels → probability, normalised over the recovered labels (Σ = 1)"
    )
    top: Label = Field(description="the most probable recovered label (ties: the earlier in the space)")
    mass_outside: Unit = Field(
        description="1 − the raw mass of the recovered labels: answers outside the space"
    )
    missing: Annotated[dict[Label, Unit], Field(max_length=MAX_SPACE)] | None = Field(
        default=None, description="labels that could not be recovered → upper bound on their raw mass"
    )
    unlisted: Unit | None = Field(
        default=None, description="raw mass below the top-k cut-off, not attributed"
    )
    assumed: Annotated[list[Label], Field(max_length=MAX_SPACE)] | None = Field(
        default=None, description="labels whose mass includes a path assumed to finish the label"
    )


class Prediction(Record):
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


class Cell(Record):
    """One value of a breakdown: its accuracy (or mean score) and how many examples."""

    accuracy: Unit
    n: Count


class TaskMetrics(Record):
    """Exactly the metrics :func:`yoxla.rescoring.rescore_task` returns, typed.

    Breakdowns by a row field are the extra keys ``per_<field>_accuracy`` or
    ``per_<field>_score``, each a mapping of value → :class:`Cell`.
    """

    model_config = ConfigDict(
        strict=True, extra="allow", allow_inf_nan=False, frozen=True, validate_default=False
    )
    __pydantic_extra__: dict[str, dict[Label, Cell]] = Field(init=False)  # type: ignore[assignment]

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
    per_class_accuracy: dict[Label, Cell] | None = None
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
    def _breakdown_names(self) -> TaskMetrics:
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

    def breakdowns(self) -> dict[str, dict[str, Cell]]:
        return dict(self.__pydantic_extra__ or {})


class ReliabilityBin(Record):
    """One bin of the reliability diagram: confidences of the most probable label in (lower, upper]."""

    lower: Unit
    upper: Unit
    count: Count
    mean_confidence: Unit | None = Field(description="null for an empty bin")
    accuracy: Unit | None = Field(description="share of the bin's cases whose most probable label is gold")


class Reliability(Record):
    ece: Unit | None = Field(description="expected calibration error; null without probabilities")
    n: Count
    bins: Annotated[list[ReliabilityBin], Field(min_length=ECE_BINS, max_length=ECE_BINS)]


class GroupConsistency(Record):
    value: Unit | None = Field(
        description="share of groups answered correctly throughout; null without groups"
    )
    n_groups: Count
    n_consistent: Count
    n_rows: Count


class ControlSummary(Record):
    n: Count
    valid_choice_rate: Unit | None
    mean_max_probability: Unit | None
    n_with_probs: Count


class Calibration(Record):
    """How sure the model was (``yoxla.calibration.metrics.calibration_report``), re-derived from
    the stored distributions; docs/calibration.md gives every formula."""

    n: Count
    n_scored: Count = Field(description="cases that are not controls")
    n_with_probs: Count = Field(description="scored cases with a complete distribution")
    n_partial: Count = Field(description="cases whose distribution is partial (some labels missing)")
    accuracy: Unit | None
    mean_gold_p: Unit | None
    high_confidence_error_rate: Unit | None
    brier: Annotated[float, Field(ge=0.0, le=2.0)] | None
    ece: Unit | None
    answer_agreement: Unit | None
    reliability: Reliability
    groups: GroupConsistency
    controls: ControlSummary


class TaskResult(Record):
    """One task of a run: its identity (what was asked, on which rows) and its results."""

    block: Block
    rows: Count = Field(description="examples scored (= len(predictions))")
    fingerprint: Hash = Field(description="SHA-256 over the task's rows as read")
    contract_hash: Hash
    prompt_hash: Hash
    primary: MetricName = Field(description="the metric the task score is taken from")
    score: Score
    metrics: TaskMetrics
    predictions: Annotated[list[Prediction], Field(max_length=MAX_PREDICTIONS)]
    calibration: Calibration | None = Field(
        default=None,
        description="answer probabilities, group consistency and controls; absent when the task has "
        "none of them (no distribution stored, no groups or controls declared)",
    )


# Model, run, scores ---------------------------------------------------------------------------


class ModelMetadata(Record):
    """Optional facts about the model, shown on its page; the runner fills what it can find."""

    parameters: Annotated[int, Field(ge=0, le=10**14)] | None = None
    open_weights: bool | None = None
    licence: Text | None = None
    card_url: Url | None = None
    hub_repo: ModelName | None = None
    hub_revision: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")] | None = None


class ModelInfo(Record):
    provider: ProviderName = Field(description="registry name of the provider")
    model: ModelName = Field(description="the model id as asked for")
    reported_model: ModelName | None = Field(description="the id the provider reported (most frequent)")
    base_url: Url | None = Field(description="API base without credentials; null for local and offline")
    display_name: DisplayName
    metadata: ModelMetadata | None = None


# A branch, tag or commit: never a URL (so never credentials), a control character or a space.
HubRevision = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-/]{1,100}$")]


class DatasetInfo(Record):
    source: Annotated[str, Field(max_length=MAX_URL)] | None
    revision: HubRevision | None


SystemPrompt = Literal["contract", "changed"]


class RunConditions(Record):
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
    def standard(self) -> bool:
        return (
            not self.thinking
            and self.temperature is None
            and self.system_prompt == "contract"
            and self.limit is None
            and not self.filters
        )

    @property
    def group(self) -> str:
        """The board a run is ranked on: standard, thinking, or non-standard."""
        if self.temperature is not None or self.system_prompt != "contract":
            return "non-standard"
        return "thinking" if self.thinking else "standard"


class _RunBasics(Record):
    """The fields a benchmark and a suite run's ``run`` block both start with."""

    run_id: ExampleId
    framework_version: Annotated[str, Field(max_length=64)]
    started_at: Timestamp
    finished_at: Timestamp | None
    workers: Annotated[int, Field(ge=1, le=100_000)]
    batch_size: Annotated[int, Field(ge=1, le=100_000)]


class RunInfo(_RunBasics):
    dataset: DatasetInfo
    chat_template_hash: Hash | None
    command: Annotated[str, Field(max_length=MAX_COMMAND)]
    conditions: RunConditions


class Scores(Record):
    yoxla: Score
    blocks: dict[Block, Score]
    tasks: Annotated[dict[TaskId, Score], Field(max_length=MAX_TASKS)]


class Usage(Record):
    prompt_tokens: Count
    completion_tokens: Count
    total_tokens: Count
    reasoning_tokens: Count | None = None


class Signature(Record):
    algorithm: Literal["ed25519"]
    key_id: Annotated[str, Field(pattern=r"^ed25519:[0-9a-f]{16}$")]
    public_key: Annotated[str, Field(max_length=100)] = Field(description="base64 of the raw 32-byte key")
    value: Annotated[str, Field(max_length=200)] = Field(description="base64 signature over content_sha256")


class ResultFile(Record):
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
            "longer written by runs). Generated from yoxla/record.py; "
            "see docs/result-format.md.",
        },
    )

    format: Literal["yoxla-result"]
    format_version: Literal[2]
    edition: Literal["v1", "sample"]
    model: ModelInfo
    run: RunInfo
    suite_hash: Hash
    tasks: Annotated[dict[TaskId, TaskResult], Field(min_length=1, max_length=MAX_TASKS)]
    scores: Scores
    usage: Usage
    generation_errors: Count
    created_at: Timestamp
    content_sha256: Hash
    signature: Signature | None = None


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of result files (draft 2020-12): the suite body
    (:class:`SuiteResultFile`: ``yoxla-result`` 3, ``yoxla-suite-result`` 1) or the built-in
    engine's (:class:`ResultFile`: ``yoxla-result`` 2), told apart by ``format_version``."""
    return _combined_schema({"legacy": ResultFile, "suite": SuiteResultFile})


# Reading --------------------------------------------------------------------------------------


def format_errors(exc: ValidationError, limit: int = 3) -> list[str]:
    """Plain one-line reasons from a validation error (the first few are enough to act on)."""
    out = []
    for err in exc.errors(include_url=False, include_input=False)[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "the top level"
        out.append(f"does not match the result format at {where}: {err['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        out.append(f"… and {more} more format problem(s)")
    return out


def accepted_formats() -> str:
    """What the reader accepts, in words (the reason given for any other format or version)."""
    versions: dict[str, list[str]] = {}
    for fmt, version in ACCEPTED_FORMATS:
        versions.setdefault(fmt, []).append(str(version))
    return ", ".join(f"{fmt!r} version {' or '.join(vs)}" for fmt, vs in versions.items())


def _shown(value: Any, limit: int) -> str:
    return repr(value)[:limit] if isinstance(value, str | int | float | None) else type(value).__name__


def _top_level_problem(doc: dict[str, Any], model: type[Record], header: str) -> str | None:
    """One reason when the document's top-level keys are not ``model``'s (a body of another
    format under this header), naming what is missing and what is unexpected; else None."""
    fields = model.model_fields
    required = {name for name, f in fields.items() if f.is_required()}
    missing = sorted(required - doc.keys())
    unexpected = sorted(k for k in doc if k not in fields)
    if not missing and not unexpected:
        return None
    parts = []
    if missing:
        parts.append("missing " + ", ".join(_shown(k, 40) for k in missing[:5]))
    if unexpected:
        more = f" and {len(unexpected) - 5} more" if len(unexpected) > 5 else ""
        parts.append("unexpected " + ", ".join(_shown(k, 40) for k in unexpected[:5]) + more)
    other = ResultFile if model is SuiteResultFile else SuiteResultFile
    hint = ""
    if not {n for n, f in other.model_fields.items() if f.is_required()} - doc.keys():
        body = f"{FORMAT!r} version {LEGACY_FORMAT_VERSION if other is ResultFile else FORMAT_VERSION}"
        hint = f" (that is the body of {body})"
    return f"does not match the result format {header} at the top level: " + "; ".join(parts) + hint


def parse_record(doc: Any) -> tuple[ResultFile | SuiteResultFile | None, list[str]]:
    """(record, []) or (None, reasons): the one reader of a parsed result document.

    Dispatches on (``format``, ``format_version``): ``yoxla-result`` 3 (what runs write) and
    ``yoxla-suite-result`` 1 parse into :class:`SuiteResultFile`, ``yoxla-result`` 2 into
    :class:`ResultFile`; anything else is refused with one reason naming what is accepted.
    """
    if not isinstance(doc, dict):
        return None, [f"not a JSON object (found {type(doc).__name__})"]
    found, version = doc.get("format"), doc.get("format_version")
    if not isinstance(found, str) or found not in {fmt for fmt, _ in ACCEPTED_FORMATS}:
        return None, [
            f"not a YOXLA result file (format is {_shown(found, 60)}; this leaderboard reads {accepted_formats()})"
        ]
    if isinstance(version, bool) or not isinstance(version, int) or (found, version) not in ACCEPTED_FORMATS:
        return None, [
            f"unknown format version {_shown(version, 20)} of {found!r} (this leaderboard reads {accepted_formats()})"
        ]
    model: type[ResultFile] | type[SuiteResultFile]
    model = ResultFile if (found, version) == (FORMAT, LEGACY_FORMAT_VERSION) else SuiteResultFile
    problem = _top_level_problem(doc, model, f"{found!r} version {version}")
    if problem:
        return None, [problem]
    try:
        return model.model_validate(doc), []
    except ValidationError as exc:
        return None, format_errors(exc)


# Writing --------------------------------------------------------------------------------------


def _as_record(model: type[R], derive: Callable[P, dict[str, Any]]) -> Callable[P, R]:
    """``derive`` (a task's derivation as stored) made a typed, validated record: what the runner writes."""

    def build(*args: P.args, **kwargs: P.kwargs) -> R:
        return model.model_validate(derive(*args, **kwargs))

    build.__doc__ = f":func:`{derive.__name__}` as a typed, validated record (what the runner writes)."
    return build


def derive_task(
    task: Any,
    rows: Sequence[Mapping[str, Any]],
    raws: Sequence[str | None],
    finish_reasons: Sequence[str | None],
    errors: Sequence[str | None],
    *,
    fingerprint: str,
    cache: Any = None,
    distributions: Sequence[Mapping[str, Any] | None] | None = None,
    declarations: Any = None,
) -> dict[str, Any]:
    """The one derivation of a task as stored: re-score the answers and lay out what follows.

    ``rows`` are the task's rows in dataset order and ``raws``/``finish_reasons``/``errors``
    the stored answers in the same order; ``distributions`` the stored probabilities over
    each row's answer space (``Distribution`` documents, or None), and ``declarations`` the
    task's :class:`yoxla.declarations.TaskDeclarations` (groups, controls). Returns the
    task's JSON document (exactly what the result file holds under ``tasks.<id>``);
    admission compares it with the stored one.

    A stored distribution is read back for its row's answer space and written out again;
    one that is inconsistent (does not sum to 1, a label outside the space, a ``top`` that
    is not the most probable), or stored for a generation error or a task without a closed
    answer space, is dropped, so a file that stores one differs from its derivation. Rows
    declared as controls are marked and left out of the metrics and the score; the
    ``calibration`` block is derived from the distributions, groups and controls
    (:mod:`yoxla.calibration.stored`).
    """
    from yoxla.calibration.stored import checked_distribution, task_calibration
    from yoxla.rescoring import rescore_task, stored_value

    n = len(rows)
    if distributions is not None and len(distributions) != n:
        raise ValueError(f"{task.id}: {n} rows but {len(distributions)} distributions")
    controls = (
        [bool(declarations.is_control(row)) for row in rows]
        if declarations is not None and declarations.has_controls
        else None
    )
    scored = rescore_task(
        task, rows, raws, finish_reasons, errors, cache=cache, rows_token=fingerprint, controls=controls
    )
    preds = [
        {
            "id": res.id,
            "raw": raw,
            "parsed": stored_value(task, res),
            "valid": res.valid,
            "abstained": res.abstained,
            "outcome": res.outcome,
            "reason": "generation_error" if err else res.reason,
            "near_miss": res.near_miss,
            "score": float(res.score if res.score is not None else 0.0),
            "finish_reason": fr,
            "error": err,
        }
        for res, raw, fr, err in zip(scored.results, raws, finish_reasons, errors, strict=True)
    ]
    for i, pred in enumerate(preds):
        stored = distributions[i] if distributions is not None else None
        if stored is not None and errors[i] is None:
            dist = checked_distribution(task, rows[i], stored)
            if dist is not None:
                pred["distribution"] = dist
        if controls is not None and controls[i]:
            pred["control"] = True
    doc: dict[str, Any] = {
        "block": task.block,
        "rows": len(preds),
        "fingerprint": fingerprint,
        "contract_hash": task.contract_hash,
        "prompt_hash": task.prompt_hash,
        "primary": task.primary,
        "score": scored.score,
        "metrics": scored.metrics,
        "predictions": preds,
    }
    calibration = task_calibration(task, rows, preds, declarations)
    if calibration is not None:
        doc["calibration"] = calibration
    return doc


build_task_result = _as_record(TaskResult, derive_task)


def summary_scores(suite: Any, tasks: Mapping[str, TaskResult]) -> Scores:
    """Task scores, block macro averages and YOXLA, from the task results."""
    from yoxla.stats import block_scores, yoxla_score

    task_scores = {tid: t.score for tid, t in tasks.items()}
    blocks = block_scores(suite, task_scores)
    return Scores.model_construct(yoxla=yoxla_score(blocks), blocks=blocks, tasks=task_scores)


def count_generation_errors(tasks: Mapping[str, TaskResult]) -> int:
    return sum(p.error is not None for t in tasks.values() for p in t.predictions)


def task_document(task: TaskResult) -> dict[str, Any]:
    """A task as stored: every field, metrics exactly as the evaluator gave them."""
    return task.model_dump(mode="json", exclude_unset=True)


def build_document(
    *,
    edition: str,
    model: ModelInfo,
    run: RunInfo,
    suite_hash: str,
    tasks: Mapping[str, TaskResult],
    usage: Usage,
    created_at: str,
    sign_key: Any = None,
) -> dict[str, Any]:
    """The whole result document (a JSON-ready dict) with its digest, signed when a key is given.

    Optional fields the writer did not set are absent, not null. The document is validated
    against :class:`ResultFile` before it is returned, so the writer can never produce a
    file the reader refuses.
    """
    from yoxla.suite import load_suite

    body = {
        "format": FORMAT,
        "format_version": LEGACY_FORMAT_VERSION,
        "edition": edition,
        "model": model.model_dump(mode="json", exclude_unset=True),
        "run": run.model_dump(mode="json", exclude_unset=True),
        "suite_hash": suite_hash,
        "tasks": {tid: task_document(t) for tid, t in tasks.items()},
        "scores": summary_scores(load_suite(), tasks).model_dump(mode="json"),
        "usage": usage.model_dump(mode="json", exclude_unset=True),
        "generation_errors": count_generation_errors(tasks),
        "created_at": created_at,
    }
    return _sealed(body, sign_key, ResultFile)


# Comparing --------------------------------------------------------------------------------------

TOLERANCE = 1e-9


class _Missing:
    """A field present on one side only (shown as "absent")."""

    def __repr__(self) -> str:
        return "absent"


MISSING: Any = _Missing()


def first_difference(
    stored: Any, derived: Any, path: str = "", tol: float = TOLERANCE
) -> tuple[str, Any, Any] | None:
    """(path, stored value, derived value) of the first field that differs; None when they agree.

    Numbers agree within ``tol``; booleans only with booleans; mappings need the same keys
    (a key missing on one side is reported as :data:`MISSING` on that side). Iterative, so a
    deep document cannot exhaust the stack.
    """
    try:
        if stored == derived:  # the common case, at C speed (types were checked by the record)
            return None
    except RecursionError:
        pass
    stack: list[tuple[Any, Any, str]] = [(stored, derived, path)]
    while stack:
        a, b, where = stack.pop()
        here = where or "the document"
        if isinstance(a, bool) or isinstance(b, bool):
            if not (isinstance(a, bool) and isinstance(b, bool) and a == b):
                return here, a, b
            continue
        if isinstance(a, int | float) and isinstance(b, int | float):
            fa, fb = float(a), float(b)
            if not (math.isfinite(fa) and math.isfinite(fb)) or abs(fa - fb) > tol:
                return here, a, b
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for k in b:
                if k not in a:
                    return (f"{where}.{k}" if where else str(k)), MISSING, b[k]
            for k in a:
                if k not in b:
                    return (f"{where}.{k}" if where else str(k)), a[k], MISSING
            for k in reversed(list(b)):
                stack.append((a[k], b[k], f"{where}.{k}" if where else str(k)))
            continue
        if isinstance(a, list | tuple) and isinstance(b, list | tuple):
            if len(a) != len(b):
                return f"{here} (length)", len(a), len(b)
            for i in range(len(b) - 1, -1, -1):
                stack.append((a[i], b[i], f"{where}[{i}]"))
            continue
        if type(a) is not type(b) or a != b:
            return here, a, b
    return None


def outcome_counts(predictions: Sequence[Prediction]) -> dict[str, int]:
    return dict(sorted(Counter(p.outcome for p in predictions).items()))


# Suite result files ----------------------------------------------------------------------------
#
# A suite result file is one model on one suite (a manifest under ``suites/``, or a package
# suite ``yoxla-<edition>``): the same typed-record rules as above (strict, closed, bounded,
# finite), the header ``yoxla-result`` 3 (read too: ``yoxla-suite-result`` 1). The writer is
# :func:`derive_suite_task` / :func:`build_suite_task_result` / :func:`build_suite_document`;
# the reader is :func:`parse_record` (dispatch on ``format`` and ``format_version``).
# Re-scoring goes through :func:`yoxla.suites.scoring.score_suite_task`, and stored judge
# calls are replayed, never sent again.

MAX_SUITE_METRICS = 300
MAX_SAMPLE_SCORES = 100
MAX_JUDGEMENTS = 40  # a sample's own calls (at most 20) and, on the first sample, a batch grader's
MAX_PROBLEMS = 20
MAX_REPO_PATH = 500
SUITE_OUTCOMES = (
    "correct",
    "wrong",
    "invalid",
    "truncated",
    "abstained",
    "graded",
    "grader_error",
    "generation_error",
)
SUITE_ID_RE = r"^[A-Za-z0-9_.\-]{1,64}$"


def _repo_path(value: str) -> str:
    """A path inside the repository: relative, ``/``-separated, no ``..``, no control characters."""
    parts = value.split("/")
    if value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
        raise ValueError("must be a relative path inside the repository (no '..', no leading '/')")
    if not value.isprintable():
        raise ValueError("must not contain control, bidi or zero-width characters")
    return value


def _suite_id(value: str) -> str:
    if value in (".", ".."):
        raise ValueError("a suite id is not '.' or '..'")
    return value


SuiteId = Annotated[str, Field(pattern=SUITE_ID_RE), AfterValidator(_suite_id)]
# A path segment that is not "." or "..", without / \\ or control characters.
_SEGMENT = r"(?:[^/\\.\x00-\x1f][^/\\\x00-\x1f]*|\.[^/\\.\x00-\x1f][^/\\\x00-\x1f]*|\.\.[^/\\\x00-\x1f]+)"
RepoPath = Annotated[
    str,
    Field(min_length=1, max_length=MAX_REPO_PATH, pattern=f"^{_SEGMENT}(?:/{_SEGMENT})*$"),
    AfterValidator(_repo_path),
]
SuiteOutcome = Literal[
    "correct", "wrong", "invalid", "truncated", "abstained", "graded", "grader_error", "generation_error"
]
MetricValue = Annotated[int, Field(ge=-MAX_COUNT, le=MAX_COUNT)] | float | None
DataRole = Literal["dataset", "fewshot"]


class SuiteCell(Record):
    """One value of a breakdown: the mean sample score (``accuracy`` for the primary metric) and n."""

    accuracy: float
    n: Count


class SuiteCounts(Record):
    outcomes: dict[SuiteOutcome, Count]
    near_miss: Annotated[dict[Label, Count], Field(max_length=100)]


class SuitePrediction(Record):
    """One item of a suite task: the stored answer, its judge calls, and what scoring derived."""

    id: ExampleId
    raw: RawText | None = Field(description="the model's output as returned; reasoning kept inside <think>")
    finish_reason: Annotated[str, Field(max_length=64)] | None
    error: ErrorText | None = Field(description="the generation error; null when the request succeeded")
    extracted: RawText | None = Field(description="extracted_output as graders saw it; null: nothing valid")
    valid: bool
    reason: Label | None = Field(description="why nothing valid was extracted")
    near_miss: Label | None
    abstained: bool
    number: float | None
    scores: Annotated[dict[MetricName, float], Field(max_length=MAX_SAMPLE_SCORES)]
    score: float | None = Field(description="the sample's value of the primary metric")
    outcome: SuiteOutcome
    grader_error: ErrorText | None
    extraction_error: ErrorText | None
    judgements: Annotated[list[JudgeRecord], Field(max_length=MAX_JUDGEMENTS)] = Field(
        description="judge calls as sent and received; replayed on re-scoring, never sent again"
    )
    control: Literal[True] | None = Field(
        default=None,
        description="true for a control row (the task's metadata.control_field): run, scored as a "
        "sample, left out of the task's metrics; absent otherwise",
    )
    distribution: Distribution | None = Field(
        default=None,
        description="probabilities over the item's closed answer space (docs/calibration.md); absent "
        "when the task has none or the provider gave none",
    )


class SuiteTaskResult(Record):
    """One task of a suite run: its scores, counts, breakdowns and every prediction."""

    name: Text | None
    rows: Count = Field(description="items scored (= len(predictions))")
    items: Count = Field(description="items of the task after preprocessing (a complete run has all)")
    primary: MetricName | None
    higher_is_better: bool
    score: Score | None = Field(description="primary metric clamped to [0, 1] × 100; null if lower is better")
    metrics: Annotated[dict[MetricName, MetricValue], Field(max_length=MAX_SUITE_METRICS)]
    counts: SuiteCounts
    modal_answer: RawText | None
    breakdowns: Annotated[
        dict[MetricName, Annotated[dict[Label, SuiteCell], Field(max_length=MAX_BREAKDOWN_VALUES)]],
        Field(max_length=100),
    ]
    problems: Annotated[list[ErrorText], Field(max_length=MAX_PROBLEMS)]
    judge_scored: bool
    judge_models: Annotated[list[ModelName], Field(max_length=20)]
    predictions: Annotated[list[SuitePrediction], Field(max_length=MAX_PREDICTIONS)]
    calibration: Calibration | None = Field(
        default=None,
        description="answer probabilities, group consistency and controls, as for the benchmark; "
        "absent when no prediction stores a distribution",
    )


HubRepoId = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9][A-Za-z0-9_.\-]*)?$", max_length=200)
]


class SuiteTaskHashes(Record):
    hash: Hash = Field(description="the task hash: definition and data fingerprints")
    definition: Hash
    data: dict[DataRole, Hash] = Field(description="fingerprints of the datasets the task read")
    commits: Annotated[
        dict[DataRole, Annotated[dict[HubRepoId, HubRevision], Field(min_length=1, max_length=100)]],
        Field(max_length=2),
    ] = Field(
        default_factory=dict,
        description="the Hugging Face commit each Hub dataset was read at (role -> repo -> commit); "
        "absent when the task read only local files. Provenance: the data's identity is its fingerprint",
    )


class SuiteGroup(Record):
    """A group of the suite's tasks (the benchmark's blocks): scored by the mean of its tasks."""

    id: TaskId
    name: Text | None = None
    tasks: Annotated[list[TaskId], Field(min_length=1, max_length=MAX_TASKS)]


class SuiteHeadline(Record):
    """How the suite score (``scores.suite``) is made: the mean of the tasks' or of the groups' scores."""

    name: Text | None = None
    rule: Literal["mean_of_tasks", "mean_of_groups"]


class SuiteInfo(Record):
    id: SuiteId = Field(description="the suite's id (metadata.name of its manifest)")
    path: RepoPath = Field(description="the manifest's path in the repository")
    suite_hash: Hash = Field(description="over the task hashes of the tasks in this file")
    tasks: Annotated[dict[TaskId, SuiteTaskHashes], Field(min_length=1, max_length=MAX_TASKS)]
    groups: Annotated[list[SuiteGroup], Field(min_length=1, max_length=MAX_TASKS)] | None = Field(
        default=None, description="the manifest's groups; absent when it declares none"
    )
    analysis_hash: Hash | None = Field(
        default=None,
        description="the hash of the manifest's analysis section (breakdowns, controls, gate, ranking) "
        "the file was scored with; absent when it has none",
    )
    headline: SuiteHeadline | None = Field(
        default=None,
        description="the manifest's headline rule (stored whenever groups or a headline are declared); "
        "absent: the mean of the tasks",
    )


class SuiteRunConditions(Record):
    """What changes comparability of suite runs; the board ranks complete, standard runs."""

    thinking: bool
    thinking_budget: Annotated[int, Field(ge=0, le=10**7)] | None = None
    limit: Annotated[int, Field(ge=1)] | None = None
    tasks: Annotated[list[TaskId], Field(max_length=MAX_TASKS)] | None = Field(
        default=None, description="a task filter (--task); null: every task of the suite"
    )
    filters: (
        Annotated[dict[MetricName, Annotated[list[Label], Field(max_length=1000)]], Field(max_length=64)]
        | None
    ) = Field(
        default=None,
        description="row filters of a partial run (--filter, --scored-only: controls); never on the board",
    )
    generation: Annotated[dict[TaskId, GenerationSettings], Field(max_length=MAX_TASKS)] = Field(
        default_factory=dict, description="each task's generation settings as run (instructions are hashed)"
    )

    @property
    def standard(self) -> bool:
        return not self.thinking and self.limit is None and self.tasks is None and not self.filters

    @property
    def group(self) -> str:
        return "thinking" if self.thinking else "standard"


class JudgeInfo(Record):
    provider: ProviderName
    model: ModelName
    base_url: Url | None = None


class SuiteRunInfo(_RunBasics):
    command: Annotated[str, Field(max_length=MAX_COMMAND)]
    conditions: SuiteRunConditions
    judge: JudgeInfo | None = Field(default=None, description="the judge model; null when none was given")
    dataset: DatasetInfo | None = Field(
        default=None,
        description="where --data-dir or --revision read the Hub datasets; absent: as the manifest says",
    )


class SuiteScores(Record):
    suite: Score | None = Field(
        description="the headline: mean of the task scores that exist, or of the group scores "
        "(headline rule mean_of_groups)"
    )
    tasks: Annotated[dict[TaskId, Score | None], Field(max_length=MAX_TASKS)]
    groups: Annotated[dict[TaskId, Score], Field(max_length=MAX_TASKS)] | None = Field(
        default=None,
        description="per group the mean of its task scores that exist (groups with none left out); "
        "absent when the suite declares no groups",
    )


class SuiteResultFile(Record):
    """One model on one suite (an edition of the benchmark is one): metadata, scores, every
    prediction, digest, optional signature. What every run writes (``yoxla-result`` 3); a
    ``yoxla-suite-result`` 1 file has the same body and parses into this record too."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        title="YOXLA suite result file",
        json_schema_extra={
            "description": "One model on one suite: metadata, scores, every prediction, digest, "
            f"optional signature. What every run writes: format {FORMAT} version {FORMAT_VERSION}; the "
            f"same body under the header {SUITE_FORMAT} version {SUITE_FORMAT_VERSION} is still read.",
            "oneOf": [
                {"properties": {"format": {"const": fmt}, "format_version": {"const": version}}}
                for fmt, version in SUITE_HEADERS
            ],
        },
    )

    # The header: one of SUITE_HEADERS (the pair is checked below and by the schema's oneOf).
    format: Literal["yoxla-result", "yoxla-suite-result"]
    format_version: Literal[3, 1]
    suite: SuiteInfo
    model: ModelInfo
    run: SuiteRunInfo
    tasks: Annotated[dict[TaskId, SuiteTaskResult], Field(min_length=1, max_length=MAX_TASKS)]
    scores: SuiteScores
    usage: Usage
    generation_errors: Count
    created_at: Timestamp
    content_sha256: Hash
    signature: Signature | None = None

    @model_validator(mode="after")
    def _one_header(self) -> SuiteResultFile:
        if (self.format, self.format_version) not in SUITE_HEADERS:
            raise ValueError(f"format {self.format} does not come in version {self.format_version}")
        return self


def _combined_schema(models: Mapping[str, type[BaseModel]]) -> dict[str, Any]:
    """One schema for several top-level records: ``oneOf`` their definitions (``$defs`` shared)."""
    defs: dict[str, Any] = {}
    refs = []
    for model in models.values():
        schema = model.model_json_schema(mode="validation")
        for name, sub in schema.pop("$defs", {}).items():
            if defs.setdefault(name, sub) != sub:
                raise ValueError(f"two records define {name} differently")
        schema.pop("$id", None)
        defs[model.__name__] = schema
        refs.append({"$ref": f"#/$defs/{model.__name__}"})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:yoxla:result-format",
        "title": "YOXLA result file",
        "description": f"A YOXLA result file: format {FORMAT} version {FORMAT_VERSION} (what every run "
        f"writes) or {SUITE_FORMAT} version {SUITE_FORMAT_VERSION} (the same body, read), both "
        f"SuiteResultFile; or format {FORMAT} version {LEGACY_FORMAT_VERSION} (the built-in engine's "
        "body, ResultFile, read). Generated from yoxla/record.py; see docs/result-format.md.",
        "oneOf": refs,
        "$defs": dict(sorted(defs.items())),
    }


# Writing suite results -------------------------------------------------------------------------


def _judge_records(value: Any) -> tuple[JudgeRecord, ...]:
    return tuple(j if isinstance(j, JudgeRecord) else JudgeRecord.model_validate(j) for j in value or ())


def _bounded_text(value: str | None, limit: int = MAX_ERROR) -> str | None:
    return value if value is None or len(value) <= limit else value[: limit - 1] + "…"


def _suite_metric_layout(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Scoring's task metrics as stored: numbers, counts, the modal answer, breakdowns."""
    numbers: dict[str, Any] = {}
    breakdowns: dict[str, Any] = {}
    for key, value in metrics.items():
        if key in ("outcomes", "near_miss", "modal_answer"):
            continue
        if isinstance(value, dict):
            breakdowns[key] = {
                str(k): {"accuracy": float(c["accuracy"]), "n": int(c["n"])} for k, c in value.items()
            }
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            numbers[key] = value
        else:
            raise ValueError(f"metric {key} is neither a number nor a breakdown ({type(value).__name__})")
    return {
        "metrics": numbers,
        "counts": {"outcomes": dict(metrics["outcomes"]), "near_miss": dict(metrics["near_miss"])},
        "modal_answer": metrics.get("modal_answer"),
        "breakdowns": breakdowns,
    }


def align_items(prepared: Any, ids: Sequence[str]) -> list[Any]:
    """A suite task's prepared items in the order of ``ids`` (see :func:`align_by_id`)."""
    return align_by_id({item.id: item for item in prepared.items}, ids, prepared.task.id)


def derive_suite_task(
    prepared: Any,
    stored: Sequence[Mapping[str, Any]],
    *,
    pool: Any = None,
    judge: Any = None,
) -> dict[str, Any]:
    """The one derivation of a suite task as stored: re-score the stored answers and lay them out.

    ``prepared`` is the task as :func:`yoxla.suites.prepare.prepare_task` gives it (from the
    committed manifest); ``stored`` the predictions (``id``, ``raw``, ``finish_reason``,
    ``error``, ``judgements``, and ``distribution`` where one is stored) in item order.
    ``judge`` None replays the stored judgements (re-scoring never asks a model); the runner
    passes its recording callback. A stored distribution is read back for its item's closed
    answer space (:func:`yoxla.suites.space.probability_space`) as the benchmark's is, and the
    ``calibration`` block derived with the benchmark's functions
    (:func:`yoxla.calibration.stored.suite_task_calibration`).
    """
    from yoxla.suites.samples import SampleOutput
    from yoxla.suites.scoring import score_suite_task

    items = align_items(prepared, [str(p["id"]) for p in stored])
    outputs = [
        SampleOutput.from_raw(
            p.get("raw"), p.get("finish_reason"), p.get("error"), _judge_records(p.get("judgements"))
        )
        for p in stored
    ]
    scored = score_suite_task(prepared, outputs, items=items, pool=pool, judge=judge)
    preds: list[dict[str, Any]] = []
    control = scored.control or (False,) * len(scored.results)
    for res, p, is_control in zip(scored.results, stored, control, strict=True):
        preds.append(
            {
                "id": res.id,
                "raw": p.get("raw"),
                "finish_reason": p.get("finish_reason"),
                "error": p.get("error"),
                "extracted": res.extracted,
                "valid": res.valid,
                "reason": res.reason,
                "near_miss": res.near_miss,
                "abstained": res.abstained,
                "number": res.number,
                "scores": dict(res.scores),
                "score": res.score,
                "outcome": res.outcome,
                "grader_error": _bounded_text(res.grader_error),
                "extraction_error": _bounded_text(res.extraction_error),
                "judgements": [j.model_dump(mode="json") for j in res.judgements],
            }
        )
        if is_control:
            preds[-1]["control"] = True
    calibration = _suite_distributions(prepared, items, stored, preds)
    models = sorted({j.response.model for r in scored.results for j in r.judgements if j.response.model})
    return {
        "name": prepared.task.spec.name,
        "rows": len(preds),
        "items": len(prepared.items),
        "primary": scored.primary,
        "higher_is_better": scored.higher_is_better,
        "score": scored.score,
        **_suite_metric_layout(scored.metrics),
        "problems": [_bounded_text(p) for p in scored.problems[:MAX_PROBLEMS]],
        "judge_scored": scored.judge_scored,
        "judge_models": models[:20],
        "predictions": preds,
        **({"calibration": calibration} if calibration is not None else {}),
    }


def _suite_distributions(
    prepared: Any, items: Sequence[Any], stored: Sequence[Mapping[str, Any]], preds: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Each stored distribution read back for its item's closed answer space into ``preds``
    (dropped for a generation error, an open space, or an inconsistent form), and the task's
    calibration block derived from them (None when no prediction keeps one)."""
    from yoxla.calibration.stored import checked_in, suite_task_calibration
    from yoxla.suites.space import calibration_inputs

    if not any(p.get("distribution") is not None for p in stored):
        return None  # most files: nothing to read back
    inputs = calibration_inputs(prepared.task.spec, items)
    for pred, p, space in zip(preds, stored, inputs[1], strict=True):
        dist = checked_in(space, p.get("distribution")) if p.get("error") is None else None
        if dist is not None:
            pred["distribution"] = dist
    return suite_task_calibration(prepared.task.id, inputs, preds)


build_suite_task_result = _as_record(SuiteTaskResult, derive_suite_task)


def _mean_or_none(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def suite_scores(
    tasks: Mapping[str, SuiteTaskResult],
    groups: Sequence[SuiteGroup] | None = None,
    headline: SuiteHeadline | None = None,
) -> SuiteScores:
    """Task scores, group scores and the suite score (tasks without a 0–100 score are left out).

    The suite score is the mean of the task scores, or, under the headline rule
    ``mean_of_groups`` (the default with groups), the mean of the group scores.
    """
    scores = {tid: t.score for tid, t in tasks.items()}
    present = [s for s in scores.values() if s is not None]
    if groups is None:
        return SuiteScores.model_construct(suite=_mean_or_none(present), tasks=scores)
    by_group: dict[str, float] = {}
    for g in groups:
        mean = _mean_or_none([s for tid in g.tasks if (s := scores.get(tid)) is not None])
        if mean is not None:
            by_group[g.id] = mean
    rule = headline.rule if headline is not None else "mean_of_groups"
    suite = _mean_or_none(list(by_group.values())) if rule == "mean_of_groups" else _mean_or_none(present)
    return SuiteScores.model_construct(suite=suite, tasks=scores, groups=by_group)


def suite_scores_of(info: SuiteInfo, tasks: Mapping[str, SuiteTaskResult]) -> SuiteScores:
    """:func:`suite_scores` with the groups and headline the file's suite block declares."""
    return suite_scores(tasks, info.groups, info.headline)


def _suite_task_dump(t: SuiteTaskResult) -> dict[str, Any]:
    """A task as stored: a prediction's ``control`` only where it is true (as derived)."""
    out = t.model_dump(mode="json")
    for pred in out["predictions"]:
        for key in ("control", "distribution"):
            if pred.get(key) is None:
                pred.pop(key, None)
        if pred.get("distribution") is not None:  # its optional fields only where set, as derived
            pred["distribution"] = {k: v for k, v in pred["distribution"].items() if v is not None}
    if out.get("calibration") is None:
        out.pop("calibration", None)
    return out


def build_suite_document(
    *,
    suite: SuiteInfo,
    model: ModelInfo,
    run: SuiteRunInfo,
    tasks: Mapping[str, SuiteTaskResult],
    usage: Usage,
    created_at: str,
    sign_key: Any = None,
) -> dict[str, Any]:
    """The whole suite result document with its digest (signed when a key is given), validated."""

    body = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "suite": suite.model_dump(mode="json", exclude_unset=True),  # commits only where read
        "model": model.model_dump(mode="json", exclude_unset=True),
        "run": run.model_dump(mode="json", exclude_unset=True),
        "tasks": {tid: _suite_task_dump(t) for tid, t in tasks.items()},
        "scores": suite_scores_of(suite, tasks).model_dump(mode="json", exclude_unset=True),
        "usage": usage.model_dump(mode="json", exclude_unset=True),
        "generation_errors": sum(p.error is not None for t in tasks.values() for p in t.predictions),
        "created_at": created_at,
    }
    return _sealed(body, sign_key, SuiteResultFile)


def _sealed(body: dict[str, Any], sign_key: Any, model: type[Record]) -> dict[str, Any]:
    """``body`` with its digest (signed when a key is given), read back as ``model`` (a result
    file of either kind) before it is returned: the writer never makes a file the reader refuses."""
    from yoxla.results import finalize

    doc = finalize(body, sign_key)
    record, problems = parse_record(doc)
    if not isinstance(record, model):
        what = "suite result" if model is SuiteResultFile else "result"
        raise ValueError(f"the {what} document does not match its own format: " + "; ".join(problems))
    return doc


def schema_text() -> str:
    """The published schema file's exact text."""
    import json

    return json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m yoxla.record: write the published schema
    from pathlib import Path

    target = Path(__file__).resolve().parent / "schema" / "result.schema.json"
    target.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {target}")
