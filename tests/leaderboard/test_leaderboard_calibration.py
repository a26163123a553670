"""Calibration on the board: pooled reports on the verdict, controls out of the bootstrap, the ranking order.

An edition made in the test carries its own analysis section (groups and controls on nli_v1, a
ranking order); result files written with the runner's writer carry stored distributions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from leaderboard_helpers import write

from yoxla.admission.gold import DataSource, EditionRows
from yoxla.board.loading import load_board
from yoxla.contract.spec import Analysis
from yoxla.data.editions import load_edition, load_rows
from yoxla.score.calibration.distribution import LabelDistribution
from yoxla.score.calibration.ranking import explain_order
from yoxla.testing.synthetic import build_result, edition_for_rows

SPACE = ("entailment", "neutral", "contradiction")


@pytest.fixture(scope="module")
def setting() -> tuple[Any, dict[str, list[dict[str, Any]]], list[str]]:
    sample = load_edition("sample")
    rows = {tid: load_rows(sample, tid) for tid in sample.tasks}
    ids = [r["id"] for r in rows["nli_v1"]]
    decl = Analysis.model_validate(
        {
            "ranking": ["yoxla", "mean_gold_p"],
            "tasks": {"nli_v1": {"control_ids": ids[:2], "group_ids": {"g1": ids[2:5], "g2": ids[5:8]}}},
        }
    )
    return edition_for_rows("sample", rows, analysis=decl), rows, ids


def _dists(rows: list[dict[str, Any]], p_gold: float) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for row in rows:
        rest = (1 - p_gold) / 2
        masses = {lb: (p_gold if lb == row["label"] else rest) for lb in SPACE}
        dist = LabelDistribution.from_masses(SPACE, {k: 0.9 * v for k, v in masses.items()})
        assert dist is not None
        out.append(dist.to_dict())
    return out


@pytest.fixture(scope="module")
def board(setting, tmp_path_factory: pytest.TempPathFactory):
    ed, rows, _ = setting
    folder = tmp_path_factory.mktemp("calboard") / "results"
    nli = rows["nli_v1"]
    # Same answers (same YOXLA score): the declared order's next step, mean gold p, decides.
    specs = [("sure", "a-unsure", 0.4), ("sure2", "b-sure", 0.8), ("none", "c-no-probs", None)]
    for model, name, p in specs:
        dists = {"nli_v1": _dists(nli, p)} if p is not None else None
        doc = build_result(
            "first", edition=ed, rows=rows, model=model, display_name=name, distributions=dists
        )
        write(folder / "sample" / f"baseline__{model}.json", doc)
    data = DataSource()
    data._cache["sample"] = EditionRows(rows, "synthetic")
    return load_board(folder, data=data, editions={"sample": ed}, B=50)


def test_ranking_order_is_declared_explained_and_applied(board) -> None:
    assert board.ranking("sample") == ("yoxla", "mean_gold_p")
    assert board.explain_order("sample") == explain_order(("yoxla", "mean_gold_p"))
    assert board.explain_order("sample").startswith("Ranked by YOXLA score (higher first), then mean gold")
    shown = [v.name for v in board.shown("sample")]
    assert shown == ["a-unsure", "b-sure", "c-no-probs"]  # same score: by name
    assert [v.name for v in board.ranked("sample")] == ["b-sure", "a-unsure", "c-no-probs"]
    # per task: the task's own score and calibration
    assert [v.name for v in board.ranked("sample", task_id="nli_v1")] == ["b-sure", "a-unsure", "c-no-probs"]


def test_verdict_carries_task_and_pooled_calibration(board, setting) -> None:
    _, rows, ids = setting
    by_name = {v.name: v for v in board.shown("sample")}
    sure = by_name["b-sure"]
    rec = sure.tasks["nli_v1"]
    assert rec.calibration is not None and rec.calibration["n_scored"] == 10
    assert rec.calibration["mean_gold_p"] == pytest.approx(0.8)
    assert rec.calibration["controls"] == {
        "n": 2,
        "valid_choice_rate": 1.0,
        "mean_max_probability": pytest.approx(0.8),
        "n_with_probs": 2,
    }
    assert rec.calibration["groups"]["n_groups"] == 2
    assert rec.p_gold is not None and np.allclose(rec.p_gold, 0.8)
    assert rec.top == [r["label"] for r in rows["nli_v1"]]
    assert sure.calibration["overall"]["mean_gold_p"] == pytest.approx(0.8)
    assert set(sure.calibration["blocks"]) == {"understanding"}
    entry = sure.ranking_entry()
    assert entry["yoxla"] == sure.scores["yoxla"] and entry["mean_gold_p"] == pytest.approx(0.8)
    # Without probabilities: groups and controls still reported (a cue-only baseline gets them too).
    plain = by_name["c-no-probs"].tasks["nli_v1"]
    assert plain.calibration is not None and plain.calibration["n_with_probs"] == 0
    assert plain.calibration["groups"]["n_groups"] == 2 and plain.p_gold is None
    assert [i for i, c in zip(ids, plain.control, strict=True) if c] == ids[:2]  # type: ignore[arg-type]


def test_bootstrap_leaves_the_controls_out(board) -> None:
    boot = board.boot("sample")
    t = boot.task_ids.index("nli_v1")
    models = board.shown("sample")
    for m, v in enumerate(models):
        rec = v.tasks["nli_v1"]
        assert rec.scored_scores.shape == (10,)
        # every replicate is a mean of the ten scored rows, so it lies within their range
        lo, hi = 100 * rec.scored_scores.min(), 100 * rec.scored_scores.max()
        assert (boot.task_reps[m, t] >= lo - 1e-9).all() and (boot.task_reps[m, t] <= hi + 1e-9).all()
        assert rec.score == pytest.approx(100 * rec.scored_scores.mean())


def test_a_forged_group_consistency_is_excluded(setting, tmp_path: Path) -> None:
    import json

    from yoxla.admission.rules import check_file
    from yoxla.record.signing import finalize

    ed, rows, _ = setting
    doc = build_result("first", edition=ed, rows=rows, model="m")
    doc["tasks"]["nli_v1"]["calibration"]["groups"]["n_consistent"] += 1
    data = DataSource()
    data._cache["sample"] = EditionRows(rows, "synthetic")
    path = write(tmp_path / "f.json", finalize(json.loads(json.dumps(doc))))
    v = check_file(path, data=data, editions={"sample": ed}, use_cache=False)
    assert not v.admitted and any("calibration.groups.n_consistent" in r for r in v.reasons)


def _dists_over(
    rows: list[dict[str, Any]], space: tuple[str, ...], p_gold: float
) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for row in rows:
        rest = (1 - p_gold) / (len(space) - 1)
        dist = LabelDistribution.from_masses(
            space, {lb: (p_gold if lb == row["label"] else rest) for lb in space}
        )
        assert dist is not None
        out.append(dist.to_dict())
    return out


def test_the_pooled_table_compares_models_on_the_items_they_share(setting, tmp_path: Path) -> None:
    from yoxla.board import calibration
    from yoxla.board.prepared import prepare

    ed, rows, _ = setting
    folder = tmp_path / "results"
    senti = ("positive", "neutral", "negative")
    # "wide" has probabilities on nli and sentiment (sentiment badly calibrated), "narrow" on nli only.
    both = {
        "nli_v1": _dists_over(rows["nli_v1"], SPACE, 0.8),
        "sentiment_v1": _dists_over(rows["sentiment_v1"], senti, 0.2),
    }
    for model, dists in (("wide", both), ("narrow", {"nli_v1": both["nli_v1"]})):
        doc = build_result(
            "first", edition=ed, rows=rows, model=model, display_name=model, distributions=dists
        )
        write(folder / "sample" / f"baseline__{model}.json", doc)
    data = DataSource()
    data._cache["sample"] = EditionRows(rows, "synthetic")
    board = load_board(folder, data=data, editions={"sample": ed}, B=50)
    wide = next(v for v in board.shown("sample") if v.name == "wide")
    assert wide.calibration["overall"]["n_with_probs"] > 10  # stored: pooled over both its tasks
    cal = calibration.board_calibration(prepare(board, floors=False).edition("sample"), B=50)
    shown, _ = calibration.scope_table(cal, calibration.OVERALL)
    assert len(shown) == 2 and len(set(shown["With probabilities"])) == 1  # one item set for both rows
    assert shown["With probabilities"].iloc[0] == "10 of 10"  # nli's ten scored rows (two are controls)
    row = {r.model.name: r for r in cal.rows[calibration.OVERALL]}
    assert row["wide"].report["mean_gold_p"] == pytest.approx(0.8)  # sentiment's 0.2 left out
    assert "sentiment_v1" in cal.notes[calibration.OVERALL] and "nli_v1" in cal.notes[calibration.OVERALL]
    assert any("shared task" in label for label, scope in cal.scopes if scope == calibration.OVERALL)
    # Its own task scope keeps the sentiment numbers of the one model that has them.
    assert [r.model.name for r in cal.rows[calibration.scope_id("task", "sentiment_v1")]] == ["wide"]
