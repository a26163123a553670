"""The offline ``baseline`` provider: cue-only strategies, served like a model.

``--model`` names the strategy (:data:`yoxla.baselines.strategies.SUITE_STRATEGIES`: the
benchmark's eight and ``echo``). Answers go through the same extraction, graders, run folder
and result file as any model's, so the whole pipeline runs on a machine with no network
(``python runner.py --provider baseline --model first --edition sample``, or ``--suite FILE``).
A strategy's answers depend on all of a task's items (``majority``, ``random``), so they are
computed once per task, over the task's items, whatever order the requests come in.
"""

from __future__ import annotations

from typing import Any

from yoxla.baselines.strategies import SEED, SUITE_STRATEGIES, answers_by_id
from yoxla.providers.base import Completion, Provider, ProviderError, ProviderOptions, ProviderSpec, Request


class BaselineProvider(Provider):
    name = "baseline"  # the provider's name in messages and in the reported model

    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None:
        if model not in SUITE_STRATEGIES:
            raise ProviderError(
                f"unknown {self.name.replace('-', ' ')} strategy {model!r}; "
                f"use --model one of: {', '.join(SUITE_STRATEGIES)}"
            )
        self.spec = spec
        self.strategy = model
        self.seed = options.seed if options.seed is not None else SEED

    def generate(self, request: Request) -> Completion:
        prepared = getattr(request.task, "prepared", None)
        if prepared is None:  # every run's request carries its prepared suite task
            raise ProviderError(f"{self.name}: the request's task has no prepared suite items to answer")
        text = answers_by_id(self.strategy, prepared, self.seed)[request.example_id]
        return Completion(text=text, finish_reason="stop", model=f"{self.name}/{self.strategy}")

    def describe(self) -> dict[str, Any]:
        return {"base_url": None, "strategy": self.strategy, "seed": self.seed}


class SuiteBaselineProvider(BaselineProvider):
    """``suite-baseline``: the same strategies under the older name, which the result reports."""

    name = "suite-baseline"
