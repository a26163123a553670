"""The synthetic full-size ``yoxla-v1`` files the admission bench times (:mod:`yoxla.testing.synthetic_v3`):
written by the runner's writer, of v1's size, admitted and re-checked through the one path; a
changed answer or score is named, so the bench times the full check, not a shortcut."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_file
from yoxla.record.signing import finalize, write_result
from yoxla.testing.synthetic_v3 import (
    build_v3,
    committed_source,
    prepare_v1,
    random_raws,
    v1_items,
    write_v1_rows,
)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("synthetic-v1")
    manifest, prepared = prepare_v1(write_v1_rows(folder / "data"))
    docs = {
        name: build_v3(
            manifest, prepared, {t: random_raws(p, seed, skill) for t, p in prepared.items()}, model=name
        )
        for name, seed, skill in (("weak", 1, 0.2), ("strong", 2, 0.9))
    }
    return manifest, prepared, docs


def _check(doc: dict[str, Any], path: Path, manifest: Any, prepared: Any) -> Any:
    write_result(doc, path)
    data = DataSource(suites=committed_source(manifest, prepared))
    try:
        return check_file(path, data=data, use_cache=False)
    finally:
        data.suites.close()


def test_the_files_have_v1s_size_and_their_own_answers(synthetic) -> None:
    _, prepared, docs = synthetic
    counts = v1_items()
    assert sum(counts.values()) == 1443 and {t: len(p.items) for t, p in prepared.items()} == counts
    weak, strong = docs["weak"], docs["strong"]
    for doc in (weak, strong):
        assert doc["format"] == "yoxla-result" and doc["format_version"] == 3
        assert doc["suite"]["id"] == "yoxla-v1"
        assert {t: len(x["predictions"]) for t, x in doc["tasks"].items()} == counts
        ids = [p["id"] for p in doc["tasks"]["nli_v1"]["predictions"]]
        assert len(set(ids)) == len(ids)  # the sample rows under new ids
    assert weak["scores"]["suite"] < strong["scores"]["suite"]
    raws = [[p["raw"] for p in d["tasks"]["extractive_qa_v1"]["predictions"]] for d in (weak, strong)]
    assert raws[0] != raws[1]
    outcomes = {p["outcome"] for d in (weak, strong) for x in d["tasks"].values() for p in x["predictions"]}
    assert {"correct", "wrong", "invalid"} <= outcomes  # every kind of answer is met


def test_a_synthetic_file_is_admitted_and_rechecked_on_the_v1_board(synthetic, tmp_path) -> None:
    manifest, prepared, docs = synthetic
    v = _check(docs["strong"], tmp_path / "strong.json", manifest, prepared)
    assert v.status == "admitted" and v.rechecked, v.reasons
    assert v.edition == "v1" and v.source_suite == "yoxla-v1"
    assert v.scores["yoxla"] == pytest.approx(docs["strong"]["scores"]["suite"])


def test_a_changed_score_is_found_by_the_rederivation(synthetic, tmp_path) -> None:
    manifest, prepared, docs = synthetic
    doc = copy.deepcopy(docs["weak"])
    pred = next(p for p in doc["tasks"]["sts_v1"]["predictions"] if p["score"] is not None)
    pred["score"] = pred["score"] + 0.5
    v = _check(
        finalize(doc), tmp_path / "w.json", manifest, prepared
    )  # digest made anew: only the score lies
    assert v.status == "excluded" and "task sts_v1" in v.reasons[0] and ".score" in v.reasons[0], v.reasons


def _own_rows() -> dict[str, list[dict[str, Any]]]:
    """The first four sample rows of each task, intent's with a category of their own."""
    from yoxla.data.editions import load_edition, load_rows

    sample = load_edition("sample")
    rows = {t: [copy.deepcopy(r) for r in load_rows(sample, t)[:4]] for t in sample.tasks}
    for r in rows["intent_v1"]:
        r["category"] = "kart"
    return rows


def test_a_file_over_rows_of_its_own_is_rechecked_against_them_and_refused_by_the_committed_suite(
    tmp_path,
) -> None:
    from yoxla.baselines.strategies import suite_answers
    from yoxla.testing.synthetic_v3 import prepare_rows

    manifest, prepared = prepare_rows("sample", _own_rows())
    assert {len(p.items) for p in prepared.values()} == {4}
    raws = {t: suite_answers("first", p) for t, p in prepared.items()}
    errors = {"nli_v1": ["timeout", None, None, None]}
    doc = build_v3(manifest, prepared, raws, model="own", edition="sample", errors=errors, thinking=True)
    assert doc["suite"]["id"] == "yoxla-sample" and doc["run"]["conditions"]["thinking"] is True
    nli = doc["tasks"]["nli_v1"]["predictions"]
    assert nli[0]["error"] == "timeout" and nli[0]["raw"] is None and nli[1]["raw"] == raws["nli_v1"][1]
    path = tmp_path / "own.json"
    write_result(doc, path)
    data = DataSource(allow_hub=False, suites=committed_source(manifest, prepared, "sample"))
    try:
        v = check_file(path, data=data, use_cache=False)
    finally:
        data.suites.close()
    assert v.status == "admitted" and v.rechecked, v.reasons
    assert v.edition == "sample" and v.group == "thinking" and v.generation_errors == 1
    committed = DataSource(allow_hub=False)
    try:
        w = check_file(path, data=committed, use_cache=False)
    finally:
        committed.suites.close()
    assert w.status == "excluded" and any("fingerprint" in r for r in w.reasons), w.reasons


def test_a_sample_file_of_the_committed_rows_needs_no_stand_in(tmp_path) -> None:
    from yoxla.testing.synthetic_v3 import sample_result

    doc = sample_result("majority", provider="vllm", model="m", display_name="M")
    assert doc["model"]["provider"] == "vllm" and doc["model"]["display_name"] == "M"
    path = tmp_path / "m.json"
    write_result(doc, path)
    data = DataSource(allow_hub=False)
    try:
        v = check_file(path, data=data, use_cache=False)
    finally:
        data.suites.close()
    assert v.status == "admitted" and v.rechecked and v.source_suite == "yoxla-sample", v.reasons
    assert v.scores["yoxla"] == pytest.approx(doc["scores"]["suite"])
