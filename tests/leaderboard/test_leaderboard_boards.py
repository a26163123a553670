"""The app's views of calibration, ranking rules, suite boards and review status, without a browser.

Three boards: one built here on the sample rows whose analysis section names groups, controls and a
ranking order, with answer distributions on ``nli_v1`` (so calibration has numbers to check
against what we put in); the committed results (the sample edition, which stores no
probabilities, and each committed suite's baseline files); and a folder with a judge-scored
suite run against a loopback server, the committed ``oxu`` suite beside it and excluded
files of several boards.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gradio.components.plot import PlotData
from leaderboard_helpers import COMMITTED, REPO, value, view_context, write

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource, EditionRows
from yoxla.baselines.strategies import benchmark_answers as baseline_answers
from yoxla.board import calibration, explorer
from yoxla.board.bootstrap import Boot
from yoxla.board.loading import load_board, suite_board_id
from yoxla.board.prepared import Prepared, prepare, rank_board
from yoxla.contract.benchmark import benchmark_task
from yoxla.contract.spec import Analysis
from yoxla.data.editions import load_edition, load_rows
from yoxla.score.calibration.distribution import LabelDistribution
from yoxla.score.calibration.metrics import ECE_BINS
from yoxla.score.calibration.ranking import explain_order
from yoxla.testing.synthetic import build_result, edition_for_rows
from yoxla.views.leaderboard_tables import leaderboard_frame, leaderboard_view
from yoxla.views.model_tables import model_scores
from yoxla.views.plot import empty_figure
from yoxla.views.tasks import spreads_table, task_models_table

SPACE = ("entailment", "neutral", "contradiction")
ORDER = ["yoxla", "group_consistency", "high_confidence_error_rate", "mean_gold_p"]
# (file, name, p(answer) and p(gold) when the answer is right / wrong), or no distributions.
BOLD = {"right": 0.97, "wrong_answer": 0.95, "wrong_gold": 0.03}
CAREFUL = {"right": 0.5, "wrong_answer": 0.6, "wrong_gold": 0.3}


def _dist(answer: str, gold: str, shape: dict[str, float]) -> dict[str, Any]:
    """A complete distribution: the answer is the most probable label, right or wrong."""
    if answer == gold:
        rest = (1 - shape["right"]) / 2
        masses = {lb: shape["right"] if lb == gold else rest for lb in SPACE}
    else:
        other = 1 - shape["wrong_answer"] - shape["wrong_gold"]
        masses = {
            lb: {answer: shape["wrong_answer"], gold: shape["wrong_gold"]}.get(lb, other) for lb in SPACE
        }
    dist = LabelDistribution.from_masses(SPACE, masses)
    assert dist is not None and dist.top == answer
    return dist.to_dict()


@pytest.fixture(scope="module")
def cal(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A sample board with groups, controls, a declared order and distributions on nli_v1."""
    sample = load_edition("sample")
    rows = {tid: load_rows(sample, tid) for tid in sample.tasks}
    nli = rows["nli_v1"]
    ids = [r["id"] for r in nli]
    decl = Analysis.model_validate(
        {
            "ranking": ORDER,
            "tasks": {"nli_v1": {"control_ids": ids[:2], "group_ids": {"g1": ids[2:5], "g2": ids[5:8]}}},
        }
    )
    ed = edition_for_rows("sample", rows, analysis=decl)
    first = baseline_answers("first", "nli_v1", nli)
    golds = [str(r["label"]) for r in nli]
    folder = tmp_path_factory.mktemp("calboard") / "results"
    specs = [
        ("bold", "a-bold", "first", BOLD),
        ("careful", "b-careful", "first", CAREFUL),
        ("none", "c-none", "first", None),
        ("random", "d-random", "random", None),
    ]
    for model, name, strategy, shape in specs:
        dists = None
        if shape is not None:
            dists = {"nli_v1": [_dist(a, g, shape) for a, g in zip(first, golds, strict=True)]}
        doc = build_result(
            strategy, edition=ed, rows=rows, model=model, display_name=name, distributions=dists
        )
        write(folder / "sample" / f"baseline__{model}.json", doc)
    data = DataSource(allow_hub=False)
    data._cache["sample"] = EditionRows(rows, "synthetic")
    board = load_board(folder, data=data, editions={"sample": ed}, B=200)
    prepared = prepare(board)
    scored = [i for i in range(len(nli)) if i >= 2]  # the first two rows are controls
    return {"prepared": prepared, "first": first, "golds": golds, "scored": scored}


