"""Replies are read from their JSON (ReplyView), not built into the openai client's models: same
fields, same stored log-probabilities, and a body that is not a JSON object is a transport failure."""

from __future__ import annotations

import json

import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletion

from yoxla.providers.openai_compat import ReplyView, read_reply
from yoxla.providers.transport import TransientError
from yoxla.score.calibration.token_logprobs import compact_logprobs
from yoxla.testing.fakeserver import FakeServer, Reply, token_logprobs


def _reply(content: str, logprobs: list | None) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "reasoning_content": "düşünürəm"},
                "finish_reason": "stop",
                "logprobs": None if logprobs is None else {"content": logprobs, "refusal": None},
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
    }


def test_a_view_reads_like_the_clients_models_and_is_its_json_as_a_mapping() -> None:
    doc = _reply("TƏSDİQ", token_logprobs("TƏSDİQ", 5))
    view = read_reply(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    model = construct_type(type_=ChatCompletion, value=doc)
    choice, expected = view.choices[0], model.choices[0]
    assert choice.message.content == expected.message.content == "TƏSDİQ"
    assert choice.finish_reason == expected.finish_reason and view.model == model.model
    assert view.usage.prompt_tokens == 7 and choice.message.reasoning_content == "düşünürəm"
    with pytest.raises(AttributeError):
        _ = choice.message.tool_calls  # absent, as on a model: not silently None
    assert not hasattr(choice, "model_dump")
    assert dict(view.usage) == doc["usage"] and json.loads(json.dumps(dict(view))) == doc


@pytest.mark.parametrize("answer", ["ZİDD", "neytral", "ŞƏRT-ə", "1"])
def test_stored_logprobs_equal_those_read_through_the_clients_models(answer: str) -> None:
    """What is stored from a view is what was stored from the client's objects (bytes of ə, İ, Ş included)."""
    doc = _reply(answer, token_logprobs(answer, 20, chunk=2))
    view = read_reply(json.dumps(doc).encode("utf-8"))
    model = construct_type(type_=ChatCompletion, value=doc)
    from_view = compact_logprobs(view.choices[0].logprobs.content)
    from_model = compact_logprobs(model.choices[0].logprobs.content)
    assert from_view == from_model
    assert from_view[0]["bytes"] == list(answer[:2].encode("utf-8"))


@pytest.mark.parametrize("body", [b"<html>502 Bad Gateway</html>", b"[1, 2]", b'"text"', b"[" * 100_000])
def test_a_body_that_is_not_a_json_object_is_a_transport_failure(body: bytes) -> None:
    with pytest.raises(TransientError, match="not"):
        read_reply(body)


def test_a_broken_200_body_is_retried_and_then_recorded(runner, env_key, answers, examples) -> None:
    keys = [k for t, _, k in examples if t == "nli_v1"]
    flaky, broken = keys[0], keys[1]
    page = b"<html><body>upstream timed out</body></html>"

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if (key == flaky and attempt == 1) or key == broken:
            return Reply(raw_body=page)
        return Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "html", "--task", "nli_v1", "--workers", "2", "--max-retries", "2")
        assert rc == 0, err
        assert srv.counts[flaky] == 2 and srv.counts[broken] == 3
    ids = {k: str(row["id"]) for t, row, k in examples if t == "nli_v1"}
    recs = {r["id"]: r for r in runner.predictions("html")}
    assert recs[ids[flaky]]["error"] is None and recs[ids[flaky]]["attempts"] == 2
    assert recs[ids[broken]]["error"] == f"the reply is not JSON ({len(page)} bytes) (after 3 attempts)"


def test_the_view_is_a_read_only_mapping() -> None:
    view = ReplyView({"a": {"b": [{"c": 1}, 2]}})
    assert view.a.b[0].c == 1 and view.a.b[1] == 2  # a list of objects: views; other items as they are
    assert view["a"] == {"b": [{"c": 1}, 2]} and list(view) == ["a"] and len(view) == 1
    with pytest.raises(TypeError):
        view["a"] = 1  # type: ignore[index]
