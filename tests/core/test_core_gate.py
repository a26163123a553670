"""The shortcut gate: chance per task, thresholds, declared overrides, and `yoxla floors --gate`.

The rule is the package suite's analysis section; these tests give ``yoxla-sample`` others."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import yaml

from yoxla.baselines.gate import GateVerdict, chance_score, gate, gate_rule, report
from yoxla.baselines.strategies import benchmark_floors
from yoxla.cli.main import run
from yoxla.contract.errors import ManifestError
from yoxla.contract.loader import SuiteManifest, load_document
from yoxla.contract.registry import manifest_path
from yoxla.data.editions import load_edition, load_rows

SAMPLE = load_edition("sample")
SEVEN = ["first", "majority", "overlap", "longest", "most_linked", "none_of_them", "abstain"]


def sample_rows(tid: str) -> list[dict]:
    return load_rows(SAMPLE, tid)


def sample_suite(**analysis: Any) -> SuiteManifest:
    """``yoxla-sample`` with the analysis section ``analysis`` (the edition's gate of seven
    strategies at chance + 15 unless ``gate`` is given)."""
    path = manifest_path("sample")
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["analysis"] = {"gate": {"margin": 15.0, "strategies": SEVEN}, **analysis}
    return load_document(doc, path.parent, path.name)


def judged(
    manifest: SuiteManifest, scores: Mapping[str, Mapping[str, float]], rows: Mapping[str, Sequence[dict]]
) -> list[GateVerdict]:
    return gate(manifest, scores, {tid: chance_score(tid, rows[tid]) for tid in scores})


@pytest.mark.parametrize(
    "task_id, chance",
    [
        ("nli_v1", 100 / 3),
        ("sentiment_v1", 100 / 3),
        ("rag_verification_v1", 100 / 3),
        ("intent_v1", 100 / 25),
        ("minimal_pairs_v1", 50.0),
        ("knowledge_choice_v1", 100 / 20),
        ("rag_selection_v1", 100 / 7),
        ("sts_v1", 0.0),
    ],
)
def test_chance_of_closed_spaces_and_sts(task_id, chance):
    assert chance_score(task_id, sample_rows(task_id)) == pytest.approx(chance)


def test_chance_of_span_tasks_is_a_random_sentence():
    qa = "extractive_qa_v1"
    row = {"id": "q", "context": "Bir. İki Bakı. Üç.", "question": "?", "answer": "Bakı", "answer_start": 9}
    assert chance_score(qa, [row]) == pytest.approx(100 / 3)  # only the gold's sentence scores
    ab = "qa_abstention_v1"
    unanswerable = {"id": "u", "context": "Bir. İki.", "question": "?", "answer": None}
    assert chance_score(ab, [unanswerable]) == pytest.approx(100 / 3)  # two sentences or "Cavab yoxdur"


def skewed_verification_rows() -> list[dict]:
    """The sample's verification rows with two thirds relabelled ZİDD: the majority answer wins."""
    return [dict(r, label="ZİDD") if i < 8 else r for i, r in enumerate(sample_rows("rag_verification_v1"))]


def test_gate_names_task_and_strategy_and_honours_a_declared_reason():
    rows = {"nli_v1": sample_rows("nli_v1"), "rag_verification_v1": skewed_verification_rows()}
    scores = benchmark_floors(rows, rows)
    plain = sample_suite()
    verdicts = {v.task: v for v in judged(plain, scores, rows)}
    assert verdicts["nli_v1"].passed
    fail = verdicts["rag_verification_v1"]
    assert not fail.passed and fail.failures[0] == ("majority", pytest.approx(200 / 3))
    assert fail.threshold == pytest.approx(100 / 3 + 15)
    text, status = report(list(verdicts.values()), "sample", gate_rule(plain))
    assert status == 1 and "gate failed: rag_verification_v1: majority scores 66.67" in text

    declared = sample_suite(
        tasks={
            "rag_verification_v1": {"gate_threshold": 70, "gate_reason": "two thirds of these rows are ZİDD"}
        }
    )
    text, status = report(judged(declared, scores, rows), "sample", gate_rule(declared))
    assert status == 0
    assert "threshold 70.00 declared because: two thirds of these rows are ZİDD" in text