def _key(prepared: Prepared, name: str) -> str:
    return next(v.key for v in prepared.edition("sample").standard.models if v.name == name)


# Calibration -----------------------------------------------------------------------------------


def test_calibration_table_holds_the_stored_reports_and_what_we_put_in(cal) -> None:
    prepared, first, golds, scored = cal["prepared"], cal["first"], cal["golds"], cal["scored"]
    ed = prepared.edition("sample")
    board_cal = calibration.board_calibration(ed, B=200)
    assert ("Task nli_v1", "task:nli_v1") in board_cal.scopes and board_cal.scopes[0][1] == "overall"
    shown, frame = calibration.scope_table(board_cal, "task:nli_v1")
    assert set(frame["Model"]) == {"a-bold", "b-careful", "c-none", "d-random"}  # groups: all have a report
    wrong = [i for i in scored if first[i] != golds[i]]
    assert wrong and len(wrong) < len(scored)  # both kinds of rows, or the test says nothing
    for name, shape in (("a-bold", BOLD), ("b-careful", CAREFUL)):
        v = prepared.board.model("sample", _key(prepared, name))
        assert v is not None
        stored = v.tasks["nli_v1"].calibration
        assert stored is not None
        row = frame[frame["Model"] == name].iloc[0]
        for key, _, _ in calibration.METRICS:
            assert row[key] == pytest.approx(stored[key]), (name, key)
        # ... and the stored report says what the distributions we wrote say.
        gold_p = [shape["right"] if i not in wrong else shape["wrong_gold"] for i in scored]
        assert row["mean_gold_p"] == pytest.approx(np.mean(gold_p))
        hce = len(wrong) / len(scored) if shape["wrong_answer"] >= 0.9 else 0.0
        assert row["high_confidence_error_rate"] == pytest.approx(hce)
        assert row["answer_agreement"] == pytest.approx(1.0)
        assert row["n with probabilities"] == len(scored) and row["groups"] == 2 and row["controls"] == 2
        # The interval holds the value and has width: the gold probabilities vary.
        assert row["mean_gold_p low"] < row["mean_gold_p"] < row["mean_gold_p high"]
        assert row["brier low"] <= row["brier"] <= row["brier high"]
        text = shown.loc[shown["Model"] == name, "Mean gold probability"].iloc[0]
        assert text.startswith(f"{row['mean_gold_p']:.3f} (") and text.endswith(")")
        # Pooled over every task, mean gold p comes from nli_v1 alone: the same interval.
        overall = board_cal.row("overall", v.key)
        assert overall is not None
        assert overall.report["mean_gold_p"] == pytest.approx(row["mean_gold_p"])
        assert overall.intervals["mean_gold_p"] == pytest.approx(
            (row["mean_gold_p low"], row["mean_gold_p high"])
        )
        assert overall.report["high_confidence_error_rate"] == pytest.approx(
            v.calibration["overall"]["high_confidence_error_rate"]
        )
    none = frame[frame["Model"] == "c-none"].iloc[0]
    assert none["n with probabilities"] == 0 and np.isnan(none["mean_gold_p"])
    assert shown.loc[shown["Model"] == "c-none", "Mean gold probability"].iloc[0] == "n/a"


