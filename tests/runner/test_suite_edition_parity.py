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
import re
from pathlib import Path
from typing import Any

import pytest

from yoxla.suite import Task, load_suite
from yoxla.suites.baselines import STRATEGIES
from yoxla.testing.fakeserver import FakeServer, Reply

TOL = 1e-9
SUITE = load_suite()
EDITION_RESULT = Path("sample")
SUITE_RESULT = Path("suites") / "yoxla-sample"
# The verdict of one example, as both result formats store it.
VERDICT = ("id", "raw", "finish_reason", "error", "valid", "abstained", "outcome", "reason", "near_miss")


def same(a: Any, b: Any) -> bool:
    """Equal, floats to 1e-9, recursively through mappings and lists."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=TOL)
    return bool(a == b)


def _file(results: Path, where: Path) -> dict[str, Any]:
    [path] = (results / where).glob("*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _suite_metric(task: dict[str, Any], key: str) -> Any:
    """Where the suite result file keeps a metric of the benchmark's task record."""
    if key in task["metrics"]:
        return task["metrics"][key]
    if key in ("outcomes", "near_miss"):
        return task["counts"][key]
    if key == "modal_answer":
        return task["modal_answer"]
    return (task.get("breakdowns") or {}).get(key, ("absent", key))


def assert_same_runs(edition: dict[str, Any], suite: dict[str, Any]) -> None:
    """The two result files (``yoxla-result`` v2 and ``yoxla-suite-result``) agree in every
    score, metric and per-example verdict of the benchmark's record."""
    assert suite["suite"]["id"] == "yoxla-sample"
    assert sorted(suite["tasks"]) == sorted(edition["tasks"])
    for tid, want in edition["tasks"].items():
        got = suite["tasks"][tid]
        assert [p["id"] for p in got["predictions"]] == [p["id"] for p in want["predictions"]], tid
        for w, g in zip(want["predictions"], got["predictions"], strict=True):
            for key in VERDICT:
                assert same(w.get(key), g.get(key)), (tid, w["id"], key, w.get(key), g.get(key))
            assert same(w["score"], g["score"]), (tid, w["id"], w["score"], g["score"])
            assert same(w.get("distribution"), g.get("distribution")), (tid, w["id"])
        for key, value in want["metrics"].items():
            assert same(value, _suite_metric(got, key)), (tid, key, value, _suite_metric(got, key))
        assert (got["primary"], got["rows"]) == (want["primary"], want["rows"]), tid
        assert same(want["score"], got["score"]), (tid, want["score"], got["score"])
        assert same(want.get("calibration"), got.get("calibration")), tid
    ws, gs = edition["scores"], suite["scores"]
    assert same(ws["tasks"], gs["tasks"])
    assert same(ws["blocks"], gs["groups"]) and list(gs["groups"]) == list(SUITE.blocks)
    assert same(ws["yoxla"], gs["suite"])
    assert suite["suite"]["headline"]["name"] == "YOXLA"


def assert_same_summaries(edition: dict[str, Any], suite: dict[str, Any]) -> None:
    """summary.json of the two run folders: the same scores, complete flags and counts."""
    for key in ("complete", "examples", "generation_errors", "probabilities", "usage"):
        assert same(edition[key], suite[key]), key
    assert same(edition["blocks"], suite["groups"])
    assert same(edition["yoxla"], suite["suite_score"])
    assert suite["headline"] == "YOXLA"
    for tid, want in edition["tasks"].items():
        got = suite["tasks"][tid]
        for key in ("score", "rows", "expected", "generation_errors", "invalid_output_rate"):
            assert same(want[key], got[key]), (tid, key)
        assert same(want.get("calibration"), got.get("calibration")), tid


def score_lines(out: str) -> dict[str, str]:
    """The printed summary's block rows and headline line: name -> score as printed."""
    lines = {}
    for line in out.splitlines():
        m = re.match(r"^(understanding|language|knowledge|rag) \(.*?\)\s+(\S+)\s*$", line)
        if m:
            lines[m.group(1)] = m.group(2)
        m = re.match(r"^YOXLA: (\S+)$", line)
        if m:
            lines["YOXLA"] = m.group(1)
    return lines


def _both(runner, edition_argv: list[str], suite_argv: list[str]) -> tuple[dict[str, Any], ...]:
    rc, e_out, err = runner("run", *edition_argv, "--edition", "sample", "--block", "all", "--run-id", "e")
    assert rc == 0, err
    rc, s_out, err = runner("run", *suite_argv, "--suite", "yoxla-sample", "--run-id", "s")
    assert rc == 0, err
    assert score_lines(e_out) == score_lines(s_out) and len(score_lines(e_out)) == 5, (e_out, s_out)
    return (
        _file(runner.results, EDITION_RESULT),
        _file(runner.results, SUITE_RESULT),
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
