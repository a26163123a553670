"""Task hashes cover what changes results, and only that; `suite check` refuses in-place edits."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from suites_helpers import ROWS, write_jsonl

from yoxla.cli.main import run as cli_run
from yoxla.contract.hashing import hash_file_path
from yoxla.contract.loader import load_manifest
from yoxla.prompt.prepare import current_hashes

BASE = {
    "schema_version": "2026-05-27",
    "metadata": {"name": "sınaq"},
    "tasks": [
        {
            "id": "t1",
            "name": "Sınaq",
            "type": "qa",
            "dataset": {"path": "data.jsonl"},
            "prompt_template": "Sual: {{sual}}",
            "target_template": "{{cavab}}",
            "choices": ["Bakı", "Gəncə", "İpək", "Dəniz"],
            "fewshot": {"count": 1, "dataset": {"path": "train.jsonl"}, "strategy": "random", "seed": 1},
            "preprocess": {"type": "python", "path": "pre.py", "timeout_seconds": 10},
            "output_extraction": {"type": "label_set", "labels": ["Bakı", "Gəncə", "İpək", "Dəniz"]},
            "metrics": [{"id": "score", "description": "bal"}],
            "grader": {"type": "python", "path": "grader.py", "timeout_seconds": 5},
            "generation": {"instructions": "Qısa cavab ver.", "temperature": 0, "max_output_tokens": 8},
            "metadata": {"breakdowns": "level", "müəllif": "YOXLA"},
        },
        {"id": "t2", "dataset": {"path": "data.jsonl"}, "prompt_template": "{{sual}}"},
    ],
}
PRE = "def transform(row):\n    return row\n"
GRADER = "def grade(sample, item):\n    return 1.0\n"


def _setup(folder: Path, doc: dict) -> Path:
    write_jsonl(folder / "data.jsonl", ROWS)
    write_jsonl(folder / "train.jsonl", ROWS[:2])
    (folder / "pre.py").write_text(PRE, encoding="utf-8")
    (folder / "grader.py").write_text(GRADER, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _hashes(folder: Path, doc: dict, files=None, pool=None) -> dict[str, str]:
    path = _setup(folder, doc)
    for name, text in (files or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    return {tid: h.hash for tid, h in current_hashes(load_manifest(path), pool).items()}


def _t1(doc):
    return doc["tasks"][0]


CHANGES = {
    "dataset_path": lambda d: _t1(d)["dataset"].update(path="./data.jsonl"),
    "dataset_max_rows": lambda d: _t1(d)["dataset"].update(max_rows=3),
    "prompt_template": lambda d: _t1(d).update(prompt_template="Sual:  {{sual}}"),
    "target_template": lambda d: _t1(d).update(target_template="{{ cavab }}!"),
    "choices": lambda d: _t1(d).update(choices=["Gəncə", "Bakı", "İpək", "Dəniz"]),
    "fewshot_count": lambda d: _t1(d)["fewshot"].update(count=2),
    "fewshot_seed": lambda d: _t1(d)["fewshot"].update(seed=2),
    "fewshot_strategy": lambda d: _t1(d)["fewshot"].update(strategy="first"),
    "fewshot_separator": lambda d: _t1(d)["fewshot"].update(separator="\n"),
    "fewshot_dataset": lambda d: _t1(d)["fewshot"].update(dataset={"path": "data.jsonl"}),
    "preprocess_contract": lambda d: _t1(d)["preprocess"].update(
        contract="batch", source="def transform_batch(r):\n    return r\n", path=None
    ),
    "extraction": lambda d: _t1(d)["output_extraction"].update(case_sensitive=True),
    "metric_direction": lambda d: _t1(d).update(metrics=[{"id": "score", "higher_is_better": False}]),
    "metric_aggregation": lambda d: _t1(d).update(
        metrics=[{"id": "score"}, {"id": "x", "aggregation": "none"}]
    ),
    "grader_metric_id": lambda d: _t1(d)["grader"].update(metric_id="bal"),
    "instructions": lambda d: _t1(d)["generation"].update(instructions="Qısa cavab ver!"),
    "breakdowns": lambda d: _t1(d)["metadata"].update(
        breakdowns="level, mövzu_yox".replace("mövzu_yox", "topic")
    ),
}
NO_CHANGE = {
    "name": lambda d: _t1(d).update(name="Başqa ad"),
    "type": lambda d: _t1(d).update(type="custom"),
    "description": lambda d: _t1(d).update(metrics=[{"id": "score", "description": "başqa"}]),
    "other_metadata": lambda d: _t1(d)["metadata"].update(müəllif="başqası"),
    "top_metadata": lambda d: d["metadata"].update(name="başqa"),
    "temperature": lambda d: _t1(d)["generation"].update(
        temperature=0.7, max_output_tokens=64, timeout_seconds=30
    ),
    "grader_timeout": lambda d: _t1(d)["grader"].update(timeout_seconds=9),
    "preprocess_timeout": lambda d: _t1(d)["preprocess"].update(timeout_seconds=99),
    "key_order": lambda d: d["tasks"].__setitem__(0, dict(reversed(list(_t1(d).items())))),
}


@pytest.fixture(scope="module")
def base_hashes(tmp_path_factory, pool_module):
    return _hashes(tmp_path_factory.mktemp("base"), copy.deepcopy(BASE), pool=pool_module)


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_change_of_meaning_changes_only_that_tasks_hash(name, tmp_path, base_hashes, pool_module):
    doc = copy.deepcopy(BASE)
    CHANGES[name](doc)
    got = _hashes(tmp_path, doc, pool=pool_module)
    assert got["t1"] != base_hashes["t1"]
    assert got["t2"] == base_hashes["t2"]


@pytest.mark.parametrize("name", sorted(NO_CHANGE))
def test_labels_and_run_settings_change_no_hash(name, tmp_path, base_hashes, pool_module):
    doc = copy.deepcopy(BASE)
    NO_CHANGE[name](doc)
    assert _hashes(tmp_path, doc, pool=pool_module) == base_hashes


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("grader.py", GRADER + "# şərh\n"),
        ("pre.py", PRE.replace("row\n", "dict(row)\n")),
        ("train.jsonl", json.dumps({"sual": "?", "cavab": "!"}) + "\n"),
    ],
)
def test_file_contents_are_hashed(file, text, tmp_path, base_hashes, pool_module):
    assert _hashes(tmp_path, copy.deepcopy(BASE), {file: text}, pool=pool_module)["t1"] != base_hashes["t1"]


def test_task_dataset_rows_are_hashed(tmp_path, base_hashes, pool_module):
    path = _setup(tmp_path, copy.deepcopy(BASE))
    write_jsonl(tmp_path / "data.jsonl", [*ROWS[:3], {**ROWS[3], "cavab": "Göl"}])
    got = current_hashes(load_manifest(path), pool_module)
    assert got["t1"].hash != base_hashes["t1"] and got["t2"].hash != base_hashes["t2"]
    assert got["t2"].definition == current_hashes(load_manifest(path), pool_module)["t2"].definition


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli_run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_freezes_then_refuses_in_place_edits(tmp_path, capsys):
    path = _setup(tmp_path, copy.deepcopy(BASE))
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path))
    assert code == 1 and "--write" in out
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path), "--write")
    assert code == 0 and "froze 2 new task(s)" in out
    frozen = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    assert sorted(frozen["tasks"]) == ["t1", "t2"] and frozen["suite_hash"].startswith("sha256:")
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path))
    assert code == 0 and "t1: unchanged" in out
    # An in-place edit is refused, with or without --write, and the hash file is kept.
    doc = copy.deepcopy(BASE)
    _t1(doc)["prompt_template"] = "Sual: {{sual}}?"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    before = hash_file_path(path).read_text(encoding="utf-8")
    for extra in ([], ["--write"]):
        code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path), *extra)
        assert code == 1 and "task t1 changed in place (its definition" in out and "t1_v2" in out
    assert hash_file_path(path).read_text(encoding="utf-8") == before
    # The same change under a new id is fine: the old id stays frozen.
    _t1(doc)["id"] = "t1_v2"
    doc["tasks"].append(copy.deepcopy(BASE["tasks"][0]))
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path), "--write")
    assert code == 0 and "t1_v2: new" in out and "t1: unchanged" in out


def test_check_names_changed_data(tmp_path, capsys):
    path = _setup(tmp_path, copy.deepcopy(BASE))
    assert _cli(capsys, "suite", "check", "--run-code", str(path), "--write")[0] == 0
    write_jsonl(tmp_path / "train.jsonl", ROWS[1:3])
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path))
    assert code == 1 and "the rows of its fewshot" in out


def test_check_records_each_tasks_item_count_without_changing_a_hash(tmp_path, capsys):
    """Freezing records each task's item count next to its hashes; an older hash file without
    counts still checks (with a note), and --write adds the counts, every hash kept."""
    path = _setup(tmp_path, copy.deepcopy(BASE))
    write_jsonl(tmp_path / "data.jsonl", ROWS[:3])
    assert _cli(capsys, "suite", "check", "--run-code", str(path), "--write")[0] == 0
    frozen = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    assert {tid: t["items"] for tid, t in frozen["tasks"].items()} == {"t1": 3, "t2": 3}
    for entry in frozen["tasks"].values():
        del entry["items"]
    hash_file_path(path).write_text(json.dumps(frozen), encoding="utf-8")
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path))
    assert code == 0 and "2 frozen task(s) have no recorded item count (t1, t2)" in out
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path), "--write")
    assert code == 0 and "recorded the item count of 2 frozen task(s)" in out
    again = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    assert again["suite_hash"] == frozen["suite_hash"]
    for tid, entry in again["tasks"].items():
        assert entry.pop("items") == 3 and entry == frozen["tasks"][tid]


def test_check_refuses_a_frozen_item_count_that_is_not_the_tasks(tmp_path, capsys):
    path = _setup(tmp_path, copy.deepcopy(BASE))
    assert _cli(capsys, "suite", "check", "--run-code", str(path), "--write")[0] == 0
    frozen = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    frozen["tasks"]["t2"]["items"] = 99
    hash_file_path(path).write_text(json.dumps(frozen), encoding="utf-8")
    code, out, _ = _cli(capsys, "suite", "check", "--run-code", str(path), "--write")
    assert code == 1 and f"t2: changed (its item count: frozen 99, now {len(ROWS)})" in out
    assert "t1: unchanged" in out


@pytest.mark.parametrize("value", [True, -1, "4", 2.0, 10**10])
def test_a_frozen_item_count_that_is_not_a_count_is_one_line(tmp_path, capsys, value):
    path = _setup(tmp_path, copy.deepcopy(BASE))
    assert _cli(capsys, "suite", "check", "--run-code", str(path), "--write")[0] == 0
    frozen = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    frozen["tasks"]["t1"]["items"] = value
    hash_file_path(path).write_text(json.dumps(frozen), encoding="utf-8")
    code, out, err = _cli(capsys, "suite", "check", "--run-code", str(path))
    assert code != 0 and "cannot read the frozen hashes (items must be a count" in err + out
    assert "Traceback" not in err
