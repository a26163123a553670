"""The eight cue-only strategies over suite items: the benchmark's baselines, and controls left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from suites_helpers import task, write_jsonl, write_manifest

from yoxla.baselines.strategies import STRATEGIES, SUITE_STRATEGIES, chance_score, suite_answer, suite_answers
from yoxla.contract.benchmark import prepare_rows
from yoxla.contract.loader import load_manifest
from yoxla.data.editions import load_edition, load_rows
from yoxla.prompt.prepare import prepare_task

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = load_edition("sample")


def _committed(strategy: str) -> dict[str, list[str]]:
    """The raw answers of the committed sample baseline result (written by the benchmark's own
    strategies before they moved here)."""
    data = json.loads(
        (ROOT / "results" / "sample" / f"baseline__{strategy}.json").read_text(encoding="utf-8")
    )
    return {tid: [p["raw"] for p in t["predictions"]] for tid, t in data["tasks"].items()}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_answers_every_benchmark_task_as_the_committed_results(strategy) -> None:
    committed = _committed(strategy)
    assert sorted(committed) == sorted(SAMPLE.task_ids)
    for tid in SAMPLE.task_ids:
        prepared = prepare_rows(tid, load_rows(SAMPLE, tid))
        assert suite_answers(strategy, prepared) == committed[tid], tid
        # one item at a time, in any order, gives the same answers
        one = {i.id: suite_answer(strategy, prepared, i) for i in reversed(prepared.items)}
        assert [one[i.id] for i in prepared.items] == committed[tid], tid


def _suite(tmp_path: Path, rows: list[dict], **fields) -> object:
    write_jsonl(tmp_path / "data.jsonl", rows)
    path = write_manifest(tmp_path, [task(**fields)])
    return prepare_task(load_manifest(path).task("t1"))


ROWS = [
    {"id": "a", "sual": "Bu gün hava necədir?", "cavab": "B", "control": False},
    {"id": "b", "sual": "Sabah hava necə olacaq?", "cavab": "B", "control": False},
    {"id": "c", "sual": "Hansı?", "cavab": "A", "control": True},
    {"id": "d", "sual": "Hansı?", "cavab": "A", "control": True},
    {"id": "e", "sual": "Hansı?", "cavab": "A", "control": True},
]


def test_majority_and_chance_leave_the_controls_out(tmp_path) -> None:
    open_task = _suite(tmp_path, ROWS, metadata={"control_field": "control"})
    # three controls answer A; the two scored items answer B
    assert suite_answers("majority", open_task) == ["B"] * 5
    assert chance_score(open_task) == 100.0


def test_chance_over_an_items_own_space_leaves_the_controls_out(tmp_path) -> None:
    rows = [
        {"id": "a", "sual": "?", "variantlar": ["x", "y"], "cavab": "1", "control": "yox"},
        {"id": "b", "sual": "?", "variantlar": ["x", "y", "z", "w"], "cavab": "2", "control": "bəli"},
    ]
    prepared = _suite(
        tmp_path,
        rows,
        prompt_template="Sual: {{sual}}\n{{variantlar | numbered}}",
        answer_space={"options_field": "variantlar"},
        output_extraction={"type": "strict"},
        metadata={"control_field": "control", "control_values": "bəli"},
    )
    assert chance_score(prepared) == 50.0


def test_cues_that_do_not_apply_fall_back_to_first(tmp_path) -> None:
    rows = [{"id": "a", "sual": "İki üstəgəl üç neçədir? 2 və 3", "cavab": "5"}]
    prepared = _suite(tmp_path, rows)  # open answers: no passage, no labels, no abstention
    first = suite_answers("first", prepared)
    assert first == ["2"]
    for strategy in ("overlap", "longest", "most_linked", "none_of_them", "abstain"):
        assert suite_answers(strategy, prepared) == first, strategy
    assert suite_answers("echo", prepared) == ["3"]


def test_labels_are_chosen_by_the_descriptions_the_prompt_lists(tmp_path) -> None:
    rows = [{"id": "a", "sual": "Film çox gözəl idi, bəyəndim", "cavab": "müsbət"}]
    prepared = _suite(
        tmp_path,
        rows,
        choices=["mənfi", "müsbət"],
        output_extraction={"type": "strict"},
        generation={"instructions": "- mənfi: pis, bəyənmədim\n- müsbət: gözəl, bəyəndim"},
    )
    assert suite_answers("overlap", prepared) == ["müsbət"]
    assert suite_answers("longest", prepared) == ["müsbət"]
    assert set(SUITE_STRATEGIES) == {*STRATEGIES, "echo"}


@pytest.mark.parametrize("task_id", ["extractive_qa_v1", "qa_abstention_v1"])
def test_a_span_tasks_chance_is_the_mean_score_of_a_random_sentence(task_id) -> None:
    from yoxla.baselines.strategies import sentences
    from yoxla.contract.benchmark import strict_rule
    from yoxla.score.replay import score_builtin_task

    rows, abstain = load_rows(SAMPLE, task_id), strict_rule(task_id).abstain
    per_row = []
    for row in rows:  # each sentence scored alone, as a run scores one answer
        options = sentences(row["context"]) + ([abstain] if abstain else [])
        item = prepare_rows(task_id, [row])
        n = len(options)
        scored = score_builtin_task(item, item.items * n, options, [None] * n, [None] * n).results
        per_row.append(sum(r.score or 0.0 for r in scored) / n)
    expected = 100.0 * sum(per_row) / len(per_row)
    assert chance_score(prepare_rows(task_id, rows)) == pytest.approx(expected, abs=1e-9)
    assert expected > 20.0  # a quoted sentence often holds the answer: far above "the most common target"


def test_the_packaged_sample_suite_passes_its_shortcut_gate(capsys) -> None:
    from yoxla.cli.main import run as cli_run

    assert cli_run(["suite", "floors", str(ROOT / "yoxla" / "editions" / "yoxla-sample.yaml"), "--gate"]) == 0
    assert "shortcut gate passed" in capsys.readouterr().out


def test_the_packaged_sample_suite_read_as_a_manifest_gets_the_benchmarks_answers() -> None:
    manifest = load_manifest(ROOT / "yoxla" / "editions" / "yoxla-sample.yaml")
    for strategy in STRATEGIES:
        committed = _committed(strategy)
        for tid, suite_task in manifest.tasks.items():
            assert suite_answers(strategy, prepare_task(suite_task)) == committed[tid], (strategy, tid)
