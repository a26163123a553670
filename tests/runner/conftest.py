"""Fixtures for the runner tests: the sample edition, a loopback OpenAI-compatible server, the CLI."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from yoxla.cli.main import run as cli_run
from yoxla.testing.benchmark_items import examples as sample_examples
from yoxla.testing.benchmark_items import gold_answer
from yoxla.testing.fakeserver import FakeServer

SECRET = "sk-test-5ecret-DO-NOT-LEAK-0123456789"


@pytest.fixture(scope="session")
def examples() -> list[tuple[str, dict[str, Any], str]]:
    """(task id, row, prompt key) for every example of the sample edition, in run order."""
    return [(ex.task, ex.row, ex.key) for ex in sample_examples("sample")]


@pytest.fixture(scope="session")
def answers(examples: list[tuple[str, dict[str, Any], str]]) -> dict[str, str]:
    """A scripted model: the gold answer for two examples in three, a wrong one otherwise."""
    out: dict[str, str] = {}
    for i, (task, row, key) in enumerate(examples):
        out[key] = gold_answer(task, row) if i % 3 else "bilmirəm"
    return out


@pytest.fixture
def server(answers: dict[str, str]) -> Iterator[FakeServer]:
    with FakeServer(answers=dict(answers), deadline_s=120) as srv:
        yield srv


@pytest.fixture
def env_key(monkeypatch: pytest.MonkeyPatch) -> str:
    for name in (
        "VLLM_API_KEY",
        "OPENROUTER_API_KEY",
        "LLAMACPP_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
    ):
        monkeypatch.setenv(name, SECRET)
    monkeypatch.delenv("YOXLA_SIGN_KEY", raising=False)
    return SECRET


class Runner:
    """Runs ``yoxla …`` in-process with run and result folders under tmp_path."""

    def __init__(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.tmp = tmp_path
        self.runs = tmp_path / "runs"
        self.results = tmp_path / "results"
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def __call__(self, *args: str, base: bool = True) -> tuple[int, str, str]:
        argv = list(args)
        if base and argv and argv[0] == "run":
            argv += [
                "--runs-dir",
                str(self.runs),
                "--results-dir",
                str(self.results),
                "--no-progress",
            ]
        self.monkeypatch.setattr(sys, "argv", ["yoxla", *argv])  # the command line a run records
        rc = cli_run(argv)
        out, err = self.capsys.readouterr()
        return rc, out, err

    def api(
        self, server: FakeServer, run_id: str, *extra: str, provider: str = "vllm"
    ) -> tuple[int, str, str]:
        return self(
            "run",
            "--provider",
            provider,
            "--model",
            "fake/model-1",
            "--base-url",
            server.base_url,
            "--edition",
            "sample",
            "--run-id",
            run_id,
            "--backoff-base",
            "0.01",
            "--timeout",
            "5",
            *extra,
        )

    def predictions(self, run_id: str) -> list[dict[str, Any]]:
        path = self.runs / run_id / "predictions.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def json(self, run_id: str, name: str) -> Any:
        return json.loads((self.runs / run_id / name).read_text(encoding="utf-8"))


@pytest.fixture
def runner(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Runner:
    monkeypatch.chdir(tmp_path)  # no stray .env, no runs/ in the repository
    return Runner(tmp_path, capsys, monkeypatch)
