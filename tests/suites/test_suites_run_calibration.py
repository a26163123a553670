"""Answer probabilities on a suite run: loopback server → run folder → suite result file → admission.

The real openai client talks to :mod:`yoxla.testing.fakeserver`. The suite has a task with
fixed ``choices`` (strict extraction, groups), a task with a row-dependent ``answer_space``
(each item its own numbered options plus ``HEÇ BİRİ``), and an open task (a regex over free
text). The closed tasks are asked for token logprobs, each answer's distribution over its
item's space is stored and the calibration block derived with the benchmark's functions;
admission re-derives both and excludes a file whose stored ones differ; the open task is
asked for none and stores none.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from suite_run_helpers import SuiteRunner, make_suite, manifest

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.record.signing import finalize
from yoxla.score.calibration import distribution_from_logprobs, parse_logprobs
from yoxla.testing.fakeserver import FakeServer, Reply

SECRET = "sk-suite-cal-5ecret-0123456789"
MOODS = ("müsbət", "mənfi", "neytral")
NONE_LABEL = "HEÇ BİRİ"
ROWS = [
    {
        "id": f"r{i:02d}",
        "a": i,
        "b": 3,
        "cavab": str(i + 3),
        "movzu": "x",
        "metn": f"Mətn nömrə {i}",
        "duygu": MOODS[i % 3],
        "cut": f"c{i // 2}",
        "sual": f"Sual {i}",
        "variantlar": ["Bakı", "Gəncə", "Şəki"][: 2 + i % 2],
        "secim": "2" if i % 3 else NONE_LABEL,
    }
    for i in range(12)
]
DUYGU = {
    "id": "duygu_v1",
    "name": "Duygu",
    "type": "classification",
    "dataset": {"path": "data.jsonl"},
    "prompt_template": "{{metn}}\nDuygu nədir?",
    "target_template": "{{duygu}}",
    "choices": list(MOODS),
    "output_extraction": {"type": "strict"},
    "metrics": [{"id": "accuracy"}],
    "grader": {"type": "builtin", "name": "accuracy"},
    "metadata": {"group_field": "cut"},
}
SECIM = {
    "id": "secim_v1",
    "name": "Seçim",
    "type": "multiple_choice",
    "dataset": {"path": "data.jsonl"},
    "prompt_template": "Seçim: {{sual}}\n{{variantlar | numbered}}\n{{answer_space}}",
    "target_template": "{{secim}}",
    "answer_space": {
        "options_field": "variantlar",
        "options_description": "doğru variantın nömrəsi",
        "labels": [{"value": NONE_LABEL, "description": "heç bir variant doğru deyil"}],
    },
    "output_extraction": {"type": "strict"},
    "metrics": [{"id": "accuracy"}],
    "grader": {"type": "builtin", "name": "accuracy"},
}
ROW_OF = {r["metn"]: r for r in ROWS} | {r["sual"]: r for r in ROWS}


def tok(text: str, p: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    def one(t: str, q: float) -> dict[str, Any]:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in top]}


def mood_logprobs(row: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Every fourth row confidently wrong (0.95 on another label), the others right at 0.8."""
    gold = row["duygu"]
    a, b = (m for m in MOODS if m != gold)
    if row["a"] % 4 == 0:
        return a, [tok(a, 0.95, [(a, 0.95), (gold, 0.03), (b, 0.01)])]
    return gold, [tok(gold, 0.8, [(gold, 0.8), (a, 0.15), (b, 0.04)])]


