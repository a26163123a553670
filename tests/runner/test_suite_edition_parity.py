"""A run of ``yoxla-sample`` gives what the built-in engine gave: its stored result files are the oracle.

The built-in engine is gone (issue 13); what it wrote is kept (``yoxla-result`` v2 files):

* offline, for each of the eight cue-only strategies, the leaderboard's legacy-v2 fixture
  (``tests/leaderboard/cases/legacy-v2/sample/baseline__S.json``) against ``--edition sample
  --block all --provider baseline --model S``;
* through the loopback OpenAI-compatible server, the built-in engine's files of the scripted
  model below (``cases/builtin-v2/``: with token logprobs, without probabilities, with failed
  requests) against the same model behind a suite run.

Per task: the same example ids in the same order, the same stored answer and verdict per
example (validity, abstention, outcome, reason, near miss, score), every metric of the
benchmark's result record equal (floats to 1e-9; the suite file keeps outcome counts under
``counts`` and the per-field breakdowns under ``breakdowns``), the same task, block (group)
and YOXLA (headline) scores in the result file, in summary.json and in the printed summary,
and with logprobs the same distribution per answer and calibration block per task.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from parity_helpers import (
    BUILTIN,
    SUITE_RESULT,
    assert_same_runs,
    assert_summary_of,
    legacy,
    printed,
    result_file,
    same,
    score_lines,
    stored,
    task_lines,
)

from yoxla.baselines.strategies import STRATEGIES
from yoxla.contract.benchmark import choice_space, gold_field, task_ids
from yoxla.testing.fakeserver import FakeServer, Reply


def _run(runner, *argv: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(the result file, summary.json, the printed summary) of a run of the sample edition."""
    rc, out, err = runner("run", *argv, "--run-id", "s")
    assert rc == 0, err
    return result_file(runner.results, SUITE_RESULT), runner.json("s", "summary.json"), out


def _printed_as(edition: dict[str, Any], out: str) -> None:
    lines, tasks = printed(edition)
    assert score_lines(out) == lines and len(lines) == 5, out
    assert task_lines(out) == tasks and len(tasks) == len(task_ids()), out


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_scores_what_the_builtin_engine_stored(runner, strategy) -> None:
    want = legacy(strategy)
    suite, summary, out = _run(
        runner, "--provider", "baseline", "--model", strategy, "--edition", "sample", "--block", "all"
    )
    assert_same_runs(want, suite)
    assert_summary_of(want, summary)
    assert summary["complete"] is True
    _printed_as(want, out)
    # The run folder holds the stored answers, per task in the same order (the manifest lists
    # the tasks in another order than the blocks do).
    lines = runner.predictions("s")
    assert len(lines) == sum(t["rows"] for t in want["tasks"].values())
    for tid, task in want["tasks"].items():
        assert [(p["id"], p["raw"]) for p in lines if p["task"] == tid] == [
            (p["id"], p["raw"]) for p in task["predictions"]
        ], tid


def test_rescore_prints_and_keeps_the_stored_scores(runner) -> None:
    want = legacy("longest")
    _run(runner, "--provider", "baseline", "--model", "longest", "--edition", "sample")
    before = runner.json("s", "task_scores.json")
    rc, out, err = runner("rescore", str(runner.runs / "s"))
    assert rc == 0, err
    assert runner.json("s", "task_scores.json") == before
    assert score_lines(out) == printed(want)[0]
    assert same(before["groups"], want["scores"]["blocks"])
    assert same(before["suite_score"], want["scores"]["yoxla"])


def test_the_comparison_sees_a_changed_verdict_metric_and_score(runner) -> None:
    """The checks above can fail: one changed example, metric or group score is caught."""
    want = legacy("first")
    suite, summary, out = _run(
        runner, "--provider", "suite-baseline", "--model", "first", "--suite", "yoxla-sample"
    )
    assert_same_runs(want, suite)
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
            assert_same_runs(want, forged)
    forged_summary = json.loads(json.dumps(summary))
    forged_summary["tasks"]["sts_v1"]["score"] += 1e-6
    with pytest.raises(AssertionError):
        assert_summary_of(want, forged_summary)
    with pytest.raises(AssertionError):
        _printed_as(want, out.replace(printed(want)[0]["rag"], "99.99"))


