"""Tables, figures, explorer, routing and the app's views, without a browser."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from leaderboard_helpers import COMMITTED, REPO, view_context, write

from yoxla.admission.gold import DataSource
from yoxla.board import explorer
from yoxla.board.bootstrap import average_ranks, mcnemar, resample_counts, spearman_reps
from yoxla.board.loading import Board, load_board, model_key
from yoxla.board.prepared import Prepared, block_title, prepare, rank_ranges
from yoxla.board.published import publications
from yoxla.data.editions import load_edition, load_rows
from yoxla.score.stats import spearman
from yoxla.testing.synthetic import PLANTED, build_result, edition_for_rows, planted_answers
from yoxla.views import model_tables
from yoxla.views.blocks import BLOCK_COLUMNS, block_figure
from yoxla.views.breakdowns import breakdown_heatmap
from yoxla.views.compare import compare_figure, compare_table
from yoxla.views.diagnostics import diagnostics_table, near_miss_figure, span_figure, span_table
from yoxla.views.format import TASK_SHORT, task_short
from yoxla.views.leaderboard_tables import (
    COLUMN_SETS,
    FLOOR_NAME,
    REPORTED_RANK,
    Filters,
    leaderboard_figure,
    leaderboard_frame,
    leaderboard_view,
    reported_table,
    reported_vs_admitted,
    unchecked_table,
)
from yoxla.views.plot import to_json
from yoxla.views.routing import resolve
from yoxla.views.tasks import spreads_figure, spreads_table, task_figure

EVIL = "<script>x</script>"
REPORTED = "openai/gpt-4o-mini"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    """The committed files, a planted one with metadata, and a v1 file whose rows are not here."""
    root = tmp_path_factory.mktemp("results")
    (root / "sample").mkdir()
    for p in COMMITTED:
        shutil.copy(p, root / "sample" / p.name)
    write(
        root / "sample" / "planted.json",
        build_result(
            planted_answers,
            provider="evil",
            model=EVIL,
            metadata={"parameters": 7_000_000_000, "open_weights": True, "licence": "<b>mit</b>"},
        ),
    )
    # A v1 file built on small rows; admitted without them ("not re-checked").
    sample = load_edition("sample")
    rows = {tid: load_rows(sample, tid) for tid in sample.tasks}
    v1 = edition_for_rows("v1", rows)
    write(
        root / "v1" / "openrouter__gpt-4o-mini.json",
        build_result("overlap", edition=v1, rows=rows, provider="openrouter", model=REPORTED),
    )
    board = load_board(root, data=DataSource(allow_hub=False), B=300, editions={"v1": v1, "sample": sample})
    return prepare(board)


@pytest.fixture(scope="module")
def board(prepared: Prepared) -> Board:
    return prepared.board


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
    assert list(rank_ranges(np.array([50.0, 40.0, 10.0]), np.array([60.0, 55.0, 20.0]))[0]) == [1, 1, 3]
    assert mcnemar(np.array([1, 1, 1, 1, 0]), np.array([0, 0, 0, 0, 0]))[:2] == (4, 0)
    assert mcnemar(np.array([1, 0]), np.array([1, 0]))[2] == 1.0


def test_rank_ranges_explain_ties() -> None:
    best, worst = rank_ranges(np.array([50.0, 40.0, 10.0, 45.0]), np.array([60.0, 55.0, 20.0, 70.0]))
    assert list(best) == [1, 1, 4, 1]  # nobody lies wholly above the first three; the last is below all
    assert list(worst) == [3, 3, 4, 3]


def test_leaderboard_is_compact_with_floor_row_and_rank_ranges(prepared: Prepared) -> None:
    ed = prepared.edition("sample")
    frame = leaderboard_frame(ed)
    view = leaderboard_view(frame, ed)
    assert list(view.table.columns) == [
        "Rank",
        "Model",
        "YOXLA",
        "Understanding",
        "Language",
        "Knowledge",
        "RAG",
        "Trust",
    ]
    assert len(view.table) == len(ed.standard.models) + 1 == len(COMMITTED) + 2
    floor = view.floor_row
    assert floor is not None and view.keys[floor] is None
    assert view.table.iloc[floor]["Model"] == FLOOR_NAME
    floor_score = float(view.table.iloc[floor]["YOXLA"])
    above = [float(s.split(" ±")[0]) for s in view.table["YOXLA"][:floor]]
    below = [float(s.split(" ±")[0]) for s in view.table["YOXLA"][floor + 1 :]]
    assert all(s >= floor_score for s in above) and all(s < floor_score for s in below)
    # "72.5 ±2.1" in the cell, both ends of the interval in the CSV frame.
    row = frame[frame["Model"] == "overlap"].iloc[0]
    assert row["YOXLA low"] <= row["YOXLA"] <= row["YOXLA high"]
    shown = view.table[view.table["Model"] == "overlap"].iloc[0]
    assert shown["YOXLA"] == f"{row['YOXLA']:.1f} ±{(row['YOXLA high'] - row['YOXLA low']) / 2:.1f}"
    assert "–" in str(frame["Rank"].iloc[0]) or frame["Rank best"].iloc[0] == frame["Rank worst"].iloc[0]
    assert EVIL in set(view.table["Model"])  # stored as text, shown as text


def test_columns_and_filters_hide_rows_but_keep_ranks(prepared: Prepared) -> None:
    ed = prepared.edition("sample")
    frame = leaderboard_frame(ed)
    wide = leaderboard_view(frame, ed, columns=COLUMN_SETS)
    assert {"NLI", "RAG select", "YOXLA 95% interval", "Provider", "Invalid %", "Size"} <= set(
        wide.table.columns
    )
    assert "±" in wide.table["Understanding"].iloc[1]
    evil = leaderboard_view(frame, ed, filters=Filters(weights="open"))
    models = [m for m in evil.table["Model"] if m != FLOOR_NAME]
    assert models == [EVIL]
    rank = frame.loc[frame["Model"] == EVIL, "Rank"].iloc[0]
    assert evil.table.loc[evil.table["Model"] == EVIL, "Rank"].iloc[0] == rank
    assert frame.loc[frame["Model"] == EVIL, "Size band"].iloc[0] == "4–15B"
    for f, n in [
        (Filters(size="4–15B"), 1),
        (Filters(weights="unknown"), len(COMMITTED)),
        (Filters(providers=("baseline",)), len(COMMITTED)),
        (Filters(trust="verified"), 0),
        (Filters(search="OVER"), 1),
    ]:
        assert leaderboard_view(frame, ed, filters=f).shown == n, f


def test_unchecked_and_reported_stay_apart(prepared: Prepared) -> None:
    v1 = prepared.edition("v1")
    assert v1.standard.empty and len(v1.unchecked) == 1
    assert leaderboard_frame(v1).empty  # never ranked
    un = unchecked_table(v1)
    assert list(un["File"]) == ["v1/openrouter__gpt-4o-mini.json"] and "Why not re-checked" in un
    (pub,) = publications()
    assert pub.edition == "v1" and len(pub.models) == 9 and pub.date == "2026-09-13"
    for m in pub.models:  # the reported YOXLA is the mean of the reported blocks
        assert abs(sum(m.blocks.values()) / 4 - m.yoxla) < 0.006
    assert len(reported_table(v1)) == 9
    side = reported_vs_admitted(v1)
    assert set(side["Model (as reported)"]) == {REPORTED}
    yoxla = side[side["Level"] == "YOXLA"].iloc[0]
    assert float(yoxla["Admitted − reported"]) == pytest.approx(float(yoxla["Admitted"]) - 67.96, abs=0.01)
    assert reported_table(prepared.edition("sample")).empty


def test_floors_and_chance(prepared: Prepared) -> None:
    ed = prepared.edition("sample")
    assert ed.reference.available
    for tid in ed.standard.task_ids:  # the committed files are the cue-only strategies themselves
        best_file = max(v.tasks[tid].score for v in ed.standard.models if v.provider == "baseline")
        assert ed.reference.best(tid) == pytest.approx(best_file)
    assert ed.reference.chance["nli_v1"] == pytest.approx(100 / 3)
    assert ed.reference.chance["knowledge_choice_v1"] == pytest.approx(5.0)
    assert ed.reference.chance["sts_v1"] == 0.0 and ed.reference.chance["extractive_qa_v1"] is None
    assert not prepared.edition("v1").reference.available  # no v1 rows here: no floors, still chance
    assert prepared.edition("v1").reference.chance["nli_v1"] == pytest.approx(100 / 3)


def test_diagnostics_show_every_metric_and_na(prepared: Prepared) -> None:
    models = prepared.edition("sample").standard.models
    evil = next(v for v in models if v.provider == "evil")
    assert "mae" not in evil.tasks["sts_v1"].metrics  # no valid STS answer: no error to report
    diag = diagnostics_table(models, "sts_v1")
    assert diag.loc[diag["Model"] == EVIL, "MAE (valid only)"].iloc[0] == "n/a"
    assert diag.loc[diag["Model"] == "overlap", "MAE (valid only)"].iloc[0] != "n/a"
    span = diagnostics_table(models, "extractive_qa_v1")
    for label in ("span precision", "exact-span rate", "unsupported rate", "over-sentence rate", "token F1"):
        assert label in span
    assert {"normalised EM", "strict EM"} <= set(span.columns)
    cls = diagnostics_table(models, "nli_v1")
    assert {"macro-F1", "modal answer share", "invalid-output rate"} <= set(cls.columns)
    long = model_tables.model_diagnostics(evil)
    assert set(long["Task"]) == set(evil.tasks)
    bd = model_tables.model_breakdowns(evil)
    assert {"class", "phenomenon", "claim_type"} <= set(bd["By"])
    nm = model_tables.model_near_miss(evil)
    assert len(nm) > 0 and (nm["Outputs"] > 0).all()
    why = span_table(models, prepared.edition("sample").standard.task_ids)
    assert (
        set(why["Task"]) == {"extractive_qa_v1", "qa_abstention_v1"}
        and why["Why they differ"].str.len().min() > 0
    )


def test_model_page_tables(prepared: Prepared) -> None:
    ed = prepared.edition("sample")
    r = ed.standard
    v = r.models[r.index("sample/baseline__overlap.json")]
    scores = model_tables.model_scores(v, r, ed)
    assert list(scores["Level"]).count("task") == 11 and scores.iloc[0]["Name"] == "YOXLA"
    assert scores.iloc[0]["Rank"].endswith(f"of {len(r.models)}")
    assert (scores[scores["Level"] == "task"]["Best floor"] != "n/a").all()
    facts = dict(zip(*model_tables.model_facts(v, ed).T.values, strict=True))
    assert facts["File"] == "sample/baseline__overlap.json" and facts["Content digest"].startswith("sha256:")
    assert facts["Parameters"] == "not stated"
    evil = next(m for m in r.models if m.provider == "evil")
    efacts = dict(zip(*model_tables.model_facts(evil, ed).T.values, strict=True))
    assert efacts["Parameters"] == "7B" and efacts["Weights"] == "open" and efacts["Licence"] == "<b>mit</b>"
    weak = model_tables.weakest_tasks(v, ed)
    assert len(weak) == 3 and list(weak["Margin"]) == sorted(weak["Margin"])
    v1 = prepared.edition("v1")
    unchecked = v1.unchecked[0]
    s = model_tables.model_scores(unchecked, None, v1)
    assert (s["95% interval"] == "n/a").all()


def _figure_ok(fig: dict[str, Any]) -> None:
    lay = fig["layout"]
    assert lay["title"]["text"].strip()
    if fig["data"]:
        for key, axis in lay.items():
            if key.startswith(("xaxis", "yaxis")) and axis.get("visible", True):
                assert axis["title"]["text"].strip(), key
    else:
        assert lay["annotations"][0]["text"].strip()
    json.loads(to_json(fig))  # strict JSON: no NaN


def test_figures_have_titles_data_or_a_message(prepared: Prepared) -> None:
    ed, v1 = prepared.edition("sample"), prepared.edition("v1")
    models = ed.standard.models
    v = models[0]
    made = [
        leaderboard_figure(ed),
        spreads_figure(ed),
        task_figure(ed, "nli_v1"),
        breakdown_heatmap(models, "rag_verification_v1", "sample"),
        breakdown_heatmap(models, "nli_v1", "sample", "per_class_accuracy"),
        near_miss_figure(models, None, "sample"),
        span_figure(models, ed.standard.task_ids, "sample"),
        model_tables.model_figure(v, ed.standard, ed),
        model_tables.model_figure(v1.unchecked[0], None, v1),
        compare_figure(compare_table(ed.standard, models[0].key, models[1].key), "sample"),
    ]
    made += [block_figure(ed, b) for b in ed.standard.blocks]
    for fig in made:
        _figure_ok(fig)
        assert fig["data"]
    empty = [
        leaderboard_figure(v1),
        spreads_figure(v1),
        block_figure(v1, "rag"),
        breakdown_heatmap([], "nli_v1", "v1"),
        compare_figure(pd.DataFrame(), "v1"),
    ]
    for fig in empty:
        _figure_ok(fig)
        assert not fig["data"]
        assert "v1" in fig["layout"]["annotations"][0]["text"] or fig is empty[-1]
    assert EVIL not in json.dumps(made) and "&lt;script&gt;" in json.dumps(made)


def test_block_plot_gives_each_task_its_own_panel(prepared: Prepared) -> None:
    fig = block_figure(prepared.edition("sample"), "understanding")
    axes = [t["xaxis"] for t in fig["data"]]
    assert len(axes) == len(set(axes)) == 7  # the block and its six tasks, never on one row together
    lay = fig["layout"]
    boxes = [
        (
            lay["xaxis" if t["xaxis"] == "x" else f"xaxis{t['xaxis'][1:]}"]["domain"],
            lay["yaxis" if t["yaxis"] == "y" else f"yaxis{t['yaxis'][1:]}"]["domain"],
        )
        for t in fig["data"]
    ]
    for (xa, ya), (xb, yb) in itertools.combinations(boxes, 2):  # panels never overlap each other
        assert xa[1] <= xb[0] or xb[1] <= xa[0] or ya[1] <= yb[0] or yb[1] <= ya[0], (xa, ya, xb, yb)
    # at most two panels a row: each wide enough for its title on a phone's screen
    assert max(sum(1 for _, y in boxes if y == row) for _, row in boxes) == BLOCK_COLUMNS == 2


def test_breakdown_heatmap_colours_few_item_cells(prepared: Prepared) -> None:
    fig = breakdown_heatmap(prepared.edition("sample").standard.models, "minimal_pairs_v1", "sample")
    z = np.array(fig["data"][0]["z"], dtype=float)
    assert np.isfinite(z).all()  # every cell coloured by its score, none painted grey
    assert all(t.endswith("*") for row in fig["data"][0]["text"] for t in row)  # n=2: marked, not hidden
    assert "fewer than 10" in fig["layout"]["title"]["text"]


def test_spreads_mark_floor_and_chance(prepared: Prepared) -> None:
    fig = spreads_figure(prepared.edition("sample"))
    names = [t["name"] for t in fig["data"]]
    assert names == ["a model", "best cue-only floor", "chance level"]
    table = spreads_table(prepared.edition("sample"))
    assert list(fig["layout"]["yaxis"]["ticktext"]) == [task_short(t) for t in table["Task"]]
    # Each task's dots stay within half a row of it, whatever the number of rows (one-task suites).
    lo, hi = sorted(fig["layout"]["yaxis"]["range"])
    assert (lo, hi) == (-0.5, len(table) - 0.5)
    ys = fig["data"][0]["y"]
    assert all(abs(y - round(y)) <= 0.2 for y in ys) and lo < min(ys) and max(ys) < hi


def test_explorer_filters_pages_and_views(board: Board) -> None:
    a, b = "sample/baseline__overlap.json", "sample/baseline__first.json"
    df = explorer.filter_examples(board, "sample", "extractive_qa_v1", a)
    part, page, info = explorer.page_of(df, 1, size=5)
    assert len(part) == 5 and page == 1 and "page 1 of" in info
    for wanted in (0, -3):
        assert explorer.page_of(df, wanted, size=5)[1] == 1  # page 0 is page 1, no error
    assert explorer.page_of(df, 10**6, size=5)[1] == -(-len(df) // 5)
    right_wrong = explorer.filter_examples(board, "sample", "extractive_qa_v1", a, b, pair="A right, B wrong")
    assert len(right_wrong) > 0 and (right_wrong["A verdict"] == "correct").all()
    assert (right_wrong["B verdict"] != "correct").all()
    wrong = explorer.filter_examples(board, "sample", "nli_v1", a, verdict="wrong")
    assert (wrong["A verdict"] == "wrong").all()
    ex_id = df["id"][0]
    view = explorer.example_view(board, "sample", "extractive_qa_v1", a, ex_id)
    assert view is not None and view.gold and view.highlight
    assert {lab for _, lab in view.highlight} & {"gold", "both"}
    evil = model_key(next(v for v in board.shown("sample") if v.provider == "evil"))
    inv = explorer.filter_examples(board, "sample", "nli_v1", evil, verdict="invalid")
    assert len(inv) == 12
    v = explorer.example_view(board, "sample", "nli_v1", evil, inv["id"][0])
    assert v is not None and v.answer == PLANTED[0] and v.verdict.startswith("invalid")
    assert 0 < len(explorer.filter_examples(board, "sample", "nli_v1", evil, search="onerror")) < 12
    kinds = explorer.near_miss_values(board, "sample", "nli_v1", evil)
    assert kinds and len(explorer.filter_examples(board, "sample", "nli_v1", evil, near_miss=kinds[0])) > 0
    assert explorer.breakdown_values(board, "sample", "az_tr_interference_v1")


def test_reasoning_is_folded_apart() -> None:
    assert explorer.split_reasoning("<think>hmm\nlong</think>B") == ("B", "hmm\nlong")
    assert explorer.split_reasoning("<think>never closed") == ("", "never closed")


def test_deep_links_resolve(prepared: Prepared) -> None:
    r = resolve(prepared, {"model": "v1/openrouter__gpt-4o-mini.json"})
    assert (r.tab, r.edition) == ("model", "v1")
    r = resolve(prepared, {"model": "sample/baseline__overlap.json", "tab": "explorer", "edition": "v1"})
    assert (r.tab, r.edition) == ("explorer", "sample")  # the model's own edition wins
    assert resolve(prepared, {"task": "nli_v1"}).tab == "tasks"
    r = resolve(prepared, {"tab": "<script>", "edition": "v9", "model": "../../etc/passwd"})
    assert (r.tab, r.edition) == ("leaderboard", prepared.default_edition())


def test_app_import_is_light() -> None:
    code = "import sys, app; bad = [m for m in ('gradio', 'pandas', 'datasets', 'torch') if m in sys.modules]; print(bad)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_every_view_renders_both_editions_by_name(prepared: Prepared) -> None:
    """Each view's render and deep-link updates are dicts over its own declared outputs."""
    sys.path.insert(0, str(REPO))
    import app

    demo = app.build_app(board=prepared.board)
    assert demo is not None and len(demo.fns) > 20
    from yoxla.views.explorer import Query

    ctx = view_context(prepared)
    views = list(ctx.views.values())
    params = [
        {},
        {"model": "sample/baseline__overlap.json", "task": "nli_v1", "verdict": "wrong"},
        {"model": "v1/openrouter__gpt-4o-mini.json"},
        {"model": "nope", "task": "nope"},
    ]
    for v in views:
        allowed = set(map(id, v.outputs()))
        for edition in prepared.editions:  # both editions and every committed suite's board
            for p in params:
                out = v.render(ctx, edition, p)
                assert set(map(id, out)) <= allowed, (v.tab_id, edition, p)
    model = ctx.views["model"]
    page = model.show(ctx, "v1", "v1/openrouter__gpt-4o-mini.json")
    assert page[model.picker]["value"] == "v1/openrouter__gpt-4o-mini.json"
    assert "not re-checked" in page[model.summary].lower()
    assert (
        Path(page[model.download]["value"]).read_bytes()
        == (Path(prepared.board.results_dir) / "v1" / "openrouter__gpt-4o-mini.json").read_bytes()
    )
    exp = ctx.views["explorer"]
    opened = exp.open(ctx, "sample", "nli_v1", "sample/baseline__overlap.json", "wrong")
    assert opened[exp.verdict] == "wrong" and opened[exp.page] == 1
    zero = exp.results(ctx, "sample", Query("nli_v1", "sample/baseline__overlap.json", page=0))
    assert zero[exp.page] == 1


