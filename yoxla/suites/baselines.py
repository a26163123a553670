"""Cue-only answers for suite tasks: floors a model has to beat, and an offline provider.

The strategies read the task's answer space and the prompt, never the model:

* ``first``: the first choice (``choices``, or the ``label_set`` labels); without a closed
  answer space, the first number in the prompt, else its first line;
* ``random``: a choice drawn with a generator seeded by (seed, task, item), so any order of
  sending gives the same answers; without choices, one of the prompt's numbers or lines;
* ``majority``: the most frequent target of the task's items (ties: the first seen), the
  classic majority-class floor;
* ``echo``: the last number in the prompt, else its last line.

:class:`yoxla.providers.suite_baseline.SuiteBaselineProvider` serves them like a model
(``--provider suite-baseline --model first``), so a suite runs end to end offline.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Sequence

from yoxla.suites import spec as S
from yoxla.suites.prepare import Item, PreparedTask

SUITE_STRATEGIES = ("first", "random", "majority", "echo")
SEED = 20260101
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


def answer_space(prepared: PreparedTask) -> tuple[str, ...]:
    """The task's closed answer space: its choices, else its label_set labels (may be empty)."""
    task = prepared.task
    if task.choices:
        return task.choices
    ex = task.spec.output_extraction
    return tuple(ex.labels) if isinstance(ex, S.LabelSet) else ()


def _prompt(item: Item) -> str:
    return item.messages[-1]["content"]


def _cues(item: Item) -> list[str]:
    """Numbers of the prompt, else its non-empty lines."""
    text = _prompt(item)
    return _NUMBER.findall(text) or [line.strip() for line in text.splitlines() if line.strip()] or [""]


def _rng(seed: int, task_id: str, item_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{task_id}:{item_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def majority_target(items: Sequence[Item]) -> str:
    counts = Counter(i.target for i in items)
    return counts.most_common(1)[0][0] if counts else ""


def suite_answer(strategy: str, prepared: PreparedTask, item: Item, seed: int = SEED) -> str:
    """The answer of ``strategy`` to ``item`` (ValueError for an unknown strategy)."""
    space = answer_space(prepared)
    if strategy == "first":
        return space[0] if space else _cues(item)[0]
    if strategy == "random":
        return _rng(seed, prepared.task.id, item.id).choice(list(space) or _cues(item))
    if strategy == "majority":
        return majority_target(prepared.items)
    if strategy == "echo":
        return _cues(item)[-1]
    raise ValueError(f"unknown strategy {strategy!r}; use one of: {', '.join(SUITE_STRATEGIES)}")
