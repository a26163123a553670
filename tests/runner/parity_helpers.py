"""Comparing a run of ``yoxla-sample`` with the built-in engine's stored result files of the same
model (``yoxla-result`` v2, the oracle): the result files, summary.json and the printed summary.

The stored files: :data:`LEGACY`, the eight cue-only baselines of the sample edition (the
leaderboard's legacy-v2 fixture), and :data:`BUILTIN`, the scripted server runs the parity tests
made before the built-in engine was deleted (see ``cases/builtin-v2/README.md``)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from yoxla.contract.benchmark import benchmark_groups, task_ids
from yoxla.run.finalize import calibration_summary

TOL = 1e-9
LEGACY = Path(__file__).resolve().parents[1] / "leaderboard" / "cases" / "legacy-v2" / "sample"
BUILTIN = Path(__file__).resolve().parent / "cases" / "builtin-v2"
# Under the runner's results folder: a yoxla-sample suite file goes where the sample edition's
# always went.
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
    return stored(path)


def stored(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def legacy(strategy: str) -> dict[str, Any]:
    """The built-in engine's result file of baseline ``strategy`` on the sample edition."""
    return stored(LEGACY / f"baseline__{strategy}.json")


def only_block(edition: dict[str, Any], block: str) -> dict[str, Any]:
    """The stored file as a run of one block of it would have been: its tasks, that block's score
    and, as the headline, the block's score (the mean of the one group)."""
    out = json.loads(json.dumps(edition))
    out["tasks"] = {tid: t for tid, t in edition["tasks"].items() if t["block"] == block}
    scores = out["scores"]
    scores["tasks"] = {tid: v for tid, v in scores["tasks"].items() if tid in out["tasks"]}
    scores["blocks"] = {block: scores["blocks"][block]}
    scores["yoxla"] = scores["blocks"][block]
    return out


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
                    # on the built-in one (yoxla/score/replay.py keeps ``ex.reason``).
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
    assert same(ws["blocks"], gs["groups"]) and list(gs["groups"]) == (blocks or list(benchmark_groups()))
    assert same(ws["yoxla"], gs["suite"])
    assert suite["suite"]["headline"]["name"] == "YOXLA"


def assert_summary_of(edition: dict[str, Any], summary: dict[str, Any]) -> None:
    """summary.json of the suite run holds the stored file's scores and counts: the group and
    headline scores, per task the score, rows, generation errors, invalid rate and calibration."""
    assert summary["examples"] == sum(t["rows"] for t in edition["tasks"].values())
    assert summary["generation_errors"] == edition["generation_errors"]
    assert same(edition["scores"]["blocks"], summary["groups"])
    assert same(edition["scores"]["yoxla"], summary["suite_score"])
    assert summary["headline"] == "YOXLA"
    assert sorted(summary["tasks"]) == sorted(edition["tasks"])
    for tid, want in edition["tasks"].items():
        got, m = summary["tasks"][tid], want["metrics"]
        assert same(want["score"], got["score"]) and got["rows"] == got["expected"] == want["rows"], tid
        assert got["generation_errors"] == m["generation_errors"], tid
        assert same(m["invalid_output_rate"], got["invalid_output_rate"]), tid
        cal = want.get("calibration")
        assert same(calibration_summary(cal) if cal else None, got.get("calibration")), tid


def printed(edition: dict[str, Any]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """What the printed summary of a run with the stored file's scores shows: (:func:`score_lines`,
    :func:`task_lines`), every score to two decimals."""
    two = lambda v: f"{v:.2f}"  # noqa: E731
    lines = {block: two(v) for block, v in edition["scores"]["blocks"].items()}
    lines["YOXLA"] = two(edition["scores"]["yoxla"])
    tasks = {tid: (t["block"], two(t["score"])) for tid, t in edition["tasks"].items()}
    return lines, tasks


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
    """The printed summary's task rows: task id -> (block or group, score as printed), from the
    first table that names the task (the calibration table comes after it)."""
    rows: dict[str, tuple[str, str]] = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) >= 3 and cells[0] in task_ids():
            rows.setdefault(cells[0], (cells[1], cells[2]))
    return rows
