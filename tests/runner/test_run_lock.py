"""One runner per run folder: a second one refuses in one line naming the holder; a dead holder's lock is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from runner_helpers import one_error_line

from yoxla.run.artifacts import RunBusy, RunLock, read_predictions
from yoxla.testing.fakeserver import FakeServer

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}


def _runner_cmd(runner, *args: str) -> list[str]:
    return [
        sys.executable,
        str(ROOT / "runner.py"),
        *args,
        "--runs-dir",
        str(runner.runs),
        "--results-dir",
        str(runner.results),
        "--no-progress",
    ]


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"the first runner did not write {n} lines (exit {proc.poll()})")


def _keys(records: list[dict]) -> list[tuple[str, str]]:
    return [(r["task"], str(r["id"])) for r in records]


def test_second_runner_on_a_live_run_refuses_then_a_killed_holder_is_taken_over(
    runner, env_key, answers, examples, tmp_path: Path
) -> None:
    with FakeServer(answers=dict(answers), latency=0.05) as srv:  # slow: the first runner stays live
        first = subprocess.Popen(
            _runner_cmd(
                runner,
                *("--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url),
                *("--edition", "sample", "--run-id", "live", "--workers", "1", "--backoff-base", "0.01"),
            ),
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        run_dir = runner.runs / "live"
        try:
            _wait_for_lines(run_dir / "predictions.jsonl", 3, first)

            # A second process resuming the same run at the same time: refused, naming the holder.
            second = subprocess.run(
                _runner_cmd(runner, "--run-id", "live", "--resume"),
                cwd=tmp_path,
                env=_env(),
                capture_output=True,
                text=True,
                timeout=120,
            )
            line = one_error_line(second.returncode, second.stderr, "in use by", f"pid {first.pid}")
            assert socket.gethostname() in line
            # The same in this process: a new run with that id, --retry-errors, rescore --result.
            rc, _, err = runner.api(srv, "live", "--task", "nli_v1")
            one_error_line(rc, err, "already exists", "--resume")
            rc, _, err = runner("run", "--retry-errors", str(run_dir), base=False)
            one_error_line(rc, err, f"pid {first.pid}")
            rc, _, err = runner("rescore", str(run_dir), "--result")
            one_error_line(rc, err, f"pid {first.pid}")
            assert first.poll() is None, "the refused runners must not disturb the live one"
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        time.sleep(0.1)  # what the dead runner had in flight finishes on the server

        lock = json.loads((run_dir / "run.lock").read_text(encoding="utf-8"))
        assert lock["pid"] == first.pid  # left behind by the killed process
        on_disk, _ = read_predictions(run_dir / "predictions.jsonl")
        rc, _, err = runner("run", "--run-id", "live", "--resume", "--workers", "4")
        assert rc == 0, err
        assert f"took over the lock left by pid {first.pid}" in err
        assert (run_dir / "run.lock").read_text(encoding="utf-8") == ""  # released cleanly
        records = runner.predictions("live")
        assert _keys(records[: len(on_disk)]) == _keys(on_disk)
        every = [(t, str(row["id"])) for t, row, _ in examples]
        # every example once, no repeats (in the suite's task order, not the edition file's)
        assert sorted(_keys(records)) == sorted(every) and len(set(_keys(records))) == len(records)
        assert runner.json("live", "run.json")["status"] == "complete"

        # The finished run is free again: rescore takes the lock and reports nothing stale.
        rc, _, err = runner("rescore", str(run_dir))
        assert rc == 0 and "took over" not in err, err


def test_lock_is_exclusive_within_one_process_and_released_on_exit(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    with RunLock(run_dir):
        try:
            RunLock(run_dir).acquire()
        except RunBusy as exc:
            assert f"pid {os.getpid()}" in str(exc)
        else:
            raise AssertionError("a second lock on the same folder was granted")
    messages: list[str] = []
    with RunLock(run_dir, messages.append):
        pass
    assert messages == []  # a cleanly released lock is not stale