def choice_logprobs(row: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Always "2"; "3" is listed only where the row has three options (so its space is whole)."""
    if len(row["variantlar"]) == 3:
        top = [("2", 0.6), ("3", 0.2), ("1", 0.1), (NONE_LABEL, 0.1)]
    else:
        top = [("2", 0.7), ("1", 0.2), (NONE_LABEL, 0.1)]
    return "2", [tok("2", top[0][1], top)]


def respond(key: str, attempt: int, body: dict[str, Any]) -> Reply:
    if key.startswith("Seçim: "):
        content, lp = choice_logprobs(ROW_OF[key.splitlines()[0].removeprefix("Seçim: ")])
        return Reply(content=content, logprobs=lp)
    if key.endswith("Duygu nədir?"):
        content, lp = mood_logprobs(ROW_OF[key.splitlines()[-2]])
        return Reply(content=content, logprobs=lp)
    found = re.findall(r"Sual: (\d+) \+ (\d+) neçədir\?", key)
    a, b = (int(x) for x in found[-1])
    return Reply(content=f"Cavab: {a + b}")  # the open task: no logprobs


@pytest.fixture
def runner(tmp_path: Path, capsys, monkeypatch) -> SuiteRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLLM_API_KEY", SECRET)
    monkeypatch.delenv("YOXLA_SIGN_KEY", raising=False)
    return SuiteRunner(tmp_path, capsys, monkeypatch)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    doc = manifest()
    doc["tasks"] = [doc["tasks"][0], DUYGU, SECIM]
    return make_suite(tmp_path, doc, ROWS)


def admit(doc: dict[str, Any], root: Path):
    return check_document(doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites")))


def _run(runner: SuiteRunner, suite: Path, run_id: str, *extra: str) -> tuple[list[dict[str, Any]], str]:
    with FakeServer(responder=respond) as srv:
        rc, out, err = runner.api(suite, srv.base_url, run_id, "--workers", "3", *extra)
        assert rc == 0, err
        return list(srv.bodies), out


def test_closed_spaces_are_asked_stored_derived_and_admitted(runner, suite, tmp_path) -> None:
    bodies, out = _run(runner, suite, "cal")
    asked = [b for b in bodies if b.get("logprobs")]
    # Only the two closed tasks are asked (12 items each), with the provider's top_logprobs.
    assert len(asked) == 24 and all(b["top_logprobs"] == 20 for b in asked)
    assert not any("logprobs" in b for b in bodies if "neçədir?" in b["messages"][-1]["content"])
    recs = {(r["task"], r["id"]): r for r in runner.predictions("cal")}
    assert all("logprobs" in r for (t, _), r in recs.items() if t != "toplama_v1")
    assert not any("logprobs" in r for (t, _), r in recs.items() if t == "toplama_v1")

    doc = runner.result()
    rows = {r["id"]: r for r in ROWS}
    duygu = doc["tasks"]["duygu_v1"]
    golds, errors = [], 0
    for p in duygu["predictions"]:
        row = rows[p["id"]]
        d = p["distribution"]
        assert d["method"] == "token_logprobs" and set(d["probs"]) == set(MOODS) and "missing" not in d
        assert d["top"] == p["extracted"]
        wrong = row["a"] % 4 == 0
        golds.append(0.03 / 0.99 if wrong else 0.8 / 0.99)
        assert d["probs"][row["duygu"]] == pytest.approx(golds[-1])
        errors += wrong
    cal = duygu["calibration"]
    assert cal["n_with_probs"] == 12 and cal["n_partial"] == 0
    assert cal["mean_gold_p"] == pytest.approx(sum(golds) / 12)
    assert cal["high_confidence_error_rate"] == pytest.approx(errors / 12)
    assert cal["accuracy"] == pytest.approx(1 - errors / 12) and cal["answer_agreement"] == 1.0
    bins = cal["reliability"]["bins"]
    assert len(bins) == 15 and (bins[14]["count"], bins[12]["count"]) == (errors, 12 - errors)
    # Groups of two rows (metadata.group_field "cut"): consistent unless a row is a wrong one.
    consistent = sum(all(r["a"] % 4 for r in ROWS if r["cut"] == c) for c in {r["cut"] for r in ROWS})
    assert cal["groups"]["n_groups"] == 6 and cal["groups"]["n_consistent"] == consistent

    # The row-dependent space: each item's distribution is over its own numbers and HEÇ BİRİ.
    secim = doc["tasks"]["secim_v1"]
    for p in secim["predictions"]:
        row = rows[p["id"]]
        space = [str(i) for i in range(1, len(row["variantlar"]) + 1)] + [NONE_LABEL]
        _, lp = choice_logprobs(row)
        assert p["distribution"] == distribution_from_logprobs(parse_logprobs(lp), space).to_dict()
        assert list(p["distribution"]["probs"]) == space
    want = [0.7 if len(r["variantlar"]) == 2 else 0.6 for r in ROWS if r["secim"] == "2"]
    want += [0.1] * sum(r["secim"] == NONE_LABEL for r in ROWS)
    assert secim["calibration"]["mean_gold_p"] == pytest.approx(sum(want) / 12)

    # The open task: no distribution, no calibration block; its stored form is unchanged.
    open_task = doc["tasks"]["toplama_v1"]
    assert "calibration" not in open_task and not any("distribution" in p for p in open_task["predictions"])

    counts = runner.json("cal", "summary.json")["probabilities"]
    assert counts == {"asked": 24, "received": 24, "complete": 24, "partial": 0, "absent": {}}
    assert "answer probabilities: asked in 24 requests, received in 24" in out
    assert "mean gold p" in out

    schema = Path(__file__).resolve().parents[2] / "yoxla" / "schema" / "result.schema.json"
    jsonschema.validate(doc, json.loads(schema.read_text(encoding="utf-8")))  # the published schema too
    verdict = admit(doc, tmp_path)
    assert verdict.shown and verdict.rechecked, verdict.reasons
    assert verdict.tasks["duygu_v1"].calibration == cal
    assert verdict.tasks["duygu_v1"].p_gold is not None
    assert verdict.tasks["duygu_v1"].p_gold.tolist() == pytest.approx(golds)
    assert verdict.tasks["toplama_v1"].calibration is None
    assert verdict.calibration["overall"]["n_with_probs"] == 24

    # `yoxla rescore --result` derives the same distributions again from the stored tokens.
    rc, _, err = runner("rescore", str(runner.runs / "cal"), "--result")
    assert rc == 0, err
    assert runner.result()["tasks"] == doc["tasks"]


def _forged(doc: dict[str, Any], edit) -> dict[str, Any]:
    forged = json.loads(json.dumps(doc))
    edit(forged)
    return finalize(forged)  # a fresh digest: only re-derivation can catch it


def test_admission_excludes_a_forged_distribution_or_calibration(runner, suite, tmp_path) -> None:
    _run(runner, suite, "forge")
    doc = runner.result()
    assert admit(doc, tmp_path).shown

    def mean_gold_p(d: dict) -> None:
        d["tasks"]["duygu_v1"]["calibration"]["mean_gold_p"] += 0.01

    def ece_bin(d: dict) -> None:
        d["tasks"]["duygu_v1"]["calibration"]["reliability"]["bins"][12]["count"] -= 1
        d["tasks"]["duygu_v1"]["calibration"]["reliability"]["bins"][11]["count"] += 1

    def top(d: dict) -> None:
        dist = d["tasks"]["duygu_v1"]["predictions"][1]["distribution"]
        dist["top"] = next(label for label in dist["probs"] if label != dist["top"])

    def outside_the_space(d: dict) -> None:
        dist = d["tasks"]["secim_v1"]["predictions"][0]["distribution"]  # two options: no "3"
        dist["probs"] = {**dist["probs"], "3": 0.0}

    def dropped(d: dict) -> None:
        del d["tasks"]["secim_v1"]["calibration"]

    def on_the_open_task(d: dict) -> None:
        d["tasks"]["toplama_v1"]["predictions"][0]["distribution"] = {
            "method": "token_logprobs",
            "probs": {"4": 1.0},
            "top": "4",
            "mass_outside": 0.0,
        }

    cases = [
        (mean_gold_p, "tasks.duygu_v1.calibration.mean_gold_p"),
        (ece_bin, "tasks.duygu_v1.calibration.reliability.bins[11].count"),
        (top, "tasks.duygu_v1.predictions[1].distribution"),
        (outside_the_space, "tasks.secim_v1.predictions[0].distribution"),
        (dropped, "tasks.secim_v1.calibration"),
        (on_the_open_task, "tasks.toplama_v1.predictions[0].distribution"),
    ]
    for edit, where in cases:
        verdict = admit(_forged(doc, edit), tmp_path)
        assert not verdict.admitted, edit.__name__
        assert any(where in r for r in verdict.reasons), (edit.__name__, verdict.reasons)

    # Two forged tasks: one reason each.
    def both(d: dict) -> None:
        mean_gold_p(d)
        dropped(d)

    verdict = admit(_forged(doc, both), tmp_path)
    assert [r for r in verdict.reasons if "duygu_v1" in r] and [r for r in verdict.reasons if "secim_v1" in r]


def test_no_probabilities_flag_asks_for_none(runner, suite, tmp_path) -> None:
    bodies, _ = _run(runner, suite, "plain", "--no-probabilities")
    assert bodies and not any("logprobs" in b for b in bodies)
    doc = runner.result()
    for t in doc["tasks"].values():
        assert "calibration" not in t and not any("distribution" in p for p in t["predictions"])
    assert runner.json("plain", "summary.json")["probabilities"]["asked"] == 0
    assert admit(doc, tmp_path).shown


def test_retry_from_the_result_file_keeps_the_stored_distributions(
    runner, suite, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("YOXLA_SUITES_DIR", str(tmp_path / "suites"))  # the suite is committed "here"
    _run(runner, suite, "clean")
    clean = runner.result()
    failing = {"r05", "r07"}
    down = [True]

    def flaky(key: str, attempt: int, body: dict[str, Any]) -> Reply:
        row = ROW_OF.get(key.splitlines()[-2]) if key.endswith("Duygu nədir?") else None
        if down[0] and row is not None and row["id"] in failing:
            return Reply(status=503, message="upstream down")
        return respond(key, attempt, body)

    with FakeServer(responder=flaky) as srv:
        rc, _, err = runner.api(suite, srv.base_url, "r1", "--max-retries", "0")
        assert rc == 0, err
        path = runner.results / "suites" / "sinaq" / "vllm__fake--model-1.json"
        failed = json.loads(path.read_text(encoding="utf-8"))
        preds = {p["id"]: p for p in failed["tasks"]["duygu_v1"]["predictions"]}
        assert all("distribution" not in preds[i] for i in failing)
        assert failed["tasks"]["duygu_v1"]["calibration"]["n_with_probs"] == 10
        received = tmp_path / "received.json"
        received.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        shutil.rmtree(runner.runs / "r1")
        down[0] = False
        before = len(srv.bodies)
        rc, _, err = runner("run", "--retry-errors", str(received), "--base-url", srv.base_url)
        assert rc == 0, err
        assert len(srv.bodies) - before == len(failing)  # only the failed items asked again
    # The kept answers' distributions came from the file, the new ones from the new tokens: the
    # tasks are those of the run that never failed.
    assert runner.result()["tasks"] == clean["tasks"]


def test_the_suite_board_shows_calibration_where_probabilities_were_stored(runner, suite, tmp_path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "leaderboard"))
    from leaderboard_helpers import value, view_context

    from yoxla.board import calibration
    from yoxla.board.loading import load_board, suite_board_id
    from yoxla.board.prepared import prepare

    _run(runner, suite, "board")
    doc = runner.result()
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites"))
    prepared = prepare(load_board(runner.results, data=data, B=50), floors=False)
    ed = prepared.edition(suite_board_id("sinaq"))
    assert ed.suite is not None and len(ed.standard.models) == 1
    cal = calibration.board_calibration(ed, B=50)
    # All tasks pooled, then each closed task; the open task has no report.
    assert [s for _, s in cal.scopes] == ["overall", "task:duygu_v1", "task:secim_v1"]
    (row,) = cal.rows["task:duygu_v1"]
    assert row.report == doc["tasks"]["duygu_v1"]["calibration"]
    lo, hi = row.intervals["mean_gold_p"]
    assert lo <= row.report["mean_gold_p"] <= hi and lo < hi
    assert cal.rows["overall"][0].report["n_with_probs"] == 24
    shown, _ = calibration.scope_table(cal, "task:secim_v1")
    assert list(shown["With probabilities"]) == ["12 of 12"]

    ctx = view_context(prepared)
    view = ctx.views["calibration"]
    out = view.page(ctx, ed.name, "task:duygu_v1")
    frame = value(out[view.table.df])
    assert list(frame["Model"]) == [row.model.name]
    model = ctx.views["model"]
    assert (
        "Answer probabilities** for 24 of 24"
        in model.calibration(ctx, ed, row.model, True, "m")[model.cal_line]
    )
    # The Calibration tab is offered on this suite board, and not on a suite board without probabilities.
    assert view.shown_on(ed)
    repo = Path(__file__).resolve().parents[2]  # the repository's committed suites (the test runs in tmp)
    committed = prepare(
        load_board(
            repo / "results",
            data=DataSource(allow_hub=False, suites=CommittedSuites(root=repo / "suites")),
            B=50,
        ),
        floors=False,
    )
    oxu = committed.edition(suite_board_id("oxu"))
    assert oxu.suite is not None and oxu.standard.models and not view.shown_on(oxu)
