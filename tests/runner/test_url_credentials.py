"""Credentials in --base-url reach the server and nothing else: no file, no log line, no printed line."""

from __future__ import annotations

import base64
import json

import pytest
from runner_helpers import one_error_line

from yoxla.providers.registry import redact, scrub_url
from yoxla.testing.fakeserver import FakeServer, Reply

PASSWORD, QUERY_KEY = "s3cret", "zzz"


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("http://user:pw@h:8/v1", "http://***@h:8/v1"),
        ("http://token@h/v1", "http://***@h/v1"),
        ("https://h/v1?key=a&api-version=2024-06-01", "https://h/v1?key=***&api-version=2024-06-01"),
        ("https://h/v1?API_KEY=a&apikey=b&x-api-key=c", "https://h/v1?API_KEY=***&apikey=***&x-api-key=***"),
        ("https://h/v1?token=a&access_token=b&secret=c", "https://h/v1?token=***&access_token=***&secret=***"),
        ("https://h/v1?password=a&sig=b&Signature=c&auth=d", "https://h/v1?password=***&sig=***&Signature=***&auth=***"),
        ("https://h/v1?model=m#frag", "https://h/v1?model=m#frag"),
    ],
)  # fmt: skip
def test_scrub_url(url: str, stored: str) -> None:
    assert scrub_url(url) == stored
    assert redact(f"runner.py --base-url '{url}' --x") == f"runner.py --base-url '{stored}' --x"


def test_base_url_credentials_are_used_but_never_stored(runner, env_key, answers, examples) -> None:
    first = examples[0][2]
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key == first:  # a server that echoes what it got into an error, stored as a generation error
            return Reply(
                status=500, message=f"bad request to ?api_key={QUERY_KEY} as user:{PASSWORD} ({basic})"
            )
        return Reply(content=answers.get(key, "?"))

    with FakeServer(responder=responder) as srv:
        port = srv.port
        url = f"http://user:{PASSWORD}@127.0.0.1:{port}/v1?api_key={QUERY_KEY}"
        rc, out, err = runner.api(
            srv, "creds", "--block", "all", "--base-url", url, "--workers", "4", "--max-retries", "1"
        )
        assert rc == 0, err
        assert "generation errors: 1" in out and "api_key=***" in out  # the echo, scrubbed
        assert srv.queries and all(q == {"api_key": QUERY_KEY} for q in srv.queries)  # the server got them
        assert srv.auth_headers == {f"Basic {basic}"}
        # --resume needs the credentials again (they were never stored) and works with them.
        pred = runner.runs / "creds" / "predictions.jsonl"
        pred.write_bytes(b"".join(pred.read_bytes().splitlines(keepends=True)[:-3]))
        rc2, out2, err2 = runner("run", "--run-id", "creds", "--resume")
        one_error_line(rc2, err2, "credentials", "--base-url")
        rc3, out3, err3 = runner("run", "--run-id", "creds", "--resume", "--base-url", url)
        assert rc3 == 0, err3
    texts = {"stdout": out + out2 + out3, "stderr": err + err2 + err3}
    files = [p for p in runner.tmp.rglob("*") if p.is_file()]
    assert any(p.parent.name == "sample" and p.suffix == ".json" for p in files)  # the result file
    texts.update({str(p): p.read_text(encoding="utf-8", errors="replace") for p in files})
    for where, text in texts.items():
        for secret in (PASSWORD, QUERY_KEY, basic):
            assert secret not in text, (where, secret)
    info = runner.json("creds", "run.json")
    assert info["base_url"] == f"http://127.0.0.1:{port}/v1"
    assert info["settings"]["base_url"] == f"http://***@127.0.0.1:{port}/v1?api_key=***"
    assert "--base-url 'http://***@127.0.0.1:" in info["command"]
    doc = json.loads((runner.results / "sample" / "vllm__fake--model-1.json").read_text(encoding="utf-8"))
    assert doc["model"]["base_url"] == info["base_url"] and "***" in doc["run"]["command"]