def test_csv_downloads_are_formula_safe(tmp_path: Path) -> None:
    from yoxla.views.base import Downloads

    d = Downloads(tmp_path)
    frame = pd.DataFrame({"Model": ["=HYPERLINK(1)", "@x", "ok"], "Diff": ["+1.5", "-2.0", "0"]})
    text = Path(d.csv("t", frame)).read_text(encoding="utf-8")
    assert "'=HYPERLINK(1)" in text and "'@x" in text and "+1.5" in text and "'+1.5" not in text
    assert d.csv("t", frame) == d.csv("t", frame)


def test_app_prints_what_it_does_at_start_up(tmp_path: Path) -> None:
    results = tmp_path / "results" / "sample"
    results.mkdir(parents=True)
    for p in COMMITTED[:3]:
        shutil.copy(p, results / p.name)
    (results / "broken.json").write_text("{", encoding="utf-8")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "YOXLA_RESULTS_DIR": str(tmp_path / "results"),
        "GRADIO_SERVER_PORT": str(port),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "PYTHONUNBUFFERED": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "app.py"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 240
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if "ready at" in line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    text = "\n".join(lines)
    assert "found 4 result file(s)" in text, text
    assert "3 admitted (3 re-checked, 0 not re-checked), 1 excluded" in text, text
    assert f"ready at http://127.0.0.1:{port}" in text, text
    assert text.index("found") < text.index("admitted") < text.index("ready at")