def test_reliability_diagram_is_drawn_from_the_15_stored_bins(cal) -> None:
    prepared, scored = cal["prepared"], cal["scored"]
    ctx = view_context(prepared)
    view = ctx.views["calibration"]
    key = _key(prepared, "a-bold")
    out = view.page(ctx, "sample", "task:nli_v1", key)
    assert value(out[view.model]) == key
    fig = json.loads(value(out[view.diagram]).plot)
    v = prepared.board.model("sample", key)
    assert v is not None
    bins = v.tasks["nli_v1"].calibration["reliability"]["bins"]
    assert len(bins) == ECE_BINS == 15
    bars, diagonal, points = fig["data"]
    assert bars["type"] == "bar" and bars["y"] == [b["count"] for b in bins]
    # Every confidence we wrote is 0.95 or 0.97: all of them in the last bin, (14/15, 1].
    assert bars["y"] == [0] * 14 + [len(scored)]
    assert points["x"] == pytest.approx([b["mean_confidence"] for b in bins if b["count"]])
    assert points["y"] == pytest.approx([b["accuracy"] for b in bins if b["count"]])
    assert diagonal["x"] == [0, 1] and "Reliability diagram" in fig["layout"]["title"]["text"]
    # Another model is another diagram; a model without probabilities is not offered.
    choices = [
        k
        for _, k in calibration.model_choices(
            calibration.board_calibration(prepared.edition("sample"), B=200), "task:nli_v1"
        )
    ]
    assert key in choices and _key(prepared, "c-none") not in choices
    other = view.show_diagram(ctx, "sample", "task:nli_v1", _key(prepared, "b-careful"))
    assert json.loads(value(other[view.diagram]).plot)["data"][0]["y"] != bars["y"]


def test_model_page_shows_calibration_or_says_it_is_not_available(cal) -> None:
    prepared = cal["prepared"]
    ctx = view_context(prepared)
    model = ctx.views["model"]
    page = model.page(ctx, _key(prepared, "a-bold"))
    assert f"for {len(cal['scored'])} of" in page[model.cal_line]
    table = value(page[model.cal_table.df])
    assert {"All tasks (pooled)", "Task nli_v1"} <= set(table["Scope"])
    assert json.loads(value(page[model.cal_plot]).plot)["data"]  # the pooled diagram
    none = model.page(ctx, _key(prepared, "c-none"))
    assert "not available from this provider" in none[model.cal_line]
    assert not json.loads(value(none[model.cal_plot]).plot)["data"]  # words, no empty axes


# Ranking rule ----------------------------------------------------------------------------------


def test_ranking_rule_is_shown_and_rows_follow_the_declared_order(cal) -> None:
    prepared = cal["prepared"]
    ed = prepared.edition("sample")
    rule = explain_order(tuple(ORDER))
    assert ed.order == tuple(ORDER) and ed.order_text == rule
    ctx = view_context(prepared)
    lb = ctx.views["leaderboard"]
    shown_rule = lb.render(ctx, "sample")[lb.rule]
    assert shown_rule.replace("\\", "").startswith(rule)
    assert (
        "Ranking rule of this board"
        in ctx.views["calibration"].render(ctx, "sample")[ctx.views["calibration"].rule]
    )
    frame = leaderboard_frame(ed)
    order = list(frame["Model"])
    # Same answers, same YOXLA and group consistency: the high-confidence error rate decides
    # (careful has none, bold has some), and a model without one ranks last at that step;
    # the next key, mean gold p, would have put bold first.
    firsts = [n for n in order if n != "d-random"]
    assert firsts == ["b-careful", "a-bold", "c-none"]
    i = order.index("b-careful")
    assert order[i : i + 3] == firsts  # one block of equal YOXLA scores
    maj = float(frame.loc[frame["Model"] == "d-random", "YOXLA"].iloc[0])
    first_score = float(frame.loc[frame["Model"] == "a-bold", "YOXLA"].iloc[0])
    assert maj != first_score and (order.index("d-random") < i) == (maj > first_score)
    by_name = [v.name for v in prepared.board.shown("sample")]
    assert by_name.index("a-bold") < by_name.index("b-careful")  # the order is not the name order
    # The intervals moved with their models.
    boot = prepared.board.boot("sample")
    lo, hi = Boot.interval(boot.yoxla_reps)
    for name in order:
        j = by_name.index(name)
        row = frame[frame["Model"] == name].iloc[0]
        assert (row["YOXLA low"], row["YOXLA high"]) == pytest.approx((lo[j], hi[j]))


