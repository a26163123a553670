"""Hostile replies through the real openai client: the run finishes, its result file is admitted
or cleanly refused, and what is stored stays bounded.

* a logprob of NaN, Infinity or -Infinity (Python's json and the openai client accept them):
  that answer has no distribution, the reason is counted, the run goes on; --resume works;
* an answer of 10 MB: refused when it arrives (a generation error in one line), never stored;
* 50,000 alternatives per position: at most top_logprobs (what was asked) are kept.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from yoxla.admission.rules import check_file
from yoxla.contract.benchmark import gold_field
from yoxla.record.base import MAX_RAW
from yoxla.testing.fakeserver import FakeServer, Reply

NLI = ("entailment", "neutral", "contradiction")
RESULT = ("sample", "vllm__fake--model-1.json")


def one(t: str, lp: float) -> dict[str, Any]:
    return {"token": t, "logprob": lp, "bytes": list(t.encode("utf-8"))}


def tok(text: str, logprob: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    return {**one(text, logprob), "top_logprobs": [one(t, lp) for t, lp in top]}


def healthy(label: str) -> Reply:
    others = [(x, math.log(0.05)) for x in NLI if x != label]
    return Reply(content=label, logprobs=[tok(label, math.log(0.9), [(label, math.log(0.9)), *others])])


def responder_for(examples, answers, hostile):
    """Every NLI row answers its gold label with probabilities, the first three through
    ``hostile(label)``; the other tasks answer as the scripted model of tests/runner does."""
    nli = {key: str(row[gold_field(task)]) for task, row, key in examples if task == "nli_v1"}
    bad = set(list(nli)[:3])

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key not in nli:
            return Reply(content=answers[key])
        return hostile(nli[key]) if key in bad else healthy(nli[key])

    return responder, len(bad)


def admitted_or_refused(runner) -> dict[str, Any]:
    path = runner.results.joinpath(*RESULT)
    assert path.stat().st_size < 2_000_000  # bounded storage
    verdict = check_file(path, use_cache=False)
    assert verdict.shown and verdict.rechecked, verdict.reasons
    rc, _, err = runner("verify", "--no-hub", str(path))
    assert rc == 0 and "Traceback" not in err, err
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_logprobs_leave_that_answer_without_a_distribution(
    runner, env_key, examples, answers, bad
) -> None:
    def hostile(label: str) -> Reply:
        return Reply(content=label, logprobs=[tok(label, bad, [(label, bad), ("neutral", -2.0)])])

    responder, n_bad = responder_for(examples, answers, hostile)
    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "h", "--block", "all", "--workers", "4")
    assert rc == 0 and "Traceback" not in err, err
    summary = runner.json("h", "summary.json")["probabilities"]
    reason = {math.inf: "inf", -math.inf: "-inf"}.get(bad, "nan")
    # other choice tasks are asked too, and this server sends them none
    others = summary["asked"] - 12
    assert summary["absent"] == {f"refused: logprob is {reason}": n_bad, "none in the reply": others}
    assert (summary["complete"], summary["partial"], summary["received"]) == (12 - n_bad, 0, 12)
    assert f"{n_bad} refused: logprob is {reason}" in out
    recs = [r for r in runner.predictions("h") if r["task"] == "nli_v1"]
    refused = [r for r in recs if "logprobs_refused" in r]
    assert len(refused) == n_bad and not any("logprobs" in r for r in refused)
    doc = admitted_or_refused(runner)
    preds = doc["tasks"]["nli_v1"]["predictions"]
    assert sum("distribution" in p for p in preds) == 12 - n_bad
    assert all(p["outcome"] == "correct" for p in preds)  # scored as they were received

    # --resume of the finished folder re-derives the same and finishes again.
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "h", "--resume")
    assert rc == 0 and "Traceback" not in err, err
    assert admitted_or_refused(runner)["tasks"] == doc["tasks"]


def test_an_answer_too_long_to_store_is_refused_in_one_line(runner, env_key, examples, answers) -> None:
    huge = "entailment " * 1_000_000  # 11 MB

    responder, n_bad = responder_for(examples, answers, lambda label: Reply(content=huge))
    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "big", "--block", "all", "--workers", "4")
    assert rc == 0 and "Traceback" not in err, err
    assert f"generation errors: {n_bad}" in out and f"over the {MAX_RAW:,}" in out
    folder = runner.runs / "big" / "predictions.jsonl"
    assert folder.stat().st_size < 2_000_000  # the answer never reached the run folder
    doc = admitted_or_refused(runner)
    errors = [p for p in doc["tasks"]["nli_v1"]["predictions"] if p["outcome"] == "generation_error"]
    assert len(errors) == n_bad and all("11,000,000 characters" in p["error"] for p in errors)

    with FakeServer(responder=responder) as srv:  # --resume finishes the folder again
        rc, _, err = runner.api(srv, "big", "--resume")
    assert rc == 0 and "Traceback" not in err, err
    assert admitted_or_refused(runner)["tasks"] == doc["tasks"]


def test_alternatives_are_kept_up_to_what_was_asked(runner, env_key, examples, answers) -> None:
    def hostile(label: str) -> Reply:
        crowd = [(f"x{i}", -20.0 - i / 1000) for i in range(50_000)]
        # the most probable alternatives come last: what is kept is the top, not the first listed
        top = [*crowd, (label, math.log(0.9)), ("neutral" if label != "neutral" else "entailment", -3.0)]
        return Reply(content=label, logprobs=[tok(label, math.log(0.9), top)])

    responder, n_bad = responder_for(examples, answers, hostile)
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "wide", "--block", "all", "--workers", "4")
        assert all(b["top_logprobs"] == 20 for b in srv.bodies if b.get("logprobs"))
    assert rc == 0 and "Traceback" not in err, err
    recs = [r for r in runner.predictions("wide") if r["task"] == "nli_v1"]
    for r in recs:
        for position in r["logprobs"]:
            assert len(position["top_logprobs"]) <= 20
    wide = [r for r in recs if any(len(p["top_logprobs"]) == 20 for p in r["logprobs"])]
    assert len(wide) == n_bad
    kept = [a["token"] for a in wide[0]["logprobs"][0]["top_logprobs"]]
    assert kept[-2:] == [wide[0]["extracted"], kept[-1]] and kept[0] == "x0"  # listed order kept
    assert (runner.runs / "wide" / "predictions.jsonl").stat().st_size < 1_000_000
    doc = admitted_or_refused(runner)
    dists = [p.get("distribution") for p in doc["tasks"]["nli_v1"]["predictions"]]
    assert all(
        d is not None and d["top"] == p["extracted"]
        for d, p in zip(dists, doc["tasks"]["nli_v1"]["predictions"], strict=True)
    )


def test_a_folder_holding_an_answer_too_long_to_store_still_finishes(runner, env_key, answers) -> None:
    """A line written before such answers were refused on arrival: --resume and rescore read it
    as the generation error a run gives it now, and the result file is admitted."""
    with FakeServer(responder=lambda key, attempt, body: Reply(content=answers[key])) as srv:
        rc, _, err = runner.api(srv, "old", "--block", "all", "--workers", "4")
        assert rc == 0, err
        path = runner.runs / "old" / "predictions.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        lines[0] = json.dumps({**first, "raw": "x" * (MAX_RAW + 1), "text": "x" * (MAX_RAW + 1)})
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        rc, out, err = runner.api(srv, "old", "--resume")
    assert rc == 0 and "Traceback" not in err, err
    assert "generation errors: 1" in out and f"{MAX_RAW + 1:,} characters" in out
    doc = admitted_or_refused(runner)
    rc, _, err = runner("rescore", str(runner.runs / "old"), "--result")
    assert rc == 0 and "Traceback" not in err, err
    assert admitted_or_refused(runner)["tasks"] == doc["tasks"]
    task = doc["tasks"][first["task"]]
    (pred,) = [p for p in task["predictions"] if p["id"] == first["id"]]
    assert pred["outcome"] == "generation_error" and pred.get("raw") is None
