"""The OpenAI-compatible path, through the real openai client, against the loopback server."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema

from yoxla.testing.fakeserver import FakeServer, Reply

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "yoxla" / "schema" / "result.schema.json").read_text(encoding="utf-8"))
SECRET = "sk-test-5ecret-DO-NOT-LEAK-0123456789"  # = conftest's env_key
QUICK_TASKS = ("nli_v1", "sts_v1", "qa_abstention_v1", "rag_selection_v1")


def answer_fields(records: list[dict]) -> list[tuple]:
    """What must not depend on the schedule: order, answers, verdicts."""
    return [
        (r["task"], r["id"], r["raw"], r["extracted"], r["outcome"], r["score"], r["finish_reason"])
        for r in records
    ]


def _tasks(*ids: str) -> list[str]:
    return [x for tid in ids for x in ("--task", tid)]


def test_prompt_keys_are_unique(examples) -> None:
    keys = [k for _, _, k in examples]
    assert len(set(keys)) == len(keys)


def test_order_under_16_workers_equals_one_worker(runner, env_key, answers) -> None:
    rng = random.Random(7)
    delays = {k: rng.choice([0.0, 0.0, 0.01, 0.03, 0.06]) for k in answers}

    def responder(key: str, attempt: int, body: dict) -> Reply:
        return Reply(content=answers.get(key, "?"), delay=delays.get(key, 0.0))

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "w16", "--block", "all", "--workers", "16")
        assert rc == 0, err
        assert srv.peak_inflight > 4  # really concurrent
    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "w1", "--block", "all", "--workers", "1")
        assert rc == 0, err
    many, one = runner.predictions("w16"), runner.predictions("w1")
    assert answer_fields(many) == answer_fields(one)
    assert len(one) == 146
    assert runner.json("w16", "task_scores.json") == runner.json("w1", "task_scores.json")
    # Complete run: a result file that validates against the published schema.
    doc = json.loads((runner.results / "sample" / "vllm__fake--model-1.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["model"]["reported_model"] == "fake-model"
    assert doc["usage"]["total_tokens"] > 0 and doc["generation_errors"] == 0
    assert "tokens:" in out and "generation errors: 0" in out


def test_429_storm_at_32_workers(runner, env_key, answers) -> None:
    # The server accepts 3 requests at a time; beyond that: 429 with Retry-After.
    with FakeServer(answers=dict(answers), latency=0.01, max_concurrent=3, retry_after=0.05) as srv:
        rc, _out, err = runner.api(
            srv, "storm", *_tasks(*QUICK_TASKS), "--workers", "32", "--max-retries", "2"
        )
        assert rc == 0, err
        assert srv.statuses[429] > 0  # there was a storm
    with FakeServer(answers=dict(answers)) as srv:
        rc, _, err = runner.api(srv, "calm", *_tasks(*QUICK_TASKS), "--workers", "1")
        assert rc == 0, err
    storm = runner.predictions("storm")
    assert not [r for r in storm if r["outcome"] == "generation_error"]
    assert answer_fields(storm) == answer_fields(runner.predictions("calm"))
    assert runner.json("storm", "summary.json")["generation_errors"] == 0


def test_transport_faults_are_retried_and_failures_recorded(runner, env_key, answers, examples) -> None:
    keys = [k for t, _, k in examples if t == "nli_v1"]
    faults = {keys[0]: "429", keys[1]: "500", keys[2]: "timeout", keys[3]: "torn", keys[4]: "dead"}
    alive = {"dead": False}

    def responder(key: str, attempt: int, body: dict) -> Reply:
        kind = faults.get(key)
        if kind == "dead" and not alive["dead"]:
            return Reply(status=503, message=f"upstream failed for Bearer {SECRET}")
        if attempt == 1 and kind == "429":
            return Reply(status=429, retry_after=0.05)
        if attempt <= 2 and kind == "500":
            return Reply(status=500)
        if attempt == 1 and kind == "timeout":
            return Reply(content=answers[key], delay=1.5)
        if attempt == 1 and kind == "torn":
            return Reply(torn=True)
        return Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(
            srv, "faults", "--task", "nli_v1", "--workers", "4", "--timeout", "0.5", "--max-retries", "3"
        )
        assert rc == 0, err
        recs = {r["id"]: r for r in runner.predictions("faults")}
        by_key = {k: str(row["id"]) for t, row, k in examples if t == "nli_v1"}
        assert recs[by_key[keys[0]]]["attempts"] == 2
        assert recs[by_key[keys[1]]]["attempts"] == 3
        assert recs[by_key[keys[2]]]["attempts"] == 2
        assert recs[by_key[keys[3]]]["attempts"] == 2
        dead = recs[by_key[keys[4]]]
        assert dead["outcome"] == "generation_error" and dead["attempts"] == 4 and dead["raw"] is None
        assert "503" in dead["error"] and SECRET not in dead["error"]
        assert srv.counts[keys[4]] == 4  # one attempt plus three retries, then it is given up
        summary = runner.json("faults", "summary.json")
        assert summary["generation_errors"] == 1
        assert summary["generation_error_examples"][0]["id"] == dead["id"]
        assert "generation errors: 1" in out
        # Invalid answers are never retried: every other example was asked as often as its faults need.
        assert all(srv.counts[k] == 1 for k in keys[5:])

        # --retry-errors re-asks only the failed example and merges it back in place.
        alive["dead"] = True
        before = runner.predictions("faults")
        rc, out, err = runner(
            "run",
            "--retry-errors",
            str(runner.runs / "faults"),
            "--backoff-base",
            "0.01",
            "--no-progress",
            base=False,
        )
        assert rc == 0, err
        after = runner.predictions("faults")
        assert [r["id"] for r in after] == [r["id"] for r in before]
        changed = [a for a, b in zip(after, before, strict=True) if a != b]
        assert [r["id"] for r in changed] == [dead["id"]] and changed[0]["outcome"] != "generation_error"
        assert srv.counts[keys[4]] == 5
        assert runner.json("faults", "summary.json")["generation_errors"] == 0


def test_reasoning_is_kept_apart_and_length_is_truncated(runner, env_key, answers, examples) -> None:
    keys = [k for t, _, k in examples if t == "nli_v1"]

    def responder(key: str, attempt: int, body: dict) -> Reply:
        i = keys.index(key)
        if i == 0:
            return Reply(content=answers[key], reasoning="Əvvəlcə düşünək.")
        if i == 1:
            return Reply(content=answers[key], reasoning_content="reasoning_content field")
        if i == 2:
            return Reply(content=f"<think>fikirləşirəm</think>{answers[key]}")
        if i == 3:
            return Reply(content="", finish_reason="length")
        if i == 4:
            return Reply(content="<think>sonsuz fikir", finish_reason="length")
        return Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "think", "--task", "nli_v1", "--workers", "2")
        assert rc == 0, err
    recs = runner.predictions("think")
    assert recs[0]["raw"] == f"<think>Əvvəlcə düşünək.</think>{answers[keys[0]]}"
    assert recs[1]["raw"] == f"<think>reasoning_content field</think>{answers[keys[1]]}"
    assert recs[2]["raw"] == f"<think>fikirləşirəm</think>{answers[keys[2]]}"
    for r, k in zip(recs[:3], keys[:3], strict=True):
        # the answer after the reasoning is what is read (a suite line stores no separate text)
        assert r["extracted"] == (answers[k] if r["valid"] else None)
    assert recs[3]["raw"] == "" and recs[3]["finish_reason"] == "length" and recs[3]["outcome"] == "truncated"
    assert recs[3]["valid"] is False and recs[3]["score"] == 0.0
    assert recs[4]["outcome"] == "truncated" and recs[4]["extracted"] is None


def _extra_params(body: dict) -> dict:
    return {
        k: v for k, v in body.items() if k not in ("model", "messages", "max_tokens", "temperature", "top_p")
    }


def test_reasoning_controls_exactly_as_specified(runner, env_key, answers) -> None:
    # Providers marked `logprobs: true` ask for them on choice tasks with reasoning off.
    lp = {"logprobs": True, "top_logprobs": 20}
    cases = [
        ("openrouter", [], {"reasoning": {"enabled": False}}),
        ("openrouter", ["--thinking"], {"reasoning": {"enabled": True}}),
        ("llamacpp", [], {"chat_template_kwargs": {"enable_thinking": False}, **lp}),
        ("llamacpp", ["--thinking"], {"chat_template_kwargs": {"enable_thinking": True}}),
        ("vllm", [], lp),
        ("vllm", ["--thinking"], {}),
        ("openai", [], lp),
        ("google", [], {}),
    ]
    for i, (provider, extra, expected) in enumerate(cases):
        with FakeServer(answers=dict(answers)) as srv:
            rc, _, err = runner.api(
                srv, f"rc{i}", "--task", "sentiment_v1", "--limit", "2", *extra, provider=provider
            )
            assert rc == 0, (provider, err)
            assert len(srv.bodies) == 2
            for body in srv.bodies:
                assert _extra_params(body) == expected, (provider, extra, body)
                assert body["temperature"] == 0 and body["top_p"] == 1
                assert body["max_tokens"] == 16 + (4096 if extra else 0)
            assert srv.auth_headers == {f"Bearer {SECRET}"}


def test_keys_absent_from_every_artifact(runner, env_key, answers, examples) -> None:
    first = examples[0][2]

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key == first and attempt == 1:
            return Reply(status=500, message=f"echo Authorization: Bearer {SECRET}")
        return Reply(content=answers.get(key, "?"))

    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "secret", "--block", "all", "--workers", "4", provider="openrouter")
        assert rc == 0, err
        assert srv.auth_headers == {f"Bearer {SECRET}"}  # the key was used
    assert SECRET not in out and SECRET not in err
    files = [p for p in runner.tmp.rglob("*") if p.is_file()]
    assert any(p.name == "run.json" for p in files) and any(
        p.suffix == ".json" and "results" in p.parts for p in files
    )
    for path in files:
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    info = runner.json("secret", "run.json")
    assert info["api_key_env"] == "OPENROUTER_API_KEY"
