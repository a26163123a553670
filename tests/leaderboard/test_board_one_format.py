"""One format on the benchmark boards: a suite-format file of ``yoxla-sample`` is the legacy file.

The oracle: the eight cue-only strategies are run through ``--suite yoxla-sample --provider
suite-baseline`` into a temporary results folder, laid out as the committed
``results/sample/baseline__<strategy>.json`` files are, and the board built from them is
compared with the board built from the committed legacy (``yoxla-result`` v2) files: the
leaderboard's scores, intervals, ranks and floors, the per-task and block tables, the
breakdowns, the shortcut gate, the diagnostics, the model pages, the explorer's rows and
calibration. What legitimately differs between the two formats is normalised here, each
with its reason, and nothing else.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from leaderboard_helpers import LEGACY

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import admit, check_document
from yoxla.board import breakdown, explorer
from yoxla.board.calibration import board_calibration, model_table, scope_choices, scope_table
from yoxla.board.loading import load_board
from yoxla.board.prepared import EditionData, Prepared, prepare
from yoxla.cli.main import run as cli_run
from yoxla.data.editions import load_edition
from yoxla.record.signing import finalize, write_result
from yoxla.views.blocks import block_table
from yoxla.views.breakdowns import breakdown_display, breakdown_tasks, modal_share_table
from yoxla.views.compare import compare_table
from yoxla.views.diagnostics import (
    diagnostics_table,
    near_miss_table,
    outcomes_table,
    span_table,
    span_tasks,
)
from yoxla.views.leaderboard_tables import leaderboard_frame, leaderboard_view, unchecked_table
from yoxla.views.methodology import admitted_table
from yoxla.views.model_tables import (
    model_breakdowns,
    model_diagnostics,
    model_facts,
    model_near_miss,
    model_scores,
    weakest_tasks,
)
from yoxla.views.tasks import floors_table, spreads_table, task_models_table

STRATEGIES = ("abstain", "first", "longest", "majority", "most_linked", "none_of_them", "overlap", "random")
B = 200


def _run_suite(strategy: str, tmp: Path) -> dict[str, Any]:
    argv = ["run", "--suite", "yoxla-sample", "--provider", "suite-baseline", "--model", strategy]
    argv += ["--run-id", f"one-format-{strategy}", "--no-progress"]
    argv += ["--runs-dir", str(tmp / "runs"), "--results-dir", str(tmp / "out")]
    assert cli_run(argv) == 0
    path = tmp / "out" / "sample" / f"suite-baseline__{strategy}.json"  # the edition's folder
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def suite_docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("one-format-runs")
    return {s: _run_suite(s, tmp) for s in STRATEGIES}


def _prepared(root: Path) -> Prepared:
    board = load_board(
        root, data=DataSource(allow_hub=False), B=B, editions={"sample": load_edition("sample")}
    )
    return prepare(board)


@pytest.fixture(scope="module")
def boards(
    suite_docs: dict[str, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Prepared, Prepared]:
    """(the board of the legacy files, the board of the suite-format files)."""
    assert sorted(p.stem.split("__")[1] for p in LEGACY) == sorted(STRATEGIES)
    legacy = tmp_path_factory.mktemp("legacy")
    shutil.copytree(LEGACY[0].parent, legacy / "sample")
    suite = tmp_path_factory.mktemp("suite-format")
    for s, doc in suite_docs.items():
        # The same path as the committed file of the strategy (so board keys, which are paths
        # under the results folder, are the same): the file name is the format's, not the run's.
        write_result(doc, suite / "sample" / f"baseline__{s}.json")
    return _prepared(legacy), _prepared(suite)


def _normal(frame: pd.DataFrame) -> pd.DataFrame:
    """A view's frame with what is format-specific by construction replaced: the offline provider
    is named ``suite-baseline`` in a suite run and ``baseline`` in a benchmark run."""
    return frame.replace("suite-baseline", "baseline", regex=False).reset_index(drop=True)


def _same(a: pd.DataFrame, b: pd.DataFrame, what: str) -> None:
    assert len(a), f"{what}: the legacy board draws nothing, so nothing is compared"
    pd.testing.assert_frame_equal(_normal(a), _normal(b), check_exact=False, rtol=1e-9, atol=1e-9, obj=what)


def _close(a: Any, b: Any) -> bool:
    """Equal values, numbers to 1e-9, mappings key by key (nested breakdown cells too)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(float(a) - float(b)) <= 1e-9
    return bool(a == b)


