"""The bundled sample edition: read like any folder in the Hub layout, validates, and is pinned."""

from __future__ import annotations

import pytest

from yoxla.cli.main import run
from yoxla.contract.benchmark import benchmark_task
from yoxla.data.editions import fingerprint, load_edition, load_rows
from yoxla.data.validate import breakdown_field, validate_edition

# Pinned on purpose: editing a sample row must be a deliberate change of this file too.
PINNED = {
    "extractive_qa_v1": (13, "sha256:44314b7761fa5e1a07885946af75cc97acc46ea3e1ce61fb713013e0e7554730"),
    "qa_abstention_v1": (12, "sha256:05c01ff184d89ae08e907438da41184f9e96f4406185c2e723ea6f64e846f000"),
    "nli_v1": (12, "sha256:dbce44ec5ffd1eae6ad491e25a35ad77503b291c4ce79f2b7743ace1def14053"),
    "sts_v1": (12, "sha256:b2d9c6b7c1ace5742b2b598c0a9b64760374a24d1b6f82955e517c40268e8e2f"),
    "sentiment_v1": (12, "sha256:09fe437d3594b3e4db42e1c794ec3b07ec7d9eeb485b63c632974f30f50d00b8"),
    "intent_v1": (25, "sha256:43b660d3f7dfaf5e22262b6bdd45d3af0bf604d830809751c5946a2aed320dd0"),
    "minimal_pairs_v1": (12, "sha256:8029a8455f0947b4d5968aff69d413425191f7bfc1a6526b04cd7badff4e81fd"),
    "az_tr_interference_v1": (12, "sha256:a7f37c4abc168bee2065f53248d33c0e2657d78c9ed0fe962fe6f84662fee781"),
    "knowledge_choice_v1": (10, "sha256:d4792bc90c4137b2e55809c4790a9b40c05ffd67eab669522f38c207c8d450ac"),
    "rag_verification_v1": (12, "sha256:9626404155026f2c71d495bdbb61799041a072863900010a91b2d8f0a8872f6f"),
    "rag_selection_v1": (14, "sha256:64936145a4cfec5f556d7791571e94e3f046af7e14c3131087f80e2ba9ec5eea"),
}


def test_sample_manifest_is_pinned():
    edition = load_edition("sample")
    assert {t: (e.rows, e.fingerprint) for t, e in edition.tasks.items()} == PINNED


@pytest.mark.parametrize("task_id", sorted(PINNED))
def test_sample_rows_match_their_pinned_fingerprint(task_id):
    rows = load_rows(load_edition("sample"), task_id)
    assert (len(rows), fingerprint(rows)) == PINNED[task_id]


def test_sample_edition_covers_every_v1_task():
    assert load_edition("sample").task_ids == load_edition("v1").task_ids


def test_sample_validates_without_errors_or_warnings():
    reports = validate_edition(load_edition("sample"))
    assert len(reports) == 11
    problems = [str(p) for r in reports for p in r.errors + r.warnings]
    assert problems == []


def test_sample_has_the_breakdown_values_the_contracts_name():
    edition = load_edition("sample")
    required = {
        "az_tr_interference_v1": {"cognate", "distinct_lexeme"},
        "rag_verification_v1": {"supported", "contradicted", "counterfactual", "absent"},
    }
    for task_id, values in required.items():
        field = breakdown_field(benchmark_task(task_id))
        assert field is not None
        seen = {r[field] for r in load_rows(edition, task_id)}
        assert values <= seen, task_id


def test_sample_list_inputs_have_the_contract_sizes():
    edition = load_edition("sample")
    assert {len(r["candidates"]) for r in load_rows(edition, "knowledge_choice_v1")} == {20}
    selection = load_rows(edition, "rag_selection_v1")
    assert {len(r["passages"]) for r in selection} == {6}
    none_share = sum(r["label"] == "HEÇ BİRİ" for r in selection) / len(selection)
    assert 0.08 <= none_share <= 0.2


def test_validate_benchmark_cli_prints_a_table_and_passes(capsys):
    assert run(["validate-benchmark", "--edition", "sample"]) == 0
    out = capsys.readouterr().out
    assert "fingerprint" in out and "ok: 11 tasks, 146 rows valid" in out
    for task_id in PINNED:
        assert task_id in out


def test_floors_cli_prints_every_strategy_and_the_best_floor(capsys):
    assert run(["floors", "--edition", "sample"]) == 0
    out = capsys.readouterr().out
    assert "most_linked" in out and "best floor" in out
    # the most-linked candidate is gold in one row of ten (it was five before the gate)
    line = next(x for x in out.splitlines() if x.startswith("knowledge_choice_v1"))
    assert line.split()[6] == "10.00"  # the most_linked column


def test_validation_refuses_a_modified_local_copy(tmp_path, capsys):
    """Even right after an unmodified copy with the same folder name was loaded in this process."""
    import shutil

    from yoxla.data.editions import bundled_path

    pristine = tmp_path / "first" / "copy"
    shutil.copytree(bundled_path("sample"), pristine)
    assert run(["validate-benchmark", "--edition", "sample", "--data-dir", str(pristine)]) == 0
    capsys.readouterr()
    copy = tmp_path / "second" / "copy"
    shutil.copytree(bundled_path("sample"), copy)
    path = copy / "nli_v1" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"label": "', '"label": "x')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # A local copy of the sample edition goes through the same loader.
    status = run(["validate-benchmark", "--edition", "sample", "--data-dir", str(copy), "--task", "nli_v1"])
    out = capsys.readouterr().out
    assert status == 1
    assert "nli-s-03" in out and "gold_in_answer_space" in out
