"""A resumed run writes its result file where the run started, from any folder.

``--results-dir`` is stored in run.json as an absolute path; ``--resume`` without it keeps that
folder (it used to fall back to ./results of the folder the resume ran in), and ``--resume
--results-dir NEW`` moves it. Benchmark and suite runs alike.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from yoxla.cli.main import run as cli_run

ROOT = Path(__file__).resolve().parents[2]
OXU = ROOT / "suites" / "examples" / "oxu" / "oxu.yaml"
BENCHMARK = ("--edition", "sample", "--provider", "baseline", "--model", "first")
SUITE = ("--suite", str(OXU), "--provider", "suite-baseline", "--model", "first")
CASES = [
    pytest.param(BENCHMARK, Path("sample") / "baseline__first.json", id="benchmark"),
    pytest.param(SUITE, Path("suites") / "oxu" / "suite-baseline__first.json", id="suite"),
]


def _yoxla(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    monkeypatch.setattr(sys, "argv", ["yoxla", *argv])
    rc = cli_run(list(argv))
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def _interrupt(run_dir: Path, keep: int = 3) -> None:
    """As if the run had stopped after ``keep`` answers: the rest of predictions.jsonl is gone."""
    pred = run_dir / "predictions.jsonl"
    lines = pred.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) > keep
    pred.write_text("".join(lines[:keep]), encoding="utf-8")


@pytest.mark.parametrize(("start", "result"), CASES)
def test_resume_without_results_dir_writes_where_the_run_started(
    tmp_path, monkeypatch, capsys, start, result
) -> None:
    started, elsewhere, runs = tmp_path / "started", tmp_path / "elsewhere", tmp_path / "runs"
    started.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(started)
    common = ("--runs-dir", str(runs), "--no-progress", "--run-id", "r")
    _yoxla(monkeypatch, capsys, "run", *start, *common, "--results-dir", "out")  # relative to started/
    first = started / "out" / result
    assert first.is_file()
    assert json.loads((runs / "r" / "run.json").read_text("utf-8"))["settings"]["results_dir"] == str(
        started / "out"
    )
    first.unlink()
    _interrupt(runs / "r")

    monkeypatch.chdir(elsewhere)
    out = _yoxla(monkeypatch, capsys, "run", "--resume", *common)
    assert str(first) in out and first.is_file()
    assert not (elsewhere / "results").exists()

    _interrupt(runs / "r")  # a later session may move the result file on purpose
    moved = tmp_path / "moved"
    out = _yoxla(monkeypatch, capsys, "run", "--resume", *common, "--results-dir", str(moved))
    assert (moved / result).is_file() and str(moved / result) in out
