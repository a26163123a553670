"""Per-sample cost of a Python grader in the worker process against a built-in grader.

    python bench/bench_graders.py [--samples 5000] [--repeat 3]

One task of N synthetic items (a short Azerbaijani question, a numeric target), scored
from stored outputs three ways, each the best of ``--repeat`` runs:

* built-in ``accuracy`` (in process, no Python of the suite's own);
* a Python sample grader (``grade(sample, item)``) in a worker that is already running
  (the runner keeps one worker per task for all its samples);
* the same, counting the worker's start (a fresh process and the code's import).

Extraction (``regex_last``) is the same in all three. Prints the time per sample and the
ratio against the built-in grader.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yoxla.suites.loader import load_document
from yoxla.suites.prepare import prepare_task
from yoxla.suites.scoring import SampleOutput, score_suite_task
from yoxla.suites.worker import WorkerPool

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
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

        def best(fn) -> float:
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
            return min(times)

        t_builtin = best(lambda: score_suite_task(p_builtin, outputs))
        with WorkerPool() as pool:
            score_suite_task(p_python, outputs[:1], items=p_python.items[:1], pool=pool)  # start the worker
            t_warm = best(lambda: score_suite_task(p_python, outputs, pool=pool))
        t_cold = best(lambda: score_suite_task(p_python, outputs))
        a = score_suite_task(p_builtin, outputs).metrics["accuracy"]
        b = score_suite_task(p_python, outputs).metrics["accuracy"]
        assert a == b, (a, b)

    print(f"{n} samples, best of {args.repeat}; the same accuracy from both graders ({a:.4f})")
    print(f"{'grader':<42} {'total':>9} {'per sample':>12} {'× built-in':>11}")
    for name, t in (
        ("built-in accuracy (in process)", t_builtin),
        ("Python grader, worker already running", t_warm),
        ("Python grader, worker started per task", t_cold),
    ):
        print(f"{name:<42} {t:>8.3f}s {t / n * 1e6:>9.1f} µs {t / t_builtin:>10.1f}×")


if __name__ == "__main__":
    main()
