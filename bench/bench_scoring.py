"""Per-answer CPU of scoring the same answers: a built-in-grader task against a Python-grader task.

    python bench/bench_scoring.py [--rounds 20] [--repeat 5] [--json out.json]

The bench line of issue 13. One task, ``suites/examples/hesab``, twice: as committed (its
``grader.py``, run in a worker process) and with the built-in ``accuracy`` grader instead
(the fast path: no worker, one pass over the samples). Both score the same answers (each
item's target in six forms: bare, ``Cavab: …``, after a worked line, with ``.5`` appended,
``bilmirəm``, empty) through :func:`yoxla.score.replay.score_suite_task`. The rounds are
interleaved: each round scores every answer set once through the built-in task, then once
through the Python one, timed by this process's CPU. Each repeat starts a fresh worker pool
and closes it at the end, so the Python figure includes the worker's start and its own CPU
(reaped children's CPU, ``resource.getrusage``, added once the pool is closed); reading and
rendering the items is not timed. The best of ``--repeat`` repeats is kept.

A second figure is the fast path's CPU per answer on the eleven benchmark tasks (the package
suite ``yoxla-sample``, its sample rows): the gold, every cue-only strategy and messy answers
(wrappers, reasoning, truncations, errors), interleaved by task, and whether scoring started
a worker process (it must not: every grader of the benchmark is built in). No older scorer is
timed: the built-in evaluators this bench used to compare against are gone (issue 13).
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

from yoxla.baselines.strategies import STRATEGIES, suite_answers
from yoxla.contract.benchmark import task_ids
from yoxla.contract.loader import load_document
from yoxla.contract.registry import load_suite_manifest
from yoxla.prompt.prepare import PreparedTask, prepare_task
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.score.worker import WorkerPool

ROOT = Path(__file__).resolve().parents[1]
HESAB = ROOT / "suites" / "examples" / "hesab" / "hesab.yaml"
FORMS = ("{}", "Cavab: {}", "Həll: 2 + 2 = 4\n{}", "{}.5", "bilmirəm", "")
WRAPS = ("**{}**", "{}.", "Cavab: {}", "<think>bəlkə {}</think>\n{}", "«{}»", "", "```\n{}\n```")


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def hesab_tasks() -> dict[str, Any]:
    """hesab as committed ("python") and with the built-in accuracy grader ("builtin")."""
    import yaml

    python_doc = yaml.safe_load(HESAB.read_text(encoding="utf-8"))
    builtin_doc = copy.deepcopy(python_doc)
    builtin_doc["tasks"][0]["grader"] = {"type": "builtin", "name": "accuracy"}
    return {
        kind: next(iter(load_document(doc, HESAB.parent, f"hesab ({kind})", HESAB).tasks.values()))
        for kind, doc in (("builtin", builtin_doc), ("python", python_doc))
    }


def grader_kinds(rounds: int, repeat: int) -> dict[str, Any]:
    """Per-answer CPU (µs) of hesab with the built-in grader and with its Python grader."""
    tasks = hesab_tasks()
    best = dict.fromkeys(tasks, float("inf"))
    n = 0
    for _ in range(repeat):
        pool = WorkerPool()
        prepared = {kind: prepare_task(task, pool) for kind, task in tasks.items()}  # not timed
        sets = {
            kind: [[SampleOutput.from_raw(f.format(i.target)) for i in p.items] for f in FORMS]
            for kind, p in prepared.items()
        }
        verdicts: dict[str, list[list[str]]] = {kind: [] for kind in tasks}
        spent = dict.fromkeys(tasks, 0.0)
        kids = _children_cpu()
        for r in range(rounds):
            for kind in tasks:  # interleaved: built-in, then Python, every round
                t = time.process_time()
                scored = [score_suite_task(prepared[kind], outs, pool=pool) for outs in sets[kind]]
                spent[kind] += time.process_time() - t
                if r == 0:
                    verdicts[kind] = [[x.outcome for x in s.results] for s in scored]
        pool.close()
        spent["python"] += _children_cpu() - kids  # the worker's own CPU, once it has ended
        if verdicts["builtin"] != verdicts["python"]:
            raise SystemExit("hesab: the built-in and the Python grader disagree on the same answers")
        n = rounds * sum(len(s) for s in sets["builtin"])
        for kind in tasks:
            best[kind] = min(best[kind], spent[kind])
    return {
        "answers": n,
        "builtin_us_per_answer": best["builtin"] / n * 1e6,
        "python_us_per_answer": best["python"] / n * 1e6,
        "ratio": best["python"] / best["builtin"],
    }


def answer_sets(prepared: PreparedTask) -> list[list[SampleOutput]]:
    """The gold, each cue-only strategy and messy answers (wrappers, truncation, errors)."""
    gold = [i.target for i in prepared.items]
    sets = [[SampleOutput.from_raw(a) for a in gold]]
    sets += [[SampleOutput.from_raw(a) for a in suite_answers(s, prepared)] for s in STRATEGIES]
    sets.append(
        [
            SampleOutput.from_raw(
                WRAPS[k % len(WRAPS)].format(g, g),
                "length" if k % 4 == 1 else "stop",
                "HTTP 503" if k % 5 == 3 else None,
            )
            for k, g in enumerate(gold)
        ]
    )
    return sets


def benchmark_fast_path(rounds: int, repeat: int) -> dict[str, Any]:
    """Per-answer CPU (µs) of the eleven benchmark tasks on the fast path, and workers started."""
    manifest = load_suite_manifest("yoxla-sample", ROOT)
    pool = WorkerPool()
    prepared = {tid: prepare_task(manifest.task(tid), pool) for tid in task_ids()}
    sets = {tid: answer_sets(p) for tid, p in prepared.items()}
    best = dict.fromkeys(prepared, float("inf"))
    for _ in range(repeat):
        spent = dict.fromkeys(prepared, 0.0)
        for _ in range(rounds):
            for tid, p in prepared.items():
                t = time.process_time()
                for outs in sets[tid]:
                    score_suite_task(p, outs, pool=pool)
                spent[tid] += time.process_time() - t
        best = {tid: min(best[tid], spent[tid]) for tid in prepared}
    started = len(pool._workers)  # worker processes the pool holds (none: every grader is built in)
    pool.close()
    per_task = {tid: rounds * sum(len(s) for s in sets[tid]) for tid in prepared}
    n = sum(per_task.values())
    return {
        "answers": n,
        "us_per_answer": sum(best.values()) / n * 1e6,
        "tasks": {tid: {"answers": k, "us_per_answer": best[tid] / k * 1e6} for tid, k in per_task.items()},
        "workers_started": started,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    if args.rounds < 1 or args.repeat < 1:
        raise SystemExit("--rounds and --repeat must be at least 1")
    kinds = grader_kinds(args.rounds, args.repeat)
    bench = benchmark_fast_path(args.rounds, args.repeat)
    load = os.getloadavg()[0]
    print(f"best of {args.repeat} repeats × {args.rounds} interleaved rounds, process CPU; load {load:.2f}")
    print(
        f"{'hesab: built-in vs Python grader':<34}{kinds['answers']:>7} answers "
        f"{kinds['builtin_us_per_answer']:>8.1f} µs {kinds['python_us_per_answer']:>9.1f} µs "
        f"{kinds['ratio']:>7.1f}× (CPU per answer, worker included)"
    )
    print(f"{'benchmark fast path, per task:':<34}")
    for tid, f in bench["tasks"].items():
        print(f"  {tid:<32}{f['answers']:>7} answers {f['us_per_answer']:>8.1f} µs")
    print(
        f"{'  all eleven':<34}{bench['answers']:>7} answers {bench['us_per_answer']:>8.1f} µs; "
        f"worker processes started: {bench['workers_started']}"
    )
    if args.json:
        doc = {
            "bench": "scoring",
            "rounds": args.rounds,
            "repeat": args.repeat,
            "loadavg": load,
            "grader_kinds": kinds,
            "benchmark_fast_path": bench,
        }
        args.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
