"""An ``--edition sample`` run and a ``--suite yoxla-sample`` run of the same model agree.

Before ``--edition X`` becomes a suite run of ``yoxla-X``, the suite engine must give what
the built-in engine gives. Both runs are made in-process through the command line, with run
and result folders under tmp_path:

* offline, for each of the eight cue-only strategies: ``--edition sample --block all
  --provider baseline --model S`` against ``--suite yoxla-sample --provider suite-baseline
  --model S``;
* through the loopback OpenAI-compatible server with token logprobs, the same scripted model
  behind both runs.

Per task: the same example ids in the same order, the same stored answer and verdict per
example (validity, abstention, outcome, reason, near miss, score), every metric of the
benchmark's result record equal (floats to 1e-9; the suite file keeps outcome counts under
``counts`` and the per-field breakdowns under ``breakdowns``), the same task, block (group)
and YOXLA (headline) scores in the result files, in summary.json and in the printed summary,
and with logprobs the same distribution per answer, calibration block per task and
probability counts.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from parity_helpers import (
    EDITION_RESULT,
    SUITE_RESULT,
    assert_same_runs,
    assert_same_summaries,
    result_file,
    score_lines,
)

from yoxla.suite import Task
from yoxla.suites.baselines import STRATEGIES
from yoxla.testing.fakeserver import FakeServer, Reply


def _both(runner, edition_argv: list[str], suite_argv: list[str]) -> tuple[dict[str, Any], ...]:
    rc, e_out, err = runner("run", *edition_argv, "--edition", "sample", "--block", "all", "--run-id", "e")
    assert rc == 0, err
    rc, s_out, err = runner("run", *suite_argv, "--suite", "yoxla-sample", "--run-id", "s")
    assert rc == 0, err
    assert score_lines(e_out) == score_lines(s_out) and len(score_lines(e_out)) == 5, (e_out, s_out)
    return (
        result_file(runner.results, EDITION_RESULT),
        result_file(runner.results, SUITE_RESULT),
        runner.json("e", "summary.json"),
        runner.json("s", "summary.json"),
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_scores_the_same_on_both_engines(runner, strategy) -> None:
    edition, suite, e_sum, s_sum = _both(
        runner,
        ["--provider", "baseline", "--model", strategy],
        ["--provider", "suite-baseline", "--model", strategy],
    )
    assert_same_runs(edition, suite)
    assert_same_summaries(e_sum, s_sum)
    # The run folders hold the same answers, per task in the same order (the manifest lists
    # the tasks in another order than the blocks do).
    e_preds, s_preds = runner.predictions("e"), runner.predictions("s")
    assert len(e_preds) == len(s_preds) == sum(t["rows"] for t in edition["tasks"].values())
    for tid in edition["tasks"]:
        want = [(p["id"], p["raw"]) for p in e_preds if p["task"] == tid]
        assert [(p["id"], p["raw"]) for p in s_preds if p["task"] == tid] == want, tid


def test_the_comparison_sees_a_changed_verdict_metric_and_score(runner) -> None:
    """The checks above can fail: one changed example, metric or group score is caught."""
    edition, suite, _, _ = _both(
        runner,
        ["--provider", "baseline", "--model", "first"],
        ["--provider", "suite-baseline", "--model", "first"],
    )
    assert_same_runs(edition, suite)
    for change in (
        lambda d: d["tasks"]["nli_v1"]["predictions"][3].update(outcome="invalid"),
        lambda d: d["tasks"]["sts_v1"]["metrics"].update(mae=d["tasks"]["sts_v1"]["metrics"]["mae"] + 1e-6),
        lambda d: d["tasks"]["nli_v1"]["breakdowns"]["per_class_accuracy"]["neutral"].update(n=5),
        lambda d: d["scores"]["groups"].update(rag=d["scores"]["groups"]["rag"] + 1e-6),
        lambda d: d["tasks"]["intent_v1"]["predictions"].reverse(),
    ):
        forged = json.loads(json.dumps(suite))
        change(forged)
        with pytest.raises(AssertionError):
            assert_same_runs(edition, forged)


# Through the loopback server, with token logprobs -----------------------------------------


def _tok(text: str, p: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    def one(t: str, q: float) -> dict[str, Any]:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in top]}


def _reply(task: Task, row: dict[str, Any], i: int) -> Reply:
    """A scripted answer: for a closed answer space a label with its first token's top
    logprobs (right, wrong, confidently wrong, or a near miss with wrappers), otherwise the
    gold answer or a wrong one; every fifth reply without logprobs."""
    gold = row[task.gold]
    space = task.answer.values_for(row) if task.answer.mode == "choice" else None
    if not space:
        text = str(gold) if gold is not None and i % 3 else "bilmirəm"
        return Reply(content=text)
    wrong = [v for v in space if v != str(gold)] or list(space)
    answer = str(gold) if i % 3 == 1 else wrong[i % len(wrong)]
    others = [v for v in space if v != answer][:3]
    p = (0.55, 0.7, 0.95)[i % 3]
    rest = (1.0 - p) / max(len(others), 1) * 0.9
    top = [(answer, p), *((v, rest) for v in others)]
    content = f"Cavab: {answer}." if i % 7 == 3 else answer
    if i % 5 == 4:
        return Reply(content=content)
    return Reply(content=content, logprobs=[_tok(answer, p, top)])


@pytest.fixture
def scripted(examples) -> Any:
    replies: dict[str, Reply] = {}
    for i, (task, row, key) in enumerate(examples):
        replies[key] = _reply(task, row, i)

    def responder(key: str, attempt: int, body: dict[str, Any]) -> Reply:
        return replies[key]

    return responder


def test_a_model_behind_the_server_gets_the_same_answers_distributions_and_calibration(
    runner, env_key, scripted
) -> None:
    with FakeServer(responder=scripted) as srv:
        flags = ["--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url]
        flags += ["--backoff-base", "0.01", "--timeout", "5", "--workers", "3"]
        edition, suite, e_sum, s_sum = _both(runner, flags, flags)
        bodies = list(srv.bodies)
    half = len(bodies) // 2
    assert half * 2 == len(bodies)
    # The same requests, asked for logprobs on the same closed tasks.
    key = lambda b: (json.dumps(b["messages"], ensure_ascii=False), b.get("logprobs"), b.get("top_logprobs"))  # noqa: E731
    assert sorted(map(key, bodies[:half])) == sorted(map(key, bodies[half:]))
    assert_same_runs(edition, suite)
    assert_same_summaries(e_sum, s_sum)
    # The numbers compared are there: distributions, partial ones and calibration blocks.
    cal = {tid: t["calibration"] for tid, t in suite["tasks"].items() if t.get("calibration")}
    assert {"nli_v1", "sentiment_v1", "knowledge_choice_v1", "rag_selection_v1"} <= set(cal)
    assert cal["nli_v1"]["n_with_probs"] > 0 and cal["knowledge_choice_v1"]["n_partial"] > 0
    dists = [
        p["distribution"] for t in suite["tasks"].values() for p in t["predictions"] if p.get("distribution")
    ]
    assert dists and all(
        math.isclose(math.fsum(d["probs"].values()), 1.0) for d in dists if not d.get("missing")
    )
    assert s_sum["probabilities"]["asked"] > s_sum["probabilities"]["received"] > 0
