"""A benchmark run's predictions.jsonl line says what its result file will hold for that answer.

The executor scores each answer as it arrives (:func:`yoxla.run.executor.make_record`); the
result file is derived later from the stored answers by the replay (:func:`yoxla.record.derive_task`).
Both go through one scoring path, so the verdict fields of every line equal the result file's.
"""

from __future__ import annotations

import pytest

from yoxla.editions import fingerprint, load_edition, load_rows
from yoxla.providers.base import Completion
from yoxla.record import derive_task
from yoxla.run.executor import make_record
from yoxla.suite import load_suite
from yoxla.suites.bridge import PARITY_TASKS

VERDICT = ("id", "raw", "parsed", "valid", "abstained", "outcome", "reason", "near_miss", "score")
WRAPS = ("{}", "**{}**", "{}.", "Cavab: {}", "«{}»", "", " {} ", "CAVAB YOXDUR", "3,5", "yoxdur")


def _completion(k: int, gold: str) -> Completion:
    wrap = WRAPS[k % len(WRAPS)]
    if k % 7 == 3:
        return Completion(error="HTTP 503: xidmət əlçatan deyil")
    if k % 5 == 2:
        return Completion(
            text=wrap.format(gold)[:3], reasoning="Əvvəlcə mətni oxuyuram", finish_reason="length"
        )
    return Completion(text=wrap.format(gold), finish_reason="stop")


@pytest.mark.parametrize("task_id", PARITY_TASKS)
def test_each_line_holds_the_verdict_the_result_file_derives(task_id: str) -> None:
    task = load_suite().task(task_id)
    rows = load_rows(load_edition("sample"), task_id)
    golds = [task.answer.abstain.value if r[task.gold] is None else str(r[task.gold]) for r in rows]
    comps = [_completion(k, g) for k, g in enumerate(golds)]
    lines = [make_record(task, dict(row), comp) for row, comp in zip(rows, comps, strict=True)]
    raws = [line["raw"] for line in lines]
    doc = derive_task(
        task,
        rows,
        raws,
        [c.finish_reason for c in comps],
        [c.error for c in comps],
        fingerprint=fingerprint(rows),
    )
    for line, pred in zip(lines, doc["predictions"], strict=True):
        assert {k: line[k] for k in VERDICT} == {k: pred[k] for k in VERDICT}
    outcomes = {line["outcome"] for line in lines}
    assert "generation_error" in outcomes and len(outcomes) >= 3  # the answers are not all alike