def test_intervals_follow_their_models_in_any_declared_order(cal, monkeypatch) -> None:
    board = cal["prepared"].board
    shown = board.shown("sample")
    monkeypatch.setattr(board, "ranked", lambda edition, group="standard", task_id=None: shown[::-1])
    r = rank_board(board, "sample", "standard")
    assert [v.key for v in r.models] == [v.key for v in shown[::-1]]
    boot = board.boot("sample")
    lo, hi = Boot.interval(boot.yoxla_reps)
    task_lo, _ = Boot.interval(boot.task_reps)
    for i, v in enumerate(r.models):
        j = shown.index(v)
        assert (r.yoxla_lo[i], r.yoxla_hi[i]) == (lo[j], hi[j])
        assert np.array_equal(r.task_lo[i], task_lo[j])
        assert np.array_equal(r.boot.yoxla_reps[i], boot.yoxla_reps[j])  # type: ignore[union-attr]
    assert len({float(x) for x in lo}) > 1  # the files differ, so a mix-up would show


def test_without_probabilities_the_calibration_view_says_so(committed_prepared) -> None:
    ctx = view_context(committed_prepared)
    view = ctx.views["calibration"]
    out = view.render(ctx, "sample")
    fig = json.loads(value(out[view.plot]).plot)
    assert (
        not fig["data"]
        and "No result file on sample stores answer probabilities" in fig["layout"]["annotations"][0]["text"]
    )
    assert not json.loads(value(out[view.diagram]).plot)["data"]
    assert "stores answer probabilities" in str(value(out[view.table.df]).iloc[0, 0])
    assert out[view.model]["visible"] is False
    model = ctx.views["model"]
    page = model.page(ctx, "sample/baseline__overlap.json")
    assert "not available from this provider" in page[model.cal_line]


# Suite boards ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def committed_prepared() -> Prepared:
    board = load_board(REPO / "results", data=DataSource(allow_hub=False), B=200)
    return prepare(board)


def test_each_committed_suite_has_a_board_in_the_picker(committed_prepared) -> None:
    committed = [s for s in CommittedSuites().ids() if not s.startswith("yoxla-")]
    assert {"oxu", "hesab", "muraciet"} <= set(committed)
    assert {"yoxla-sample", "yoxla-v1"} <= set(CommittedSuites().ids())
    values = [bid for _, bid in committed_prepared.board_choices()]
    assert values[:2] == ["v1", "sample"]
    # The package's benchmark suites have no file under results/suites/, so no board of their own
    # (the editions are their boards); every other committed suite has one, empty or not.
    assert [suite_board_id(s) for s in committed] == values[2:]
    for sid in committed:
        files = sorted((REPO / "results" / "suites" / sid).glob("*.json"))
        ed = committed_prepared.edition(suite_board_id(sid))
        assert ed.suite is not None and len(ed.standard.models) == len(files), sid
    # muraciet's macro-F1 is no mean of per-item scores: no interval, and the rule says so.
    from yoxla.views.leaderboard import rule_text

    mur = committed_prepared.edition(suite_board_id("muraciet"))
    assert np.isnan(mur.standard.yoxla_lo).all() and "has no interval" in rule_text(mur)
    frame = leaderboard_frame(mur)
    assert frame["Suite score"].is_monotonic_decreasing
    assert "±" not in leaderboard_view(frame, mur).table["Suite score"].iloc[0]
    oxu = committed_prepared.edition(suite_board_id("oxu"))
    assert np.isfinite(oxu.standard.yoxla_lo).all() and "has no interval" not in rule_text(oxu)


def test_one_bootstrap_rule_serves_the_benchmark_and_the_suites(committed_prepared) -> None:
    """Each ranked file is on one board (the one Board.board_of names), and every board goes
    through one bootstrap: the benchmark's
    STS (a rank correlation) is recomputed on each resample against the rows' gold values, its
    mean-based tasks resample their per-item scores, and muraciet's macro-F1 (no mean) keeps
    its score."""
    board = committed_prepared.board
    on_boards = [v.key for bid in board.boards() for g in board.groups(bid) for v in board.shown(bid, g)]
    assert sorted(on_boards) == sorted(v.key for v in board.verdicts if v.shown and v.rechecked)
    assert {board.board_of(v) for v in board.verdicts if v.shown} == {"sample", *board.boards()[2:]}
    assert board.interval_tasks("sample") == set(board.task_ids("sample"))
    assert board.interval_tasks("suite:oxu") == {"oxu_v1"} and board.interval_tasks("suite:muraciet") == set()
    models = board.shown("sample")
    boot = board.boot("sample")
    sts = boot.task_reps[:, boot.task_ids.index("sts_v1"), :]
    i = next(i for i, v in enumerate(models) if v.name == "overlap")  # the one cue that correlates
    rec = models[i].tasks["sts_v1"]
    mean = float(rec.scored_scores.mean()) * 100
    assert rec.prediction is not None and abs(rec.score - mean) > 5  # a correlation is not a mean
    # resampled around the correlation (a resample of the per-item scores would centre on their mean)
    assert np.ptp(sts[i]) > 0 and abs(float(np.median(sts[i])) - rec.score) < 2
    mur = board.boot("suite:muraciet")
    assert np.all(mur.task_reps == mur.task_reps[..., :1])  # no interval: the replicates are the score


