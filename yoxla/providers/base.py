"""The provider interface: how one benchmark example becomes one model attempt.

A provider says how to connect; the model id comes at run time. Providers are registered
by backend name and imported only when used, so ``import yoxla`` never pulls in openai,
torch or transformers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from yoxla.providers.transport import TransportSettings
from yoxla.suite import Task


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


@dataclass
class ProviderOptions:
    """Run-time options that every backend receives; network backends follow ``transport``."""

    thinking: bool = False
    batch_size: int | None = None
    seed: int | None = None
    transport: TransportSettings = field(default_factory=TransportSettings)


@dataclass(frozen=True)
class Request:
    """One example's prompt and generation settings.

    ``task`` is a built-in :class:`~yoxla.suite.Task`, or for an eval suite the run's task
    (:class:`yoxla.run.suite_plan.SuiteRunTask`); both have an ``id``. The fields after
    ``thinking`` are set by suite runs only (the built-in tasks send none of them).
    """

    task: Task | Any
    row: dict[str, Any]
    example_id: str
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    thinking: bool = False
    # Suite runs: request fields every OpenAI-compatible API takes (stop, presence/frequency
    # penalties), provider passthrough for upstreams that are not OpenAI itself (sent in the
    # body as extra fields), and the task's own timeout and retry budget (None: the run's).
    options: dict[str, Any] = field(default_factory=dict)
    passthrough: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    max_retries: int | None = None


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

    @property
    def raw(self) -> str:
        """Stored raw output: reasoning kept inside <think> tags, then the answer verbatim."""
        think = f"<think>{self.reasoning}</think>" if self.reasoning else ""
        return think + (self.text or "")


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

    def prepare(self, task: Task, rows: list[dict[str, Any]]) -> None:  # noqa: B027 - optional hook
        """Called once per task with all its rows before any request (the baseline needs them)."""

    def describe(self) -> dict[str, Any]:
        """Facts for run.json (base URL, chat template hash, ...). Never secrets."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections or memory."""
