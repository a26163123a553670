"""``--edition sample|v1`` is a suite run of the package suite ``yoxla-<edition>`` (one engine).

The result file is a ``yoxla-result`` 3 (the suite body) of ``yoxla-sample`` where the edition's results
always went (``results/sample/baseline__S.json``; partial runs under ``results/partial/sample/``),
with the scores the built-in engine gives (``Runner.builtin``); ``baseline`` answers suite items
and ``suite-baseline`` is the same provider under another name. A run folder the built-in engine
made (an older version) still resumes and re-scores on that engine.
"""

from __future__ import annotations

import json

from parity_helpers import EDITION_RESULT, assert_same_runs, result_file


def test_an_edition_run_is_a_suite_run_with_the_builtin_engines_scores(runner) -> None:
    rc, out, err = runner("run", "--provider", "baseline", "--model", "longest", "--edition", "sample",
                          "--run-id", "e")  # fmt: skip
    assert rc == 0, err
    path = runner.results / "sample" / "baseline__longest.json"
    assert "result file: results/sample/baseline__longest.json [complete]" in out
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert (doc["format"], doc["format_version"]) == ("yoxla-result", 3)
    assert doc["suite"]["id"] == "yoxla-sample"
    assert runner.json("e", "run.json")["kind"] == "suite"
    rc, _, err = runner.builtin("run", "--provider", "baseline", "--model", "longest", "--edition", "sample",
                                "--run-id", "b")  # fmt: skip
    assert rc == 0, err
    assert_same_runs(result_file(runner.builtin_results, EDITION_RESULT), doc)
    # suite-baseline: the same answers under its own name
    rc, _, err = runner("run", "--provider", "suite-baseline", "--model", "longest", "--edition", "sample",
                        "--run-id", "a")  # fmt: skip
    assert rc == 0, err
    alias = json.loads(
        (runner.results / "sample" / "suite-baseline__longest.json").read_text(encoding="utf-8")
    )
    assert alias["scores"] == doc["scores"] and alias["model"]["provider"] == "suite-baseline"


def test_a_partial_edition_run_lands_under_partial_and_the_default_edition_is_v1(runner) -> None:
    rc, _, err = runner("run", "--provider", "baseline", "--model", "first", "--edition", "sample",
                          "--block", "rag", "--run-id", "p")  # fmt: skip
    assert rc == 0, err
    doc = json.loads((runner.results / "partial" / "sample" / "baseline__first.json").read_text("utf-8"))
    assert sorted(doc["tasks"]) == ["rag_selection_v1", "rag_verification_v1"]
    # No --edition: v1, the Hub suite (not reachable here: the one-line message names it).
    rc, _, err = runner("run", "--provider", "baseline", "--model", "first", "--task", "nli_v1")
    assert rc == 2 and "yoxla-v1.yaml" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_run_folder_of_the_builtin_engine_still_resumes_and_rescores(runner) -> None:
    argv = ("run", "--provider", "baseline", "--model", "first", "--edition", "sample", "--task", "nli_v1")
    rc, _, err = runner.builtin(*argv, "--run-id", "old")
    assert rc == 0, err
    assert "kind" not in runner.json("old", "run.json")
    before = runner.json("old", "task_scores.json")
    pred = runner.runs / "old" / "predictions.jsonl"
    pred.write_bytes(b"".join(pred.read_bytes().splitlines(keepends=True)[:5]))
    info = runner.json("old", "run.json")
    info["status"] = "interrupted"
    (runner.runs / "old" / "run.json").write_text(json.dumps(info), encoding="utf-8")
    rc, _, err = runner("run", "--run-id", "old", "--resume")  # no --suite: the folder says which
    assert rc == 0, err
    assert len(runner.predictions("old")) == 12 and "kind" not in runner.json("old", "run.json")
    assert runner.json("old", "task_scores.json") == before
    rc, out, err = runner("rescore", str(runner.runs / "old"))
    assert rc == 0 and "YOXLA:" in out, err
