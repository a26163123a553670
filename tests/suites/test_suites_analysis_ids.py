"""Groups and controls by row id in a suite's ``analysis`` section (YOXLA), and the analysis an
edition made in code carries instead of the package suite's.

``group_ids`` (group → row ids) and ``control_ids`` (row ids) name rows by their ``id``, for rows
that no column groups or marks; each is instead of its field form. They are refused when both
forms are given, a row id is listed twice or a row is in two groups; a row id no row has (or a
group or control column no row has) is refused in one line where the rows are prepared.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_suites_analysis import ROWS, task_doc

from yoxla.contract.errors import DatasetError, ManifestError

BY_FIELD = {"breakdowns": ["movzu"], "group_field": "qrup", "control_field": "nezaret"}
BY_ID = {
    "breakdowns": ["movzu"],
    "group_ids": {"g1": ["r1", "r2", "c1"], "g2": ["r3", "r4"]},
    "control_ids": ["c1"],
}
TASK = task_doc()


def document(task_analysis: dict[str, Any] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {"schema_version": "2026-05-27", "metadata": {"name": "tehlil"}, "tasks": [TASK]}
    if task_analysis is not None:
        doc["analysis"] = {"tasks": {"tehlil_v1": task_analysis}}
    return doc


def write(folder: Path, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    path = folder / "tehlil.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _scored(path: Path) -> tuple[Any, dict[str, Any]]:
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import prepare_task
    from yoxla.score.replay import score_suite_task
    from yoxla.score.samples import SampleOutput

    manifest = load_manifest(path)
    prepared = prepare_task(manifest.task("tehlil_v1"))
    outputs = [SampleOutput.from_raw("A") for _ in prepared.items]
    return manifest, score_suite_task(prepared, outputs).metrics


def test_groups_and_controls_by_id_score_as_by_field_and_hash_with_the_analysis(tmp_path) -> None:
    from yoxla.contract.hashing import analysis_hash

    by_field, field_metrics = _scored(write(tmp_path / "field", document(BY_FIELD)))
    by_id, id_metrics = _scored(write(tmp_path / "id", document(BY_ID)))
    plain, _ = _scored(write(tmp_path / "plain", document(None)))
    assert id_metrics == field_metrics
    assert id_metrics["controls"] == 1 and id_metrics["n"] == 4 and id_metrics["group_consistency"] == 0.5
    task = by_id.task("tehlil_v1")
    assert task.definition_hash == plain.task("tehlil_v1").definition_hash
    assert analysis_hash(by_id) not in (None, analysis_hash(by_field))
    spec = task.spec
    assert spec.group_of({"id": "r3"}) == "g2" and spec.group_of({"id": "r9"}) is None
    assert spec.has_groups and spec.has_controls and spec.control_ids == frozenset({"c1"})


def test_the_calibration_reads_the_groups_by_id(tmp_path) -> None:
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import prepare_task
    from yoxla.prompt.space import calibration_inputs

    prepared = prepare_task(load_manifest(write(tmp_path, document(BY_ID))).task("tehlil_v1"))
    _, _, groups = calibration_inputs(prepared.task.spec, prepared.items)
    assert groups == ["g1", "g1", "g2", "g2", "g1"]


def _with(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BY_ID)
    out.update(changes)
    return out


@pytest.mark.parametrize(
    "task_analysis, message",
    [
        (_with(group_id={"g1": ["r1"]}), "group_id"),  # unknown key
        (_with(group_field="qrup"), "give either group_field or group_ids"),
        (_with(control_field="nezaret"), "give either control_field"),
        (_with(control_ids=["c1", "c1"]), "control_ids: a row id is listed twice"),
        (_with(group_ids={"g1": ["r1", "r1"]}), "row 'r1' is listed twice in group 'g1'"),
        (_with(group_ids={"g1": ["r1", "r2"], "g2": ["r2"]}), "row 'r2' is listed in groups 'g1' and 'g2'"),
        (_with(control_ids=[]), "control_ids"),
        (_with(group_ids={"g1": [""]}), "group_ids"),
    ],
)
def test_a_bad_id_declaration_is_refused_in_one_line(tmp_path, task_analysis, message) -> None:
    from yoxla.contract.loader import load_document

    with pytest.raises(ManifestError) as err:
        load_document(document(task_analysis), tmp_path, "tehlil.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_ids_in_metadata_and_analysis_are_refused(tmp_path) -> None:
    from yoxla.contract.loader import load_document

    doc = document(_with())
    doc["tasks"] = [{**TASK, "metadata": {"group_field": "qrup"}}]
    with pytest.raises(ManifestError, match="declare groups and controls in one place"):
        load_document(doc, tmp_path, "tehlil.yaml")


@pytest.mark.parametrize(
    "task_analysis, message",
    [
        (_with(control_ids=["c9"]), "analysis row id(s) 'c9' are ids of none of the task's rows"),
        (_with(group_ids={"g1": ["r1", "x1"], "g2": ["x2"]}), "'x1', 'x2' are ids of none"),
        ({"group_field": "yox"}, "group_field 'yox' is a column of none of the task's rows"),
        ({"control_field": "yox"}, "control_field 'yox' is a column of none"),
        ({"control_ids": [r["id"] for r in ROWS]}, "every row is a control (control_ids)"),
    ],
)
def test_declarations_that_do_not_fit_the_rows_are_refused_in_one_line(
    tmp_path, task_analysis, message
) -> None:
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import prepare_task

    task = load_manifest(write(tmp_path, document(task_analysis))).task("tehlil_v1")
    with pytest.raises(DatasetError) as err:
        prepare_task(task)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("edition", ["sample", "v1"])
def test_the_package_suites_declare_a_ranking_and_no_groups_or_controls(edition) -> None:
    from yoxla.admission.v2 import edition_ranking, task_analysis
    from yoxla.contract.loader import load_manifest
    from yoxla.contract.registry import manifest_path
    from yoxla.data.editions import load_edition

    ed = load_edition(edition)
    # the board's headline score first, then the tie-breakers (the analysis section's ranking)
    assert edition_ranking(ed) == ("yoxla", "group_consistency", "high_confidence_error_rate", "mean_gold_p")
    manifest = load_manifest(manifest_path(edition))
    assert not any(t.spec.has_groups or t.spec.has_controls for t in manifest.tasks.values())
    assert all(task_analysis(ed, tid) is None for tid in ed.tasks)  # the suite tasks' own analysis


def test_an_edition_made_in_code_carries_its_own_analysis() -> None:
    from dataclasses import replace

    from yoxla.admission.v2 import edition_ranking, task_analysis
    from yoxla.contract.spec import Analysis, TaskAnalysis
    from yoxla.data.editions import load_edition
    from yoxla.score.calibration.ranking import DEFAULT_ORDER

    sample = load_edition("sample")
    own = Analysis(
        ranking=["accuracy", "mean_gold_p"], tasks={"nli_v1": TaskAnalysis(control_ids=["nli-s-03"])}
    )
    ed = replace(sample, analysis=own)
    assert edition_ranking(ed) == ("accuracy", "mean_gold_p")
    assert edition_ranking(replace(sample, analysis=Analysis())) == DEFAULT_ORDER
    assert task_analysis(ed, "nli_v1") == TaskAnalysis(control_ids=["nli-s-03"])
    assert task_analysis(ed, "sts_v1") == TaskAnalysis()  # undeclared: no groups, no controls
    with pytest.raises(ValueError, match="unknown ranking metric 'speed'"):
        Analysis(ranking=["accuracy", "speed"])
