"""The eleven built-in tasks written as a manifest score exactly as the golden file pins them.

The committed package suite yoxla/editions/yoxla-sample.yaml holds all eleven tasks of the benchmark on the bundled sample rows, with built-in graders, strict
extraction, a row-dependent ``answer_space`` (knowledge_choice_v1, rag_selection_v1), the
STS grader's per-example ``closeness`` and ``correct_within`` (sts_v1), the four blocks as
``groups`` and the YOXLA headline. It renders, byte for byte, the messages the frozen
contracts rendered (``cases/benchmark_messages.json``, written by yoxla/suite/yoxla.yaml's
``Task.messages``). For the same stored answers (gold answers, every cue-only
baseline strategy, messy answers with wrappers, near misses, reasoning, errors and
truncation, and answers at the edges of each answer space: the answer sets of
:mod:`yoxla.testing.golden`) the model sees the same messages, and every per-example verdict,
every metric the benchmark's result records hold, the task score, the block scores and the
YOXLA score are the ones ``tests/golden/sample_scores.json`` pins (floats to 1e-9). The golden
file was written by the built-in evaluators, before the replay moved to the suite path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yoxla.contract.benchmark import strict_rule
from yoxla.contract.canonical import sha256_text
from yoxla.contract.hashing import declared_aggregation
from yoxla.contract.loader import load_manifest
from yoxla.contract.registry import manifest_path
from yoxla.data.editions import load_edition, load_rows
from yoxla.prompt.prepare import prepare_task
from yoxla.record.derive import build_suite_task_result, scores_of
from yoxla.record.result import SuiteInfo
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.testing import golden

ROOT = Path(__file__).resolve().parents[2]
PARITY = manifest_path("sample")
PARITY_TASKS = tuple(load_manifest(PARITY).tasks)
MESSAGES = json.loads((ROOT / "tests/suites/cases/benchmark_messages.json").read_text(encoding="utf-8"))[
    "tasks"
]
GOLDEN = json.loads((ROOT / golden.GOLDEN_PATH).read_text(encoding="utf-8"))["sample"]
# The benchmark's blocks as the first contract file declared them: id, name, tasks.
BLOCKS = {
    "understanding": (
        "Anlama",
        ["extractive_qa_v1", "qa_abstention_v1", "nli_v1", "sts_v1", "sentiment_v1", "intent_v1"],
    ),
    "language": ("Dil bilgisi", ["minimal_pairs_v1", "az_tr_interference_v1"]),
    "knowledge": ("Bilik", ["knowledge_choice_v1"]),
    "rag": ("Mənbəyə əsaslanma", ["rag_verification_v1", "rag_selection_v1"]),
}
SAMPLE = load_edition("sample")
TOL = 1e-9
ANSWER_SETS = tuple(sorted(GOLDEN["sets"]))


def _same(a: Any, b: Any) -> bool:
    """Equal, floats to 1e-9, recursively through mappings and lists."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) or isinstance(b, float):
        num = (int, float)
        return isinstance(a, num) and isinstance(b, num) and abs(float(a) - float(b)) <= TOL
    return bool(a == b)


def _outputs(raws, finish, errors) -> list[SampleOutput]:
    n = len(raws)
    finish, errors = finish or [None] * n, errors or [None] * n
    return [SampleOutput.from_raw(r, f, e) for r, f, e in zip(raws, finish, errors, strict=True)]


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(PARITY)


@pytest.fixture(scope="module")
def prepared(manifest, pool_module):
    return {tid: prepare_task(t, pool_module) for tid, t in manifest.tasks.items()}


@pytest.fixture(scope="module")
def scored(prepared, pool_module):
    """Per (task, answer set): the golden entry, the suite path's TaskScore and the answers."""
    out = {}
    for tid in PARITY_TASKS:
        for name, (raws, finish, errors, _) in golden.answer_sets(prepared[tid]).items():
            suite = score_suite_task(prepared[tid], _outputs(raws, finish, errors), pool=pool_module)
            out[tid, name] = (GOLDEN["sets"][name]["tasks"][tid], suite, (raws, finish, errors))
    return out


def test_the_manifest_holds_every_task_and_block(manifest):
    assert list(manifest.tasks) == list(PARITY_TASKS)
    assert sorted(PARITY_TASKS) == sorted(MESSAGES)
    assert [g.id for g in manifest.groups] == list(BLOCKS)
    for g in manifest.groups:
        assert (g.name, sorted(g.tasks)) == (BLOCKS[g.id][0], sorted(BLOCKS[g.id][1]))
    assert manifest.headline_rule == "mean_of_groups" and manifest.headline_name == "YOXLA"


@pytest.mark.parametrize("task_id", PARITY_TASKS)
def test_messages_are_identical(prepared, manifest, task_id):
    want = MESSAGES[task_id]
    items = prepared[task_id].items
    assert [i.id for i in items] == [x["id"] for x in want["items"]]
    for item, x in zip(items, want["items"], strict=True):
        expected = [{"role": "system", "content": want["system"]}, {"role": "user", "content": x["user"]}]
        assert list(item.messages) == expected, (task_id, item.id)
    # The system prompt is the one whose hash the task records (and results publish).
    assert sha256_text(want["system"]) == manifest.tasks[task_id].spec.metadata["prompt_hash"]


