"""``--edition sample|v1`` is a suite run of the package suite ``yoxla-<edition>`` (one engine).

The result file is a ``yoxla-result`` 3 (the suite body) of ``yoxla-sample`` where the edition's results
always went (``results/sample/baseline__S.json``; partial runs under ``results/partial/sample/``),
with the scores the built-in engine stored (the legacy-v2 fixture); ``baseline`` answers suite
items and ``suite-baseline`` is the same provider under another name. A run folder the built-in
engine of an older version made is neither resumed, retried nor re-scored: one line says what
to do, exit 2, and nothing in the folder changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from parity_helpers import assert_same_runs, legacy
from runner_helpers import one_error_line

import yoxla
from yoxla.run.errors import RunError


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
    assert_same_runs(legacy("longest"), doc)
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


def _builtin_folder(runs: Path) -> Path:
    """A run folder as the built-in engine of an older version left it: run.json without a
    ``kind``, some answers on disk, interrupted."""
    folder = runs / "old"
    folder.mkdir(parents=True)
    info = {
        "run_id": "old",
        "status": "interrupted",
        "provider": "baseline",
        "model": "first",
        "edition": "sample",
        "task_ids": ["nli_v1"],
        "settings": {"provider": "baseline", "model": "first", "edition": "sample", "tasks": ["nli_v1"]},
    }
    (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    lines = [{"task": "nli_v1", "id": p["id"], "raw": p["raw"], "outcome": p["outcome"]} for p in
             legacy("first")["tasks"]["nli_v1"]["predictions"][:5]]  # fmt: skip
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


NEEDLES = (
    "was made by the built-in engine of an older YOXLA",
    "re-run it with `python runner.py --edition sample --provider baseline --model first`",
    "stays readable and admissible",
)


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "--run-id", "old", "--resume"),
        ("run", "--run-id", "old", "--resume", "--edition", "sample"),
        ("run", "--retry-errors", "old"),
        ("run", "--retry-errors", "RUNS/old"),
        ("rescore", "RUNS/old"),
        ("rescore", "RUNS/old", "--result"),
    ],
)
def test_a_run_folder_of_the_builtin_engine_is_refused_in_one_line_and_left_alone(runner, argv) -> None:
    folder = _builtin_folder(runner.runs)
    before = _snapshot(folder)
    rc, _, err = runner(*(a.replace("RUNS", str(runner.runs)) for a in argv))
    line = one_error_line(rc, err, str(folder), *NEEDLES)
    assert rc == 2 and line.startswith("yoxla: error: ") and len(err.strip().splitlines()) == 1
    assert _snapshot(folder) == before  # no lock file, no rewritten run.json, no answer added
    assert not runner.results.exists()


def test_the_library_refuses_it_the_same_way(runner) -> None:
    folder = _builtin_folder(runner.runs)
    before = _snapshot(folder)
    with pytest.raises(RunError) as caught:
        yoxla.rescore(folder)
    assert all(n in str(caught.value) for n in NEEDLES)
    with pytest.raises(RunError, match="built-in engine of an older YOXLA"):
        yoxla.run(
            "sample", provider="baseline", model="first", run_id="old", resume=True, runs_dir=str(runner.runs)
        )
    assert _snapshot(folder) == before
