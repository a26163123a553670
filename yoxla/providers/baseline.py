"""The offline ``baseline`` provider: the core's cue-only strategies, served like a model.

``--model`` names the strategy. Answers go through the same parser, evaluators, run folder
and result file as any model's, so the whole pipeline runs on a machine with no network.
"""

from __future__ import annotations

from typing import Any

from yoxla.baselines import SEED, STRATEGIES, answers
from yoxla.providers.base import Completion, Provider, ProviderError, ProviderOptions, ProviderSpec, Request
from yoxla.suite import Task


class StrategyProvider(Provider):
    """A cue-only strategy served like a model: ``--model`` names one of ``strategies``."""

    parallel = True
    batch_size = 1
    name = "baseline"  # the provider's name in messages and in the reported model
    strategies: tuple[str, ...] = STRATEGIES

    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None:
        if model not in self.strategies:
            raise ProviderError(
                f"unknown {self.name.replace('-', ' ')} strategy {model!r}; "
                f"use --model one of: {', '.join(self.strategies)}"
            )
        self.spec = spec
        self.strategy = model
        self.seed = options.seed if options.seed is not None else SEED

    def completion(self, text: str) -> Completion:
        return Completion(text=text, finish_reason="stop", model=f"{self.name}/{self.strategy}")

    def describe(self) -> dict[str, Any]:
        return {"base_url": None, "strategy": self.strategy, "seed": self.seed}


class BaselineProvider(StrategyProvider):
    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None:
        super().__init__(spec, model, options)
        self._answers: dict[tuple[str, str], str] = {}

    def prepare(self, task: Task, rows: list[dict[str, Any]]) -> None:
        # Strategies like `majority` and `random` depend on all rows and on their order,
        # so answers are computed once per task over the full task, whatever is resumed.
        for row, answer in zip(rows, answers(self.strategy, task, rows, self.seed), strict=True):
            self._answers[(task.id, str(row[task.id_field]))] = answer

    def generate(self, request: Request) -> Completion:
        key = (request.task.id, request.example_id)
        if key not in self._answers:
            self.prepare(request.task, [request.row])
        return self.completion(self._answers[key])
