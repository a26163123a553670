"""Checks against real inference servers (opt in, marked ``real_server``), and the same checks on loopback.

Set the base URL of a running server and run this module (docs/running.md, "Checking a local
server", says how to start one):

    YOXLA_REAL_VLLM_URL=http://127.0.0.1:8000/v1 \\
    YOXLA_REAL_LLAMACPP_URL=http://127.0.0.1:8080/v1 \\
        python -m pytest -m real_server tests/runner/test_real_servers.py

``YOXLA_REAL_VLLM_MODEL`` / ``YOXLA_REAL_LLAMACPP_MODEL`` name the model (default: the first one
the server lists). Without a URL each real-server test is skipped with that reason, so CI stays
offline. :func:`check_server` is the whole check: ``yoxla test``; a sample run at 8 workers
through a recording forwarder with zero generation errors; every request of the shape the
provider promises (logprobs exactly on closed answer spaces, the reasoning switch); the server's
log-probabilities stored and turned into distributions over the answer space; a result file that
admission accepts and ``yoxla rescore --result`` reproduces. The last test runs it against the
loopback stand-in, so the check itself is exercised on every test run.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

import pytest

from yoxla.admission.rules import check_file
from yoxla.contract.benchmark import choice_space, strict_rule
from yoxla.providers.registry import get_spec
from yoxla.testing.fakeserver import FakeServer, Reply, token_logprobs
from yoxla.testing.recorder import RecordingProxy

SERVERS = [
    ("vllm", "YOXLA_REAL_VLLM_URL", "YOXLA_REAL_VLLM_MODEL"),
    ("llamacpp", "YOXLA_REAL_LLAMACPP_URL", "YOXLA_REAL_LLAMACPP_MODEL"),
]


def first_model(base_url: str) -> str:
    """The first model id ``GET /models`` lists (bounded read and wait)."""
    with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=30) as resp:
        listing = json.loads(resp.read(1_000_000))
    return str(listing["data"][0]["id"])


def check_server(runner: Any, examples: list[Any], provider: str, base_url: str, model: str) -> None:
    spec = get_spec(provider)
    with RecordingProxy(base_url) as proxy:
        # One request: the connection test.
        rc, out, err = runner("test", "--provider", provider, "--model", model, "--base-url", proxy.base_url)
        assert rc == 0, err
        assert "reply: " in out and "finish reason: " in out
        assert len(proxy.chat()) == 1

        # The sample edition at 8 workers: no generation error.
        rc, out, err = runner(
            "run", "--provider", provider, "--model", model, "--base-url", proxy.base_url,
            "--edition", "sample", "--run-id", "real", "--workers", "8",
        )  # fmt: skip
        assert rc == 0, err
        assert "generation errors: 0" in out, out
        chats = proxy.chat()[1:]

    # Every example asked, every reply a 200 with a choice; each request of the promised shape.
    choice = {key: strict_rule(t).mode == "choice" for t, _, key in examples}
    asked: set[str] = set()
    for ex in chats:
        assert ex.status == 200, (ex.status, ex.response)
        assert isinstance(ex.response, dict) and ex.response.get("choices"), ex.response
        body = ex.request
        assert body["model"] == model and body["temperature"] == 0.0 and body["max_tokens"] > 0
        roles = [m["role"] for m in body["messages"]]
        assert roles[0] == "system" and roles[-1] == "user"
        key = body["messages"][-1]["content"]
        assert key in choice, "a request for a prompt the edition does not hold"
        asked.add(key)
        if choice[key]:
            assert body.get("logprobs") is True and body.get("top_logprobs") == spec.top_logprobs
        else:
            assert "logprobs" not in body and "top_logprobs" not in body
        for name, value in ((spec.reasoning or {}).get("off") or {}).items():
            assert body.get(name) == value  # the reasoning switch, as the registry declares it
    assert asked == set(choice)

    # The server's token log-probabilities are stored, and distributions derived from them.
    records = runner.predictions("real")
    assert len(records) == len(examples) and not [r for r in records if r["error"]]
    for r in records:
        assert bool(r.get("logprobs")) == (strict_rule(r["task"]).mode == "choice"), r["task"]
    results = list((runner.results / "sample").glob("*.json"))
    assert len(results) == 1
    doc = json.loads(results[0].read_text(encoding="utf-8"))
    distributions = 0
    rows = {(t, str(row["id"])): row for t, row, _ in examples}
    for tid, entry in doc["tasks"].items():
        for p in entry["predictions"]:
            dist = p.get("distribution")
            if dist is None:
                continue
            distributions += 1
            labels = set(choice_space(tid, rows[(tid, str(p["id"]))]) or ())
            assert set(dist["probs"]) <= labels and dist["top"] in dist["probs"]
            assert all(0.0 <= v <= 1.0 for v in dist["probs"].values())
    assert distributions > 0

    # Admitted as it stands, and reproduced by a rescore from the stored raw outputs.
    verdict = check_file(results[0], use_cache=False)
    assert verdict.status == "admitted" and verdict.rechecked, verdict.reasons
    rc, _, err = runner("rescore", str(runner.runs / "real"), "--result")
    assert rc == 0, err
    assert json.loads(results[0].read_text(encoding="utf-8"))["tasks"] == doc["tasks"]


@pytest.mark.real_server
@pytest.mark.parametrize(("provider", "url_env", "model_env"), SERVERS, ids=[s[0] for s in SERVERS])
def test_a_real_server(
    runner, examples, monkeypatch: pytest.MonkeyPatch, provider: str, url_env: str, model_env: str
) -> None:
    base_url = os.environ.get(url_env, "").strip()
    if not base_url:
        pytest.skip(f"{url_env} is not set: point it at a running {provider} server to check it")
    monkeypatch.delenv("YOXLA_SIGN_KEY", raising=False)  # an unsigned file, judged as such
    model = os.environ.get(model_env, "").strip() or first_model(base_url)
    check_server(runner, examples, provider, base_url, model)


def test_the_real_server_check_passes_on_loopback(runner, env_key, examples, answers) -> None:
    """The check above, against the loopback stand-in answering with token logprobs."""

    def responder(key: str, attempt: int, body: dict[str, Any]) -> Reply:
        answer = answers.get(key, "?")
        if not body.get("logprobs"):
            return Reply(content=answer)
        return Reply(content=answer, logprobs=token_logprobs(answer, int(body["top_logprobs"])))

    with FakeServer(responder=responder, deadline_s=120) as srv:
        check_server(runner, examples, "vllm", srv.base_url, srv.model_name)
        assert srv.total_requests() == len(examples) + 1  # nothing asked twice