def _eds(boards: tuple[Prepared, Prepared]) -> tuple[EditionData, EditionData]:
    return boards[0].edition("sample"), boards[1].edition("sample")


def test_every_suite_format_file_is_admitted_on_the_sample_board(boards) -> None:
    legacy, suite = boards
    assert (
        suite.board.admission_line()
        == legacy.board.admission_line()
        == ("8 admitted (8 re-checked, 0 not re-checked), 0 excluded, 0 superseded")
    )
    for v in suite.board.verdicts:
        assert v.edition == "sample" and v.suite is None and v.source_suite == "yoxla-sample", v.key
        assert v.result_format == "yoxla-result v3" and v.group == "standard"
    # No board "suite · yoxla-sample": a package suite's files are on the edition's board.
    assert "yoxla-sample" not in suite.board.suite_boards() and suite.board.suites() == []
    assert suite.board.suite_boards() == legacy.board.suite_boards()
    assert not any(bid.startswith("suite:yoxla-") for _, bid in suite.board_choices())
    assert [bid for _, bid in suite.board_choices()] == [bid for _, bid in legacy.board_choices()]


def test_scores_intervals_ranks_and_task_records_are_the_legacy_ones(boards) -> None:
    a, b = (ed.standard for ed in _eds(boards))
    assert [v.key for v in a.models] == [v.key for v in b.models] and len(a.models) == len(STRATEGIES)
    assert a.task_ids == b.task_ids and a.blocks == b.blocks
    for name in (
        "yoxla_lo",
        "yoxla_hi",
        "block_lo",
        "block_hi",
        "task_lo",
        "task_hi",
        "rank_best",
        "rank_worst",
        "task_rank_best",
        "task_rank_worst",
    ):
        x, y = getattr(a, name), getattr(b, name)
        np.testing.assert_allclose(np.asarray(x, dtype=float), np.asarray(y, dtype=float), err_msg=name)
    assert np.isfinite(np.asarray(a.task_lo, dtype=float)).any()  # intervals were drawn, sts too
    for va, vb in zip(a.models, b.models, strict=True):
        assert va.scores["yoxla"] == pytest.approx(vb.scores["yoxla"], abs=1e-9)
        assert va.scores["blocks"] == pytest.approx(vb.scores["blocks"], abs=1e-9)
        assert va.scores["tasks"] == pytest.approx(vb.scores["tasks"], abs=1e-9)
        for tid, ra in va.tasks.items():
            rb = vb.tasks[tid]
            assert (ra.block, ra.ids, ra.outcomes, ra.parsed, ra.near_miss) == (
                rb.block,
                rb.ids,
                rb.outcomes,
                rb.parsed,
                rb.near_miss,
            ), (va.key, tid)
            np.testing.assert_allclose(ra.scores, rb.scores, atol=1e-12, err_msg=f"{va.key} {tid}")
            assert (ra.prediction is None) == (rb.prediction is None), (va.key, tid)
            if ra.prediction is not None:
                np.testing.assert_allclose(ra.prediction, rb.prediction, err_msg=f"{va.key} {tid}")
            # The suite file stores every breakdown its manifest declares, and counts grader and
            # extraction errors (none here): more metrics than the legacy file, never others.
            for key, value in ra.metrics.items():
                assert _close(rb.metrics[key], value), (va.key, tid, key, rb.metrics[key], value)


