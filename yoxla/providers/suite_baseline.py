"""The offline ``suite-baseline`` provider: cue-only answers to suite items, served like a model.

``--model`` names the strategy (:data:`yoxla.suites.baselines.SUITE_STRATEGIES`). Answers
go through the same extraction, graders, run folder and result file as any model's, so a
suite runs end to end on a machine with no network (``python runner.py --suite FILE
--provider suite-baseline --model first``).
"""

from __future__ import annotations

from typing import Any

from yoxla.providers.base import Completion, Provider, ProviderError, ProviderOptions, ProviderSpec, Request
from yoxla.suites.baselines import SEED, SUITE_STRATEGIES, suite_answer


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
        self._items: dict[str, dict[str, Any]] = {}

    def generate(self, request: Request) -> Completion:
        prepared = getattr(request.task, "prepared", None)
        if prepared is None:
            raise ProviderError(
                "the suite-baseline provider answers suite items only (python runner.py --suite FILE)"
            )
        by_id = self._items.get(prepared.task.id)
        if by_id is None:
            by_id = self._items[prepared.task.id] = {i.id: i for i in prepared.items}
        item = by_id[request.example_id]
        text = suite_answer(self.strategy, prepared, item, self.seed)
        return Completion(text=text, finish_reason="stop", model=f"suite-baseline/{self.strategy}")

    def describe(self) -> dict[str, Any]:
        return {"base_url": None, "strategy": self.strategy, "seed": self.seed}
