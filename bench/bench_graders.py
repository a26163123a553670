"""Per-sample cost of a Python grader in the worker process against a built-in grader.

    python bench/bench_graders.py [--samples 5000] [--repeat 3] [--json OUT.json]

One task of N synthetic items (a short Azerbaijani question, a numeric target), scored
from stored outputs three ways, each the best of ``--repeat`` runs:

* built-in ``accuracy`` (in process, no Python of the suite's own);
* a Python sample grader (``grade(sample, item)``) in a worker that is already running
  (the runner keeps one worker per task for all its samples);
* the same, counting the worker's start (a fresh process and the code's import).

Extraction (``regex_last``) is the same in all three. Prints, per sample, the wall time and
the CPU (this process's and its ended children's, so a worker started and closed inside the
measurement is counted; a worker kept running is counted by its ``/proc`` times, on Linux), and
the ratios against the built-in grader; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yoxla.contract.loader import load_document
from yoxla.prompt.prepare import prepare_task
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.score.worker import WorkerPool

GRADER = """
def grade(sample, item):
    got = sample["extracted_output"]
    if got is None:
        return 0.0
    return 1.0 if float(got.replace(",", ".")) == float(item["target"]) else 0.0
"""


def _task(folder: Path, grader: dict) -> dict:
    return {
        "id": "bench",
        "dataset": {"path": "rows.jsonl"},
        "prompt_template": "Məsələ: {{question}}",
        "target_template": "{{answer}}",
        "output_extraction": {"type": "regex_last", "pattern": r"-?\d+(?:[.,]\d+)?"},
        "metrics": [{"id": "accuracy"}],
        "grader": grader,
    }


def _worker_cpu(pool: WorkerPool) -> float:
    """CPU seconds the pool's running worker processes have used (0 where /proc is not there)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for worker in pool._workers.values():
        proc = getattr(worker, "_proc", None)
        try:
            with open(f"/proc/{proc.pid}/stat", encoding="ascii") as fh:  # type: ignore[union-attr]
                fields = fh.read().rsplit(")", 1)[1].split()
        except (AttributeError, OSError):
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def _cpu(pool: WorkerPool | None = None) -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime + (_worker_cpu(pool) if pool else 0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    n = args.samples
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = [{"id": f"r{i}", "question": f"{i} + {i} neçədir?", "answer": 2 * i} for i in range(n)]
        (folder / "rows.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        builtin = _task(folder, {"type": "builtin", "name": "accuracy"})
        python = _task(folder, {"type": "python", "source": GRADER, "metric_id": "accuracy"})
        outputs = [SampleOutput(f"Həll: {i} + {i} = {2 * i if i % 3 else i}") for i in range(n)]

        def prepared(entry: dict):
            manifest = load_document({"schema_version": "1", "tasks": [entry]}, folder, "bench")
            return prepare_task(manifest.task("bench"))

        p_builtin, p_python = prepared(builtin), prepared(python)

        def best(fn, pool: WorkerPool | None = None) -> tuple[float, float]:
            """The best wall time and the best CPU of ``--repeat`` runs of ``fn``."""
            walls, cpus = [], []
            for _ in range(args.repeat):
                t, c = time.perf_counter(), _cpu(pool)
                fn()
                walls.append(time.perf_counter() - t)
                cpus.append(_cpu(pool) - c)
            return min(walls), min(cpus)

        t_builtin = best(lambda: score_suite_task(p_builtin, outputs))
        with WorkerPool() as pool:
            score_suite_task(p_python, outputs[:1], items=p_python.items[:1], pool=pool)  # start the worker
            t_warm = best(lambda: score_suite_task(p_python, outputs, pool=pool), pool)
        t_cold = best(lambda: score_suite_task(p_python, outputs))
        a = score_suite_task(p_builtin, outputs).metrics["accuracy"]
        b = score_suite_task(p_python, outputs).metrics["accuracy"]
        assert a == b, (a, b)

    print(f"{n} samples, best of {args.repeat}; the same accuracy from both graders ({a:.4f})")
    print(f"{'grader':<42} {'wall':>9} {'per sample':>12} {'CPU':>12} {'× built-in':>11} {'CPU ×':>7}")
    rows = {}
    for key, name, (wall, cpu) in (
        ("builtin", "built-in accuracy (in process)", t_builtin),
        ("python_warm", "Python grader, worker already running", t_warm),
        ("python_cold", "Python grader, worker started per task", t_cold),
    ):
        rows[key] = {
            "wall_s": wall,
            "wall_us_per_sample": wall / n * 1e6,
            "cpu_us_per_sample": cpu / n * 1e6,
            "wall_ratio": wall / t_builtin[0],
            "cpu_ratio": cpu / t_builtin[1],
        }
        r = rows[key]
        print(
            f"{name:<42} {wall:>8.3f}s {r['wall_us_per_sample']:>9.1f} µs {r['cpu_us_per_sample']:>9.1f} µs "
            f"{r['wall_ratio']:>10.1f}× {r['cpu_ratio']:>6.1f}×"
        )
    if args.json:
        doc = {"bench": "graders", "samples": n, "repeat": args.repeat, "loadavg": os.getloadavg()[0], **rows}
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