def test_reported_results_fill_the_first_screen_of_v1_never_ranked(prepared: Prepared) -> None:
    v1 = prepared.edition("v1")
    assert prepared.default_edition() == "v1"  # the published benchmark opens first
    view = leaderboard_view(leaderboard_frame(v1), v1)
    (pub,) = publications()
    assert len(view.table) == len(pub.models) and view.reported_rows == list(range(len(pub.models)))
    assert set(view.table["Rank"]) == {REPORTED_RANK} and view.keys == [None] * len(pub.models)
    assert list(view.table.columns[:3]) == ["Rank", "Model", "YOXLA"]  # name and score first (narrow)
    scores = [float(x) for x in view.table["YOXLA"]]
    assert scores == sorted(scores, reverse=True)
    top = max(pub.models, key=lambda m: m.yoxla)
    assert view.table.iloc[0]["Model"] == top.model and view.table.iloc[0]["YOXLA"] == f"{top.yoxla:.1f}"
    assert all("not re-checked" in t for t in view.table["Trust"])
    # The search filter applies to them; a filter they cannot answer (weights) leaves them out.
    assert len(leaderboard_view(leaderboard_frame(v1), v1, filters=Filters(search="qwen")).table) == 3
    assert leaderboard_view(leaderboard_frame(v1), v1, filters=Filters(weights="open")).table.empty
    # A board with re-checked files lists them first, and none of sample's rows is reported.
    sample = prepared.edition("sample")
    assert leaderboard_view(leaderboard_frame(sample), sample).reported_rows == []