def test_the_message_oracle_covers_every_task_and_row():
    assert sorted(MESSAGES) == sorted(PARITY_TASKS)
    for tid in PARITY_TASKS:
        rows = load_rows(SAMPLE, tid)
        assert [x["id"] for x in MESSAGES[tid]["items"]] == [str(r["id"]) for r in rows]


def test_every_answer_set_is_pinned(scored):
    assert set(ANSWER_SETS) == {name for _, name in scored}
    assert {"messy", golden.PARITY_MESSY, *golden.EDGE_SETS} <= set(ANSWER_SETS)


@pytest.mark.parametrize("name", ANSWER_SETS)
@pytest.mark.parametrize("task_id", PARITY_TASKS)
def test_metrics_and_verdicts_are_identical(scored, task_id, name):
    want, got, (_, _, errors) = scored[task_id, name]
    numeric = strict_rule(task_id).mode == "numeric"
    for key, value in want["metrics"].items():
        assert key in got.metrics, (name, key)
        assert _same(value, got.metrics[key]), (name, key, value, got.metrics[key])
    assert got.score is not None and abs(got.score - want["score"]) <= TOL, (name, got.score, want["score"])
    assert len(got.results) == len(want["examples"])
    for k, (row, g) in enumerate(zip(want["examples"], got.results, strict=True)):
        pred = {
            "id": g.id,
            "valid": g.valid,
            "parsed": (float(g.number) if numeric and g.number is not None else g.extracted)
            if g.valid
            else None,
            "abstained": g.abstained,
            "outcome": g.outcome,
            "reason": "generation_error" if errors[k] else g.reason,
            "near_miss": g.near_miss,
            "score": g.score,
        }
        have = golden._example(pred)
        assert _same(have[:8], row[:8]), (name, g.id, have, row)


@pytest.mark.parametrize("name", ANSWER_SETS)
def test_block_scores_and_the_yoxla_score_are_identical(scored, prepared, manifest, pool_module, name):
    """Through the stored result records: task results -> group scores -> headline."""
    want_tasks = {tid: scored[tid, name][0]["score"] for tid in PARITY_TASKS}
    want_blocks, want_yoxla = GOLDEN["sets"][name]["blocks"], GOLDEN["sets"][name]["yoxla"]
    results = {}
    for tid in PARITY_TASKS:
        raws, finish, errors = scored[tid, name][2]
        n = len(raws)
        stored = [
            {
                "id": item.id,
                "raw": raws[k],
                "finish_reason": (finish or [None] * n)[k],
                "error": (errors or [None] * n)[k],
            }
            for k, item in enumerate(prepared[tid].items)
        ]
        results[tid] = build_suite_task_result(prepared[tid], stored, pool=pool_module)
    info = SuiteInfo.model_validate(
        {
            "id": "yoxla-sample",
            "path": "yoxla/editions/yoxla-sample.yaml",
            "suite_hash": "sha256:" + "0" * 64,
            "tasks": {
                tid: {"hash": p.task_hash, "definition": p.task.definition_hash, "data": p.fingerprints}
                for tid, p in prepared.items()
            },
            **declared_aggregation(manifest),
        }
    )
    scores = scores_of(info, results)
    assert _same(dict(scores.tasks), want_tasks), name
    assert scores.groups is not None and _same(dict(scores.groups), want_blocks), name
    assert scores.suite is not None and abs(scores.suite - want_yoxla) <= TOL, name
    # Not the mean of the tasks: the blocks hold different numbers of tasks.
    flat = sum(want_tasks.values()) / len(want_tasks)
    if abs(flat - want_yoxla) > 1e-6:
        assert abs(scores.suite - flat) > 1e-6


def test_messy_answers_exercise_the_strict_parser(scored):
    m = scored["nli_v1", golden.PARITY_MESSY][1].metrics
    assert m["near_miss"] and m["generation_errors"] and m["truncated"]
    assert set(m["outcomes"]) >= {"correct", "invalid", "generation_error", "truncated"}


def test_edge_answers_exercise_each_row_space(scored):
    """Out-of-space numbers, dotless HEÇ BIRI and option-with-text near misses occur and agree."""
    kinds = set()
    for k in range(3):
        got = scored["rag_selection_v1", golden.EDGE_SETS[k]][1]
        kinds |= {r.near_miss for r in got.results if r.near_miss}
        assert got.metrics["n_valid"] < got.metrics["n"]
    assert {"option_with_text", "other"} <= kinds
    sts = [scored["sts_v1", name][1] for name in golden.EDGE_SETS]
    outcomes = {o for s in sts for o in s.metrics["outcomes"]}
    assert {"correct", "wrong", "invalid"} <= outcomes
