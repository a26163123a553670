"""The provider interface: how one suite item becomes one model attempt.

A provider says how to connect; the model id comes at run time. Providers are registered
by backend name and imported only when used, so ``import yoxla`` never pulls in openai,
torch or transformers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from yoxla.providers.transport import TransportSettings


class ProviderError(RuntimeError):
    """The provider cannot be used as configured; the message says why, in one line."""


@dataclass(frozen=True)
class ProviderSpec:
    """One entry of a provider registry (bundled providers.yaml or --config FILE)."""

    name: str
    backend: str  # "openai" (OpenAI-compatible) | "transformers" | "baseline"
    base_url: str | None = None
    api_key_env: str | None = None  # name of the environment variable holding the key
    reasoning: dict[str, Any] | None = None  # {"off": {...extra body...}, "on": {...}}; None: send nothing
    settings: dict[str, Any] = field(default_factory=dict)  # backend-specific (device_map, dtype, ...)
    logprobs: bool = False  # the API returns token logprobs (vLLM, llama.cpp, OpenAI)
    top_logprobs: int = 20  # alternatives per position asked for when logprobs is on


@dataclass
class ProviderOptions:
    """Run-time options that every backend receives; network backends follow ``transport``."""

    thinking: bool = False
    batch_size: int | None = None
    seed: int | None = None
    transport: TransportSettings = field(default_factory=TransportSettings)
    probabilities: bool = True  # ask for answer probabilities on closed answer spaces


class TaskRef(Protocol):
    """What a provider may rely on of the task a request belongs to: its id."""

    @property
    def id(self) -> str: ...


@dataclass(frozen=True)
class Request:
    """One call's messages and generation settings: a run makes one per suite item
    (:func:`yoxla.run.plan.request_for`); a judge call and ``yoxla providers test`` set only
    the fields up to ``thinking``. A provider reads only ``task.id`` (:class:`TaskRef`).
    """

    task: TaskRef
    row: dict[str, Any]
    example_id: str
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    thinking: bool = False
    # From the task's generation settings: OpenAI request fields (stop, penalties), passthrough
    # sent as extra body fields, the task's own timeout and retry budget (None: the run's).
    options: dict[str, Any] = field(default_factory=dict)
    passthrough: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    max_retries: int | None = None
    # The item's closed answer space (yoxla.prompt.space.probability_space), over which answer
    # probabilities are asked for; None: an open answer (or a judge call, a connection test).
    space: tuple[str, ...] | None = None


def wants_probabilities(request: Request) -> bool:
    """Asked for on closed answer spaces (``request.space``) with reasoning off: under
    ``--thinking`` every reasoning token would come back with its alternatives."""
    return not request.thinking and request.space is not None


@dataclass
class Completion:
    """What came back for one request. ``error`` is set only after the last retry failed."""

    text: str | None = None  # the final answer, reasoning removed
    reasoning: str | None = None
    finish_reason: str | None = None
    model: str | None = None  # the model id the provider reported
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    attempts: int = 1
    error: str | None = None
    # Answer probabilities, kept in the run folder so the distribution can be derived again
    # (yoxla.score.calibration.stored.distribution_in); None: the provider gave none.
    logprobs: list[dict[str, Any]] | None = None  # the answer's token logprobs, as the API returned them
    label_scores: dict[str, Any] | None = None  # a local model's distribution over the answer space
    probabilities_asked: bool = False  # the request asked for token logprobs
    logprobs_refused: str | None = None  # why the logprobs that came back were not kept (NaN, …)

    @property
    def raw(self) -> str:
        """Stored raw output: reasoning kept inside <think> tags, then the answer verbatim."""
        think = f"<think>{self.reasoning}</think>" if self.reasoning else ""
        return think + (self.text or "")

    def bounded(self) -> Completion:
        """This completion, or a generation error when its raw output is longer than a result
        file may store (``MAX_RAW`` characters): refused at once, in one line, so that the run
        folder never holds an answer its result file could not."""
        from yoxla.record.base import MAX_RAW

        if self.error or len(self.text or "") + len(self.reasoning or "") + 15 <= MAX_RAW:
            return self
        size = len(self.raw)
        if size <= MAX_RAW:
            return self
        return replace(
            self, text=None, reasoning=None, logprobs=None, label_scores=None, error=oversized(size)
        )


def oversized(size: int) -> str:
    """The generation error of an answer longer than a result file stores."""
    from yoxla.record.base import MAX_RAW

    return f"answer refused: {size:,} characters, over the {MAX_RAW:,} a result file stores"


class Provider(ABC):
    """A backend. ``generate`` must be thread-safe when ``parallel`` is True.

    Constructed as ``cls(spec, model, options)``; raise ``ProviderError`` with one clear
    sentence when the provider cannot be used (missing key, no such model path, ...).
    """

    parallel: bool = True  # may the runner keep several requests in flight?
    batch_size: int = 1  # the runner hands over this many requests at once to generate_batch

    @abstractmethod
    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None: ...

    @abstractmethod
    def generate(self, request: Request) -> Completion: ...

    def generate_batch(self, requests: list[Request]) -> list[Completion]:
        return [self.generate(r) for r in requests]

    def describe(self) -> dict[str, Any]:
        """Facts for run.json (base URL, chat template hash, ...). Never secrets."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections or memory."""
