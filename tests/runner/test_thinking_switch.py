"""`yoxla test --thinking` says whether the provider's thinking switch changed what the server
reports: the prompt's token count with the switch on and off (loopback server)."""

from __future__ import annotations

from typing import Any

from yoxla.testing.fakeserver import FakeServer, Reply


def _switch(body: dict[str, Any]) -> Any:
    return (body.get("chat_template_kwargs") or {}).get("enable_thinking")


def _ask(runner, srv: FakeServer, *extra: str) -> tuple[int, str, str]:
    return runner("test", "--provider", "llamacpp", "--model", "m", "--base-url", srv.base_url, *extra)


def test_a_server_whose_template_reads_the_switch(runner) -> None:
    def reads_it(key: str, attempt: int, body: dict) -> Reply:  # llama.cpp's llama-server
        prompt = 40 if _switch(body) else 31
        return Reply(content="Bakı", usage={"prompt_tokens": prompt, "completion_tokens": 2})

    with FakeServer(responder=reads_it) as srv:
        rc, out, err = _ask(runner, srv, "--thinking")
        assert [_switch(b) for b in srv.bodies] == [True, False]  # asked with it, then without
    assert rc == 0, err
    assert "thinking switch: changed the prompt (40 prompt tokens with it, 31 without)" in out


def test_a_server_that_reads_template_options_at_model_load(runner) -> None:
    def ignores_it(key: str, attempt: int, body: dict) -> Reply:  # llama-cpp-python's server
        return Reply(content="Bakı", usage={"prompt_tokens": 31, "completion_tokens": 2})

    with FakeServer(responder=ignores_it) as srv:
        rc, out, err = _ask(runner, srv, "--thinking")
    assert rc == 0, err
    assert "thinking switch: no effect on the prompt (31 prompt tokens with it and without)" in out
    assert "docs/running.md" in out


def test_without_thinking_one_request_and_no_verdict(runner) -> None:
    with FakeServer(responder=lambda k, a, b: Reply(content="Bakı")) as srv:
        rc, out, err = _ask(runner, srv)
        assert len(srv.bodies) == 1 and _switch(srv.bodies[0]) is False
    assert rc == 0, err
    assert "thinking switch" not in out


def test_a_switch_outside_the_chat_template_is_not_probed(runner, env_key) -> None:
    """OpenRouter's switch (`reasoning: {enabled: …}`) changes the reasoning, not the prompt."""
    with FakeServer(responder=lambda k, a, b: Reply(content="Bakı")) as srv:
        rc, out, err = runner(
            "test", "--provider", "openrouter", "--model", "m", "--base-url", srv.base_url, "--thinking"
        )
        assert len(srv.bodies) == 1 and srv.bodies[0]["reasoning"] == {"enabled": True}
    assert rc == 0, err
    assert "thinking switch" not in out
