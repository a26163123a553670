"""The offline ``baseline`` provider: cue-only strategies, served like a model.

``--model`` names the strategy (:data:`yoxla.suites.baselines.SUITE_STRATEGIES`: the
benchmark's eight and ``echo``). Answers go through the same extraction, graders, run folder
and result file as any model's, so the whole pipeline runs on a machine with no network
(``python runner.py --provider baseline --model first --edition sample``, or ``--suite FILE``).
A strategy's answers depend on all of a task's items (``majority``, ``random``), so they are
computed once per task, over the task's items, whatever order the requests come in.

A run folder of the built-in engine of older versions (``--resume`` of it) is answered from
the built-in tasks' rows as before. ``suite-baseline`` is the same provider under its older name.
"""

from __future__ import annotations

from typing import Any

from yoxla.baselines import SEED, answers
from yoxla.providers.base import Completion, Provider, ProviderError, ProviderOptions, ProviderSpec, Request
from yoxla.suites.baselines import SUITE_STRATEGIES, answers_by_id


class StrategyProvider(Provider):
    """A cue-only strategy served like a model: ``--model`` names one of ``strategies``."""

    parallel = True
    batch_size = 1
    name = "baseline"  # the provider's name in messages and in the reported model
    strategies: tuple[str, ...] = SUITE_STRATEGIES

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

    def prepare(self, task: Any, rows: list[dict[str, Any]]) -> None:
        if getattr(task, "prepared", None) is not None:
            return  # a suite task: its items carry everything (answers_by_id, per task)
        # A built-in task (an older run folder): answers over the full task, whatever is resumed.
        for row, answer in zip(rows, answers(self.strategy, task, rows, self.seed), strict=True):
            self._answers[(task.id, str(row[task.id_field]))] = answer

    def generate(self, request: Request) -> Completion:
        prepared = getattr(request.task, "prepared", None)
        if prepared is not None:
            return self.completion(answers_by_id(self.strategy, prepared, self.seed)[request.example_id])
        key = (request.task.id, request.example_id)
        if key not in self._answers:
            self.prepare(request.task, [request.row])
        return self.completion(self._answers[key])
