"""Answer probabilities through the whole system: loopback server → run folder → result file → admission.

The server scripts token logprobs (labels that share a first token included) for two choice
tasks and none for a third; the run folder keeps the raw tokens, the result file the
distribution per prediction and the calibration metrics per task, and admission re-derives
them (a forged metric or reliability bin is excluded).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from yoxla.admission.rules import check_document, check_file
from yoxla.record.signing import finalize
from yoxla.score.calibration import distribution_from_logprobs, parse_logprobs
from yoxla.testing.fakeserver import FakeServer, Reply

NLI = ("entailment", "neutral", "contradiction")


def tok(text: str, p: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    def one(t: str, q: float) -> dict[str, Any]:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in top]}


def nli_reply(row: dict[str, Any], i: int) -> tuple[Reply, float, bool]:
    """(reply, the gold label's normalised probability, a high-confidence error?)."""
    gold = row["label"]
    a, b = (x for x in NLI if x != gold)
    if i % 4 == 0:  # confidently wrong
        top = [(a, 0.95), (gold, 0.03), (b, 0.01)]
        return Reply(content=a, logprobs=[tok(a, 0.95, top)]), 0.03 / 0.99, True
    top = [(gold, 0.7), (a, 0.2), (b, 0.05)]
    return Reply(content=gold, logprobs=[tok(gold, 0.7, top)]), 0.7 / 0.95, False


# knowledge_choice: 1–20, where "1" shares its first token with 10–19
THROUGH = [
    tok("1", 0.6, [("1", 0.6), ("7", 0.3), ("5", 0.1)]),
    tok("7", 0.9, [("7", 0.9), ("0", 0.1)]),
]  # "17": the path goes through "1", so 1, 10 and 17 are told apart: complete
BESIDE = [tok("5", 0.7, [("5", 0.7), ("1", 0.3)])]  # "1" or "10"–"19"? not visible: partial


@pytest.fixture
def scripted(examples, answers):
    """The responder, and per NLI prompt the expected gold probability and error flag."""
    replies: dict[str, Reply] = {}
    expected: dict[str, tuple[float, bool]] = {}
    counters = {"nli_v1": 0, "knowledge_choice_v1": 0}
    for task, row, key in examples:
        if task == "nli_v1":
            reply, p_gold, error = nli_reply(row, counters["nli_v1"])
            replies[key], expected[row["id"]] = reply, (p_gold, error)
            counters["nli_v1"] += 1
        elif task == "knowledge_choice_v1":
            i = counters["knowledge_choice_v1"]
            replies[key] = (
                Reply(content="17", logprobs=THROUGH) if i % 2 == 0 else Reply(content="5", logprobs=BESIDE)
            )
            counters["knowledge_choice_v1"] += 1
        else:  # a provider that returns no logprobs (sentiment_v1 is asked for them too)
            replies[key] = Reply(content=answers[key])

    def responder(key: str, attempt: int, body: dict) -> Reply:
        return replies[key]

    return responder, expected


def _result(runner) -> dict[str, Any]:
    path = runner.results / "sample" / "vllm__fake--model-1.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_probabilities_are_requested_stored_derived_and_readmitted(runner, env_key, scripted) -> None:
    responder, expected = scripted
    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(srv, "cal", "--block", "all", "--workers", "4")
        assert rc == 0, err
        asked = [b for b in srv.bodies if b.get("logprobs")]
        assert asked and all(b["top_logprobs"] == 20 for b in asked)
        # Only closed answer spaces are asked for probabilities: 9 choice tasks' rows.
        assert len(asked) == 12 + 12 + 25 + 12 + 12 + 10 + 12 + 14
    # The run folder keeps the raw tokens; nothing for a reply without them.
    recs = {(r["task"], r["id"]): r for r in runner.predictions("cal")}
    assert all("logprobs" in r for (t, _), r in recs.items() if t in ("nli_v1", "knowledge_choice_v1"))
    assert not any("logprobs" in r for (t, _), r in recs.items() if t == "sentiment_v1")
    assert "mean gold p" in out  # the summary prints the calibration table

    doc = _result(runner)
    nli = doc["tasks"]["nli_v1"]
    for p in nli["predictions"]:
        d = p["distribution"]
        assert d["method"] == "token_logprobs" and math.fsum(d["probs"].values()) == pytest.approx(1.0)
        assert d["top"] == p["extracted"]  # the generated answer is the most probable label
    cal = nli["calibration"]
    golds = [expected[p["id"]][0] for p in nli["predictions"]]
    errors = sum(expected[p["id"]][1] for p in nli["predictions"])
    assert cal["mean_gold_p"] == pytest.approx(sum(golds) / len(golds))
    assert cal["high_confidence_error_rate"] == pytest.approx(errors / 12)
    assert cal["answer_agreement"] == 1.0 and cal["n_with_probs"] == 12 and cal["n_partial"] == 0
    assert len(cal["reliability"]["bins"]) == 15 and sum(b["count"] for b in cal["reliability"]["bins"]) == 12
    # by hand: the three error rows sit in bin 15 (p = 0.95/0.99), the nine others in bin 12 (0.7/0.95)
    bins = cal["reliability"]["bins"]
    assert (bins[14]["count"], bins[11]["count"]) == (3, 9)
    assert cal["ece"] == pytest.approx(3 / 12 * abs(0 - 0.95 / 0.99) + 9 / 12 * abs(1 - 0.7 / 0.95))

    kc = doc["tasks"]["knowledge_choice_v1"]
    through = [p for p in kc["predictions"] if p["extracted"] == "17"]
    beside = [p for p in kc["predictions"] if p["extracted"] == "5"]
    assert through and beside
    assert all(p["distribution"]["probs"]["17"] == pytest.approx(0.54) for p in through)
    assert all(p["distribution"]["probs"]["1"] == 0.0 for p in through)  # recovered as zero
    for p in beside:  # labels sharing the first token "1" are missing (absent, not zero)
        missing = p["distribution"]["missing"]
        assert {"1", "10", "19"} <= set(missing) and "1" not in p["distribution"]["probs"]
    assert kc["calibration"]["n_partial"] == len(beside)
    assert kc["calibration"]["n_with_probs"] == len(through)
    # The summary counts what was asked, what came back, and what it gave.
    counts = runner.json("cal", "summary.json")["probabilities"]
    n_asked = 12 + 12 + 25 + 12 + 12 + 10 + 12 + 14
    assert (counts["asked"], counts["received"]) == (n_asked, 12 + len(through) + len(beside))
    assert (counts["complete"], counts["partial"]) == (12 + len(through), len(beside))
    assert counts["absent"] == {"none in the reply": n_asked - counts["received"]}
    assert (
        f"answer probabilities: asked in {n_asked} requests, received in {counts['received']}; "
        f"distributions {counts['complete']} complete, {counts['partial']} partial"
    ) in out
    space = [str(i) for i in range(1, 21)]
    assert through[0]["distribution"] == distribution_from_logprobs(parse_logprobs(THROUGH), space).to_dict()

    # A provider that returned none: no distribution, no calibration block (absent, never zeros).
    sent = doc["tasks"]["sentiment_v1"]
    assert "calibration" not in sent and not any("distribution" in p for p in sent["predictions"])
    assert "calibration" not in doc["tasks"]["extractive_qa_v1"]  # no closed answer space

    # Admission re-derives all of it from the stored distributions.
    path = runner.results / "sample" / "vllm__fake--model-1.json"
    verdict = check_file(path, use_cache=False)
    assert verdict.shown and verdict.rechecked, verdict.reasons
    assert verdict.tasks["nli_v1"].calibration == cal
    assert verdict.tasks["nli_v1"].p_gold is not None
    assert verdict.tasks["nli_v1"].p_gold.tolist() == pytest.approx(golds)
    overall = verdict.calibration["overall"]
    assert overall["n_with_probs"] == 12 + len(through)
    assert set(verdict.calibration["blocks"]) == {"understanding", "knowledge"}

    # `yoxla rescore --result` derives the same distributions again from the raw tokens.
    rc, _, err = runner("rescore", str(runner.runs / "cal"), "--result")
    assert rc == 0, err
    again = _result(runner)
    assert again["tasks"] == doc["tasks"]


def _forged(doc: dict[str, Any], edit) -> dict[str, Any]:
    forged = json.loads(json.dumps(doc))
    edit(forged)
    return finalize(forged)  # a fresh digest: only re-derivation can catch it


def test_admission_excludes_forged_calibration(runner, env_key, scripted) -> None:
    responder, _ = scripted
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "cal", "--block", "all", "--workers", "4")
        assert rc == 0, err
    doc = _result(runner)
    assert check_document(doc).shown

    def mean_gold_p(d: dict) -> None:
        d["tasks"]["nli_v1"]["calibration"]["mean_gold_p"] += 0.01

    def ece_bin(d: dict) -> None:
        d["tasks"]["nli_v1"]["calibration"]["reliability"]["bins"][11]["count"] -= 1
        d["tasks"]["nli_v1"]["calibration"]["reliability"]["bins"][10]["count"] += 1

    def top(d: dict) -> None:
        dist = d["tasks"]["nli_v1"]["predictions"][1]["distribution"]
        dist["top"] = next(label for label in dist["probs"] if label != dist["top"])

    def dropped(d: dict) -> None:
        del d["tasks"]["nli_v1"]["calibration"]

    def on_a_span_task(d: dict) -> None:
        d["tasks"]["extractive_qa_v1"]["predictions"][0]["distribution"] = {
            "method": "label_scoring",
            "probs": {"x": 1.0},
            "top": "x",
            "mass_outside": 0.0,
        }

    for edit, where in [
        (mean_gold_p, "tasks.nli_v1.calibration.mean_gold_p"),
        (ece_bin, "tasks.nli_v1.calibration.reliability.bins[10].count"),
        (top, "tasks.nli_v1.predictions[1].distribution"),
        (dropped, "tasks.nli_v1.calibration"),
        (on_a_span_task, "tasks.extractive_qa_v1.predictions[0].distribution"),
    ]:
        verdict = check_document(_forged(doc, edit))
        assert not verdict.admitted, edit.__name__
        assert any(where in r for r in verdict.reasons), (edit.__name__, verdict.reasons)


