"""What a finished run prints (:func:`print_summary`): the tasks' table, the groups and the
headline, the probabilities line and calibration table, the generation errors, and the footer
(tokens, wall time, run folder, result file).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

from yoxla.cli.common import table


def color(text: str, code: str) -> str:
    """``text`` in an ANSI colour on a terminal (never when piped or with NO_COLOR)."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[{code}m{text}\033[0m"
    return text


def probabilities_line(counts: Any, any_shown: bool) -> str | None:
    """The summary's line on answer probabilities: asked, received, complete and partial, and
    why the others have none; the old sentence for a summary written before these counts."""
    if not isinstance(counts, dict):
        return (
            None if any_shown else "answer probabilities: not available from this provider (or not asked for)"
        )
    asked, received = counts.get("asked", 0), counts.get("received", 0)
    complete, partial = counts.get("complete", 0), counts.get("partial", 0)
    if not asked and not complete and not partial:
        return "answer probabilities: not asked for (this provider gives none, or --no-probabilities)"
    line = (
        f"answer probabilities: asked in {asked} requests, received in {received}; "
        f"distributions {complete} complete, {partial} partial"
    )
    absent = counts.get("absent") or {}
    if absent:
        line += " (none: " + ", ".join(f"{n} {why}" for why, n in absent.items()) + ")"
    return line


CALIBRATION = "task|with probabilities|partial|mean gold p|high-conf. errors|ECE|groups|controls".split("|")


def print_probabilities(s: dict[str, Any]) -> None:
    """A summary's calibration table (tasks with a calibration block) and its line on answer
    probabilities (benchmark and suite runs alike)."""
    calibrated = {tid: t["calibration"] for tid, t in s["tasks"].items() if t.get("calibration")}
    with_probs = [tid for tid, c in calibrated.items() if c["n_with_probs"]]
    if calibrated:
        print()
        counts = ("n_with_probs", "n_partial")
        rates = ("mean_gold_p", "high_confidence_error_rate", "ece", "group_consistency")
        rows = [
            [tid, *(c[k] for k in counts), *(_num(c[k]) for k in rates), c["controls"]]
            for tid, c in calibrated.items()
        ]
        print(table(CALIBRATION, rows))
    line = probabilities_line(s.get("probabilities"), bool(with_probs))
    if line and s.get("provider") not in ("baseline", "suite-baseline"):
        print(line)


def figure(value: float) -> str:
    """A measured quantity with the precision it needs: ``1234``, ``12.3``, ``0.042``, ``0.00031``
    (at least two significant digits below 10, never rounded to ``0.0``)."""
    if value >= 100 or value == 0:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    decimals = max(1, 1 - math.floor(math.log10(value)))
    return f"{value:.{decimals}f}"


def print_generation_errors(s: dict[str, Any]) -> None:
    """The summary's generation-error lines (a benchmark or a suite run): the count, how to re-ask
    them, and the first ten."""
    n_err = s["generation_errors"]
    if not n_err:
        print("generation errors: 0")
        return
    print(
        color(
            f"generation errors: {n_err} (scored as wrong; re-ask them with --retry-errors {s['run_id']})",
            "1;31",
        )
    )
    for e in s["generation_error_examples"][:10]:
        print(color(f"  {e['task']} {e['id']}: {e['error']}", "31"))
    if n_err > 10:
        print(color(f"  … and {n_err - 10} more (summary.json lists them all)", "31"))


def print_footer(report: Any) -> None:
    """Tokens, wall time, the run folder and the result file (benchmark and suite runs)."""
    s = report.summary
    u = s["usage"]
    print(
        f"tokens: {u.get('total_tokens', 0)} (prompt {u.get('prompt_tokens', 0)}, completion {u.get('completion_tokens', 0)})"
    )
    wall = s.get("wall_s") or 0.0
    sent = getattr(report, "sent", 0)
    rate = f", {figure(sent / wall)} req/s this session" if wall and sent else ""
    print(f"wall time: {figure(wall)} s{rate}")
    print(f"run folder: {report.run_dir}")
    if report.result_path is not None:
        kind = "complete" if report.complete else "incomplete (partial: not admitted to the leaderboard)"
        print(f"result file: {_shown(report.result_path)} [{kind}]")


def _shown(path: Any) -> Any:
    """A path under the current folder as a relative one (the results folder is stored absolute)."""
    try:
        return Path(path).relative_to(Path.cwd())
    except ValueError:
        return path


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_summary(report: Any) -> None:
    """The finished run's tables (tasks, groups, calibration), scores, errors and footer."""
    s = report.summary
    grouped = any("group" in t for t in s["tasks"].values())  # a column only where groups are declared
    rows = []
    for tid, t in s["tasks"].items():
        inv = t["invalid_output_rate"]
        value = t["primary_value"]
        rows.append(
            [
                tid,
                *([t.get("group") or "-"] if grouped else []),
                f"{t['score']:.2f}" if t["score"] is not None else "-",
                f"{t['primary']}={value:.4g}" if isinstance(value, int | float) else (t["primary"] or "-"),
                f"{100 * inv:.1f}%" if inv is not None else "-",
                f"{t['rows']}/{t['expected']}",
                t["generation_errors"],
                t["grader_errors"],
                "yes" if t["judge_scored"] else "-",
            ]
        )
    print()
    print(
        table(
            [
                "task",
                *(["group"] if grouped else []),
                *("score", "primary", "invalid", "items", "gen. errors", "grader errors", "judged"),
            ],
            rows,
        )
    )
    for tid, t in s["tasks"].items():
        for problem in t["problems"]:
            print(f"problem: {tid}: {problem}")
        if t.get("judge_unanswered"):
            print(
                f"incomplete: {tid}: {t['judge_unanswered']} grader call(s) lack a judge's answer; "
                "resume the run with its judge to ask again"
            )
    if s.get("groups"):  # the benchmark's blocks: the groups a suite declares
        names = s.get("group_names") or {}
        print()
        print(table(["group", "score"], [[f"{g} ({names.get(g, g)})", v] for g, v in s["groups"].items()]))
    counts = s.get("probabilities") or {}
    if counts.get("asked") or any(t.get("calibration") for t in s["tasks"].values()):
        print_probabilities(s)  # only a run that asked: an open suite's summary stays as it was
    print()
    score = s["suite_score"]
    shown = f"{score:.2f}" if score is not None else "-"
    if s.get("headline"):  # a named headline (YOXLA): printed as the benchmark prints it
        print(f"suite: {s['suite']}")
        print(f"{s['headline']}: {shown}")
    else:
        print(f"suite {s['suite']}: {shown}")
    if s.get("judge"):
        print(f"judge: {s['judge']['provider']}/{s['judge']['model']}")
    print_generation_errors(s)
    print_footer(report)
