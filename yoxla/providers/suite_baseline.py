"""The offline ``suite-baseline`` provider: cue-only answers to suite items, served like a model.

``--model`` names the strategy (:data:`yoxla.suites.baselines.SUITE_STRATEGIES`: the
benchmark's eight and ``echo``). Answers go through the same extraction, graders, run folder
and result file as any model's, so a suite runs end to end on a machine with no network
(``python runner.py --suite FILE --provider suite-baseline --model first``). A strategy's
answers depend on all of a task's items (``majority``, ``random``), so they are computed once
per task, over the task's items, whatever order the requests come in.
"""

from __future__ import annotations

from typing import Any

from yoxla.providers.base import Completion, Provider, ProviderError, ProviderOptions, ProviderSpec, Request
from yoxla.suites.baselines import SEED, SUITE_STRATEGIES, answers_by_id


class SuiteBaselineProvider(Provider):
    parallel = True
    batch_size = 1

    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None:
        if model not in SUITE_STRATEGIES:
            raise ProviderError(
                f"unknown suite baseline strategy {model!r}; use --model one of: {', '.join(SUITE_STRATEGIES)}"
            )
        self.spec = spec
        self.strategy = model
        self.seed = options.seed if options.seed is not None else SEED

    def generate(self, request: Request) -> Completion:
        prepared = getattr(request.task, "prepared", None)
        if prepared is None:
            raise ProviderError(
                "the suite-baseline provider answers suite items only (python runner.py --suite FILE)"
            )
        text = answers_by_id(self.strategy, prepared, self.seed)[request.example_id]
        return Completion(text=text, finish_reason="stop", model=f"suite-baseline/{self.strategy}")

    def describe(self) -> dict[str, Any]:
        return {"base_url": None, "strategy": self.strategy, "seed": self.seed}