def test_a_server_that_refuses_logprobs_is_asked_without_them(runner, env_key, answers) -> None:
    def responder(key: str, attempt: int, body: dict) -> Reply:
        if body.get("logprobs"):
            return Reply(status=400, message="This model does not support logprobs")
        return Reply(content=answers.get(key, "?"))

    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "refuse", "--task", "nli_v1", "--workers", "1")
        assert rc == 0, err
        assert srv.bodies[0].get("logprobs") is True
        assert not any(b.get("logprobs") for b in srv.bodies[2:])  # switched off after the refusal
    recs = runner.predictions("refuse")
    assert len(recs) == 12 and not [r for r in recs if r["outcome"] == "generation_error"]
    assert not any("logprobs" in r for r in recs)


def test_no_probabilities_flag_asks_for_none(runner, env_key, answers) -> None:
    with FakeServer(answers=dict(answers)) as srv:
        rc, _, err = runner.api(srv, "plain", "--task", "nli_v1", "--no-probabilities")
        assert rc == 0, err
        assert not any("logprobs" in b for b in srv.bodies)
    info = runner.json("plain", "run.json")
    assert info["settings"]["probabilities"] is False  # a suite run's conditions do not state it
    path = runner.results / "partial" / "sample" / "vllm__fake--model-1.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert not any("distribution" in p for p in doc["tasks"]["nli_v1"]["predictions"])
    assert "calibration" not in doc["tasks"]["nli_v1"]


