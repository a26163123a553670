"""Comparing a built-in engine run of the sample edition (``Runner.builtin``) with a ``--suite
yoxla-sample`` run: their result files (``yoxla-result`` v2 and v3),
summary.json and printed summaries."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from yoxla.suite import load_suite

TOL = 1e-9
SUITE = load_suite()
# Under the built-in engine's results folder (Runner.builtin_results) and the runner's own: a
# yoxla-sample suite file goes where the sample edition's always went.
EDITION_RESULT = Path("sample")
SUITE_RESULT = Path("sample")
# The verdict of one example, as both result formats store it.
VERDICT = ("id", "raw", "finish_reason", "error", "valid", "abstained", "outcome", "reason", "near_miss")


GENERATION_ERROR_REASON = "empty_output"


def same(a: Any, b: Any) -> bool:
    """Equal, floats to 1e-9, recursively through mappings and lists."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=TOL)
    return bool(a == b)


def result_file(results: Path, where: Path) -> dict[str, Any]:
    [path] = (results / where).glob("*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _suite_metric(task: dict[str, Any], key: str) -> Any:
    """Where the suite result file keeps a metric of the benchmark's task record."""
    if key in task["metrics"]:
        return task["metrics"][key]
    if key in ("outcomes", "near_miss"):
        return task["counts"][key]
    if key == "modal_answer":
        return task["modal_answer"]
    return (task.get("breakdowns") or {}).get(key, ("absent", key))


def assert_same_runs(edition: dict[str, Any], suite: dict[str, Any], blocks: list[str] | None = None) -> None:
    """The two result files (``yoxla-result`` v2 and v3) agree in every
    score, metric and per-example verdict of the benchmark's record."""
    assert suite["suite"]["id"] == "yoxla-sample"
    assert sorted(suite["tasks"]) == sorted(edition["tasks"])
    for tid, want in edition["tasks"].items():
        got = suite["tasks"][tid]
        assert [p["id"] for p in got["predictions"]] == [p["id"] for p in want["predictions"]], tid
        for w, g in zip(want["predictions"], got["predictions"], strict=True):
            for key in VERDICT:
                want_value = w.get(key)
                if key == "reason" and w["outcome"] == g["outcome"] == "generation_error":
                    # The one known difference: a failed request's reason is the extraction's
                    # (``empty_output``: nothing came back) on the suite path, ``generation_error``
                    # on the built-in one (yoxla/suites/scoring.py keeps ``ex.reason``).
                    want_value = GENERATION_ERROR_REASON
                assert same(want_value, g.get(key)), (tid, w["id"], key, want_value, g.get(key))
            assert same(w["score"], g["score"]), (tid, w["id"], w["score"], g["score"])
            assert same(w.get("distribution"), g.get("distribution")), (tid, w["id"])
        for key, value in want["metrics"].items():
            assert same(value, _suite_metric(got, key)), (tid, key, value, _suite_metric(got, key))
        assert (got["primary"], got["rows"]) == (want["primary"], want["rows"]), tid
        assert same(want["score"], got["score"]), (tid, want["score"], got["score"])
        assert same(want.get("calibration"), got.get("calibration")), tid
    ws, gs = edition["scores"], suite["scores"]
    assert same(ws["tasks"], gs["tasks"])
    assert same(ws["blocks"], gs["groups"]) and list(gs["groups"]) == (blocks or list(SUITE.blocks))
    assert same(ws["yoxla"], gs["suite"])
    assert suite["suite"]["headline"]["name"] == "YOXLA"


def assert_same_summaries(edition: dict[str, Any], suite: dict[str, Any]) -> None:
    """summary.json of the two run folders: the same scores, complete flags and counts."""
    for key in ("complete", "examples", "generation_errors", "probabilities", "usage"):
        assert same(edition[key], suite[key]), key
    assert same(edition["blocks"], suite["groups"])
    assert same(edition["yoxla"], suite["suite_score"])
    assert suite["headline"] == "YOXLA"
    for tid, want in edition["tasks"].items():
        got = suite["tasks"][tid]
        for key in ("score", "rows", "expected", "generation_errors", "invalid_output_rate"):
            assert same(want[key], got[key]), (tid, key)
        assert same(want.get("calibration"), got.get("calibration")), tid


def score_lines(out: str) -> dict[str, str]:
    """The printed summary's block rows and headline line: name -> score as printed."""
    lines = {}
    for line in out.splitlines():
        m = re.match(r"^(understanding|language|knowledge|rag) \(.*?\)\s+(\S+)\s*$", line)
        if m:
            lines[m.group(1)] = m.group(2)
        m = re.match(r"^YOXLA: (\S+)$", line)
        if m:
            lines["YOXLA"] = m.group(1)
    return lines


def task_lines(out: str) -> dict[str, tuple[str, str]]:
    """The printed summary's task rows: task id -> (block or group, score as printed)."""
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) >= 3 and cells[0] in SUITE.tasks:
            rows[cells[0]] = (cells[1], cells[2])
    return rows
