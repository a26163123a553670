"""An error inside an HTTP 200 reply body (as OpenRouter sends) is read by its code, and its message is kept.

Through the real ``openai`` client against the loopback server: ``{"choices": [], "error": {"code": …,
"message": …}}`` with 400, 404, 429 and 500.
"""

from __future__ import annotations

import pytest
from runner_helpers import one_error_line

from yoxla.providers.transport import MAX_ERROR_CHARS, body_error
from yoxla.testing.fakeserver import FakeServer, Reply

NO_MODEL = "No such model: fake/model-1 (əlçatan deyil)"


def _nli_keys(examples) -> list[str]:
    return [k for t, _, k in examples if t == "nli_v1"]


def _by_key(examples) -> dict[str, str]:
    return {k: str(row["id"]) for t, row, k in examples if t == "nli_v1"}


def test_400_in_the_body_fails_at_once_and_an_all_failing_start_stops_the_run(runner, env_key) -> None:
    def responder(key: str, attempt: int, body: dict) -> Reply:
        return Reply(body_error={"code": 400, "message": NO_MODEL})

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "bad400", "--task", "nli_v1", "--task", "sts_v1", "--workers", "1")
        last = one_error_line(rc, err, "the first 10 requests all failed", NO_MODEL, "HTTP 400")
        assert "response without choices" not in last
        # Never retried; the run stops at the 10th (a few more may be in the sending window by then).
        assert 10 <= srv.total_requests() <= 14 and set(srv.counts.values()) == {1}
    recs = runner.predictions("bad400")
    assert len(recs) == 10
    assert all(r["attempts"] == 1 and NO_MODEL in r["error"] for r in recs)


def test_404_in_the_body_stops_the_run_with_the_servers_message(runner, env_key) -> None:
    def responder(key: str, attempt: int, body: dict) -> Reply:
        return Reply(body_error={"code": 404, "message": NO_MODEL, "metadata": {"provider_name": None}})

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "bad404", "--task", "nli_v1", "--workers", "1")
        one_error_line(rc, err, "HTTP 404 in the reply body", NO_MODEL, "0 examples are on disk", "--resume")
        assert srv.total_requests() <= 4  # the first refusal ends the run (at most the window was sent)


def test_429_and_500_in_the_body_are_retried_and_a_lasting_500_keeps_its_message(
    runner, env_key, answers, examples
) -> None:
    keys = _nli_keys(examples)
    throttled, flaky, dead = keys[0], keys[1], keys[2]

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key == throttled and attempt == 1:
            return Reply(body_error={"code": 429, "message": "Rate limit exceeded: free-models-per-min"})
        if key == flaky and attempt <= 2:
            return Reply(body_error={"code": "502", "message": "upstream provider error"})
        if key == dead:
            return Reply(body_error={"code": 500, "message": "Internal error: model crashed"})
        return Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "retry", "--task", "nli_v1", "--workers", "1", "--max-retries", "2")
        assert rc == 0, err
        assert srv.counts[throttled] == 2 and srv.counts[flaky] == 3 and srv.counts[dead] == 3
    recs = {r["id"]: r for r in runner.predictions("retry")}
    ids = _by_key(examples)
    assert recs[ids[throttled]]["error"] is None and recs[ids[throttled]]["attempts"] == 2
    assert recs[ids[flaky]]["error"] is None and recs[ids[flaky]]["attempts"] == 3
    lost = recs[ids[dead]]
    assert lost["outcome"] == "generation_error" and lost["attempts"] == 3
    assert lost["error"] == "HTTP 500 in the reply body: Internal error: model crashed (after 3 attempts)"
    assert "Internal error: model crashed" in out  # the summary's list of generation errors


def test_a_refused_example_among_answers_keeps_its_message_and_is_asked_once(
    runner, env_key, answers, examples
) -> None:
    keys = _nli_keys(examples)

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key == keys[3]:
            return Reply(body_error={"code": 400, "message": "Prompt too long for this model"})
        return Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "one", "--task", "nli_v1", "--workers", "4")
        assert rc == 0, err
        assert srv.counts[keys[3]] == 1
    rec = next(r for r in runner.predictions("one") if r["id"] == _by_key(examples)[keys[3]])
    assert rec["error"] == "HTTP 400 in the reply body: Prompt too long for this model"
    assert "Prompt too long for this model" in out


def test_a_400_in_the_body_naming_logprobs_switches_them_off(runner, env_key, answers) -> None:
    def responder(key: str, attempt: int, body: dict) -> Reply:
        if body.get("logprobs"):
            return Reply(body_error={"code": 400, "message": "logprobs are not supported for this model"})
        return Reply(content=answers.get(key, "?"))

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "nolp", "--task", "nli_v1", "--workers", "1")
        assert rc == 0, err
        assert srv.bodies[0].get("logprobs") is True and not any(b.get("logprobs") for b in srv.bodies[2:])
    assert not [r for r in runner.predictions("nolp") if r["error"]]


def test_a_body_without_choices_or_status_is_retried_with_its_message(runner, env_key) -> None:
    def responder(key: str, attempt: int, body: dict) -> Reply:
        return Reply(body_error={"code": "context_length_exceeded", "message": "Too many tokens"})

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "nocode", "--task", "nli_v1", "--workers", "1", "--max-retries", "1")
        one_error_line(
            rc, err, "the first 10 requests all failed", "response without choices: Too many tokens"
        )
        # Each failed example was asked twice (one retry); one still in the window may have been asked once.
        assert sorted(srv.counts.values()).count(2) >= 10 and set(srv.counts.values()) <= {1, 2}


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ({"code": 404, "message": "No such model"}, (404, "No such model")),
        ({"code": "429", "message": "slow down"}, (429, "slow down")),
        ({"code": True, "message": "x"}, (None, "x")),  # a boolean is no status
        ({"code": 42, "message": "x"}, (None, "x")),
        ({"code": "４０４", "message": "x"}, (None, "x")),  # digits that are not ASCII
        ({"code": 500, "message": {"nested": "dict"}}, (500, None)),
        ({"code": 503}, (503, None)),
        ("a bare string", (None, "a bare string")),
        (["a", "list"], (None, None)),
        (None, (None, None)),
    ],
)
def test_body_error_reads_only_a_status_and_a_string_message(field, expected) -> None:
    assert body_error(field) == expected


def test_body_error_bounds_the_message() -> None:
    _, message = body_error({"code": 400, "message": "ə" * 1_000_000})
    assert message is not None and len(message) == MAX_ERROR_CHARS


def test_a_429_in_the_body_takes_the_replys_retry_after(env_key) -> None:
    from yoxla.providers.base import ProviderOptions
    from yoxla.providers.registry import create_provider, get_spec, with_overrides
    from yoxla.providers.transport import TransientError

    def responder(key: str, attempt: int, body: dict) -> Reply:
        return Reply(body_error={"code": 429, "message": "slow down"}, retry_after=7.5)

    with FakeServer(responder=responder) as srv:
        provider = create_provider(with_overrides(get_spec("vllm"), srv.base_url), "m", ProviderOptions())
        try:
            with pytest.raises(TransientError) as caught:
                provider._once({"model": "m", "messages": [{"role": "user", "content": "salam"}]})
        finally:
            provider.close()
    assert caught.value.throttled and caught.value.retry_after == 7.5
    assert str(caught.value) == "HTTP 429 in the reply body: slow down"