# Through the loopback server, with token logprobs -----------------------------------------


def _tok(text: str, p: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    def one(t: str, q: float) -> dict[str, Any]:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in top]}


def _reply(task: str, row: dict[str, Any], i: int) -> Reply:
    """A scripted answer: for a closed answer space a label with its first token's top
    logprobs (right, wrong, confidently wrong, or a near miss with wrappers), otherwise the
    gold answer or a wrong one; every fifth reply without logprobs."""
    gold = row[gold_field(task)]
    space = choice_space(task, row)
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


def _server_run(runner, srv: FakeServer, *extra: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    flags = ["--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url]
    return _run(runner, *flags, "--backoff-base", "0.01", "--timeout", "5", *extra, "--edition", "sample")


def test_a_model_behind_the_server_gets_the_stored_answers_distributions_and_calibration(
    runner, env_key, scripted
) -> None:
    edition = stored(BUILTIN / "scripted-logprobs.json")
    with FakeServer(responder=scripted) as srv:
        suite, s_sum, out = _server_run(runner, srv, "--workers", "3")
        bodies = list(srv.bodies)
    # one request per example, logprobs asked on the closed tasks only
    assert len(bodies) == sum(t["rows"] for t in edition["tasks"].values())
    assert any(b.get("logprobs") for b in bodies) and not all(b.get("logprobs") for b in bodies)
    assert_same_runs(edition, suite)
    assert_summary_of(edition, s_sum)
    _printed_as(edition, out)
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


@pytest.mark.parametrize(
    "extra", [["--no-probabilities"], ["--thinking", "--thinking-budget", "64", "--seed", "5"]]
)
def test_the_run_options_give_the_stored_scores_and_reach_the_requests(
    runner, env_key, scripted, extra
) -> None:
    """Without probabilities (and with thinking, which asks none either) the built-in engine
    stored the same file: the same answers, no distribution, no probability in calibration."""
    edition = stored(BUILTIN / "scripted-no-probabilities.json")
    with FakeServer(responder=scripted) as srv:
        suite, s_sum, _ = _server_run(runner, srv, *extra)
        bodies = list(srv.bodies)
    assert_same_runs(edition, suite)
    assert_summary_of(edition, s_sum)
    assert not any(b.get("logprobs") for b in bodies)
    if "--no-probabilities" in extra:
        assert s_sum["probabilities"]["asked"] == 0
    else:
        assert all(b.get("seed") == 5 for b in bodies)
        assert suite["run"]["conditions"]["thinking"] is True
        assert suite["run"]["conditions"]["thinking_budget"] == 64


def test_failed_requests_are_stored_scored_and_printed_alike(runner, env_key, examples, answers) -> None:
    dead = {k for t, _, k in examples if t in ("nli_v1", "rag_selection_v1")}

    def responder(key: str, attempt: int, body: dict[str, Any]) -> Reply:
        return Reply(status=503, message="upstream down") if key in dead else Reply(content=answers[key])

    edition = stored(BUILTIN / "failed-requests.json")
    with FakeServer(responder=responder) as srv:
        suite, s_sum, out = _server_run(runner, srv, "--max-retries", "0")
    assert_same_runs(edition, suite)
    assert_summary_of(edition, s_sum)
    assert suite["generation_errors"] == edition["generation_errors"] == 12 + 14
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("generation errors"))
    shown = lines[start : start + 12]
    assert shown[0] == "generation errors: 26 (scored as wrong; re-ask them with --retry-errors s)"
    failed = {
        f"  {tid} {p['id']}: {p['error']}"
        for tid, t in edition["tasks"].items()
        for p in t["predictions"]
        if p["outcome"] == "generation_error"
    }
    assert len(set(shown[1:11])) == 10 and set(shown[1:11]) <= failed
    assert shown[11] == "  … and 16 more (summary.json lists them all)"
