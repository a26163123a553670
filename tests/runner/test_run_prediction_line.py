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


def test_a_run_prepares_each_task_once_and_its_lines_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The executor's scorer (tasks prepared once per run) writes the very lines scoring each
    answer on its own (:func:`score_answer`, the replay over one row) writes, and prepares each
    task once, not once per answer."""
    import yoxla.suites.benchmark as benchmark
    import yoxla.suites.benchmark_example as example
    from yoxla.suites.benchmark_example import AnswerScorer

    suite, sample = load_suite(), load_edition("sample")
    items = [(suite.task(tid), dict(row)) for tid in PARITY_TASKS for row in load_rows(sample, tid)]
    comps = [
        _completion(k, task.answer.abstain.value if row[task.gold] is None else str(row[task.gold]))
        for k, (task, row) in enumerate(items)
    ]
    alone = [make_record(task, row, comp) for (task, row), comp in zip(items, comps, strict=True)]
    prepared: list[str] = []
    real_prepare = benchmark.prepare_rows
    monkeypatch.setattr(
        benchmark,
        "prepare_rows",
        lambda tid, rows, **kw: prepared.append(tid) or real_prepare(tid, rows, **kw),
    )
    monkeypatch.setattr(example, "score_answer", lambda *a: pytest.fail("an answer was scored on its own"))
    scorer = AnswerScorer(items)
    together = [make_record(task, row, comp, scorer) for (task, row), comp in zip(items, comps, strict=True)]
    assert together == alone
    assert sorted(prepared) == sorted(PARITY_TASKS)


def test_a_row_the_run_was_not_given_is_scored_on_its_own() -> None:
    from yoxla.suites.benchmark_example import AnswerScorer, score_answer

    task = load_suite().task("nli_v1")
    rows = [dict(r) for r in load_rows(load_edition("sample"), "nli_v1")]
    scorer = AnswerScorer([(task, rows[0])])
    changed = {**rows[0], "id": "elsewhere"}
    for row in (rows[1], changed):
        assert scorer.score(task, row, "neutral") == score_answer(task, row, "neutral")
    rows[0]["id"] = "changed-after"  # the run's row changed after it was prepared: scored as it is now
    assert scorer.score(task, rows[0], "neutral").id == "changed-after"
