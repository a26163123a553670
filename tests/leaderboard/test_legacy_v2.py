"""A ``yoxla-result`` v2 file is admitted by replaying its stored answers as a run of the package
suite of its edition (yoxla/admission/v2.py), with the scores it stores; a tampered one
is excluded with a reason that names what changed."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from leaderboard_helpers import LEGACY, write

from yoxla.admission import v2 as legacy_v2
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_file
from yoxla.admission.verdict import ADMITTED, EXCLUDED
from yoxla.record.signing import finalize

CASES = Path(__file__).parent / "cases" / "legacy-v2"
LOGPROBS = CASES / "logprobs" / "vllm__fake--model-1.json"


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _check(doc: dict[str, Any], tmp: Path) -> Any:
    return check_file(
        write(tmp / "file.json", finalize(doc)), data=DataSource(allow_hub=False), use_cache=False
    )


@pytest.mark.parametrize("path", [*LEGACY, LOGPROBS], ids=lambda p: p.stem)
def test_a_stored_v2_file_is_admitted_with_the_scores_it_stores(path: Path, monkeypatch) -> None:
    replayed: list[str] = []
    real = legacy_v2.derive_suite_task
    monkeypatch.setattr(
        legacy_v2, "derive_suite_task", lambda p, *a, **k: replayed.append(p.task.id) or real(p, *a, **k)
    )
    doc = _doc(path)
    v = check_file(path, data=DataSource(allow_hub=False), use_cache=False)
    assert v.status == ADMITTED and v.rechecked, v.reasons
    assert v.scores == doc["scores"]  # the very numbers of the file
    assert replayed == list(doc["tasks"])  # every task through the one suite replay
    for tid, rec in v.tasks.items():
        assert rec.block == doc["tasks"][tid]["block"] and rec.score == doc["tasks"][tid]["score"]
    if path == LOGPROBS:
        assert v.calibration["overall"] is not None  # pooled from the stored distributions


def _changed_answer(doc: dict[str, Any]) -> None:
    pred = doc["tasks"]["nli_v1"]["predictions"][0]
    pred["raw"] = next(x for x in ("neutral", "contradiction") if x != pred["parsed"])


def _changed_metric(doc: dict[str, Any]) -> None:
    doc["tasks"]["nli_v1"]["metrics"]["macro_f1"] += 0.125


def _changed_breakdown(doc: dict[str, Any]) -> None:
    cells = doc["tasks"]["minimal_pairs_v1"]["metrics"]["per_phenomenon_accuracy"]
    cells[next(iter(cells))]["n"] += 1


def _dropped_breakdown(doc: dict[str, Any]) -> None:
    del doc["tasks"]["minimal_pairs_v1"]["metrics"]["per_phenomenon_accuracy"]


def _changed_verdict(doc: dict[str, Any]) -> None:
    pred = doc["tasks"]["sentiment_v1"]["predictions"][1]
    pred["outcome"] = "wrong" if pred["outcome"] == "correct" else "correct"


def _changed_block(doc: dict[str, Any]) -> None:
    doc["scores"]["blocks"]["rag"] += 1.0


def _missing_ids(doc: dict[str, Any]) -> None:
    preds = doc["tasks"]["intent_v1"]["predictions"]
    del preds[3:5]


def _wrong_fingerprint(doc: dict[str, Any]) -> None:
    doc["tasks"]["sts_v1"]["fingerprint"] = "sha256:" + "5" * 64


def _wrong_contract(doc: dict[str, Any]) -> None:
    doc["tasks"]["rag_selection_v1"]["contract_hash"] = "sha256:" + "6" * 64


TAMPERED: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "changed answer": (_changed_answer, "task nli_v1: tasks.nli_v1.score is stored as"),
    "changed metric": (_changed_metric, "tasks.nli_v1.metrics.macro_f1 is stored as"),
    "changed breakdown": (_changed_breakdown, "tasks.minimal_pairs_v1.metrics.per_phenomenon_accuracy."),
    "dropped breakdown": (_dropped_breakdown, "metrics.per_phenomenon_accuracy is stored as absent"),
    "changed verdict": (_changed_verdict, "tasks.sentiment_v1.predictions[1].outcome"),
    "changed block score": (_changed_block, "scores.blocks.rag is stored as"),
    "missing ids": (_missing_ids, "task intent_v1: example ids missing from the predictions"),
    "wrong fingerprint": (_wrong_fingerprint, "task sts_v1: dataset fingerprint differs"),
    "wrong contract": (_wrong_contract, "task rag_selection_v1: contract hash differs"),
}


@pytest.mark.parametrize("kind", list(TAMPERED))
def test_a_tampered_v2_file_is_excluded_with_a_reason_naming_it(kind: str, tmp_path: Path) -> None:
    edit, expected = TAMPERED[kind]
    doc = copy.deepcopy(_doc(LEGACY[0]))
    edit(doc)
    v = _check(doc, tmp_path)
    assert v.status == EXCLUDED
    assert len(v.reasons) == 1 and expected in v.reasons[0], v.reasons


def test_a_changed_stored_probability_is_named(tmp_path: Path) -> None:
    doc = _doc(LOGPROBS)
    tid, pred = next(
        (tid, p) for tid, t in doc["tasks"].items() for p in t["predictions"] if p.get("distribution")
    )
    probs = pred["distribution"]["probs"]
    a, b = list(probs)[:2]
    probs[a], probs[b] = probs[b], probs[a]
    v = _check(doc, tmp_path)
    assert v.status == EXCLUDED and f"task {tid}: tasks.{tid}.predictions" in v.reasons[0], v.reasons


def test_the_v2_suite_hash_is_that_of_the_package_suite() -> None:
    from yoxla.admission.committed import CommittedSuites

    suite, _ = CommittedSuites().get("yoxla-sample")
    assert suite is not None
    assert legacy_v2.legacy_suite_hash(suite.manifest) == _doc(LEGACY[0])["suite_hash"]
