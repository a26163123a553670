"""A benchmark run's ``--revision``, a result file's ``run.dataset.revision`` and a path no file can
have: each refused in one line, never a traceback, never stored.

The suite side of the same rules is in ``tests/suites/test_suites_hostile_features.py``."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

import yoxla
from yoxla.cli.main import run as cli_run
from yoxla.record.base import DatasetInfo

REPO = Path(__file__).resolve().parents[2]

HOSTILE_REVISIONS = [
    "https://user:s3cr3t-token@huggingface.co/x",
    "v1\x1b[31m\nqırmızı",
    "../../etc",
    "a//b",
    "x" * 1_000_000,
]


@pytest.mark.parametrize("revision", HOSTILE_REVISIONS, ids=lambda r: ascii(r)[:20])
def test_a_benchmark_run_refuses_a_hostile_revision_before_anything(
    tmp_path, monkeypatch, capsys, revision
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["run", "--provider", "baseline", "--model", "first", "--edition", "v1", "--revision", revision]
    rc = cli_run([*argv, "--no-progress", "--runs-dir", "runs", "--results-dir", "results"])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "not a revision" in lines[0] and len(lines[0]) < 600, err[:800]
    assert "s3cr3t" not in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("revision", ["main", "refs/pr/1", "v1.0", "0" * 40])
def test_a_result_file_may_name_a_revision(revision) -> None:
    assert DatasetInfo(source="LocalDoc/YOXLA-Benchmark", revision=revision).revision == revision


@pytest.mark.parametrize("revision", [*HOSTILE_REVISIONS[:2], "", "v1 v2"], ids=lambda r: ascii(r)[:20])
def test_a_result_file_cannot_carry_a_url_or_control_characters_as_its_revision(revision) -> None:
    with pytest.raises(ValidationError):
        DatasetInfo(source="LocalDoc/YOXLA-Benchmark", revision=revision)


@pytest.mark.parametrize(
    "where",
    ["results/sample/baseline__first.json", "tests/leaderboard/cases/legacy-v2/sample/baseline__first.json"],
    ids=["suite-format", "legacy-v2"],
)
def test_such_a_result_file_is_excluded_with_one_reason(tmp_path, where) -> None:
    doc = json.loads((REPO / where).read_text(encoding="utf-8"))
    bad = copy.deepcopy(doc)
    bad["run"]["dataset"] = {"source": "LocalDoc/YOXLA-Benchmark", "revision": "https://user:s3cr3t@host"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    v = yoxla.check_file(path, use_cache=False)
    assert v.status == "excluded" and v.reasons, v.reasons
    assert not any("s3cr3t" in r for r in v.reasons), v.reasons


@pytest.mark.parametrize("name", ["a\x00.json", "a\udcff.json"], ids=["nul", "surrogate"])
def test_check_file_on_a_path_no_file_can_have_gives_a_verdict(tmp_path, name) -> None:
    v = yoxla.check_file(str(tmp_path / name), use_cache=False)
    assert v.status == "excluded" and len(v.reasons) == 1, v.reasons
    assert "cannot be read" in v.reasons[0]
