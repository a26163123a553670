"""The offline ``suite-baseline`` provider: cue-only answers to suite items, served like a model.

``--model`` names the strategy (:data:`yoxla.suites.baselines.SUITE_STRATEGIES`: the
benchmark's eight and ``echo``). Answers go through the same extraction, graders, run folder
and result file as any model's, so a suite runs end to end on a machine with no network
(``python runner.py --suite FILE --provider suite-baseline --model first``). A strategy's
answers depend on all of a task's items (``majority``, ``random``), so they are computed once
per task, over the task's items, whatever order the requests come in.
"""

from __future__ import annotations

from yoxla.providers.base import Completion, ProviderError, Request
from yoxla.providers.baseline import StrategyProvider
from yoxla.suites.baselines import SUITE_STRATEGIES, answers_by_id


class SuiteBaselineProvider(StrategyProvider):
    name = "suite-baseline"
    strategies = SUITE_STRATEGIES

    def generate(self, request: Request) -> Completion:
        prepared = getattr(request.task, "prepared", None)
        if prepared is None:
            raise ProviderError(
                "the suite-baseline provider answers suite items only (python runner.py --suite FILE)"
            )
        return self.completion(answers_by_id(self.strategy, prepared, self.seed)[request.example_id])