def test_the_leaderboard_block_and_task_tables_are_the_legacy_ones(boards) -> None:
    ea, eb = _eds(boards)
    fa, fb = leaderboard_frame(ea), leaderboard_frame(eb)
    _same(fa, fb, "leaderboard frame")
    _same(leaderboard_view(fa, ea).table, leaderboard_view(fb, eb).table, "leaderboard table")
    _same(admitted_table(ea), admitted_table(eb), "admitted files")
    _same(spreads_table(ea), spreads_table(eb), "task spreads")
    for block in ea.standard.blocks:
        _same(block_table(ea, block), block_table(eb, block), f"block {block}")
    for tid in ea.standard.task_ids:
        _same(
            task_models_table(ea.standard, tid),
            task_models_table(eb.standard, tid),
            f"task {tid}",
        )
        # the floors and the shortcut gate come from the edition's rows: the same on both boards
        _same(floors_table(ea, tid), floors_table(eb, tid), f"floors {tid}")
        _same(modal_share_table(ea.standard), modal_share_table(eb.standard), "modal share")
        _same(
            diagnostics_table(ea.standard.models, tid),
            diagnostics_table(eb.standard.models, tid),
            f"diagnostics {tid}",
        )
        _same(
            outcomes_table(ea.standard.models, tid),
            outcomes_table(eb.standard.models, tid),
            f"outcomes {tid}",
        )
    _same(near_miss_table(ea.standard.models), near_miss_table(eb.standard.models), "near miss")
    spans = span_tasks(ea.standard.task_ids)
    _same(span_table(ea.standard.models, spans), span_table(eb.standard.models, spans), "spans")
    keys = [v.key for v in ea.standard.models]
    _same(
        compare_table(ea.standard, keys[0], keys[1]),
        compare_table(eb.standard, keys[0], keys[1]),
        "compare",
    )


def test_breakdowns_are_the_legacy_ones_for_every_declared_field(boards) -> None:
    """Per task and every field the package suite declares: the legacy board computes the cells
    from the rows, the suite file stores them (re-derived at admission); they are equal."""
    ea, eb = _eds(boards)
    assert breakdown_tasks(ea) == breakdown_tasks(eb)
    assert breakdown_tasks(ea), "the sample board breaks tasks down"
    compared = 0
    for tid in breakdown_tasks(ea):
        for by in ea.breakdown_fields(tid):
            _same(
                breakdown_display(ea, ea.standard.models, tid, by),
                breakdown_display(eb, eb.standard.models, tid, by),
                f"breakdown {tid} by {by.name}",
            )
            compared += 1
        for va, vb in zip(ea.standard.models, eb.standard.models, strict=True):
            assert breakdown.stored(vb.tasks[tid], ea.breakdown_fields(tid)[0].name) is not None
            for by in ea.breakdown_fields(tid):
                got = breakdown.cells(vb, tid, by, None)  # what the suite file stores
                want = breakdown.cells(va, tid, by, ea.row_values.get(tid))
                assert got and _close(got, want), (va.key, tid, by.name, got, want)
    assert compared >= 20


def _facts(v: Any, ed: EditionData) -> dict[str, str]:
    frame = model_facts(v, ed)
    # The offline provider is ``suite-baseline`` in a suite run, ``baseline`` in a benchmark run
    # (the provider's row, and the model id as the provider reported it: ``<provider>/<model>``).
    facts = {
        k: str(x).replace("suite-baseline", "baseline")
        for k, x in zip(frame["Field"], frame["Value"], strict=True)
    }
    # Each run has its own id, time and digest; the result format is what this test varies.
    for key in ("Run id", "Created", "Content digest", "Result format"):
        facts.pop(key)
    return facts


