"""A run killed with SIGKILL and resumed equals an uninterrupted run, and re-sends nothing on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from yoxla.run.artifacts import read_predictions
from yoxla.testing.fakeserver import FakeServer

ROOT = Path(__file__).resolve().parents[2]


def _fields(records: list[dict]) -> list[tuple]:
    return [(r["task"], r["id"], r["raw"], r["extracted"], r["outcome"], r["score"]) for r in records]


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_sigkill_then_resume_equals_uninterrupted(runner, env_key, answers, examples, tmp_path: Path) -> None:
    with FakeServer(answers=dict(answers), latency=0.02) as srv:
        cmd = [
            sys.executable,
            str(ROOT / "runner.py"),
            "--provider",
            "vllm",
            "--model",
            "fake/model-1",
            "--base-url",
            srv.base_url,
            "--edition",
            "sample",
            "--block",
            "all",
            "--workers",
            "3",
            "--run-id",
            "killed",
            "--runs-dir",
            str(runner.runs),
            "--results-dir",
            str(runner.results),
            "--no-progress",
            "--backoff-base",
            "0.01",
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        pred = runner.runs / "killed" / "predictions.jsonl"
        deadline = time.monotonic() + 60
        while _lines(pred) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)  # requests the dead client had in flight finish on the server
        on_disk, _ = read_predictions(pred)
        assert 40 <= len(on_disk) < len(examples)
        key_of = {(t, str(row["id"])): k for t, row, k in examples}
        disk_keys = [key_of[(r["task"], r["id"])] for r in on_disk]
        seen_before = dict(srv.counts)
        assert all(seen_before[k] == 1 for k in disk_keys)

        rc, _out, err = runner("run", "--run-id", "killed", "--resume", "--backoff-base", "0.01")
        assert rc == 0, err
        assert "already on disk" in err
        # Nothing that was on disk was asked again.
        assert all(srv.counts[k] == 1 for k in disk_keys)
        assert all(srv.counts[k] >= 1 for _, _, k in examples)

    with FakeServer(answers=dict(answers)) as srv:
        rc, _, err = runner.api(srv, "whole", "--block", "all", "--workers", "3")
        assert rc == 0, err
    resumed, whole = runner.predictions("killed"), runner.predictions("whole")
    assert _fields(resumed) == _fields(whole)
    assert runner.json("killed", "task_scores.json") == runner.json("whole", "task_scores.json")
    a, b = runner.json("killed", "summary.json"), runner.json("whole", "summary.json")
    for key in ("suite_score", "groups", "tasks", "generation_errors", "complete"):
        assert a[key] == b[key], key
    info = runner.json("killed", "run.json")
    assert [s["kind"] for s in info["sessions"]] == [
        "resume"
    ]  # the killed session never got to write its end


def test_torn_last_line_is_discarded_on_resume(runner, env_key, answers) -> None:
    with FakeServer(answers=dict(answers)) as srv:
        rc, _, err = runner.api(srv, "torn", "--task", "nli_v1", "--task", "sts_v1", "--workers", "4")
        assert rc == 0, err
        full = runner.predictions("torn")
        scores = runner.json("torn", "task_scores.json")
        pred = runner.runs / "torn" / "predictions.jsonl"
        lines = pred.read_bytes().splitlines(keepends=True)
        pred.write_bytes(b"".join(lines[:9]) + lines[9][: len(lines[9]) // 2])  # a crash mid-write
        before = srv.total_requests()
        rc, _, err = runner("run", "--run-id", "torn", "--resume")
        assert rc == 0, err
        assert "torn last line" in err
        assert srv.total_requests() - before == len(full) - 9
    assert _fields(runner.predictions("torn")) == _fields(full)
    assert runner.json("torn", "task_scores.json") == scores
    assert all(json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines())
