"""The benchmark's tasks as suite tasks, over an edition's rows as the benchmark reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yoxla.contract.benchmark import benchmark_manifest, benchmark_task, prepare_rows
from yoxla.data.editions import fingerprint, load_edition, load_rows

SAMPLE = load_edition("sample")
# The frozen contracts' exact messages on every sample row (the oracle of test_suites_parity.py).
MESSAGES = json.loads(
    (Path(__file__).parent / "cases" / "benchmark_messages.json").read_text(encoding="utf-8")
)
TASKS = sorted(MESSAGES["tasks"])
# The row-dependent answer spaces: the options' numbers, then the fixed labels.
SPACES = {
    "knowledge_choice_v1": ("candidates", tuple(str(n) for n in range(1, 21))),
    "rag_selection_v1": ("passages", ("1", "2", "3", "4", "5", "6", "HEÇ BİRİ")),
}


def test_every_benchmark_task_is_a_suite_task():
    assert sorted(benchmark_manifest().tasks) == TASKS == sorted(SAMPLE.tasks)
    assert benchmark_task("nli_v1").spec.id == "nli_v1"
    with pytest.raises(KeyError):
        benchmark_task("no_such_task")


@pytest.mark.parametrize("task_id", TASKS)
def test_prepared_rows_carry_the_benchmark_messages_and_spaces(task_id):
    rows = load_rows(SAMPLE, task_id)
    want = MESSAGES["tasks"][task_id]
    prepared = prepare_rows(task_id, rows)
    assert [i.id for i in prepared.items] == [str(r["id"]) for r in rows] == [x["id"] for x in want["items"]]
    assert [[m["content"] for m in i.messages] for i in prepared.items] == [
        [want["system"], x["user"]] for x in want["items"]
    ]
    if task_id in SPACES:
        field, space = SPACES[task_id]
        assert all(len(r[field]) == len(space) - (task_id == "rag_selection_v1") for r in rows)
        assert [i.choices for i in prepared.items] == [space] * len(rows)
    else:
        assert all(i.choices is None for i in prepared.items)
    assert prepared.fingerprints["dataset"] == fingerprint(list(rows))


def test_given_rows_are_used_not_the_bundled_file():
    rows = load_rows(SAMPLE, "nli_v1")[:3]
    prepared = prepare_rows("nli_v1", rows)
    assert len(prepared.items) == 3
    assert prepared.items[0].row == rows[0]


def test_only_the_breakdowns_asked_for_are_tallied():
    rows = load_rows(SAMPLE, "minimal_pairs_v1")
    declared = benchmark_task("minimal_pairs_v1").spec.breakdowns
    assert declared == ("phenomenon", "domain", "difficulty")  # the package suite's analysis section
    assert prepare_rows("minimal_pairs_v1", rows).task.spec.breakdowns == ()
    one = prepare_rows("minimal_pairs_v1", rows, breakdowns=["phenomenon"])
    assert one.task.spec.breakdowns == ("phenomenon",)
    # The analysis section is hashed apart: the task is the committed one, hashes and all.
    assert one.task.definition_hash == benchmark_task("minimal_pairs_v1").definition_hash
    assert one.task_hash == prepare_rows("minimal_pairs_v1", rows, breakdowns=declared).task_hash
    assert prepare_rows("minimal_pairs_v1", rows, breakdowns=declared).task is benchmark_task(
        "minimal_pairs_v1"
    )
