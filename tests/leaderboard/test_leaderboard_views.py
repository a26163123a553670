"""Tables, bootstrap, explorer and the app's layout, without a browser."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from leaderboard_helpers import REPO, write

from yoxla.evaluators import spearman
from yoxla.leaderboard import explorer, figures, tables
from yoxla.leaderboard.board import Board, load_board, model_key
from yoxla.leaderboard.bootstrap import arena_ranks, average_ranks, mcnemar, resample_counts, spearman_reps
from yoxla.leaderboard.synthetic import PLANTED, build_result, planted_answers


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Board:
    from leaderboard_helpers import COMMITTED

    root = tmp_path_factory.mktemp("results")
    for p in COMMITTED:
        (root / "sample").mkdir(exist_ok=True)
        shutil.copy(p, root / "sample" / p.name)
    write(
        root / "sample" / "planted.json",
        build_result(planted_answers, provider="evil", model="<script>x</script>"),
    )
    return load_board(root, allow_hub=False, B=300)


def test_bootstrap_helpers_agree_with_references() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, (5, 25)).astype(float)
    ref = np.array([[sorted(r).index(v) + 1 + (list(r).count(v) - 1) / 2 for v in r] for r in x])
    assert np.allclose(average_ranks(x), ref)
    pred, gold = rng.integers(0, 6, (2, 40)).astype(float), rng.uniform(0, 5, 40)
    idx, counts = resample_counts(40, 50, rng)
    assert np.allclose(counts.sum(axis=1), 40)
    reps = spearman_reps(pred, gold, idx)
    assert abs(reps[1, 7] - spearman(pred[1][idx[7]], gold[idx[7]])) < 1e-12
    assert list(arena_ranks(np.array([50.0, 40.0, 10.0]), np.array([60.0, 55.0, 20.0]))) == [1, 1, 3]
    assert mcnemar(np.array([1, 1, 1, 1, 0]), np.array([0, 0, 0, 0, 0]))[:2] == (4, 0)
    assert mcnemar(np.array([1, 0]), np.array([1, 0]))[2] == 1.0


def test_leaderboard_table(board: Board) -> None:
    df = tables.leaderboard_table(board, "sample")
    assert len(df) == len(board.shown("sample")) >= 9
    assert {"Rank", "Model", "Trust", "YOXLA", "YOXLA 95% CI", "Understanding", "RAG 95% CI"} <= set(
        df.columns
    )
    assert df["Rank"].min() == 1 and (df["Rank"].diff().dropna() >= 0).all()
    row = df[df["Model"] == "overlap"].iloc[0]
    lo, hi = (float(x) for x in row["YOXLA 95% CI"].split(" – "))
    assert lo <= row["YOXLA"] <= hi
    assert "<script>x</script>" in set(df["Model"])  # stored as text, shown as text
    assert len(tables.leaderboard_table(board, "sample", search="over")) == 1
    assert tables.leaderboard_table(board, "v1").empty


def test_other_tabs(board: Board) -> None:
    assert set(tables.block_table(board, "sample", "rag").columns) >= {"Model", "rag_selection_v1"}
    spreads = tables.spreads_table(board, "sample")
    assert len(spreads) == 11 and spreads["Range"].is_monotonic_decreasing
    bt = tables.breakdown_tasks(board, "sample")
    assert "az_tr_interference_v1" in bt
    acc, cnt = tables.breakdown_table(board, "sample", "az_tr_interference_v1", min_n=1)
    assert acc.shape == cnt.shape and acc.notna().all().all()
    shown = tables.breakdown_display(board, "sample", "minimal_pairs_v1", min_n=10)
    assert (
        shown.drop(columns="Model")
        .apply(lambda c: c.str.contains(r"^\d+\.\d \(n=2, below 10\)$"))
        .all()
        .all()
    )
    assert not tables.modal_share_table(board, "sample").empty
    assert not tables.span_table(board, "sample").empty
    nm = tables.near_miss_table(board, "sample")
    assert nm.loc[nm["Model"] == "<script>x</script>", "Invalid outputs"].iloc[0] > 0
    keys = [model_key(v) for v in board.shown("sample")]
    cmp = tables.compare_table(board, "sample", keys[0], keys[-1])
    assert cmp.iloc[0]["Name"] == "YOXLA" and "McNemar p" in cmp
    for fig in (
        figures.leaderboard_figure(tables.leaderboard_table(board, "sample")),
        figures.block_figure(board, "sample", "understanding"),
        figures.spreads_figure(board, "sample"),
        figures.breakdown_heatmap(board, "sample", "rag_verification_v1"),
        figures.span_figure(board, "sample"),
        figures.near_miss_figure(board, "sample", None),
    ):
        assert fig.to_dict()["data"]
    assert "<script>" not in figures.leaderboard_figure(tables.leaderboard_table(board, "sample")).to_json()


def test_explorer_filters_pages_and_views(board: Board) -> None:
    a, b = "sample/baseline__overlap.json", "sample/baseline__first.json"
    df = explorer.filter_examples(board, "sample", "extractive_qa_v1", a)
    part, page, info = explorer.page_of(df, 1, size=5)
    assert len(part) == 5 and page == 1 and "page 1 of" in info
    right_wrong = explorer.filter_examples(board, "sample", "extractive_qa_v1", a, b, pair="A right, B wrong")
    assert len(right_wrong) > 0 and (right_wrong["A verdict"] == "correct").all()
    assert (right_wrong["B verdict"] != "correct").all()
    wrong = explorer.filter_examples(board, "sample", "nli_v1", a, verdict="wrong")
    assert (wrong["A verdict"] == "wrong").all()
    ex_id = df["id"][0]
    view = explorer.example_view(board, "sample", "extractive_qa_v1", a, ex_id)
    assert view is not None and view.gold and view.highlight
    assert {lab for _, lab in view.highlight} & {"gold", "both"}
    assert "".join(t for t, _ in view.highlight).startswith(view.inputs.split("\n")[1][:20])
    # Hostile answers come back verbatim, as text.
    evil = model_key(next(v for v in board.shown("sample") if v.provider == "evil"))
    inv = explorer.filter_examples(board, "sample", "nli_v1", evil, verdict="invalid")
    assert len(inv) == 12
    v = explorer.example_view(board, "sample", "nli_v1", evil, inv["id"][0])
    assert v is not None and v.answer == PLANTED[0] and v.verdict.startswith("invalid")
    found = explorer.filter_examples(board, "sample", "nli_v1", evil, search="onerror")
    assert 0 < len(found) < 12
    kinds = explorer.near_miss_values(board, "sample", "nli_v1", evil)
    assert kinds and len(explorer.filter_examples(board, "sample", "nli_v1", evil, near_miss=kinds[0])) > 0
    assert explorer.breakdown_values(board, "sample", "az_tr_interference_v1")


def test_reasoning_is_folded_apart() -> None:
    assert explorer.split_reasoning("<think>hmm\nlong</think>B") == ("B", "hmm\nlong")
    assert explorer.split_reasoning("<think>never closed") == ("", "never closed")


def test_app_import_is_light_and_builds(board: Board) -> None:
    code = "import sys, app; bad = [m for m in ('gradio', 'pandas', 'datasets', 'torch') if m in sys.modules]; print(bad)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    sys.path.insert(0, str(REPO))
    import app

    demo = app.build_app(board=board)
    assert demo is not None and len(demo.fns) > 5


def test_empty_results_folder(tmp_path: Path) -> None:
    b = load_board(tmp_path, allow_hub=False)
    assert b.default_edition() == "sample"
    assert tables.leaderboard_table(b, "sample").empty
    assert tables.spreads_table(b, "sample").empty