def test_model_pages_are_the_legacy_ones(boards) -> None:
    ea, eb = _eds(boards)
    for va, vb in zip(ea.standard.models, eb.standard.models, strict=True):
        a_facts, b_facts = _facts(va, ea), _facts(vb, eb)
        # The provider's name is the offline provider's of each engine; the notes are equal.
        assert vb.provider == "suite-baseline" and va.provider == "baseline"
        assert a_facts == b_facts, va.key
        _same(model_scores(va, ea.standard, ea), model_scores(vb, eb.standard, eb), "model scores")
        _same(model_diagnostics(va), model_diagnostics(vb), "model diagnostics")
        _same(model_near_miss(va), model_near_miss(vb), "model near misses") if len(
            model_near_miss(va)
        ) else None
        _same(weakest_tasks(va, ea), weakest_tasks(vb, eb), "weakest tasks")
        # every breakdown the legacy file stores, the suite file stores the same (it stores more)
        bd_a, bd_b = model_breakdowns(va), model_breakdowns(vb)
        merged = bd_a.merge(bd_b, how="left", on=["Task", "By", "Value"], suffixes=("", " suite"))
        assert len(bd_b) > len(bd_a) and not merged["n suite"].isna().any()
        assert list(merged["Score %"]) == list(merged["Score % suite"])
        assert list(merged["n"]) == list(merged["n suite"])
    facts = model_facts(eb.standard.models[0], eb)
    fmt = dict(zip(facts["Field"], facts["Value"], strict=True))["Result format"]
    assert fmt == "yoxla-result v3 (suite yoxla-sample)"


def test_the_explorer_reads_the_suite_files_as_the_legacy_ones(boards) -> None:
    (pa, pb), keys = boards, [v.key for v in _eds(boards)[0].standard.models]
    for tid in ("extractive_qa_v1", "nli_v1", "sts_v1", "rag_selection_v1"):
        for filt in ({}, {"verdict": "wrong"}, {"key_b": keys[1], "pair": "they differ"}):
            a = explorer.filter_examples(pa.board, "sample", tid, keys[0], **filt)
            b = explorer.filter_examples(pb.board, "sample", tid, keys[0], **filt)
            if filt.get("verdict") != "wrong" or len(a):
                _same(a, b, f"explorer {tid} {filt}")
        ids = list(explorer.filter_examples(pa.board, "sample", tid, keys[0])["id"])
        for eid in ids[:3]:
            va = explorer.example_view(pa.board, "sample", tid, keys[0], eid)
            vb = explorer.example_view(pb.board, "sample", tid, keys[0], eid)
            assert va is not None and va == vb, (tid, eid)
        assert explorer.breakdown_values(pa.board, "sample", tid) == explorer.breakdown_values(
            pb.board, "sample", tid
        )


def test_calibration_is_the_legacy_ones(boards) -> None:
    """The baselines store no probabilities: the calibration tab reads the same (empty) reports."""
    ca, cb = (board_calibration(ed, B=50) for ed in _eds(boards))
    assert scope_choices(ca) == scope_choices(cb)
    assert ca.any_probabilities == cb.any_probabilities
    for _, scope in scope_choices(ca):
        for x, y in zip(scope_table(ca, scope), scope_table(cb, scope), strict=True):
            pd.testing.assert_frame_equal(_normal(x), _normal(y))
    for va, vb in zip(*(ed.standard.models for ed in _eds(boards)), strict=True):
        assert va.calibration == vb.calibration


def test_a_legacy_and_a_suite_file_of_one_model_supersede_as_two_legacy_files(suite_docs, tmp_path) -> None:
    results = tmp_path / "results"
    legacy = json.loads(LEGACY[0].read_text(encoding="utf-8"))
    strategy = legacy["model"]["model"]
    newer = copy.deepcopy(suite_docs[strategy])
    newer["model"]["provider"] = legacy["model"]["provider"]  # the same provider and model
    newer["created_at"] = "2030-01-01T00:00:00Z"
    paths = [
        write_result(legacy, results / "sample" / "legacy.json"),
        write_result(finalize(newer), results / "sample" / "suite.json"),
    ]
    verdicts = {v.key: v for v in admit(paths, data=DataSource(allow_hub=False), root=results)}
    assert verdicts["sample/suite.json"].status == "admitted", verdicts["sample/suite.json"].reasons
    assert verdicts["sample/legacy.json"].status == "superseded"
    assert verdicts["sample/legacy.json"].superseded_by == "sample/suite.json"
    older = copy.deepcopy(newer)
    older["created_at"] = "2000-01-01T00:00:00Z"
    write_result(finalize(older), results / "sample" / "suite.json")
    verdicts = {v.key: v for v in admit(paths, data=DataSource(allow_hub=False), root=results)}
    assert verdicts["sample/legacy.json"].status == "admitted"
    assert verdicts["sample/suite.json"].status == "superseded"


