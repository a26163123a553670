"""The result file as typed records (docs/result-format.md): the version 3 body
(:class:`ResultFile`, what every run writes; a ``yoxla-suite-result`` 1 file parses into it too),
:func:`parse_record` (the one reader, dispatching on ``format`` and ``format_version`` after
:mod:`yoxla.safe.strictjson`) and :func:`json_schema` (``yoxla/schema/result.schema.json``,
written by ``python -m yoxla.record.result``; a test compares it with the committed one).
Limits and shared records are in :mod:`yoxla.record.base`, the read-only version 2 body in
:mod:`yoxla.record.v2`, the one writer in :mod:`yoxla.record.derive`.

Validation is strict: no coercion (``"12"`` is not a number, ``true`` is not 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from yoxla.prompt.generation import GenerationSettings
from yoxla.record.base import (
    ACCEPTED_FORMATS,
    FORMAT,
    FORMAT_VERSION,
    LEGACY_FORMAT_VERSION,
    MAX_BREAKDOWN_VALUES,
    MAX_COMMAND,
    MAX_COUNT,
    MAX_PREDICTIONS,
    MAX_TASKS,
    SUITE_FORMAT,
    SUITE_FORMAT_VERSION,
    SUITE_HEADERS,
    Calibration,
    Count,
    DatasetInfo,
    Distribution,
    ErrorText,
    ExampleId,
    Hash,
    HubRevision,
    Label,
    MetricName,
    ModelInfo,
    ModelName,
    ProviderName,
    RawText,
    Record,
    RunBasics,
    Score,
    Signature,
    TaskId,
    Text,
    Timestamp,
    Url,
    Usage,
)
from yoxla.record.v2 import ResultFileV2
from yoxla.score.judge import JudgeRecord


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of result files (draft 2020-12): the suite body
    (:class:`ResultFile`: ``yoxla-result`` 3, ``yoxla-suite-result`` 1) or the built-in
    engine's (:class:`ResultFileV2`: ``yoxla-result`` 2), told apart by ``format_version``."""
    return _combined_schema({"legacy": ResultFileV2, "suite": ResultFile})


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
    other = ResultFileV2 if model is ResultFile else ResultFile
    hint = ""
    if not {n for n, f in other.model_fields.items() if f.is_required()} - doc.keys():
        body = f"{FORMAT!r} version {LEGACY_FORMAT_VERSION if other is ResultFileV2 else FORMAT_VERSION}"
        hint = f" (that is the body of {body})"
    return f"does not match the result format {header} at the top level: " + "; ".join(parts) + hint


def parse_record(doc: Any) -> tuple[ResultFileV2 | ResultFile | None, list[str]]:
    """(record, []) or (None, reasons): the one reader of a parsed result document.

    Dispatches on (``format``, ``format_version``): ``yoxla-result`` 3 (what runs write) and
    ``yoxla-suite-result`` 1 parse into :class:`ResultFile`, ``yoxla-result`` 2 into
    :class:`ResultFileV2`; anything else is refused with one reason naming what is accepted.
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
    model: type[ResultFileV2] | type[ResultFile]
    model = ResultFileV2 if (found, version) == (FORMAT, LEGACY_FORMAT_VERSION) else ResultFile
    problem = _top_level_problem(doc, model, f"{found!r} version {version}")
    if problem:
        return None, [problem]
    try:
        return model.model_validate(doc), []
    except ValidationError as exc:
        return None, format_errors(exc)


# The version 3 body: one model on one suite (a manifest under ``suites/``, or ``yoxla-<edition>``)

MAX_SUITE_METRICS = 300
MAX_SAMPLE_SCORES = 100
MAX_JUDGEMENTS = 40  # a sample's own calls (at most 20) and, on the first sample, a batch grader's
MAX_PROBLEMS = 20
MAX_REPO_PATH = 500
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


class Cell(Record):
    """One value of a breakdown: the mean sample score (``accuracy`` for the primary metric) and n."""

    accuracy: float
    n: Count


class Counts(Record):
    outcomes: dict[SuiteOutcome, Count]
    near_miss: Annotated[dict[Label, Count], Field(max_length=100)]


class Prediction(Record):
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


class TaskResult(Record):
    """One task of a suite run: its scores, counts, breakdowns and every prediction."""

    name: Text | None
    rows: Count = Field(description="items scored (= len(predictions))")
    items: Count = Field(description="items of the task after preprocessing (a complete run has all)")
    primary: MetricName | None
    higher_is_better: bool
    score: Score | None = Field(description="primary metric clamped to [0, 1] × 100; null if lower is better")
    metrics: Annotated[dict[MetricName, MetricValue], Field(max_length=MAX_SUITE_METRICS)]
    counts: Counts
    modal_answer: RawText | None
    breakdowns: Annotated[
        dict[MetricName, Annotated[dict[Label, Cell], Field(max_length=MAX_BREAKDOWN_VALUES)]],
        Field(max_length=100),
    ]
    problems: Annotated[list[ErrorText], Field(max_length=MAX_PROBLEMS)]
    judge_scored: bool
    judge_models: Annotated[list[ModelName], Field(max_length=20)]
    predictions: Annotated[list[Prediction], Field(max_length=MAX_PREDICTIONS)]
    calibration: Calibration | None = Field(
        default=None,
        description="answer probabilities, group consistency and controls, as for the benchmark; "
        "absent when no prediction stores a distribution",
    )


HubRepoId = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9][A-Za-z0-9_.\-]*)?$", max_length=200)
]


class TaskHashes(Record):
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
    tasks: Annotated[dict[TaskId, TaskHashes], Field(min_length=1, max_length=MAX_TASKS)]
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


class RunConditions(Record):
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
    def group(self) -> str:
        return "thinking" if self.thinking else "standard"


class JudgeInfo(Record):
    provider: ProviderName
    model: ModelName
    base_url: Url | None = None


class RunInfo(RunBasics):
    command: Annotated[str, Field(max_length=MAX_COMMAND)]
    conditions: RunConditions
    judge: JudgeInfo | None = Field(default=None, description="the judge model; null when none was given")
    dataset: DatasetInfo | None = Field(
        default=None,
        description="where --data-dir or --revision read the Hub datasets; absent: as the manifest says",
    )


class Scores(Record):
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


class ResultFile(Record):
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
    run: RunInfo
    tasks: Annotated[dict[TaskId, TaskResult], Field(min_length=1, max_length=MAX_TASKS)]
    scores: Scores
    usage: Usage
    generation_errors: Count
    created_at: Timestamp
    content_sha256: Hash
    signature: Signature | None = None

    @model_validator(mode="after")
    def _one_header(self) -> ResultFile:
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
        f"ResultFile; or format {FORMAT} version {LEGACY_FORMAT_VERSION} (the built-in engine's "
        "body, ResultFile, read). Generated from yoxla/record/result.py; see docs/result-format.md.",
        "oneOf": refs,
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The published schema file's exact text."""
    import json

    return json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m yoxla.record.result: write the published schema
    from pathlib import Path

    target = Path(__file__).resolve().parents[1] / "schema" / "result.schema.json"
    target.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {target}")
