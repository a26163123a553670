"""What every result-file record shares: the header constants, every limit (lengths, allowed
characters: no control, bidi or zero-width; numbers finite and in range; list sizes), the checked
types, the strict :class:`Record` base, the records both bodies use, and :func:`first_difference`,
which admission names a re-derivation's difference with. Nesting is bounded by the models (every
free-form mapping is typed) and before that by the reader's depth limit. Validation is strict: no
coercion (``"12"`` is not a number, ``true`` is not 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
)

FORMAT = "yoxla-result"
FORMAT_VERSION = 3  # what every run writes: the suite body (ResultFile)
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

# Limits ------------------------------------------------------------------------------------
MAX_NAME = 200  # model ids, reported model ids
MAX_DISPLAY_NAME = 80
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
ECE_BINS = 15  # bins of the stored reliability diagram (yoxla.score.calibration.metrics.ECE_BINS)

_HASH_RE = r"^sha256:[0-9a-f]{64}$"
_TIMESTAMP_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$"
_TASK_ID_RE = r"^[A-Za-z0-9_.\-]{1,64}$"
_PROVIDER_RE = r"^[a-z0-9][a-z0-9._\-]{0,63}$"
_METRIC_RE = r"^[A-Za-z0-9_.\-]{1,64}$"


def _name_validator(max_len: int) -> Any:
    from yoxla.safe.text import name_problems

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
    """How sure the model was (``yoxla.score.calibration.metrics.calibration_report``), re-derived from
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


class RunBasics(Record):
    """The fields a benchmark and a suite run's ``run`` block both start with."""

    run_id: ExampleId
    framework_version: Annotated[str, Field(max_length=64)]
    started_at: Timestamp
    finished_at: Timestamp | None
    workers: Annotated[int, Field(ge=1, le=100_000)]
    batch_size: Annotated[int, Field(ge=1, le=100_000)]


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


# Writing --------------------------------------------------------------------------------------


def as_record(model: type[R], derive: Callable[P, dict[str, Any]]) -> Callable[P, R]:
    """``derive`` (a task's derivation as stored) made a typed, validated record: what the runner writes."""

    def build(*args: P.args, **kwargs: P.kwargs) -> R:
        return model.model_validate(derive(*args, **kwargs))

    build.__doc__ = f":func:`{derive.__name__}` as a typed, validated record (what the runner writes)."
    return build


# Comparing --------------------------------------------------------------------------------------

TOLERANCE = 1e-9


class Missing:
    """A field present on one side only (shown as "absent")."""

    def __repr__(self) -> str:
        return "absent"


MISSING: Any = Missing()


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