def test_an_excluded_suite_format_file_is_listed_with_its_edition(suite_docs) -> None:
    doc = copy.deepcopy(suite_docs["first"])
    doc["tasks"]["nli_v1"]["predictions"][0]["score"] = 0.5
    v = check_document(finalize(doc), data=DataSource(allow_hub=False))
    assert v.status == "excluded" and "nli_v1" in v.reasons[0]
    assert v.edition == "sample" and v.suite is None


def _v1_doc(sample_doc: dict[str, Any]) -> dict[str, Any]:
    """A suite-format file of yoxla-v1 as a run would write it, from a yoxla-sample one: the two
    suites have the same contracts, so only the suite block (its frozen hashes) and the items
    differ; each task gets the frozen item count of predictions (v1's rows are not here)."""
    from yoxla.contract.hashing import hash_file_path
    from yoxla.contract.registry import manifest_path

    frozen = json.loads(hash_file_path(manifest_path("v1")).read_text(encoding="utf-8"))
    doc = copy.deepcopy(sample_doc)
    doc["suite"].update(
        id="yoxla-v1",
        path="yoxla/editions/yoxla-v1.yaml",
        suite_hash=frozen["suite_hash"],
        analysis_hash=frozen["analysis_hash"],
    )
    for tid, t in doc["tasks"].items():
        h = frozen["tasks"][tid]
        doc["suite"]["tasks"][tid] = {"hash": h["hash"], "definition": h["definition"], "data": h["data"]}
        preds = t["predictions"]
        t["predictions"] = [dict(preds[i % len(preds)], id=f"{tid}-{i:04d}") for i in range(h["items"])]
        t["rows"] = t["items"] = h["items"]
    return finalize(doc)


def test_a_v1_suite_file_is_admitted_not_rechecked_on_the_v1_board(suite_docs, tmp_path) -> None:
    """Without the v1 rows (no Hub here), a yoxla-v1 file is checked against the frozen hashes
    and listed apart on the v1 board, never ranked, as a legacy v1 file is."""
    from yoxla.admission.verdict import NOT_RECHECKED

    results = tmp_path / "results"
    write_result(_v1_doc(suite_docs["first"]), results / "v1" / "first.json")
    short = _v1_doc(suite_docs["majority"])
    short["tasks"]["nli_v1"]["predictions"].pop()
    short["tasks"]["nli_v1"]["rows"] = short["tasks"]["nli_v1"]["items"] = len(
        short["tasks"]["nli_v1"]["predictions"]
    )
    write_result(finalize(short), results / "v1" / "short.json")
    board = load_board(results, allow_hub=False, B=20)
    by_key = {v.key: v for v in board.verdicts}
    v = by_key["v1/first.json"]
    assert v.status == "admitted" and not v.rechecked, v.reasons
    assert v.edition == "v1" and v.suite is None and v.source_suite == "yoxla-v1"
    # allow_hub=False reaches the suites: the Hub is not even tried (as for a legacy v1 file)
    assert v.notes[0] == (
        f"{NOT_RECHECKED}: suite 'yoxla-v1' reads LocalDoc/YOXLA-Benchmark from the Hugging Face Hub, "
        "which is not used here"
    )
    assert v.scores["yoxla"] == pytest.approx(suite_docs["first"]["scores"]["suite"])
    assert board.unchecked("v1") == [v] and board.shown("v1") == [] and board.groups("v1") == []
    assert board.suite_boards() == [] or "yoxla-v1" not in board.suite_boards()
    bad = by_key["v1/short.json"]
    assert bad.status == "excluded" and "predictions but the frozen suite has" in bad.reasons[0], bad.reasons
    assert bad in board.listed("v1") and bad not in board.listed("sample")
    ready = prepare(board, floors=False)
    assert [u.key for u in ready.edition("v1").unchecked] == ["v1/first.json"]
    assert unchecked_table(ready.edition("v1"))["Model"].tolist() == ["first"]