def test_result_file_validates_against_the_published_schema(runner, env_key, scripted) -> None:
    import jsonschema

    responder, _ = scripted
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(srv, "cal", "--block", "all", "--workers", "4")
        assert rc == 0, err
    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "yoxla" / "schema" / "result.schema.json").read_text("utf-8")
    )
    jsonschema.Draft202012Validator(schema).validate(_result(runner))


def test_registry_marks_which_providers_return_logprobs(tmp_path: Path) -> None:
    from yoxla.providers.base import ProviderError
    from yoxla.providers.registry import load_registry

    specs = load_registry()
    assert {n for n, s in specs.items() if s.logprobs} == {"vllm", "llamacpp", "openai"}
    assert all(s.top_logprobs == 20 for s in specs.values())
    for entry, message in [
        ("logprobs: yes-please", "logprobs must be true or false"),
        ("logprobs: true\n    top_logprobs: 0", "top_logprobs must be a whole number from 1 to 20"),
        ("logprobs: true\n    top_logprobs: 21", "top_logprobs must be a whole number from 1 to 20"),
    ]:
        path = tmp_path / "p.yaml"
        path.write_text(f"providers:\n  lab:\n    backend: openai\n    base_url: http://x/v1\n    {entry}\n")
        with pytest.raises(ProviderError, match=message):
            load_registry(path)
    path.write_text(
        "providers:\n  lab:\n    backend: openai\n    base_url: http://x/v1\n    logprobs: true\n    top_logprobs: 5\n"
    )
    lab = load_registry(path)["lab"]
    assert lab.logprobs and lab.top_logprobs == 5


def test_providers_command_lists_the_probabilities_each_can_give(runner) -> None:
    rc, out, _ = runner("providers")
    assert rc == 0 and "probabilities" in out
    line = next(x for x in out.splitlines() if x.startswith("vllm "))
    assert "logprobs (top 20)" in line
    assert "label scoring" in next(x for x in out.splitlines() if x.startswith("transformers "))


def test_the_summary_line_on_probabilities() -> None:
    from yoxla.run.printing import probabilities_line

    # a summary written before the counts existed keeps the old sentence
    assert probabilities_line(None, False) == (
        "answer probabilities: not available from this provider (or not asked for)"
    )
    assert probabilities_line(None, True) is None
    none = {"asked": 0, "received": 0, "complete": 0, "partial": 0, "absent": {}}
    assert "not asked for" in (probabilities_line(none, False) or "")
    counts = {
        "asked": 109,
        "received": 107,
        "complete": 60,
        "partial": 41,
        "absent": {"none in the reply": 2, "refused: logprob is nan": 6},
    }
    assert probabilities_line(counts, True) == (
        "answer probabilities: asked in 109 requests, received in 107; distributions 60 complete, "
        "41 partial (none: 2 none in the reply, 6 refused: logprob is nan)"
    )
