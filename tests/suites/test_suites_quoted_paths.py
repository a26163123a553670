"""`yoxla suite validate <id>`: a committed suite named by its id is quoted without the
user's folders (its manifest and its folder shown as run/errors.py's shown_path shows them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from yoxla.cli.main import run as cli_run

ROOT = Path(__file__).resolve().parents[2]
HESAB = ROOT / "suites" / "examples" / "hesab"


@pytest.fixture
def committed(tmp_path, tmp_path_factory, monkeypatch) -> Path:
    """The hesab example committed in a suites folder outside the working directory."""
    suites = tmp_path / "suites"
    shutil.copytree(HESAB, suites / "hesab")
    monkeypatch.setenv("YOXLA_SUITES_DIR", str(suites))
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    return suites / "hesab"


def _validate(capsys, ref: str) -> tuple[int, str]:
    code = cli_run(["suite", "validate", ref])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_missing_data_file_names_no_absolute_folder(committed, capsys):
    (committed / "data" / "test.jsonl").unlink()
    code, text = _validate(capsys, "hesab")
    assert code == 2
    assert "data/test.jsonl not found (looked in hesab)" in text, text
    assert str(committed.parent) not in text and "Traceback" not in text


def test_a_problem_list_names_no_absolute_folder(committed, capsys):
    grader = committed / "grader.py"
    source = grader.read_text(encoding="utf-8").replace(
        "def grade(sample, item):\n",
        f"def grade(sample, item):\n    raise ValueError({str(committed)!r} + '/x')\n",
    )
    grader.write_text(source, encoding="utf-8")
    code, text = _validate(capsys, "hesab")
    assert code == 1
    assert "error: task hesab_v1: the grader fails on item hesab-01: ValueError: hesab/x" in text, text
    assert str(committed.parent) not in text


def test_a_manifest_given_as_a_path_is_quoted_as_given(committed, capsys):
    (committed / "data" / "test.jsonl").unlink()
    code, text = _validate(capsys, str(committed / "hesab.yaml"))
    assert code == 2
    assert f"looked in {committed}" in text
