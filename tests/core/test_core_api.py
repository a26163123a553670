"""The public surface: ``yoxla.load_suite``, ``run``, ``rescore``, ``check_file`` on the sample
edition and an example suite, offline; and ``import yoxla`` stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import yoxla
from yoxla.api import Benchmark
from yoxla.data.editions import frozen_contracts
from yoxla.run.errors import RunError
from yoxla.run.library import run_arguments

ROOT = Path(__file__).resolve().parents[2]
OXU = ROOT / "suites" / "examples" / "oxu" / "oxu.yaml"


def test_import_yoxla_loads_no_module_of_the_surface():
    code = "import sys, yoxla; print(sorted(m for m in sys.modules if m.startswith('yoxla')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout.replace("'", '"')) == ["yoxla"]


def test_the_four_names_are_public_and_documented():
    for name in ("load_suite", "run", "rescore", "check_file"):
        assert name in yoxla.__all__
        assert callable(getattr(yoxla, name))
        assert f"``{name}(" in yoxla.__doc__


def test_run_stays_the_call_after_the_runner_package_is_imported():
    import yoxla.run.session  # binds the subpackage to yoxla.run
    from yoxla import run

    assert run is yoxla.run and callable(run)


def test_load_suite_sample_is_the_benchmark_with_its_eleven_tasks():
    found = yoxla.load_suite("sample")
    assert isinstance(found, Benchmark)
    assert found.name == "sample"
    assert list(found.tasks) == found.edition.task_ids
    assert len(found.tasks) == 11
    assert found.suite.path.name == "yoxla-sample.yaml"
    frozen = frozen_contracts()[1]["nli_v1"]
    assert found.tasks["nli_v1"].spec.metadata["contract_hash"] == frozen
    assert yoxla.load_suite("v1").tasks["nli_v1"].spec.metadata["contract_hash"] == frozen
    assert yoxla.load_suite("v1").edition.source != found.edition.source


def test_load_suite_by_manifest_path_and_by_committed_id_is_the_same_suite():
    by_path = yoxla.load_suite(OXU)
    by_id = yoxla.load_suite("oxu")
    assert by_path.name == by_id.name == "oxu"
    assert by_id.path.resolve() == OXU.resolve()
    assert list(by_path.tasks) == list(by_id.tasks)


def test_load_suite_of_nothing_is_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"no suite 'yoxşa': not an edition"):
        yoxla.load_suite("yoxşa")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: 3\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"bad\.yaml: manifest, field schema_version: required field is missing"
    ):
        yoxla.load_suite(bad)


def test_there_is_no_engine_question_left():
    assert "engine_of" not in yoxla.api.__all__ and not hasattr(yoxla.api, "engine_of")


def test_rescore_of_a_builtin_engines_run_folder_is_one_clear_error(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "run.json").write_text(json.dumps({"edition": "v1", "model": "m"}), encoding="utf-8")
    with pytest.raises(RunError, match=r"built-in engine of an older YOXLA.*--edition v1 --model m"):
        yoxla.rescore(old)
    assert [p.name for p in old.iterdir()] == ["run.json"]  # nothing written, not even a lock


def test_run_arguments_spell_the_flags_of_a_call():
    # Every run is a suite run: an edition names the package suite yoxla-<edition>.
    assert run_arguments("sample", {"block": "all", "task": ["a", "b"], "resume": False, "limit": None}) == [
        "--edition",
        "sample",
        "--block",
        "all",
        "--task",
        "a",
        "--task",
        "b",
    ]
    assert run_arguments("oxu", {"scored_only": True}) == ["--suite", str(OXU.resolve()), "--scored-only"]


def test_run_refuses_an_unknown_flag_with_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"yoxla\.run: unrecognized arguments: --no-such-flag"):
        yoxla.run("sample", provider="baseline", model="overlap", no_such_flag=True, runs_dir=tmp_path)


def _dirs(tmp_path: Path) -> dict[str, object]:
    return {"runs_dir": tmp_path / "runs", "results_dir": tmp_path / "results", "no_progress": True}


def test_run_rescore_and_check_file_on_the_sample_edition(tmp_path):
    report = yoxla.run("sample", provider="baseline", model="overlap", block="all", **_dirs(tmp_path))
    assert report.complete and report.result_path is not None
    yoxla_score = report.summary["suite_score"]
    assert report.summary["headline"] == "YOXLA"
    assert isinstance(yoxla_score, float)

    again = yoxla.rescore(report.run_dir)
    assert again.summary["suite_score"] == yoxla_score
    assert {t: v["score"] for t, v in again.summary["tasks"].items()} == {
        t: v["score"] for t, v in report.summary["tasks"].items()
    }

    verdict = yoxla.check_file(report.result_path)
    assert verdict.status == "admitted", verdict.reasons
    assert verdict.rechecked
    assert verdict.scores["yoxla"] == pytest.approx(yoxla_score, abs=1e-9)
    rederived = yoxla.rescore(report.result_path)
    assert rederived.status == "admitted" and rederived.scores == verdict.scores


def test_a_tampered_result_file_is_excluded(tmp_path):
    report = yoxla.run("sample", provider="baseline", model="overlap", task=["nli_v1"], **_dirs(tmp_path))
    doc = json.loads(Path(report.result_path).read_text(encoding="utf-8"))
    doc["tasks"]["nli_v1"]["score"] = 99.5
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    verdict = yoxla.check_file(bad)
    assert verdict.status == "excluded"
    assert verdict.reasons


def test_run_rescore_and_check_file_on_an_example_suite(tmp_path):
    report = yoxla.run("oxu", provider="suite-baseline", model="first", **_dirs(tmp_path))
    assert report.complete and report.result_path is not None
    assert report.summary["suite"] == "oxu"
    again = yoxla.rescore(report.run_dir)
    assert again.summary["suite_score"] == report.summary["suite_score"]
    assert {t: v["score"] for t, v in again.summary["tasks"].items()} == {
        t: v["score"] for t, v in report.summary["tasks"].items()
    }
    verdict = yoxla.check_file(report.result_path)
    assert verdict.status == "admitted", verdict.reasons
    assert verdict.suite == "oxu"
    assert verdict.scores["suite"] == pytest.approx(report.summary["suite_score"], abs=1e-9)