def test_a_float_column_is_shown_with_one_number_of_decimals() -> None:
    import pandas as pd

    from yoxla.views.base import one_format

    frame = pd.DataFrame({"Score": [69.2, 50.0, 33.25], "Task": ["a", "b", "c"], "n": [1, 2, 3]})
    shown = one_format(frame).to_string()
    assert "50.00" in shown and "69.20" in shown and "33.25" in shown  # never "50" beside "69.2"
    assert one_format(frame[["Task", "n"]]) is not None and frame["Score"].iloc[1] == 50.0  # values kept


def _as_sent(value: Any) -> Any:
    import gradio as gr

    return json.loads(json.dumps(gr.Dataframe(interactive=False).postprocess(value).model_dump()))


def _rendered_tables(prepared: Prepared) -> Iterator[tuple[str, str, Any]]:
    """(tab, board, value) of every table every view renders on every board of ``prepared``."""
    from yoxla.views.base import TableValue

    ctx = view_context(prepared)
    for v in ctx.views.values():
        for edition in prepared.editions:
            for out in v.render(ctx, edition, {}).values():
                got = out.get("value") if isinstance(out, dict) else None
                if isinstance(got, TableValue):
                    yield v.tab_id, edition, got


def test_table_values_are_what_gradio_makes_of_the_styler(prepared: Prepared) -> None:
    """A table's value is built without a pandas Styler; Gradio must send the very same cells,
    display strings and styles as from the Styler (formatted floats, n/a, styled rows)."""
    import pandas as pd

    from yoxla.views.base import one_format, table_value, task_names

    frame = pd.DataFrame(
        {
            "Score": [69.2, 50.0, float("nan")],
            "Task": ["ə", None, "c"],
            "n": [1, 2, 3],
            "Share": [0.125, 1.0, 2.5],
        }
    )
    assert _as_sent(table_value(frame)) == _as_sent(one_format(frame))
    assert _as_sent(table_value(frame))["metadata"]["display_value"][2][0] == "n/a"
    plain = frame[["Task", "n"]]
    assert _as_sent(table_value(plain)) == _as_sent(plain)
    styles = {0: "color: #6b6b6b; background-color: #eeeeee", 2: "background-color: #fff8e6"}
    css = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for i, style in styles.items():
        css.iloc[i] = style
    styled = one_format(frame).apply(lambda _: css, axis=None)
    sent = _as_sent(table_value(frame, styles))
    assert sent == _as_sent(styled) and sent["metadata"]["styling"][1] == [""] * 4
    assert sent["metadata"]["styling"][0][3] == styles[0] and sent["metadata"]["display_value"][1][1] == "n/a"
    # and every table the views render, on every board, as its Styler would have been sent
    seen = 0
    for tab_id, _, got in _rendered_tables(prepared):
        if "Rank" in got.frame.columns:
            continue
        named = task_names(got.frame)  # a Task column shows names over its ids
        sent, want = _as_sent(got), _as_sent(one_format(got.frame))
        if named is not None:
            assert sent["data"] == want["data"], tab_id  # the ids stay the values
            as_named = _as_sent(one_format(named))
            meta = as_named["metadata"]
            cells = meta["display_value"] if meta else [[str(x) for x in r] for r in as_named["data"]]
            assert sent["metadata"]["display_value"] == cells, tab_id
        else:
            assert sent == want, tab_id
        seen += 1
    assert seen > 10