def test_suite_board_leaderboard_spreads_breakdowns_and_explorer(committed_prepared) -> None:
    prepared = committed_prepared
    board, bid = prepared.board, suite_board_id("oxu")
    ed = prepared.edition(bid)
    models = ed.standard.models
    frame = leaderboard_frame(ed)
    assert list(frame["Suite score"]) == sorted((v.scores["suite"] for v in models), reverse=True)
    view = leaderboard_view(frame, ed)
    assert list(view.table.columns) == ["Rank", "Model", "Suite score", "oxu_v1", "Trust"]
    assert view.floor_row is None  # suites have no cue-only floor
    spreads = spreads_table(ed)
    scores = [v.tasks["oxu_v1"].score for v in models]
    assert spreads.iloc[0]["Task"] == "oxu_v1"
    assert (spreads.iloc[0]["Lowest"], spreads.iloc[0]["Highest"]) == (
        round(min(scores), 1),
        round(max(scores), 1),
    )
    # Breakdowns by the field the manifest names (metadata.breakdowns: topic).
    ctx = view_context(prepared)
    bd = ctx.views["breakdowns"]
    out = bd.render(ctx, bid)
    assert out[bd.picker]["value"] == "oxu_v1" and out[bd.by]["value"] == "topic"
    table = value(out[bd.table.df])
    items = board.items("suite:oxu", "oxu_v1")
    topics = {str(i.row["topic"]) for i in items.values()}
    assert len(topics) > 1 and set(table.columns) - {"Model"} == topics
    v = models[0]
    for topic in topics:  # each cell is that model's accuracy on the items of that topic
        rows = explorer.filter_examples(board, bid, "oxu_v1", v.key, breakdown=topic)
        expected = 100 * float(np.mean(rows["A verdict"] == "correct"))
        cell = table.loc[table["Model"] == v.name, topic].iloc[0]
        assert cell.startswith(f"{expected:.1f} (n={len(rows)})"), (topic, cell)
    # The explorer shows exactly the messages the model was sent.
    ex_id = next(iter(items))
    ev = explorer.example_view(board, bid, "oxu_v1", v.key, ex_id)
    assert ev is not None and ev.gold == str(items[ex_id].target)
    for m in items[ex_id].messages:
        assert f"[{m['role']}]\n{m['content']}" in ev.inputs
    assert "Cavab:" in ev.inputs  # few-shot examples included
    exp = ctx.views["explorer"]
    opened = exp.render(ctx, bid, {"task": "oxu_v1", "model": v.key})
    assert "[system]" in opened[exp.inputs_box]


