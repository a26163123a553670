"""Scripted logprobs from the loopback server, read through the real openai client."""

from __future__ import annotations

import math

import pytest

from yoxla.score.calibration import distribution_from_logprobs, parse_logprobs
from yoxla.testing.fakeserver import FakeServer, Reply

SPACE = tuple(str(i) for i in range(1, 21))


def tok(text: str, p: float, top: list[tuple[str, float]]) -> dict:
    def one(t: str, q: float) -> dict:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in top]}


SCRIPT = {
    # "17": the path goes through "1", so 1, 10, 12 and 17 are told apart.
    "through": Reply(
        content="17",
        logprobs=[
            tok("1", 0.6, [("1", 0.6), ("7", 0.3), ("5", 0.1)]),
            tok("7", 0.9, [("7", 0.9), ("0", 0.1)]),
        ],
    ),
    # "5": "1" is only an alternative, so it cannot be told from 10–19.
    "beside": Reply(content="5", logprobs=[tok("5", 0.7, [("5", 0.7), ("1", 0.3)])]),
    "last": Reply(content="2", logprobs=[tok("2", 0.9, [("2", 0.9), ("1", 0.1)])]),
    "none": Reply(content="5"),  # a provider that returns no logprobs
}


@pytest.fixture(scope="module")
def server():
    with FakeServer(responder=lambda key, attempt, body: SCRIPT[key]) as srv:
        yield srv


def ask(server: FakeServer, key: str):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10)
    resp = client.chat.completions.create(
        model="fake",
        messages=[{"role": "user", "content": key}],
        max_tokens=8,
        logprobs=True,
        top_logprobs=5,
    )
    client.close()
    return resp


def test_shared_first_token_split_along_the_generated_path(server):
    resp = ask(server, "through")
    assert server.bodies[-1]["logprobs"] is True and server.bodies[-1]["top_logprobs"] == 5
    dist = distribution_from_logprobs(parse_logprobs(resp.choices[0].logprobs), SPACE)
    assert dist is not None and dist.complete
    assert dist.probs["17"] == pytest.approx(0.54)
    assert dist.probs["10"] == pytest.approx(0.06)
    assert dist.probs["1"] == 0.0  # every visible continuation of "1" went on to a longer label
    assert dist.probs["7"] == pytest.approx(0.3) and dist.probs["5"] == pytest.approx(0.1)
    assert dist.top == "17"
    assert dist.mass_outside == pytest.approx(0.0, abs=1e-12)


def test_a_label_that_ends_the_answer_and_begins_a_longer_one_is_missing(server):
    resp = ask(server, "last")  # the answer is "2": is it 2, or the start of 20? not visible
    assert distribution_from_logprobs(parse_logprobs(resp.choices[0].logprobs), SPACE) is None


def test_shared_first_token_off_the_path_is_partial(server):
    resp = ask(server, "beside")
    dist = distribution_from_logprobs(parse_logprobs(resp.choices[0].logprobs), SPACE)
    assert dist is not None and dist.partial
    assert {"1", "10", "19"} <= set(dist.missing)
    assert dist.p("1") is None and dist.p("5") == 1.0


def test_a_provider_without_logprobs_gives_no_distribution(server):
    resp = ask(server, "none")
    assert resp.choices[0].logprobs is None
    assert distribution_from_logprobs(parse_logprobs(resp.choices[0].logprobs), SPACE) is None