def test_every_table_names_benchmark_tasks_as_the_leaderboard_does(prepared: Prepared) -> None:
    """A task is named the same in every view: no table shows a benchmark task's id where the
    leaderboard's columns and the figures show its name (the id stays the cell's value)."""
    ids = set(TASK_SHORT)
    tasks_shown = 0
    for tab_id, edition, got in _rendered_tables(prepared):
        assert not ids & set(got["headers"]), (tab_id, edition, got["headers"])
        meta = got.get("metadata")
        shown = {str(c) for row in (meta["display_value"] if meta else got["data"]) for c in row}
        assert not ids & shown, (tab_id, edition, ids & shown)
        tasks_shown += "Task" in got["headers"] and bool(set(TASK_SHORT.values()) & shown)
    assert tasks_shown >= 3  # the model page's tables, at least


def _decimals_of(cell: str) -> int | None:
    """The decimals of a cell that shows one number (``72.5``, ``72.5 ±2.1``, ``69.2%``); None otherwise."""
    import re

    m = re.fullmatch(r"[-+−]?\d[\d,]*(?:\.(\d+))?%?(?: ±\d+(?:\.\d+)?)?", cell.strip())
    return None if m is None else len(m.group(1) or "")


@pytest.fixture(scope="module")
def with_suites() -> Prepared:
    """The committed results folder: the sample edition and every committed suite's board."""
    return prepare(load_board(REPO / "results", data=DataSource(allow_hub=False), B=200))


