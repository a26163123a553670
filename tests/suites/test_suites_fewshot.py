"""Few-shot: never the evaluated row, reproducible random draws, a separate split, the limit."""

from __future__ import annotations

import pytest
from suites_helpers import ROWS, write_jsonl

from yoxla.prompt.prepare import prepare_task, select_examples

MANY = [{"id": f"r{i:03d}", "sual": f"Sual {i}", "cavab": str(i)} for i in range(150)]


def _task(**fewshot):
    return {
        "id": "fs",
        "dataset": {"path": "many.jsonl"},
        "prompt_template": "S: {{sual}}",
        "target_template": "{{cavab}}",
        "fewshot": {"count": 3, **fewshot},
    }


@pytest.fixture
def many(folder):
    write_jsonl(folder / "many.jsonl", MANY)
    return folder


@pytest.mark.parametrize("strategy", ["first", "random"])
def test_the_evaluated_row_is_never_its_own_example(load, many, pool, strategy):
    prepared = prepare_task(load(_task(strategy=strategy)).task("fs"), pool)
    for item in prepared.items:
        assert item.index not in item.fewshot
        assert len(item.fewshot) == 3
        assert f"S: {item.row['sual']}\n" not in item.messages[-1]["content"]


def test_first_strategy_takes_the_first_other_rows(load, many, pool):
    prepared = prepare_task(load(_task(strategy="first")).task("fs"), pool)
    assert prepared.items[0].fewshot == (1, 2, 3)
    assert prepared.items[1].fewshot == (0, 2, 3)
    assert prepared.items[5].fewshot == (0, 1, 2)
    assert (
        prepared.items[5].messages[-1]["content"]
        == "S: Sual 0\n0\n\nS: Sual 1\n1\n\nS: Sual 2\n2\n\nS: Sual 5"
    )


def test_random_is_reproducible_by_seed(load, many, pool):
    a = prepare_task(load(_task(strategy="random", seed=11)).task("fs"), pool)
    b = prepare_task(load(_task(strategy="random", seed=11)).task("fs"), pool)
    c = prepare_task(load(_task(strategy="random", seed=12)).task("fs"), pool)
    assert [i.fewshot for i in a.items] == [i.fewshot for i in b.items]
    assert [i.messages for i in a.items] == [i.messages for i in b.items]
    assert [i.fewshot for i in a.items] != [i.fewshot for i in c.items]
    assert len({i.fewshot for i in a.items}) > 100  # items get different examples


def test_a_run_limit_does_not_change_the_draws(load, many, pool):
    task = load(_task(strategy="random", seed=5)).task("fs")
    full = prepare_task(task, pool)
    part = prepare_task(task, pool, limit=10)
    assert [i.messages for i in part.items] == [i.messages for i in full.items[:10]]
    assert part.rows_total == 150


def test_random_draws_are_pinned():
    # Python's Random on an integer seed is stable across versions; the draw must never move.
    assert select_examples(150, 3, {0}, "random", 11, 0) == select_examples(150, 3, {0}, "random", 11, 0)
    assert select_examples(5, 10, {2}, "random", 1, 2) != []
    assert sorted(select_examples(5, 10, {2}, "random", 1, 2)) == [0, 1, 3, 4]
    assert select_examples(5, 3, set(), "first", 0, 0) == [0, 1, 2]
    assert select_examples(1, 3, {0}, "first", 0, 0) == []


def test_separate_dataset_and_its_own_templates(load, folder, pool):
    write_jsonl(folder / "train.jsonl", [{"sual": "Öyrənmə", "cavab": "Bəli"}, ROWS[0]])
    manifest = load(
        {
            "id": "fs",
            "dataset": {"path": "data.jsonl"},
            "prompt_template": "{{sual}}",
            "target_template": "{{cavab}}",
            "fewshot": {
                "count": 2,
                "dataset": {"path": "train.jsonl"},
                "prompt_template": "Sual: {{sual}}",
                "target_template": "Cavab: {{cavab}}",
                "example_template": "{{prompt}} | {{target}}",
                "separator": "\n---\n",
            },
        }
    )
    prepared = prepare_task(manifest.task("fs"), pool)
    assert set(prepared.datasets) == {"dataset", "fewshot"}
    first, second = prepared.items[0], prepared.items[1]
    # ROWS[0] is in the few-shot split too: the same content is never its own example.
    assert first.fewshot == (0,)
    assert first.messages[-1]["content"] == f"Sual: Öyrənmə | Cavab: Bəli\n---\n{ROWS[0]['sual']}"
    assert second.fewshot == (0, 1)


def test_num_fewshot_uses_default_templates(load, pool):
    prepared = prepare_task(
        load({**_task(), "dataset": {"path": "data.jsonl"}, "fewshot": None, "num_fewshot": 1}).task("fs"),
        pool,
    )
    assert (
        prepared.items[0].messages[-1]["content"]
        == f"S: {ROWS[1]['sual']}\n{ROWS[1]['cavab']}\n\nS: {ROWS[0]['sual']}"
    )


def test_count_zero_is_no_fewshot(load, pool):
    prepared = prepare_task(load({**_task(count=0), "dataset": {"path": "data.jsonl"}}).task("fs"), pool)
    assert prepared.items[0].messages[-1]["content"] == f"S: {ROWS[0]['sual']}"
