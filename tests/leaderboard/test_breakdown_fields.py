"""Benchmark boards break each task down by every field its rows carry; blocks come from the suite.

A small sample board: four rows of intent, minimal pairs and extractive QA with field values set
here, answered right on the rows named below, so every cell's accuracy is counted by hand.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from leaderboard_helpers import REPO, value, view_context, write

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.board import breakdown
from yoxla.board.loading import load_board, suite_board_id
from yoxla.board.prepared import Prepared, prepare
from yoxla.contract import registry
from yoxla.contract.benchmark import benchmark_manifest
from yoxla.data.editions import load_edition, load_rows
from yoxla.testing.synthetic_v3 import build_v3, committed_source, prepare_rows
from yoxla.views.blocks import block_table

# Per task: the field values of its four rows, and the rows answered right.
FIELDS: dict[str, dict[str, list[Any]]] = {
    "intent_v1": {"category": ["card", "card", "kart", "kart"], "length_bucket": ["short"] * 4},
    "minimal_pairs_v1": {
        "phenomenon": ["vowel_harmony", "vowel_harmony", "case_suffix", "case_suffix"],
        "domain": ["ailə", "ailə", "ailə", "təhsil"],
        "difficulty": ["easy", "hard", "hard", "hard"],
    },
    "extractive_qa_v1": {
        "answer_type": ["date", "date", "person", "person"],
        "context_bucket": ["short"] * 4,
    },
}
RIGHT = {"intent_v1": {0, 1, 2}, "minimal_pairs_v1": {0, 3}, "extractive_qa_v1": {0, 2, 3}}


def _answers(tid: str, rows: list[dict[str, Any]]) -> list[str | None]:
    if tid not in RIGHT:
        return [None] * len(rows)
    out: list[str | None] = []
    for i, r in enumerate(rows):
        if tid == "extractive_qa_v1":
            out.append(r["answer"] if i in RIGHT[tid] else "heç nə")
        elif tid == "minimal_pairs_v1":
            out.append(r["label"] if i in RIGHT[tid] else {"A": "B", "B": "A"}[r["label"]])
        else:
            out.append(r["label"] if i in RIGHT[tid] else "card_arrival_wrong")
    return out


def _prepare(tmp: Path) -> Prepared:
    sample = load_edition("sample")
    rows = {tid: load_rows(sample, tid) for tid in sample.tasks}
    for tid, fields in FIELDS.items():
        rows[tid] = [copy.deepcopy(r) for r in rows[tid][:4]]
        for name, values in fields.items():
            for r, x in zip(rows[tid], values, strict=True):
                r[name] = x
    manifest, prepared = prepare_rows("sample", rows)
    raws = {tid: _answers(tid, [dict(i.row) for i in p.items]) for tid, p in prepared.items()}
    folder = tmp / "results"
    write(
        folder / "sample" / "m.json",
        build_v3(manifest, prepared, raws, model="m", display_name="M", edition="sample"),
    )
    data = DataSource(allow_hub=False, suites=committed_source(manifest, prepared, "sample"))
    return prepare(load_board(folder, data=data, B=50))


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    return _prepare(tmp_path_factory.mktemp("bd"))


def _cells(prepared: Prepared, tid: str, name: str) -> dict[str, tuple[float, int]]:
    ed = prepared.edition("sample")
    (v,) = ed.standard.models
    field = next(f for f in ed.breakdown_fields(tid) if f.name == name)
    got = breakdown.cells(v, tid, field, ed.row_values.get(tid))
    return {k: (round(100 * c["accuracy"], 6), int(c["n"])) for k, c in got.items()}


def test_intent_is_broken_down_by_category(board: Prepared) -> None:
    assert _cells(board, "intent_v1", "category") == {"card": (100.0, 2), "kart": (50.0, 2)}
    assert _cells(board, "intent_v1", "length_bucket") == {"short": (75.0, 4)}


def test_minimal_pairs_by_each_of_their_fields(board: Prepared) -> None:
    assert _cells(board, "minimal_pairs_v1", "phenomenon") == {
        "case_suffix": (50.0, 2),
        "vowel_harmony": (50.0, 2),
    }
    assert _cells(board, "minimal_pairs_v1", "domain") == {"ailə": (33.333333, 3), "təhsil": (100.0, 1)}
    assert _cells(board, "minimal_pairs_v1", "difficulty") == {"easy": (100.0, 1), "hard": (33.333333, 3)}
    # The stored field (re-derived at admission) and the join by id agree.
    ed = board.edition("sample")
    (v,) = ed.standard.models
    rec = v.tasks["minimal_pairs_v1"]
    field = breakdown.Field("phenomenon")
    assert breakdown.stored(rec, "phenomenon") == breakdown.computed(
        rec, field, ed.row_values["minimal_pairs_v1"]
    )


def test_qa_by_answer_type(board: Prepared) -> None:
    assert _cells(board, "extractive_qa_v1", "answer_type") == {"date": (50.0, 2), "person": (100.0, 2)}


def test_the_view_picks_the_field_through_a_control(board: Prepared) -> None:
    ctx = view_context(board)
    bd = ctx.views["breakdowns"]
    out = bd.render(ctx, "sample", {"task": "minimal_pairs_v1"})
    assert out[bd.picker]["value"] == "minimal_pairs_v1"
    assert [v for _, v in out[bd.by]["choices"]] == ["phenomenon", "domain", "difficulty"]
    page = bd.page(ctx, "sample", "minimal_pairs_v1", "domain")
    assert page[bd.by]["value"] == "domain"
    table = value(page[bd.table.df])
    assert table.loc[0, "ailə"] == "33.3 (n=3)*" and table.loc[0, "təhsil"] == "100.0 (n=1)*"
    intent = bd.page(ctx, "sample", "intent_v1", "category")
    assert value(intent[bd.table.df]).loc[0, "kart"] == "50.0 (n=2)*"
    # A task whose rows have no field to break it down by is not offered; unknown fields fall back.
    assert "intent_v1" in bd.task_ids(ctx, "sample")
    assert bd.page(ctx, "sample", "intent_v1", "no_such")[bd.by]["value"] == "category"


def _analysis(edition: str) -> dict[str, Any]:
    doc = yaml.safe_load(registry.manifest_path(edition).read_text(encoding="utf-8"))
    return {tid: a["breakdowns"] for tid, a in doc["analysis"]["tasks"].items()}


def test_benchmark_fields_are_the_ones_the_package_suite_declares(board: Prepared) -> None:
    ed = board.edition("sample")
    declared = _analysis("sample")
    assert declared  # the manifest declares breakdowns (else the comparison below proves nothing)
    for tid in ed.standard.task_ids:
        assert [f.name for f in ed.breakdown_fields(tid)] == declared.get(tid, [])
    assert board.edition("v1").breakdowns == _analysis("v1")


def test_a_changed_analysis_section_changes_the_breakdowns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editions = tmp_path / "editions"
    editions.mkdir()
    doc = yaml.safe_load(registry.manifest_path("sample").read_text(encoding="utf-8"))
    doc["analysis"]["tasks"]["intent_v1"]["breakdowns"] = ["length_bucket"]
    del doc["analysis"]["tasks"]["minimal_pairs_v1"]
    (editions / "yoxla-sample.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    (editions / "sample").symlink_to(registry.EDITIONS_DIR / "sample", target_is_directory=True)
    (editions / "yoxla-v1.yaml").write_text("tasks: [\n", encoding="utf-8")  # does not load
    monkeypatch.setattr(registry, "EDITIONS_DIR", editions)
    prepared = _prepare(tmp_path)
    ed = prepared.edition("sample")
    assert [f.name for f in ed.breakdown_fields("intent_v1")] == ["length_bucket"]
    assert {k for vals in ed.row_values["intent_v1"].values() for k in vals} == {"length_bucket"}
    assert ed.breakdown_fields("minimal_pairs_v1") == [] and "minimal_pairs_v1" not in ed.row_values
    ctx = view_context(prepared)
    assert "minimal_pairs_v1" not in ctx.views["breakdowns"].task_ids(ctx, "sample")
    assert prepared.edition("v1").breakdowns == {}  # a broken package suite: no breakdowns, no crash


def test_benchmark_blocks_come_from_the_suite(board: Prepared) -> None:
    ed = board.edition("sample")
    groups = {g.id: g.name for g in benchmark_manifest().groups}
    assert list(ed.groups_of_tasks()) == list(groups)
    ctx = view_context(board)
    blocks = ctx.views["blocks"]
    assert blocks.shown_on(ed)
    out = blocks.render(ctx, "sample")
    for k, b in enumerate(groups):
        heading = out[blocks.slots[k][0]]
        assert heading["visible"] and groups[b] in heading["value"]
    frame = block_table(ed, "language")
    assert groups["language"] == "Dil bilgisi" and groups["language"] in frame.columns


def _suite_board(tmp: Path, groups: list[dict[str, Any]] | None) -> Prepared:
    sys.path.insert(0, str(REPO / "tests" / "suites"))
    from suite_run_helpers import make_suite, manifest

    from yoxla.cli.main import run as cli_run

    doc = manifest()
    second = copy.deepcopy(doc["tasks"][0])
    second["id"] = "cixma_v1"
    doc["tasks"].append(second)
    if groups is not None:
        doc["groups"] = groups
    suite = make_suite(tmp, doc)
    results = tmp / "results"
    argv = ["run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "first", "--no-progress"]
    assert cli_run([*argv, "--runs-dir", str(tmp / "runs"), "--results-dir", str(results)]) == 0
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=tmp / "suites"))
    return prepare(load_board(results, data=data, B=50))


def test_a_suite_board_shows_its_groups_and_hides_the_tab_without(tmp_path: Path) -> None:
    groups = [
        {"id": "toplama", "name": "Toplama işləri", "tasks": ["toplama_v1"]},
        {"id": "diger", "name": "Digər", "tasks": ["cixma_v1"]},
    ]
    with_groups = _suite_board(tmp_path / "a", groups)
    ed = with_groups.edition(suite_board_id("sinaq"))
    assert ed.groups_of_tasks() == {"toplama": ["toplama_v1"], "diger": ["cixma_v1"]}
    ctx = view_context(with_groups)
    blocks = ctx.views["blocks"]
    assert blocks.shown_on(ed)
    out = blocks.render(ctx, ed.name)
    assert (
        "Toplama işləri" in out[blocks.slots[0][0]]["value"] and "Digər" in out[blocks.slots[1][0]]["value"]
    )
    (v,) = ed.standard.models
    frame = value(out[blocks.slots[0][1].df])
    assert frame.loc[0, "Toplama işləri"].split()[0] == f"{v.scores['groups']['toplama']:.1f}"
    assert all(not out[h]["visible"] for h, _, _ in blocks.slots[2:])  # the benchmark's other slots
    without = _suite_board(tmp_path / "b", None)
    assert not ctx.views["blocks"].shown_on(without.edition(suite_board_id("sinaq")))


def test_a_benchmark_board_shows_its_package_suite(board: Prepared) -> None:
    from yoxla.contract.loader import load_manifest

    for edition in ("sample", "v1"):
        ed = board.edition(edition)
        manifest = load_manifest(registry.manifest_path(edition))
        assert ed.suite.edition == edition and ed.label_md == f"edition `{edition}`"
        assert ed.suite.path == f"yoxla/editions/yoxla-{edition}.yaml"
        assert ed.suite.group_names == {g.id: g.name for g in manifest.groups}
        assert {g: set(ts) for g, ts in ed.suite.groups.items()} == {
            g.id: set(g.tasks) for g in manifest.groups
        }
        # tasks and each group's in the edition's order (sts_v1 follows nli_v1 as on every table)
        assert list(ed.suite.tasks) == ed.standard.task_ids
        assert ed.suite.groups["understanding"][3] == "sts_v1"
        assert ed.suite.headline_name == ed.headline == "YOXLA"
        assert ed.suite.primary["sts_v1"] == "spearman" and ed.suite.choices["nli_v1"][0] == "entailment"
        assert ed.group_name("rag") == "Mənbəyə əsaslanma" and ed.group_title("rag") == "RAG"


def test_a_broken_package_suite_leaves_the_edition_tasks_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editions = tmp_path / "editions"
    editions.mkdir()
    (editions / "yoxla-sample.yaml").write_text("tasks: [\n", encoding="utf-8")  # does not load
    (editions / "sample").symlink_to(registry.EDITIONS_DIR / "sample", target_is_directory=True)
    monkeypatch.setattr(registry, "EDITIONS_DIR", editions)
    ed = _prepare(tmp_path).edition("sample")
    assert ed.suite.path == "" and ed.suite.groups == {} and ed.groups_of_tasks() == {}
    assert list(ed.suite.tasks) == ed.standard.task_ids and ed.breakdowns == {}
    assert ed.suite.edition == "sample" and ed.label == "sample"