@pytest.mark.parametrize("folder", ["prepared", "with_suites"])
def test_numbers_in_a_column_share_one_format_on_every_board(
    folder: str, request: pytest.FixtureRequest
) -> None:
    """``69.2`` beside ``50`` in one column was a finding: in every table of every view of every
    board (suite boards too), the cells of a column that show numbers show one number of decimals."""
    checked, bad = 0, []
    for tab_id, edition, got in _rendered_tables(request.getfixturevalue(folder)):
        meta = got.get("metadata")
        cells = meta["display_value"] if meta else got["data"]
        for j, head in enumerate(got["headers"]):
            if head == "Value" or tab_id == "explorer":
                continue  # long form (each row its own metric); the dataset's and the model's text
            places = {_decimals_of(str(row[j])) for row in cells} - {None}
            if len(places) > 1:
                bad.append((tab_id, edition, head, [row[j] for row in cells][:8]))
            checked += 1
    assert bad == [] and checked > 50


def test_tables_whose_rows_have_different_n_say_each_rows_n(prepared: Prepared) -> None:
    """The model page's scores and the A − B table have a row per task, block and overall, over
    different numbers of items: each row says its own n."""
    ed = prepared.edition("sample")
    a, b = ed.standard.models[0], ed.standard.models[1]
    scores = model_tables.model_scores(a, ed.standard, ed).set_index("Name")
    per_task = {tid: len(t.ids) for tid, t in a.tasks.items()}
    assert len(set(per_task.values())) > 1  # the rows' n do differ
    for tid, n in per_task.items():
        assert scores.loc[tid, "Items"] == n, tid
    for blk, tids in ed.groups_of_tasks().items():
        assert scores.loc[block_title(blk), "Items"] == sum(per_task[t] for t in tids if t in per_task), blk
    assert scores.loc[ed.headline, "Items"] == sum(per_task.values())
    diff = compare_table(ed.standard, a.key, b.key).set_index("Name")
    for tid, n in per_task.items():
        assert diff.loc[tid, "Items"] == n, tid
    assert diff.loc[ed.headline, "Items"] == sum(per_task.values())