NLI = ("entailment", "neutral", "contradiction")


def _tok(text: str, p: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    def one(t: str, q: float) -> dict[str, Any]:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in top]}


def _nli_replies() -> dict[str, Any]:
    """Per NLI prompt a reply with token logprobs: every fourth confidently wrong, the others
    right at 0.7; every other prompt is answered without them (and invalidly)."""
    from yoxla.contract.benchmark import prepare_rows
    from yoxla.data.editions import load_rows
    from yoxla.testing.fakeserver import Reply

    rows = load_rows(load_edition("sample"), "nli_v1")
    users = [item.messages[-1]["content"] for item in prepare_rows("nli_v1", rows).items]
    out = {}
    for i, row in enumerate(rows):
        gold = row["label"]
        a, b = (x for x in NLI if x != gold)
        if i % 4 == 0:
            out[users[i]] = Reply(content=a, logprobs=[_tok(a, 0.95, [(a, 0.95), (gold, 0.03), (b, 0.01)])])
        else:
            out[users[i]] = Reply(
                content=gold, logprobs=[_tok(gold, 0.7, [(gold, 0.7), (a, 0.2), (b, 0.05)])]
            )
    return out


def test_answer_distributions_give_the_legacy_calibration(tmp_path, monkeypatch) -> None:
    """One model against a loopback server that sends token logprobs: the built-in engine's file of
    its ``--edition sample`` run (stored in ``cases/legacy-v2/logprobs/``, made at 5d941f1 before
    that engine was deleted) and a ``--suite yoxla-sample`` run; both boards show the same
    calibration (per-example arrays, pooled reports, the calibration tab's tables)."""
    from yoxla.testing.fakeserver import FakeServer, Reply

    monkeypatch.setenv("VLLM_API_KEY", "sk-one-format-0123456789")
    monkeypatch.chdir(tmp_path)
    replies = _nli_replies()
    with FakeServer(responder=lambda key, attempt, body: replies.get(key, Reply(content="bilmirəm"))) as srv:
        base = ["--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url, "--no-progress"]
        base += ["--runs-dir", str(tmp_path / "runs"), "--results-dir", str(tmp_path / "out")]
        base += ["--timeout", "5", "--backoff-base", "0.01"]
        assert cli_run(["run", "--suite", "yoxla-sample", "--run-id", "suite", *base]) == 0
    name = "vllm__fake--model-1.json"
    preps = []
    for which, src in (
        ("legacy", Path(__file__).parent / "cases" / "legacy-v2" / "logprobs" / name),
        ("suite", tmp_path / "out" / "sample" / name),
    ):
        write_result(json.loads(src.read_text(encoding="utf-8")), tmp_path / which / "sample" / name)
        preps.append(_prepared(tmp_path / which))
    ea, eb = (p.edition("sample") for p in preps)
    (va,), (vb,) = ea.standard.models, eb.standard.models
    assert vb.source_suite == "yoxla-sample" and va.calibration and va.calibration == vb.calibration
    ra, rb = va.tasks["nli_v1"], vb.tasks["nli_v1"]
    assert ra.calibration is not None and ra.calibration == rb.calibration and ra.top == rb.top
    for arr in ("p_top", "p_gold", "brier", "top_correct"):
        np.testing.assert_allclose(getattr(ra, arr), getattr(rb, arr), err_msg=arr)
    assert np.isfinite(ra.p_gold).all()
    ca, cb = (board_calibration(ed, B=50) for ed in (ea, eb))
    assert ca.any_probabilities and cb.any_probabilities
    assert scope_choices(ca) == scope_choices(cb) and len(scope_choices(ca)) > 1
    for _, scope in scope_choices(ca):
        for x, y in zip(scope_table(ca, scope), scope_table(cb, scope), strict=True):
            pd.testing.assert_frame_equal(_normal(x), _normal(y), obj=scope)
    pd.testing.assert_frame_equal(model_table(ca, va.key), model_table(cb, vb.key))
    _same(model_scores(va, ea.standard, ea), model_scores(vb, eb.standard, eb), "model scores")


def test_verify_checks_both_formats_alike(suite_docs, tmp_path, capsys) -> None:
    legacy = write_result(json.loads(LEGACY[0].read_text(encoding="utf-8")), tmp_path / "a" / "legacy.json")
    strategy = json.loads(legacy.read_text(encoding="utf-8"))["model"]["model"]
    suite = write_result(suite_docs[strategy], tmp_path / "b" / "suite.json")
    capsys.readouterr()
    got = {}
    for path in (legacy, suite):
        assert cli_run(["verify", "--no-hub", "--json", str(path)]) == 0
        (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
        got[path.name] = json.loads(line)
    assert got["legacy.json"]["format"] == "yoxla-result v2"
    assert got["suite.json"]["format"] == "yoxla-result v3"
    for d in got.values():
        assert (d["status"], d["edition"], d["rechecked"], d["board"]) == (
            "admitted",
            "sample",
            True,
            "standard",
        )
        assert "suite" not in d  # no suite board
    assert got["legacy.json"]["yoxla"] == pytest.approx(got["suite.json"]["yoxla"], abs=1e-9)
    assert cli_run(["verify", "--no-hub", str(legacy), str(suite)]) == 1  # one board: the names clash
    assert "names on the board must be unique" in capsys.readouterr().out


def test_a_link_to_a_benchmark_suite_opens_its_edition(boards) -> None:
    from yoxla.views.routing import resolve

    suite = boards[1]
    key = suite.edition("sample").standard.models[0].key
    assert resolve(suite, {"suite": "yoxla-sample"}).edition == "sample"
    assert resolve(suite, {"suite": "yoxla-v1"}).edition == "v1"
    assert (resolve(suite, {"model": key}).tab, resolve(suite, {"model": key}).edition) == ("model", "sample")


def test_run_conditions_put_a_suite_file_on_the_boards_a_legacy_file_goes_to(suite_docs, tmp_path) -> None:
    thinking = copy.deepcopy(suite_docs["first"])
    thinking["run"]["conditions"]["thinking"] = True
    warm = copy.deepcopy(suite_docs["random"])
    warm["run"]["conditions"]["generation"]["nli_v1"]["temperature"] = 0.7
    results = tmp_path / "results"
    write_result(finalize(thinking), results / "sample" / "thinking.json")
    write_result(finalize(warm), results / "sample" / "warm.json")
    write_result(suite_docs["majority"], results / "sample" / "plain.json")
    board = load_board(results, allow_hub=False, B=20)
    assert board.groups("sample") == ["standard", "thinking", "non-standard"]
    assert [v.key for v in board.shown("sample", "thinking")] == ["sample/thinking.json"]
    assert [v.key for v in board.shown("sample", "non-standard")] == ["sample/warm.json"]
    assert [v.key for v in board.shown("sample")] == ["sample/plain.json"]
    ready = prepare(board, floors=False)
    facts = model_facts(board.shown("sample", "non-standard")[0], ready.edition("sample"))
    temperature = dict(zip(facts["Field"], facts["Value"], strict=True))["Temperature"]
    assert temperature == "changed for some tasks (see the file's run conditions)"
