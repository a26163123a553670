"""Manifest schema and limits: table-driven (cases/manifest_cases.yaml), one clear message each."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from suites_helpers import ROWS, cases, write_jsonl

from yoxla.contract.errors import ManifestError
from yoxla.contract.loader import load_manifest
from yoxla.contract.spec_base import MAX_TASKS

DATA = cases("manifest_cases.yaml")


def _patch(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and value.get("pattern") == "__1001_chars__":
            value = {**value, "pattern": "a" * 1001}
        if value == "__delete__":
            target.pop(key, None)
        else:
            target[key] = value


def _document(case: dict[str, Any]) -> dict[str, Any]:
    base = copy.deepcopy(DATA["base_task"])
    _patch(base, case.get("task", {}))
    n = case.get("tasks", 1)
    tasks = []
    for i in range(n):
        entry = copy.deepcopy(base)
        if n > 1 and not case.get("same_ids"):
            entry["id"] = f"t{i + 1}"
        tasks.append(entry)
    doc: dict[str, Any] = {"schema_version": "2026-05-27", "tasks": tasks}
    _patch(doc, case.get("top", {}))
    return doc


def _write(folder: Path, doc: dict[str, Any]) -> Path:
    write_jsonl(folder / "data.jsonl", ROWS)
    write_jsonl(folder / "train.jsonl", ROWS)
    (folder / "data.csv").write_text("sual,cavab\nA?,B\n", encoding="utf-8")
    (folder / "pre.py").write_text("def transform_batch(rows):\n    return rows\n", encoding="utf-8")
    (folder / "grader.py").write_text("def grade_batch(samples, items):\n    return 1.0\n", encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def test_case_names_are_unique():
    names = [c["name"] for c in DATA["valid"] + DATA["invalid"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["valid"]])
def test_valid_manifest_loads(case, tmp_path):
    manifest = load_manifest(_write(tmp_path, _document(case)))
    assert len(manifest.tasks) == case.get("tasks", 1)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["invalid"]])
def test_invalid_manifest_gives_one_clear_message(case, tmp_path):
    path = _write(tmp_path, _document(case))
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(path)), message
    assert case["message"] in message, message
    if "task" in case and case["name"] != "duplicate_task_ids":
        assert "task '" in message or "task #1" in message, message


def test_limit_of_tasks_is_the_reference_one():
    assert MAX_TASKS == 100


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("schema_version: [1\n", ".yaml", "not valid YAML at line"),
        ('{"schema_version": 1,}', ".json", "not valid JSON"),
        ("- a\n- b\n", ".yaml", "a manifest is a mapping"),
        ("", ".yaml", "a manifest is a mapping"),
        ("schema_version: x\ntasks: []\n", ".txt", "a .yaml, .yml or .json file"),
    ],
)
def test_unreadable_documents(tmp_path, text, suffix, message):
    path = tmp_path / f"suite{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ManifestError, match=message):
        load_manifest(path)


def test_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="no such file"):
        load_manifest(tmp_path / "yoxdur.yaml")


def test_json_and_yaml_give_the_same_tasks(tmp_path):
    doc = _document({"task": {"choices": ["Bakı", "Gəncə"], "output_extraction": {"type": "strict"}}})
    yaml_path = _write(tmp_path, doc)
    json_path = tmp_path / "suite.json"
    json_path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    a, b = load_manifest(yaml_path), load_manifest(json_path)
    assert a.tasks["t1"].definition_hash == b.tasks["t1"].definition_hash


def test_defaults(tmp_path):
    manifest = load_manifest(_write(tmp_path, _document({})))
    t = manifest.tasks["t1"]
    assert t.spec.type == "custom"
    assert t.spec.output_extraction.type == "none"
    assert [g.name for g in t.graders] == ["exact_match"]  # type: ignore[union-attr]
    assert [m.id for m in t.metrics] == ["exact_match"]
    assert t.primary == "exact_match"


def test_default_metric_follows_the_python_grader(tmp_path):
    doc = _document(
        {
            "task": {
                "grader": {"type": "python", "source": "def grade(s, i):\n    return 1\n", "metric_id": "bal"}
            }
        }
    )
    t = load_manifest(_write(tmp_path, doc)).tasks["t1"]
    assert [(m.id, m.aggregation, m.higher_is_better) for m in t.metrics] == [("bal", "mean", True)]


def test_builtin_named_by_metric_when_no_grader(tmp_path):
    doc = _document({"task": {"metrics": [{"id": "token_f1"}]}})
    t = load_manifest(_write(tmp_path, doc)).tasks["t1"]
    assert [g.name for g in t.graders] == ["token_f1"]  # type: ignore[union-attr]


def test_source_inference_for_datasets(tmp_path):
    doc = _document({"task": {"dataset": {"path": "acme/az-qa"}}})
    t = load_manifest(_write(tmp_path, doc)).tasks["t1"]
    assert t.spec.dataset.source == "huggingface"
    assert load_manifest(_write(tmp_path, _document({}))).tasks["t1"].spec.dataset.source == "local"
