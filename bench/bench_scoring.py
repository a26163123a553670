"""Per-answer CPU of scoring the same stored answers: built-in evaluators vs the suite path.

    python bench/bench_scoring.py [--rounds 20] [--repeat 5] [--json out.json]

For each of the eleven benchmark tasks, on the bundled sample rows: the answers of the gold,
of every cue-only strategy and a set of messy answers (wrappers, reasoning, errors). Each
round scores every answer set once through ``yoxla.evaluators.evaluate_task`` and once
through the suite path (``yoxla/editions/yoxla-sample.yaml``, the same tasks as a manifest:
``score_suite_task`` with built-in graders, no cache), interleaved, timed by process CPU;
the best of ``--repeat`` runs of ``--rounds`` rounds is kept. Prints the CPU per answer of
each path and their ratio per task and for all tasks together; ``--json`` writes the figures.
Also prints whether scoring started a worker process (it should not: every grader is built in).

A last line compares the per-answer CPU of a built-in-grader task with a Python-grader task:
``suites/examples/hesab`` as committed (its ``grader.py`` in a worker process) and the same
task with the built-in ``accuracy`` grader instead, on the same answers. Each repeat starts a
fresh worker pool and closes it, so the figure includes the worker's start and its own CPU (reading and rendering the items is not timed)
(this process's CPU plus its reaped children's, ``resource.getrusage``).

A line after it is the runner's cost of scoring each answer as it arrives (a ``predictions.jsonl``
line's verdict): every answer of the eleven tasks scored one at a time by ``score_answer`` (the
replay over that one row: its task prepared for every answer) and by the run's ``AnswerScorer``
(each task prepared once for the run, the preparation timed with it), same answers, same verdicts.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yoxla.baselines import STRATEGIES, answers
from yoxla.editions import load_edition, load_rows
from yoxla.evaluators import evaluate_task
from yoxla.suite import load_suite
from yoxla.suites.benchmark import task_ids
from yoxla.suites.benchmark_example import AnswerScorer, score_answer
from yoxla.suites.loader import load_document
from yoxla.suites.prepare import prepare_task
from yoxla.suites.registry import load_suite_manifest
from yoxla.suites.samples import SampleOutput
from yoxla.suites.scoring import score_suite_task
from yoxla.suites.worker import WorkerPool

ROOT = Path(__file__).resolve().parents[1]
WRAPS = ("**{}**", "{}.", "Cavab: {}", "<think>bəlkə {}</think>\n{}", "«{}»", "", "```\n{}\n```")


def answer_sets(task: Any, rows: list[dict[str, Any]]) -> list[tuple[list[str], list[Any], list[Any]]]:
    """(raws, finish reasons, errors) of the gold, each strategy and messy answers."""
    gold = [task.answer.abstain.value if r[task.gold] is None else str(r[task.gold]) for r in rows]
    none: list[Any] = [None] * len(rows)
    sets = [(gold, none, none)] + [(answers(s, task, rows), none, none) for s in STRATEGIES]
    messy = [WRAPS[i % len(WRAPS)].format(g, g) for i, g in enumerate(gold)]
    finish = ["length" if i % 4 == 1 else "stop" for i in range(len(rows))]
    errors = ["HTTP 503" if i % 5 == 3 else None for i in range(len(rows))]
    return [*sets, (messy, finish, errors)]


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def grader_kinds(rounds: int, repeat: int) -> dict[str, float]:
    """Per-answer CPU (µs) of hesab with its Python grader and with the built-in accuracy grader."""
    import yaml

    path = ROOT / "suites" / "examples" / "hesab" / "hesab.yaml"
    python_doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    builtin_doc = copy.deepcopy(python_doc)
    builtin_doc["tasks"][0]["grader"] = {"type": "builtin", "name": "accuracy"}
    tasks = {
        kind: next(iter(load_document(doc, path.parent, f"hesab ({kind})", path).tasks.values()))
        for kind, doc in (("python", python_doc), ("builtin", builtin_doc))
    }
    best = {kind: float("inf") for kind in tasks}
    n = 0
    for _ in range(repeat):
        spent = dict.fromkeys(tasks, 0.0)
        for kind, task in tasks.items():
            pool = WorkerPool()
            prepared = prepare_task(task, pool)  # reads and renders: not timed (no grader runs here)
            forms = ("{}", "Cavab: {}", "Həll: 2 + 2 = 4\n{}", "{}.5", "bilmirəm", "")
            sets = [
                [SampleOutput.from_raw(form.format(item.target)) for item in prepared.items] for form in forms
            ]
            t = _cpu()
            for _ in range(rounds):
                for outs in sets:
                    score_suite_task(prepared, outs, pool=pool)
            pool.close()
            spent[kind] = _cpu() - t
            n = rounds * len(sets) * len(prepared.items)
        for kind in tasks:
            best[kind] = min(best[kind], spent[kind])
    return {
        "answers": n,
        "builtin_us_per_answer": best["builtin"] / n * 1e6,
        "python_us_per_answer": best["python"] / n * 1e6,
        "ratio": best["python"] / best["builtin"],
    }


def line_scoring(rounds: int, repeat: int) -> dict[str, float]:
    """CPU per answer (µs) of scoring a run's answers one at a time: per answer vs per run.

    Each answer set (the gold, a strategy, the messy answers) over the eleven tasks is a run.
    """
    suite, sample = load_suite(), load_edition("sample")
    runs: list[list[tuple[Any, ...]]] = []
    for tid in task_ids():
        task, rows = suite.task(tid), load_rows(sample, tid)
        for k, (raws, fin, err) in enumerate(answer_sets(task, rows)):
            if k == len(runs):
                runs.append([])
            runs[k] += [(task, dict(row), r, f, e) for row, r, f, e in zip(rows, raws, fin, err, strict=True)]
    best = {"per_answer": float("inf"), "per_run": float("inf")}
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(rounds):
            alone = [score_answer(task, row, r, f, e) for run in runs for task, row, r, f, e in run]
        best["per_answer"] = min(best["per_answer"], time.process_time() - t)
        t = time.process_time()
        for _ in range(rounds):
            together = []
            for run in runs:
                scorer = AnswerScorer([(task, row) for task, row, *_ in run])  # each task prepared once
                together += [scorer.score(task, row, r, f, e) for task, row, r, f, e in run]
        best["per_run"] = min(best["per_run"], time.process_time() - t)
        assert [vars(x) for x in alone] == [vars(x) for x in together]
    n = sum(map(len, runs)) * rounds
    return {
        "answers": n,
        "per_answer_us": best["per_answer"] / n * 1e6,
        "per_run_us": best["per_run"] / n * 1e6,
        "ratio": best["per_run"] / best["per_answer"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    suite, sample = load_suite(), load_edition("sample")
    manifest = load_suite_manifest("yoxla-sample", ROOT)
    pool = WorkerPool()
    figures: dict[str, dict[str, float]] = {}
    total_builtin = total_suite = 0.0
    total_answers = 0
    for tid in task_ids():
        task, rows = suite.task(tid), load_rows(sample, tid)
        prepared = prepare_task(manifest.task(tid), pool)
        sets = answer_sets(task, rows)
        outputs = [
            [SampleOutput.from_raw(r, f, e) for r, f, e in zip(raws, fin, err, strict=True)]
            for raws, fin, err in sets
        ]
        n = len(rows) * len(sets) * args.rounds
        best_b = best_s = float("inf")
        for _ in range(args.repeat):
            t_b = t_s = 0.0
            for _ in range(args.rounds):
                for (raws, fin, err), outs in zip(sets, outputs, strict=True):
                    t = time.process_time()
                    evaluate_task(task, rows, list(raws), fin, err)
                    t_b += time.process_time() - t
                    t = time.process_time()
                    score_suite_task(prepared, outs, pool=pool)
                    t_s += time.process_time() - t
            best_b, best_s = min(best_b, t_b), min(best_s, t_s)
        figures[tid] = {
            "answers": n,
            "builtin_us_per_answer": best_b / n * 1e6,
            "suite_us_per_answer": best_s / n * 1e6,
            "ratio": best_s / best_b if best_b else float("nan"),
        }
        total_builtin += best_b
        total_suite += best_s
        total_answers += n
    started = len(pool._workers)  # worker processes the pool holds (none: every grader is built in)
    pool.close()
    print(f"best of {args.repeat} × {args.rounds} rounds, process CPU; load {os.getloadavg()[0]:.2f}")
    print(f"{'task':<24} {'answers':>8} {'built-in':>11} {'suite':>11} {'suite/built-in':>15}")
    for tid, f in figures.items():
        print(
            f"{tid:<24} {f['answers']:>8} {f['builtin_us_per_answer']:>8.1f} µs "
            f"{f['suite_us_per_answer']:>8.1f} µs {f['ratio']:>14.2f}×"
        )
    ratio = total_suite / total_builtin
    print(
        f"{'all eleven':<24} {total_answers:>8} {total_builtin / total_answers * 1e6:>8.1f} µs "
        f"{total_suite / total_answers * 1e6:>8.1f} µs {ratio:>14.2f}×"
    )
    print(f"worker processes started while scoring: {started}")
    kinds = grader_kinds(args.rounds, args.repeat)
    print(
        f"{'hesab: built-in vs Python grader':<33}{kinds['answers']:>8} answers "
        f"{kinds['builtin_us_per_answer']:>8.1f} µs {kinds['python_us_per_answer']:>9.1f} µs "
        f"{kinds['ratio']:>9.1f}× (CPU per answer, worker included)"
    )
    lines = line_scoring(args.rounds, args.repeat)
    print(
        f"{'a run scoring each answer:':<33}{lines['answers']:>8} answers "
        f"{lines['per_answer_us']:>8.1f} µs {lines['per_run_us']:>9.1f} µs "
        f"{lines['ratio']:>9.2f}× (prepared per answer → per run)"
    )
    if args.json:
        doc = {
            "bench": "scoring",
            "rounds": args.rounds,
            "repeat": args.repeat,
            "loadavg": os.getloadavg()[0],
            "workers_started": started,
            "tasks": figures,
            "grader_kinds": kinds,
            "line_scoring": lines,
            "all": {
                "answers": total_answers,
                "builtin_us_per_answer": total_builtin / total_answers * 1e6,
                "suite_us_per_answer": total_suite / total_answers * 1e6,
                "ratio": ratio,
            },
        }
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