# A judge-scored suite, and the methodology of each board ----------------------------------------


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    """A judge-scored suite run on a loopback server, the committed oxu suite and its files,
    two sample files, and one forged file each of oxu and sample (excluded)."""
    sys.path.insert(0, str(REPO / "tests" / "suites"))
    from suite_run_helpers import make_suite, manifest, responder

    from yoxla.cli.main import run as cli_run
    from yoxla.testing.fakeserver import FakeServer

    tmp = tmp_path_factory.mktemp("judged")
    suite = make_suite(tmp, manifest(judge=True))
    shutil.copytree(REPO / "suites" / "examples" / "oxu", tmp / "suites" / "oxu")
    results = tmp / "results"
    with pytest.MonkeyPatch.context() as mp, FakeServer(responder=responder) as srv:
        mp.setenv("VLLM_API_KEY", "sk-test")
        argv = ["run", "--suite", str(suite), "--provider", "vllm", "--model", "fake/model-1"]
        argv += ["--base-url", srv.base_url, "--run-id", "judged", "--no-progress", "--timeout", "5"]
        argv += ["--judge-provider", "vllm", "--judge-model", "hakim-1", "--judge-base-url", srv.base_url]
        argv += ["--runs-dir", str(tmp / "runs"), "--results-dir", str(results)]
        assert cli_run(argv) == 0
    for p in sorted((REPO / "results" / "suites" / "oxu").glob("*.json")):
        (results / "suites" / "oxu").mkdir(parents=True, exist_ok=True)
        shutil.copy(p, results / "suites" / "oxu" / p.name)
    forged = json.loads(p.read_text(encoding="utf-8"))
    forged["tasks"]["oxu_v1"]["metrics"]["accuracy"] = 0.99
    write(results / "suites" / "oxu" / "forged.json", forged)
    for p in COMMITTED[:2]:
        shutil.copy(p, (results / "sample").mkdir(parents=True, exist_ok=True) or results / "sample" / p.name)
    bad = json.loads(COMMITTED[0].read_text(encoding="utf-8"))
    bad["scores"]["suite"] = 99.0  # a forged headline (YOXLA) of a sample file
    write(results / "sample" / "forged.json", bad)
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=tmp / "suites"))
    return prepare(load_board(results, data=data, B=100))


def test_a_judge_scored_task_is_marked_with_its_judge_model(judged) -> None:
    ed = judged.edition(suite_board_id("sinaq"))
    assert ed.suite is not None and ed.suite.judge_scored_tasks == ["toplama_v1"]
    (v,) = ed.standard.models
    assert v.judge == "hakim-1"
    frame = leaderboard_frame(ed)
    assert frame["Judge"].iloc[0].startswith("hakim-1")
    view = leaderboard_view(frame, ed)
    assert "toplama_v1 (judge-scored)" in view.table.columns and view.table["Judge"].iloc[0].startswith(
        "hakim-1"
    )
    assert task_models_table(ed.standard, "toplama_v1")["Judge"].iloc[0].startswith("hakim-1")
    scores = model_scores(v, ed.standard, ed)
    assert "judge: hakim-1" in scores.loc[scores["Name"] == "toplama_v1", "Primary metric"].iloc[0]
    ctx = view_context(judged)
    tasks = ctx.views["tasks"]
    assert "Judge-scored" in tasks.render(ctx, ed.name)[tasks.about]
    oxu = judged.edition(suite_board_id("oxu"))
    assert "Judge" not in leaderboard_frame(oxu) and not oxu.suite.judge_scored_tasks  # type: ignore[union-attr]
    # Breakdowns of the judged task by its metadata.breakdowns field.
    bd = ctx.views["breakdowns"]
    out = bd.render(ctx, ed.name)
    assert out[bd.picker]["value"] == "toplama_v1" and out[bd.by]["value"] == "movzu"
    assert set(value(out[bd.table.df]).columns) == {"Model", "cüt", "tək"}


def test_methodology_lists_each_boards_own_files(judged) -> None:
    ctx = view_context(judged)
    meth = ctx.views["methodology"]
    oxu = meth.render(ctx, suite_board_id("oxu"))
    admitted = value(oxu[meth.admitted.df])
    assert len(admitted) == 3 and all(f.startswith("suites/oxu/") for f in admitted["File"])
    excluded = value(oxu[meth.excluded.df])
    assert list(excluded["File"]) == ["suites/oxu/forged.json"]
    assert "1 excluded" in oxu[meth.line] and oxu[meth.suite_note]["visible"] is True
    sample = meth.render(ctx, "sample")
    assert list(value(sample[meth.excluded.df])["File"]) == ["sample/forged.json"]
    assert all(f.startswith("sample/") for f in value(sample[meth.admitted.df])["File"])
    sinaq = meth.render(ctx, suite_board_id("sinaq"))
    assert "Every file of this board was admitted" in str(value(sinaq[meth.excluded.df]).iloc[0, 0])


