"""A suite's ``groups`` and ``headline`` (YOXLA): hashed with the suite, stored, re-derived.

Three two-choice tasks on four rows; the offline ``first`` strategy always answers A, so by
hand: ``hamisi_a`` 100, ``hamisi_b`` 0, ``biri_a`` 25. Groups ``bir`` (the first two) and
``iki`` (the third): group scores 50 and 25, the headline (mean of the groups) 37.5, where
the mean of the tasks would be 41.67.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from yoxla.cli.main import run as cli_run
from yoxla.contract.errors import ManifestError
from yoxla.record.signing import finalize

ROWS = [
    {"id": f"s{i}", "sual": f"Sual {i}", "a": "A", "b": "B", "c": "A" if i == 1 else "B"} for i in range(1, 5)
]
SUITE = "basliq"
GROUPS = [
    {"id": "bir", "name": "Birinci blok", "tasks": ["hamisi_a", "hamisi_b"]},
    {"id": "iki", "name": "İkinci blok", "tasks": ["biri_a"]},
]


def _task(tid: str, target: str) -> dict[str, Any]:
    return {
        "id": tid,
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "{{sual}}: A yoxsa B?",
        "target_template": "{{" + target + "}}",
        "choices": ["A", "B"],
        "output_extraction": {"type": "strict"},
        "metrics": [{"id": "accuracy"}],
        "grader": {"type": "builtin", "name": "accuracy"},
    }


def doc(**top: Any) -> dict[str, Any]:
    tasks = [_task("hamisi_a", "a"), _task("hamisi_b", "b"), _task("biri_a", "c")]
    return {"schema_version": "2026-05-27", "metadata": {"name": SUITE}, "tasks": tasks, **top}


def make_suite(root: Path, document: dict[str, Any]) -> Path:
    from yoxla.contract.hashing import aggregation, hash_file_path, write_hash_file
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import current_hashes

    folder = root / "suites" / SUITE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    path = folder / f"{SUITE}.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    loaded = load_manifest(path)
    write_hash_file(hash_file_path(path), loaded.name, current_hashes(loaded), aggregation(loaded))
    return path


def _run(root: Path, suite: Path, run_id: str) -> dict[str, Any]:
    argv = ["run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "first"]
    argv += ["--run-id", run_id, "--no-progress", "--runs-dir", str(root / "runs")]
    argv += ["--results-dir", str(root / "results")]
    assert cli_run(argv) == 0
    path = root / "results" / "suites" / SUITE / "suite-baseline__first.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("headline")
    suite = make_suite(root, doc(groups=GROUPS, headline={"name": "YOXLA"}))
    return root, _run(root, suite, "basliq-1")


def _check(document: dict[str, Any], root: Path) -> Any:
    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import check_document

    return check_document(
        document, data=DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites"))
    )


def test_the_result_file_stores_groups_group_scores_and_the_headline(grouped) -> None:
    _, result = grouped
    assert result["suite"]["groups"] == GROUPS
    assert result["suite"]["headline"] == {"name": "YOXLA", "rule": "mean_of_groups"}
    scores = result["scores"]
    assert scores["tasks"] == pytest.approx({"hamisi_a": 100.0, "hamisi_b": 0.0, "biri_a": 25.0})
    assert scores["groups"] == pytest.approx({"bir": 50.0, "iki": 25.0})
    assert scores["suite"] == pytest.approx(37.5)


def test_mean_of_tasks_keeps_the_groups_but_not_their_mean(tmp_path) -> None:
    suite = make_suite(tmp_path, doc(groups=GROUPS, headline={"rule": "mean_of_tasks"}))
    scores = _run(tmp_path, suite, "basliq-2")["scores"]
    assert scores["groups"] == pytest.approx({"bir": 50.0, "iki": 25.0})
    assert scores["suite"] == pytest.approx(125 / 3)


def test_a_suite_without_groups_stores_neither(tmp_path) -> None:
    result = _run(tmp_path, make_suite(tmp_path, doc()), "basliq-3")
    assert "groups" not in result["suite"] and "headline" not in result["suite"]
    assert set(result["scores"]) == {"suite", "tasks"}
    assert result["scores"]["suite"] == pytest.approx(125 / 3)


def test_admission_rederives_group_scores_and_refuses_forged_groups(grouped) -> None:
    root, result = grouped
    v = _check(result, root)
    assert v.status == "admitted" and v.rechecked, v.reasons
    forged_score = copy.deepcopy(result)
    forged_score["scores"]["groups"]["iki"] = 80.0
    v = _check(finalize(forged_score), root)
    assert v.status == "excluded" and any("scores.groups.iki" in r for r in v.reasons), v.reasons
    regrouped = copy.deepcopy(result)
    regrouped["suite"]["groups"] = [{"id": "hamisi", "tasks": ["hamisi_a", "hamisi_b", "biri_a"]}]
    regrouped["scores"]["groups"] = {"hamisi": 125 / 3}
    regrouped["scores"]["suite"] = 125 / 3
    v = _check(finalize(regrouped), root)
    assert v.status == "excluded" and any("groups or headline differ" in r for r in v.reasons), v.reasons


def test_groups_are_hashed_with_the_suite_not_the_tasks(tmp_path) -> None:
    from yoxla.contract.hashing import aggregation, suite_hash
    from yoxla.contract.loader import load_manifest

    def load(name: str, **top: Any) -> Any:
        return load_manifest(make_suite(tmp_path / name, doc(**top)))

    plain, grouped = load("a"), load("b", groups=GROUPS)
    renamed = load("c", groups=[{**g, "name": "başqa ad"} for g in GROUPS])
    by_tasks = load("d", groups=GROUPS, headline={"rule": "mean_of_tasks"})
    defs = [{t: m.tasks[t].definition_hash for t in m.tasks} for m in (plain, grouped, by_tasks)]
    assert defs[0] == defs[1] == defs[2]  # task hashes never depend on the suite's groups
    hashes = {"t": "sha256:" + "1" * 64}
    assert aggregation(plain) is None and suite_hash(hashes, aggregation(plain)) == suite_hash(hashes)
    assert suite_hash(hashes, aggregation(grouped)) != suite_hash(hashes)
    assert aggregation(renamed) == aggregation(grouped)  # names are labels
    assert aggregation(by_tasks) != aggregation(grouped)


@pytest.mark.parametrize(
    ("top", "message"),
    [
        (
            {"groups": [{"id": "x", "tasks": ["yoxdur"]}]},
            "group 'x' names task 'yoxdur', which the suite lacks",
        ),
        (
            {"groups": [{"id": "x", "tasks": ["hamisi_a"]}, {"id": "y", "tasks": ["hamisi_a"]}]},
            "task 'hamisi_a' is in group 'x' and 'y'",
        ),
        ({"groups": [GROUPS[0], GROUPS[0]]}, "group id 'bir' appears twice"),
        ({"headline": {"rule": "mean_of_groups"}}, "rule mean_of_groups needs groups"),
        ({"headline": {"rule": "median"}}, "headline.rule"),
        ({"groups": []}, "groups"),
    ],
)
def test_bad_groups_are_refused_in_one_line(tmp_path, top, message) -> None:
    from yoxla.contract.loader import load_document

    with pytest.raises(ManifestError) as err:
        load_document(doc(**top), tmp_path, "basliq.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_board_reads_groups_and_the_headline_from_the_suite(grouped, tmp_path) -> None:
    import numpy as np

    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.board.loading import load_board

    root, result = grouped
    results = tmp_path / "results" / "suites" / SUITE
    results.mkdir(parents=True)
    (results / "first.json").write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites"))
    board = load_board(tmp_path / "results", data=data, B=50)
    meta = board.meta("suite:" + SUITE)
    assert meta.groups == {g["id"]: g["tasks"] for g in GROUPS}
    assert meta.group_names == {"bir": "Birinci blok", "iki": "İkinci blok"}
    assert (meta.headline_name, meta.headline_rule) == ("YOXLA", "mean_of_groups")
    boot = board.boot("suite:" + SUITE)
    assert boot.blocks == ["bir", "iki"]
    # hamisi_a stays 100 and hamisi_b 0 under any resampling, biri_a moves: the headline's
    # replicates are the mean of the group means, (100 + 0) / 2 / 2 + biri_a / 2 (the mean of
    # the tasks would be (100 + 0 + biri_a) / 3).
    biri = boot.task_reps[:, boot.task_ids.index("biri_a"), :]
    assert np.ptp(biri) > 0
    assert np.allclose(boot.yoxla_reps, 25.0 + biri / 2)