def test_a_benchmark_task_is_scored_as_its_package_suite_first_grader_says() -> None:
    from yoxla.views.format import metric_keys, task_kind

    kinds = {t: task_kind(t) for t in ("nli_v1", "extractive_qa_v1", "qa_abstention_v1", "sts_v1")}
    assert kinds == {
        "nli_v1": "classification",
        "extractive_qa_v1": "span",
        "qa_abstention_v1": "abstention",
        "sts_v1": "correlation",
    }
    assert task_kind("no_such_task") is None and metric_keys("no_such_task") == []
    assert metric_keys("nli_v1")[:2] == ["accuracy", "macro_f1"]


def test_the_explorer_reads_a_benchmark_task_off_its_package_suite(board: Board) -> None:
    fields = explorer.row_fields("rag_selection_v1")
    assert fields.inputs == ("question", "passages") and fields.numbered == {"passages"}
    assert fields.gold == "label" and fields.options_field == "passages" and fields.abstain is None
    assert explorer.row_fields("qa_abstention_v1").abstain == "Cavab yoxdur"
    # the breakdown filter: the first field the package suite declares, its values from the rows
    rows = load_rows(load_edition("sample"), "extractive_qa_v1")
    want = sorted({str(r.get("answer_type")) for r in rows})
    assert len(want) > 1 and explorer.breakdown_values(board, "sample", "extractive_qa_v1") == want
    a = "sample/baseline__overlap.json"
    df = explorer.filter_examples(board, "sample", "extractive_qa_v1", a, breakdown=want[0])
    assert len(df) and set(df["answer_type"]) == {want[0]}


def test_a_heatmap_defaults_to_the_field_the_files_store(prepared: Prepared) -> None:
    from yoxla.views.breakdowns import stored_field

    models = prepared.edition("sample").standard.models
    assert stored_field(models, "minimal_pairs_v1") == "phenomenon"  # stored besides its classes
    assert stored_field([], "minimal_pairs_v1") is None and stored_field(models, "no_such_task") is None
    title = breakdown_heatmap(models, "minimal_pairs_v1", "sample")["layout"]["title"]["text"]
    assert "score by phenomenon" in title