def test_methodology_shows_review_status_per_task(committed_prepared, tmp_path: Path) -> None:
    from yoxla.annotation.sheets import MODEL, export_sheet, sheet_path

    rows = load_rows(load_edition("sample"), "nli_v1")
    gold = {str(r["id"]): str(r["label"]) for r in rows}
    folder = tmp_path / "sample"
    wrong = next(lb for lb in SPACE if lb != gold[str(rows[3]["id"])])
    labels = {"alice": {str(r["id"]): gold[str(r["id"])] for r in rows[:3]} | {str(rows[3]["id"]): wrong}}
    labels["gpt"] = dict(gold)  # a model agrees with everything: it never counts
    for who, kind in (("alice", "person"), ("gpt", MODEL)):
        path = sheet_path(folder, who, kind)
        export_sheet(path, [benchmark_task("nli_v1")], {"nli_v1": rows}, shuffle_key=who)
        with path.open(encoding="utf-8-sig", newline="") as fh:
            sheet = list(csv.DictReader(fh))
        for line in sheet:
            line["label"] = labels[who].get(line["id"], "")
        with path.open("w", encoding="utf-8-sig", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(sheet[0]))
            w.writeheader()
            w.writerows(sheet)
    # Bad files in the repository: the table still shows the good sheets and lists each problem.
    (folder / "carol.csv").write_bytes("task,id\nnli_v1,ə\n".encode("cp1254", errors="replace"))
    (folder / "resolutions.csv").write_bytes(b"\xef\xbb\xbftask,id\n\xef\xbb\xbf")
    prepared = dataclasses.replace(committed_prepared, annotations_root=tmp_path, _memo={})
    ctx = view_context(prepared)
    meth = ctx.views["methodology"]
    for v in ctx.views.values():
        v.warm(ctx, "sample")  # the app's start-up preparation
    out = meth.render(ctx, "sample")
    problems = out[meth.review_problems]["value"].splitlines()
    assert len(problems) == 2 and out[meth.review_problems]["visible"] is True, problems
    assert "carol.csv: missing column(s) input_sha, label, not_natural, note" in problems[0]
    assert "resolutions.csv line 2: a byte-order mark" in problems[1]
    table = value(out[meth.review.df])
    nli = table[table["Task"] == "nli_v1"].iloc[0]
    assert (nli["Reviewed"], nli["Open"], nli["Not annotated"]) == (3, 1, len(rows) - 4)
    assert nli["People"] == "alice" and nli["Model annotators (never count)"] == "gpt"
    qa = table[table["Task"] == "extractive_qa_v1"].iloc[0]
    assert qa["Reviewed"] == "n/a" and "not annotatable" in qa["Not annotated"]
    assert "**3 row(s) of edition `sample` reviewed by people**" in out[meth.review_line]
    suite = meth.render(ctx, suite_board_id("oxu"))
    assert "Not kept for suites" in str(value(suite[meth.review.df]).iloc[0, 0])


def test_every_view_renders_every_board_of_the_judged_folder(judged) -> None:
    ctx = view_context(judged)
    for bid in judged.editions:
        for v in ctx.views.values():
            out = v.render(ctx, bid, {})
            assert set(map(id, out)) <= set(map(id, v.outputs())), (bid, v.tab_id)
            for update in out.values():
                if isinstance(update, PlotData):
                    fig = json.loads(update.plot)
                    assert fig["data"] or fig["layout"]["annotations"][0]["text"].strip(), (bid, v.tab_id)
    assert empty_figure("t", "x " * 200)["layout"]["annotations"][0]["text"].count("<br>") >= 3


def test_a_board_without_files_says_so_in_the_explorer(committed_prepared) -> None:
    # The v1 board (the package suite yoxla-v1's) has no admitted file in the committed results: its explorer
    # explains why it is empty instead of asking for a model that cannot be picked; a suite board with
    # files asks for a pick.
    from yoxla.views.explorer import PICK, Query

    ctx = view_context(committed_prepared)
    view = ctx.views["explorer"]
    empty = "v1"
    assert committed_prepared.edition(empty).standard.empty
    out = view.render(ctx, empty, {})
    assert value(out[view.info]).startswith("No re-checked result file on ")
    full = suite_board_id("oxu")
    assert value(view.results(ctx, full, Query(None, None, None, "all"))[view.info]) == PICK
