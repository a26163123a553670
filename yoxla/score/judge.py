"""Judge-model calls of graders: stored once, replayed on every re-scoring.

A grader asks a judge with ``ctx.responses_create(model=..., input=..., ...)`` (the last
argument of ``grade(sample, item, ctx)`` / ``grade_batch(samples, items, ctx)``). The request
travels from the worker to the parent, which answers it:

* **live** (the runner, when a task is first scored): the runner's callback sends the request
  through its provider layer and returns a :class:`JudgeResponse`; the pair is recorded as a
  :class:`JudgeRecord` in the sample's result, then stored in the run folder and result file;
* **replay** (``rescore``, admission, the app): the stored record answers, provided the
  request is exactly the stored one (same canonical JSON). A different request, or one with no
  stored answer, is a grader error for that sample: re-scoring never asks a model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from yoxla.contract.canonical import canonical_json, sha256_text

MAX_CALLS_PER_SAMPLE = 20
MAX_REQUEST_CHARS = 1_000_000
BATCH_SAMPLE_ID = "__batch__"  # the judgements of a batch grader are kept under this id
# The start of the grader error of a judge call that has no stored answer: the judge failed,
# or no judge model was given. A task with one is incomplete (never complete, never admitted).
UNANSWERED = "no stored judgement for judge call"


class JudgeResponse(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    output_text: Annotated[str, Field(max_length=1_000_000)]
    model: Annotated[str, Field(max_length=200)] | None = None
    usage: dict[str, Annotated[int, Field(ge=0)]] | None = None


class JudgeRecord(BaseModel):
    """One judge call of one sample: the request as sent and the response as received."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    sample_id: Annotated[str, Field(min_length=1, max_length=200)]
    call: Annotated[int, Field(ge=0, lt=MAX_CALLS_PER_SAMPLE)] = Field(description="order within the sample")
    request: dict[str, Any]
    request_sha256: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
    response: JudgeResponse


def unanswered_calls(grader_errors: Iterable[str | None], problems: Iterable[str] = ()) -> int:
    """How many samples (and batch graders, named in the task's ``problems``) have a judge call
    without a stored answer (see :data:`UNANSWERED`)."""
    found = [*grader_errors, *problems]
    return sum(1 for e in found if e is not None and UNANSWERED in e)


def request_hash(request: dict[str, Any]) -> str:
    return sha256_text(canonical_json(request))


# The runner's live callback: a request (the grader's keyword arguments) -> the judge's response.
JudgeCallback = Callable[[dict[str, Any]], JudgeResponse]


class JudgeSession:
    """The judge calls of one sample: answered from storage (replay) or by the callback (live)."""

    def __init__(self, sample_id: str, stored: Sequence[JudgeRecord], live: JudgeCallback | None) -> None:
        self.sample_id = sample_id
        self.stored = list(stored)
        self.live = live
        self.records: list[JudgeRecord] = []
        self._lock = threading.Lock()

    def responses_create(self, request: dict[str, Any]) -> dict[str, Any]:
        """The response for the grader's next call (as a dict); raises with the reason otherwise."""
        with self._lock:
            call = len(self.records)
            if call >= MAX_CALLS_PER_SAMPLE:
                raise RuntimeError(f"more than {MAX_CALLS_PER_SAMPLE} judge calls for one sample")
            text = json.dumps(request, ensure_ascii=False, default=str)
            if len(text) > MAX_REQUEST_CHARS:
                raise RuntimeError(
                    f"the judge request is {len(text)} characters (at most {MAX_REQUEST_CHARS})"
                )
            digest = request_hash(request)
            if self.live is None:
                if call >= len(self.stored):
                    raise RuntimeError(
                        f"{UNANSWERED} #{call + 1}; re-scoring replays stored "
                        "judgements and never asks a model"
                    )
                record = self.stored[call]
                if record.request_sha256 != digest:
                    raise RuntimeError(
                        f"judge call #{call + 1} differs from the stored request (grader or prompt changed)"
                    )
            else:
                response = self.live(request)
                record = JudgeRecord(
                    sample_id=self.sample_id,
                    call=call,
                    request=json.loads(text),
                    request_sha256=digest,
                    response=response,
                )
            self.records.append(record)
            return record.response.model_dump(mode="json")
