"""A suite whose Hugging Face dataset cannot be read here (offline, an empty cache): its result
files are admitted as "not re-checked" (listed apart, never ranked), as the benchmark's are
when its gold is unreachable; with the Hub reachable the same file is re-checked and ranked."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from suite_run_helpers import ROWS, SuiteRunner, make_suite, manifest

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.admission.verdict import NOT_RECHECKED
from yoxla.board.loading import Board, suite_board_id
from yoxla.board.prepared import prepare
from yoxla.record.signing import content_digest
from yoxla.testing.fakehub import FakeHub
from yoxla.views.leaderboard_tables import unchecked_table

HUB = {"source": "huggingface", "path": "acme/toplama", "revision": "v1.0"}


@pytest.fixture
def made(tmp_path: Path, capsys, monkeypatch) -> tuple[dict[str, Any], Path]:
    """A suite reading a (fake) Hub dataset, and the result file of a run of it."""
    monkeypatch.chdir(tmp_path)
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "test.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8"
    )
    FakeHub(remote, tmp_path / "hf-cache").install(monkeypatch)
    make_suite(tmp_path, manifest(dataset=HUB))
    runner = SuiteRunner(tmp_path, capsys, monkeypatch)
    suite = tmp_path / "suites" / "sinaq" / "sinaq.yaml"
    rc, _, err = runner("run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "echo")
    assert rc == 0, err
    return runner.result("suite-baseline__echo.json"), remote


def _offline(tmp_path: Path, remote: Path, monkeypatch) -> None:
    """A fresh process with no network and nothing in its Hugging Face cache."""
    FakeHub(remote, tmp_path / "empty-cache").install(monkeypatch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _data(tmp_path: Path) -> DataSource:
    return DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites"))


def _resealed(doc: dict[str, Any]) -> dict[str, Any]:
    doc["content_sha256"] = content_digest(doc)
    return doc


def test_reachable_the_file_is_re_checked_and_ranked(made, tmp_path) -> None:
    v = check_document(made[0], data=_data(tmp_path))
    assert v.status == "admitted" and v.rechecked, v.reasons


def test_unreachable_the_file_is_admitted_not_re_checked(made, tmp_path, monkeypatch) -> None:
    doc, remote = made
    _offline(tmp_path, remote, monkeypatch)
    v = check_document(doc, data=_data(tmp_path))
    assert v.status == "admitted" and not v.rechecked, v.reasons
    (note,) = [n for n in v.notes if n.startswith(NOT_RECHECKED)]
    assert "Hub dataset acme/toplama" in note and "offline" in note
    assert v.scores["suite"] == doc["scores"]["suite"] and set(v.tasks) == {"toplama_v1"}
    assert not any(n.startswith("coverage not checked") for n in v.notes), v.notes


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda d: d["scores"].update(suite=99.0), "summary scores"),
        (
            lambda d: d["suite"]["tasks"]["toplama_v1"]["data"].update(dataset="sha256:" + "1" * 64),
            "the fingerprint of its dataset differs",
        ),
        (lambda d: d["run"]["conditions"].update(limit=3), "a partial run"),
        (lambda d: d["tasks"]["toplama_v1"].update(items=99), "rows/items say"),
    ],
)
def test_unreachable_every_check_without_rows_still_excludes(
    made, tmp_path, monkeypatch, tamper, reason
) -> None:
    doc, remote = made
    _offline(tmp_path, remote, monkeypatch)
    bad = copy.deepcopy(doc)
    tamper(bad)
    v = check_document(_resealed(bad), data=_data(tmp_path))
    assert v.status == "excluded" and any(reason in r for r in v.reasons), v.reasons


def test_the_suite_board_lists_the_file_apart_with_its_reason(made, tmp_path, monkeypatch) -> None:
    doc, remote = made
    _offline(tmp_path, remote, monkeypatch)
    data = _data(tmp_path)
    board = Board([check_document(doc, path="results/suites/sinaq/x.json", data=data)], data)
    assert board.shown("suite:sinaq") == [] and len(board.unchecked("suite:sinaq")) == 1
    ed = prepare(board, floors=False).editions[suite_board_id("sinaq")]
    table = unchecked_table(ed)
    (score,) = table["Suite score (as stored)"]
    assert float(score) == pytest.approx(doc["scores"]["suite"], abs=0.01)
    (why,) = table["Why not re-checked"]
    assert "sinaq.yaml: task 'toplama_v1', dataset: could not load Hub dataset acme/toplama" in why
    assert "admitted (0 re-checked, 1 not re-checked)" in board.admission_line("suite:sinaq")


def _forged_partial(doc: dict[str, Any], keep: int) -> dict[str, Any]:
    """The file cut to its first ``keep`` predictions, every count and score made to agree with
    them (a task score of 100), and resealed: consistent by itself, but not the whole task."""
    from yoxla.record.derive import scores_of
    from yoxla.record.result import parse_record

    bad = copy.deepcopy(doc)
    t = bad["tasks"]["toplama_v1"]
    t["predictions"] = t["predictions"][:keep]
    t["rows"] = t["items"] = keep
    t["score"] = 100.0
    bad["generation_errors"] = 0
    rec, problems = parse_record(json.loads(json.dumps(bad)))
    assert rec is not None and not problems, problems
    bad["scores"] = scores_of(rec.suite, rec.tasks).model_dump(mode="json", exclude_unset=True)
    return _resealed(bad)


def test_unreachable_a_file_covering_part_of_a_task_is_excluded(made, tmp_path, monkeypatch) -> None:
    """The frozen hash file records each task's item count: a resealed file that keeps 5 of the
    task's predictions and claims 5 items is excluded, offline too (issue 13)."""
    doc, remote = made
    assert len(doc["tasks"]["toplama_v1"]["predictions"]) == len(ROWS) > 5
    _offline(tmp_path, remote, monkeypatch)
    v = check_document(_forged_partial(doc, 5), data=_data(tmp_path))
    assert v.status == "excluded" and v.scores == {}
    assert v.reasons == [
        f"task toplama_v1: 5 predictions but the frozen suite has {len(ROWS)} items "
        "(a complete run covers every item)"
    ]


