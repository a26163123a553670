"""The command line: one clear line and a non-zero exit for every bad input, never a traceback."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from runner_helpers import one_error_line

from yoxla.record.signing import content_digest, verify_signature
from yoxla.testing.fakeserver import FakeServer, Reply


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


BASE = ("run", "--edition", "sample")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            (*BASE, "--provider", "baseline", "--model", "overlap", "--task", "no_such_task"),
            "--task no_such_task: not a task of",
        ),
        (
            (*BASE, "--provider", "baseline", "--model", "overlap", "--block", "grammar"),
            "--block grammar: not a group of suite yoxla-sample",
        ),
        ((*BASE, "--provider", "nowhere", "--model", "m"), "unknown provider"),
        ((*BASE, "--provider", "baseline", "--model", "clever"), "unknown baseline strategy"),
        ((*BASE, "--preset", "no-such-preset"), "unknown preset"),
        ((*BASE, "--provider", "openrouter", "--model", "x/y"), "OPENROUTER_API_KEY"),
        ((*BASE, "--run-id", "never-ran", "--resume"), "no run"),
        ((*BASE, "--resume"), "nothing to resume"),
        (("run", "--retry-errors", "never-ran"), "no run"),
        ((*BASE, "--provider", "baseline", "--model", "overlap", "--workers", "0"), "--workers"),
        (
            (*BASE, "--provider", "baseline", "--model", "overlap", "--config", "missing.yaml"),
            "does not exist",
        ),
        ((*BASE, "--provider", "baseline", "--model", "overlap", "--sign-key", "nokey.pem"), "signing key"),
        (("rescore", "not-a-run"), "not a run folder"),
        ((*BASE, "--provider", "baseline", "--model", "overlap", "--run-id", "../up"), "plain folder name"),
        ((*BASE, "--provider", "baseline", "--model", "overlap", "--max-retry-after", "-1"), "≥ 0"),
    ],
)
def test_bad_arguments_end_in_one_line(runner, monkeypatch, args, needle) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    rc, _, err = runner(*args)
    if needle == "nothing to resume":
        needle = "no unfinished run"
    one_error_line(rc, err, needle)


def test_unreachable_base_url(runner, env_key) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    rc, _, err = runner(*BASE, "--provider", "vllm", "--model", "m", "--base-url", url, "--task", "nli_v1")
    one_error_line(rc, err, "cannot reach")
    rc, _, err = runner("test", "--provider", "vllm", "--model", "m", "--base-url", url, "--max-retries", "0")
    one_error_line(rc, err, "connection error")


def test_existing_run_id_needs_resume(runner) -> None:
    args = (*BASE, "--provider", "baseline", "--model", "first", "--task", "nli_v1", "--run-id", "r")
    assert runner(*args)[0] == 0
    rc, _, err = runner(*args)
    one_error_line(rc, err, "already exists", "--resume", "another --run-id")
    rc, _, err = runner(*BASE, "--run-id", "r", "--resume", "--model", "majority")
    one_error_line(rc, err, "differs")


def test_dotenv_key_and_connection_test(runner, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-from-dotenv-123456\n", encoding="utf-8")
    with FakeServer(responder=lambda k, a, b: Reply(content="Bakı", reasoning="paytaxt")) as srv:
        rc, out, err = runner("test", "--provider", "openai", "--model", "gpt-x", "--base-url", srv.base_url)
        assert rc == 0, err
        assert srv.auth_headers == {"Bearer sk-from-dotenv-123456"}
        assert len(srv.bodies) == 1
    assert "reply: 'Bakı'" in out and "latency:" in out and "reasoning: paytaxt" in out


def test_providers_tasks_and_presets(runner, tmp_path: Path) -> None:
    rc, out, _ = runner("providers")
    assert rc == 0
    for name in ("openrouter", "google", "openai", "vllm", "llamacpp", "transformers", "baseline"):
        assert name in out
    assert "OPENROUTER_API_KEY" in out and "floor-overlap" in out
    custom = tmp_path / "mine.yaml"
    custom.write_text(
        "providers:\n  lab:\n    backend: openai\n    base_url: http://127.0.0.1:1/v1\n", encoding="utf-8"
    )
    rc, out, _ = runner("providers", "--config", str(custom))
    assert rc == 0 and "lab" in out
    rc, out, _ = runner("tasks", "--edition", "sample")
    assert rc == 0 and "rag_selection_v1" in out
    rc, out, err = runner(*BASE, "--preset", "floor-overlap", "--task", "nli_v1", "--run-id", "p")
    assert rc == 0, err
    info = runner.json("p", "run.json")
    assert (info["provider"], info["model"], info["display_name"]) == (
        "baseline",
        "overlap",
        "Baseline: word overlap",
    )


def test_partial_run_goes_to_results_partial_and_signing(runner, tmp_path: Path, monkeypatch) -> None:
    rc, out, _ = runner("keygen", "--out", str(tmp_path / "keys" / "k.pem"))
    assert rc == 0 and "key id: ed25519:" in out
    rc, out, err = runner(
        *BASE,
        "--provider",
        "baseline",
        "--model",
        "majority",
        "--limit",
        "3",
        "--run-id",
        "part",
        "--sign-key",
        str(tmp_path / "keys" / "k.pem"),
    )
    assert rc == 0, err
    path = runner.results / "partial" / "sample" / "baseline__majority.json"
    assert path.is_file() and not (runner.results / "sample").exists()
    assert "incomplete" in out
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["content_sha256"] == content_digest(doc)
    ok, kid = verify_signature(doc)
    assert ok and kid == doc["signature"]["key_id"]
    assert all(t["rows"] == 3 for t in doc["tasks"].values())
    # The environment variable works too, and --block selects one block.
    monkeypatch.setenv("YOXLA_SIGN_KEY", str(tmp_path / "keys" / "k.pem"))
    rc, _, err = runner(
        *BASE, "--provider", "baseline", "--model", "majority", "--block", "rag", "--run-id", "rag"
    )
    assert rc == 0, err
    assert set(runner.json("rag", "task_scores.json")["tasks"]) == {"rag_verification_v1", "rag_selection_v1"}
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert verify_signature(doc)[0]


def test_rescore_result_flag_rewrites_the_result_file(runner) -> None:
    rc, _, err = runner(*BASE, "--provider", "baseline", "--model", "random", "--run-id", "rnd")
    assert rc == 0, err
    path = runner.results / "sample" / "baseline__random.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    rc, _, err = runner("rescore", str(runner.runs / "rnd"), "--result")
    assert rc == 0, err
    new = json.loads(path.read_text(encoding="utf-8"))
    assert new["scores"] == old["scores"] and new["tasks"] == old["tasks"]
