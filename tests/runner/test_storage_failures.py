"""A full disk or a read-only folder ends a run in one line; run.json never claims a result file that is missing,
and --resume finishes the run from what is on disk without asking the model again."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import denied_writes, one_error_line

from yoxla.run import artifacts
from yoxla.testing.fakeserver import FakeServer

ROOT = Path(__file__).resolve().parents[2]
BASE = ("run", "--edition", "sample", "--provider", "baseline", "--model", "overlap")
TWO_TASKS = ("--task", "nli_v1", "--task", "sts_v1")
NO_SPACE = "No space left on device"


def _status(runner, run_id: str) -> str:
    return str(runner.json(run_id, "run.json")["status"])


def _result_files(runner) -> list[Path]:
    return sorted(p for p in runner.results.rglob("*.json")) if runner.results.exists() else []


def _never_claims_a_missing_result(runner, run_id: str) -> None:
    info = runner.json(run_id, "run.json")
    if info["status"] in ("complete", "incomplete"):
        assert Path(info["result_file"]).is_file()


def test_disk_full_while_appending_answers_then_resume(runner, monkeypatch) -> None:
    rc, _, err = runner(*BASE, *TWO_TASKS, "--run-id", "whole")
    assert rc == 0, err
    real_append = artifacts.PredictionWriter.append
    calls = {"n": 0}

    def append(self: Any, record: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError(errno.ENOSPC, NO_SPACE, str(self.path))
        real_append(self, record)

    monkeypatch.setattr(artifacts.PredictionWriter, "append", append)
    rc, _, err = runner(*BASE, *TWO_TASKS, "--run-id", "full")
    one_error_line(rc, err, NO_SPACE, "predictions.jsonl", "--run-id full", "--resume")
    assert _status(runner, "full") == "interrupted" and len(runner.predictions("full")) == 4
    monkeypatch.setattr(artifacts.PredictionWriter, "append", real_append)
    rc, _, err = runner("run", "--run-id", "full", "--resume")
    assert rc == 0, err
    assert runner.predictions("full") == runner.predictions("whole")
    assert runner.json("full", "task_scores.json") == runner.json("whole", "task_scores.json")


# (file, which write of it fails): the start record, and each step of finishing the run.
STEPS = [("run.json", 1), ("run.json", 3), ("task_scores.json", 1), ("summary.json", 1), ("run.json", 4)]


@pytest.mark.parametrize(("name", "nth"), STEPS, ids=[f"{n}#{i}" for n, i in STEPS])
def test_disk_full_at_each_write_of_the_run_folder(runner, monkeypatch, name: str, nth: int) -> None:
    real = artifacts._replace_atomically
    seen = {"n": 0}

    def replace(path: Path, write: Any) -> None:
        if path.name == name:
            seen["n"] += 1
            if seen["n"] == nth:
                raise OSError(errno.ENOSPC, NO_SPACE, str(path.with_name(path.name + ".tmp")))
        real(path, write)

    monkeypatch.setattr(artifacts, "_replace_atomically", replace)
    rc, _, err = runner(*BASE, "--run-id", "r")
    one_error_line(rc, err, NO_SPACE, name)
    monkeypatch.setattr(artifacts, "_replace_atomically", real)
    assert not list((runner.runs / "r").glob("*.tmp"))
    if (name, nth) == ("run.json", 1):  # the run never started: its id is still free
        assert not (runner.runs / "r" / "run.json").exists()
        rc, _, err = runner(*BASE, "--run-id", "r")
    else:
        _never_claims_a_missing_result(runner, "r")
        assert _status(runner, "r") != "complete"
        rc, _, err = runner("run", "--run-id", "r", "--resume")
        assert "146 of 146 examples already on disk" in err
    assert rc == 0, err
    assert _status(runner, "r") == "complete"
    _never_claims_a_missing_result(runner, "r")


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_unwritable_results_folder_then_resume_finishes_without_the_model(
    runner, env_key, answers, code: int
) -> None:
    runner.results.mkdir()
    with FakeServer(answers=dict(answers)) as srv:
        with denied_writes(runner.results, code):
            rc, _, err = runner.api(srv, "ro", *TWO_TASKS, "--workers", "4")
        asked = srv.total_requests()
    one_error_line(rc, err, "cannot write", str(runner.results), "--resume")
    assert _status(runner, "ro") == "finalizing" and _result_files(runner) == []
    # The server is gone: finishing the run must not need it.
    rc, _, err = runner("run", "--run-id", "ro", "--resume")
    assert rc == 0, err
    assert asked == 24 and len(runner.predictions("ro")) == 24
    info = runner.json("ro", "run.json")
    assert info["status"] == "incomplete" and Path(info["result_file"]).is_file()
    doc = json.loads(Path(info["result_file"]).read_text(encoding="utf-8"))
    assert doc["scores"]["tasks"].keys() == {"nli_v1", "sts_v1"}


def test_file_size_limit_of_the_kernel_ends_in_one_line_and_resume_completes(runner, tmp_path: Path) -> None:
    """The real write path: RLIMIT_FSIZE makes the kernel refuse to grow a file past a size (EFBIG)."""
    rc, _, err = runner(*BASE, *TWO_TASKS, "--run-id", "whole")
    assert rc == 0, err
    preds = (runner.runs / "whole" / "predictions.jsonl").stat().st_size
    record = (runner.runs / "whole" / "run.json").stat().st_size
    size = max(preds // 2, record + 512)  # run.json fits, not every answer does
    assert record < size < preds

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))

    cmd = [sys.executable, str(ROOT / "runner.py"), *BASE[1:], *TWO_TASKS, "--run-id", "fsize"]
    cmd += ["--runs-dir", str(runner.runs), "--results-dir", str(runner.results), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, preexec_fn=limit)
    one_error_line(proc.returncode, proc.stderr, "File too large", "predictions.jsonl", "--resume")
    on_disk, good = artifacts.read_predictions(runner.runs / "fsize" / "predictions.jsonl")
    assert 0 < len(on_disk) < 24 and good <= size  # the answers that fit, maybe a torn line after them
    rc, _, err = runner("run", "--run-id", "fsize", "--resume")
    assert rc == 0, err
    assert runner.predictions("fsize") == runner.predictions("whole")


def test_unwritable_runs_folder_ends_in_one_line(runner) -> None:
    runner.runs.mkdir()
    with denied_writes(runner.runs):
        rc, _, err = runner(*BASE, "--task", "nli_v1", "--run-id", "x")
    one_error_line(rc, err, "cannot write", "Read-only file system")
    assert list(runner.runs.iterdir()) == []