def test_unreachable_an_older_hash_file_without_counts_says_coverage_was_not_checked(
    made, tmp_path, monkeypatch
) -> None:
    """A hash file frozen before item counts were recorded: today's checks, and a note."""
    doc, remote = made
    hashes = tmp_path / "suites" / "sinaq" / "sinaq.hashes.json"
    frozen = json.loads(hashes.read_text(encoding="utf-8"))
    assert frozen["tasks"]["toplama_v1"].pop("items") == len(ROWS)
    hashes.write_text(json.dumps(frozen), encoding="utf-8")
    _offline(tmp_path, remote, monkeypatch)
    v = check_document(doc, data=_data(tmp_path))
    assert v.status == "admitted" and not v.rechecked, v.reasons
    (note,) = [n for n in v.notes if n.startswith("coverage not checked against the freeze")]
    assert "toplama_v1" in note and "--write" in note


def test_reachable_the_forged_partial_file_is_excluded_too(made, tmp_path) -> None:
    v = check_document(_forged_partial(made[0], 5), data=_data(tmp_path))
    assert v.status == "excluded" and any("item ids missing from the predictions" in r for r in v.reasons)


def test_reachable_a_frozen_count_that_is_not_the_tasks_makes_the_suite_unusable(made, tmp_path) -> None:
    """Re-checked, the prepared items are compared with the frozen count too."""
    hashes = tmp_path / "suites" / "sinaq" / "sinaq.hashes.json"
    frozen = json.loads(hashes.read_text(encoding="utf-8"))
    frozen["tasks"]["toplama_v1"]["items"] = 5
    hashes.write_text(json.dumps(frozen), encoding="utf-8")
    v = check_document(made[0], data=_data(tmp_path))
    assert v.status == "excluded"
    assert v.reasons == [
        "task toplama_v1 of the committed suite 'sinaq' changed since it was frozen "
        "(`yoxla suite check suites/sinaq/sinaq.yaml` fails)"
    ]
