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
    same,
    score_lines,
    task_lines,
)

from yoxla.suite import Task, load_suite
from yoxla.suites.baselines import STRATEGIES
from yoxla.testing.fakeserver import FakeServer, Reply

SUITE = load_suite()


def _both(runner, edition_argv: list[str], suite_argv: list[str]) -> tuple[dict[str, Any], ...]:
    rc, e_out, err = runner.builtin(
        "run", *edition_argv, "--edition", "sample", "--block", "all", "--run-id", "e"
    )
    assert rc == 0, err
    rc, s_out, err = runner("run", *suite_argv, "--suite", "yoxla-sample", "--run-id", "s")
    assert rc == 0, err
    assert score_lines(e_out) == score_lines(s_out) and len(score_lines(e_out)) == 5, (e_out, s_out)
    assert task_lines(e_out) == task_lines(s_out) and len(task_lines(s_out)) == len(SUITE.tasks)
    return (
        result_file(runner.builtin_results, EDITION_RESULT),
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


def test_rescore_of_both_run_folders_prints_and_keeps_the_same_scores(runner) -> None:
    _both(
        runner,
        ["--provider", "baseline", "--model", "longest"],
        ["--provider", "suite-baseline", "--model", "longest"],
    )
    before = {rid: runner.json(rid, "task_scores.json") for rid in ("e", "s")}
    printed = {}
    for rid in ("e", "s"):
        rc, out, err = runner("rescore", str(runner.runs / rid))
        assert rc == 0, err
        printed[rid] = score_lines(out)
        assert runner.json(rid, "task_scores.json") == before[rid]
    assert printed["e"] == printed["s"] and len(printed["s"]) == 5
    assert same(before["s"]["groups"], before["e"]["blocks"])
    assert same(before["s"]["suite_score"], before["e"]["yoxla"])


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
    _same_requests(bodies)  # the same requests, asked for logprobs on the same closed tasks
    assert any(b.get("logprobs") for b in bodies) and not all(b.get("logprobs") for b in bodies)
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


def _same_requests(bodies: list[dict[str, Any]]) -> None:
    """The first half of the requests (the edition run) and the second (the suite run) are the
    same request bodies, in whatever order the workers sent them."""
    half = len(bodies) // 2
    assert bodies and half * 2 == len(bodies)
    dump = lambda b: json.dumps(b, sort_keys=True, ensure_ascii=False)  # noqa: E731
    assert sorted(map(dump, bodies[:half])) == sorted(map(dump, bodies[half:]))


@pytest.mark.parametrize(
    "extra", [["--no-probabilities"], ["--thinking", "--thinking-budget", "64", "--seed", "5"]]
)
def test_the_run_options_send_the_same_requests_on_both_engines(runner, env_key, scripted, extra) -> None:
    with FakeServer(responder=scripted) as srv:
        flags = ["--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url]
        flags += ["--backoff-base", "0.01", "--timeout", "5", *extra]
        edition, suite, e_sum, s_sum = _both(runner, flags, flags)
        bodies = list(srv.bodies)
    _same_requests(bodies)
    assert_same_runs(edition, suite)
    assert_same_summaries(e_sum, s_sum)
    if "--no-probabilities" in extra:
        assert not any(b.get("logprobs") for b in bodies)
        assert not any(t.get("calibration") for t in suite["tasks"].values())
        assert s_sum["probabilities"]["asked"] == 0
    else:
        assert all(b.get("seed") == 5 for b in bodies)
        assert suite["run"]["conditions"]["thinking"] is edition["run"]["conditions"]["thinking"] is True
        assert (
            suite["run"]["conditions"]["thinking_budget"]
            == edition["run"]["conditions"]["thinking_budget"]
            == 64
        )


def test_failed_requests_are_stored_scored_and_printed_alike(runner, env_key, examples, answers) -> None:
    dead = {k for t, _, k in examples if t.id in ("nli_v1", "rag_selection_v1")}

    def responder(key: str, attempt: int, body: dict[str, Any]) -> Reply:
        return Reply(status=503, message="upstream down") if key in dead else Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        flags = ["--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url]
        flags += ["--backoff-base", "0.01", "--timeout", "5", "--max-retries", "0"]
        rc, e_out, err = runner.builtin("run", *flags, "--edition", "sample", "--run-id", "e")
        assert rc == 0, err
        rc, s_out, err = runner("run", *flags, "--suite", "yoxla-sample", "--run-id", "s")
        assert rc == 0, err
    edition, suite = (
        result_file(runner.builtin_results, EDITION_RESULT),
        result_file(runner.results, SUITE_RESULT),
    )
    assert_same_runs(edition, suite)
    assert suite["generation_errors"] == edition["generation_errors"] == 12 + 14

    def errors(out: str, run_id: str) -> list[str]:
        start = next(i for i, line in enumerate(out.splitlines()) if line.startswith("generation errors"))
        return [line.replace(f" {run_id})", " RUN)") for line in out.splitlines()[start : start + 12]]

    shown = errors(s_out, "s")
    assert errors(e_out, "e") == shown
    assert "re-ask them with --retry-errors RUN" in shown[0] and "… and 16 more" in shown[-1]