def test_a_threshold_declared_for_one_strategy_leaves_the_others_at_chance_plus_margin():
    rows = {"rag_verification_v1": skewed_verification_rows()}
    scores = benchmark_floors(rows, rows)
    declared = {
        "gate_threshold": 90,
        "gate_reason": "overlap is inherent here",
        "gate_strategies": ["overlap"],
    }
    only_overlap = sample_suite(tasks={"rag_verification_v1": declared})
    (verdict,) = judged(only_overlap, scores, rows)
    assert verdict.threshold_of("overlap") == 90.0
    assert verdict.threshold_of("majority") == pytest.approx(100 / 3 + 15)
    assert verdict.declared_for == ("overlap",) and verdict.failures[0][0] == "majority"
    text, status = report([verdict], "sample", gate_rule(only_overlap))
    assert status == 1
    assert "threshold 90.00 for overlap declared because: overlap is inherent here" in text
    assert "majority scores 66.67 > threshold 48.33 = chance 33.33 + 15" in text
    assert "90.00 (overlap)" in text  # the table's declared column


def test_a_gate_entry_naming_an_unknown_strategy_is_refused():
    bad = {"gate_threshold": 50, "gate_reason": "r", "gate_strategies": ["telepathy"]}
    with pytest.raises(ManifestError, match=r"gate_strategies.*unknown strategy 'telepathy'"):
        sample_suite(tasks={"nli_v1": bad})


def test_random_is_not_gated_by_default():
    tid = "az_tr_interference_v1"  # random's seeded draw scores 66.67 > 65 on these 12 rows
    rows = {tid: sample_rows(tid)}
    scores = benchmark_floors(rows, rows)
    assert scores[tid]["random"] > 65.0
    (verdict,) = judged(sample_suite(), scores, rows)
    assert "random" not in verdict.scores and verdict.passed


def test_floors_gate_passes_on_the_committed_sample_edition(capsys):
    # .ci/run runs this gate. Artefacts of the small sample were removed from its rows; the
    # three tasks where word overlap is part of the task type declare an overlap threshold
    # with a written reason, which the report prints.
    assert run(["floors", "--edition", "sample", "--gate"]) == 0
    out = capsys.readouterr().out
    assert "shortcut gate passed on all 11 task(s)" in out
    for task in ("extractive_qa_v1", "qa_abstention_v1", "sts_v1"):
        assert f"note: {task}: threshold" in out and "for overlap declared because:" in out
    assert "gate failed" not in out


def test_sample_gate_declarations_name_only_the_overlap_strategy():
    from yoxla.contract.benchmark import benchmark_manifest

    manifest = benchmark_manifest()
    assert gate_rule(manifest).strategies == tuple(SEVEN) and gate_rule(manifest).margin == 15.0
    declared = {tid: t.spec for tid, t in manifest.tasks.items() if t.spec.gate[0] is not None}
    assert set(declared) == {"extractive_qa_v1", "qa_abstention_v1", "sts_v1"}
    for spec in declared.values():
        reason = spec.gate[1]
        assert spec.gate_applies_to == ("overlap",) and reason is not None and len(reason) > 80


def test_the_suite_gate_of_the_package_suite_is_the_edition_gate(capsys):
    # one rule (the analysis section's) and one chance: STS's is 0 on both paths
    assert run(["suite", "floors", "yoxla-sample", "--gate"]) == 0
    out = capsys.readouterr().out
    assert "(gated: " + ", ".join(SEVEN) + "; threshold: chance + 15" in out
    assert "note: sts_v1: threshold 75.00 for overlap declared because:" in out
    sts = next(line.split() for line in out.splitlines() if line.startswith("sts_v1 "))
    assert sts[1:3] == ["0.00", "15.00"]


def test_floors_gate_passes_where_no_cue_wins(capsys):
    assert run(["floors", "--edition", "sample", "--gate", "--task", "nli_v1", "--task", "sentiment_v1"]) == 0
    assert "shortcut gate passed on all 2 task(s)" in capsys.readouterr().out
    assert run(["floors", "--edition", "sample", "--task", "sts_v1"]) == 0  # without --gate: a report only


def test_edition_floors_are_the_suite_floors_of_the_package_suite():
    # `yoxla floors --edition sample` and `yoxla suite floors yoxla-sample` are one implementation.
    from yoxla.baselines.strategies import STRATEGIES, floor_scores
    from yoxla.contract.registry import load_suite_manifest
    from yoxla.score.worker import WorkerPool

    ids = ["nli_v1", "sts_v1", "extractive_qa_v1"]
    ours = benchmark_floors({tid: sample_rows(tid) for tid in ids}, ids)
    with WorkerPool() as pool:
        theirs = floor_scores(load_suite_manifest("yoxla-sample"), pool)
    for tid in ids:
        assert ours[tid] == {s: pytest.approx(theirs[tid][s] or 0.0) for s in STRATEGIES}
    assert ours["sts_v1"]["overlap"] > 70.0  # a real score, not a default
