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
from dataclasses import dataclass
from typing import Any

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
    space = item.choices if item.choices is not None else answer_space(prepared)
    if strategy == "first":
        return space[0] if space else _cues(item)[0]
    if strategy == "random":
        return _rng(seed, prepared.task.id, item.id).choice(list(space) or _cues(item))
    if strategy == "majority":
        return majority_target(prepared.items)
    if strategy == "echo":
        return _cues(item)[-1]
    raise ValueError(f"unknown strategy {strategy!r}; use one of: {', '.join(SUITE_STRATEGIES)}")


# Floors and the shortcut gate ---------------------------------------------------------------------

GATED = ("first", "majority", "echo")  # random reads no cue: its expected score is chance


def chance_score(prepared: PreparedTask) -> float:
    """The reference a cue must not beat by much: a uniformly random valid answer (100 / |answer
    space|) when the space is closed; for open answers, always giving the most common target
    (100 × its share of the items), the best score that reads nothing of the item."""
    own = [i.choices for i in prepared.items if i.choices]  # a row-dependent space: per item
    if own:
        return sum(100.0 / len(c) for c in own) / len(own)
    space = answer_space(prepared)
    if space:
        return 100.0 / len(space)
    counts = Counter(i.target for i in prepared.items)
    return 100.0 * max(counts.values()) / len(prepared.items) if counts else 0.0


def floor_scores(manifest: Any, pool: Any) -> dict[str, dict[str, float | None]]:
    """Per task, each strategy's task score (None where the task has no 0–100 score)."""
    from yoxla.suites.prepare import prepare_task
    from yoxla.suites.scoring import SampleOutput, score_suite_task

    out: dict[str, dict[str, float | None]] = {}
    for tid, task in manifest.tasks.items():
        prepared = prepare_task(task, pool)
        out[tid] = {}
        for strategy in SUITE_STRATEGIES:
            outputs = [SampleOutput.from_raw(suite_answer(strategy, prepared, i)) for i in prepared.items]
            out[tid][strategy] = score_suite_task(prepared, outputs, pool=pool).score
    return out


def declared_threshold(metadata: dict[str, str]) -> tuple[float | None, str | None]:
    """A task's own gate threshold: ``metadata.gate_threshold`` (0–100) with ``gate_reason``, or none."""
    return checked_threshold(metadata.get("gate_threshold"), metadata.get("gate_reason"))


def checked_threshold(value: str | None, reason: str | None) -> tuple[float | None, str | None]:
    """A declared threshold (text, 0–100) with its reason; (None, None) unless both are usable."""
    if value is None or not reason:
        return None, None
    try:
        number = float(value)
    except ValueError:
        return None, None
    return (number, reason) if 0.0 <= number <= 100.0 else (None, None)


@dataclass(frozen=True)
class SuiteGateVerdict:
    task: str
    chance: float
    threshold: float
    reason: str | None  # the task's declared reason when it declares its threshold
    failures: tuple[tuple[str, float], ...]  # gated strategies above the threshold, worst first

    @property
    def passed(self) -> bool:
        return not self.failures


def gate_suite(
    manifest: Any, floors: dict[str, dict[str, float | None]], margin: float
) -> list[SuiteGateVerdict]:
    """The shortcut gate: no gated strategy above chance + ``margin`` (or the task's declared
    ``metadata.gate_threshold``, given with ``metadata.gate_reason``)."""
    from yoxla.suites.prepare import prepare_task

    out = []
    for tid, scores in floors.items():
        task = manifest.tasks[tid]
        chance = chance_score(prepare_task(task))
        threshold, reason = checked_threshold(*task.spec.gate)  # metadata or the analysis section
        if threshold is None:
            threshold = chance + margin
        failures = sorted(
            ((s, v) for s, v in scores.items() if s in GATED and v is not None and v > threshold),
            key=lambda x: -x[1],
        )
        out.append(SuiteGateVerdict(tid, chance, threshold, reason, tuple(failures)))
    return out
