"""``yoxla rescore`` of a full-size run: time beyond interpreter start and imports.

    python bench/bench_rescore.py [--repeats 5]

Builds a full-size local copy of the data (v1's 1,443 rows: the sample rows cycled under new
ids, as ``bench/bench_loading.py`` does), runs the offline ``baseline`` provider on it once
(``--edition v1 --data-dir COPY``) to get a complete run folder, then times ``yoxla rescore
RUN_DIR`` in fresh processes. Each child imports every module the command uses first
(``yoxla.cli.main``, the runner and its finish, the record, the suite loader and scoring, pydantic…),
then starts the clock, so the figure is what re-scoring itself costs: reading the run folder,
the manifest and the rows, re-scoring 1,443 stored answers through the one replay
(:mod:`yoxla.run.finalize`), writing ``task_scores.json`` and ``summary.json``
(wall time, and the child's process CPU next to it).
The target is under 0.3 s; the median is printed, not asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CHILD = """
import io, sys, time, contextlib
t0 = time.perf_counter()
import yoxla.cli.main, yoxla.run.commands, yoxla.run.finalize, yoxla.record.result
import yoxla.contract.loader, yoxla.prompt.prepare, yoxla.data.datasets, yoxla.score.graders
import yoxla.providers.registry, yoxla.annotation.cli, yoxla.cli.suite, yoxla.score.replay, pydantic
t1, c1 = time.perf_counter(), time.process_time()
with contextlib.redirect_stdout(io.StringIO()):
    rc = yoxla.cli.main.run(["rescore", sys.argv[1]])
t2, c2 = time.perf_counter(), time.process_time()
assert rc == 0, rc
print(f"{t1 - t0:.4f} {t2 - t1:.4f} {c2 - c1:.4f}")
"""


def main() -> None:
    from bench_loading import build_copy

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        n = build_copy(root / "data")
        cmd = [
            sys.executable,
            str(ROOT / "runner.py"),
            "--provider",
            "baseline",
            "--model",
            "overlap",
            "--edition",
            "v1",
            "--data-dir",
            str(root / "data"),
            "--block",
            "all",
            "--no-progress",
            "--run-id",
            "full",
            "--runs-dir",
            str(root / "runs"),
            "--results-dir",
            str(root / "results"),
        ]
        subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root)
        run_dir = root / "runs" / "full"
        lines = sum(1 for _ in (run_dir / "predictions.jsonl").open(encoding="utf-8"))
        imports, work, cpu = [], [], []
        for _ in range(args.repeats):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(run_dir)],
                check=True,
                capture_output=True,
                text=True,
                cwd=root,
                env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": tmp},
            )
            a, b, c = out.stdout.split()
            imports.append(float(a))
            work.append(float(b))
            cpu.append(float(c))
    print(f"run folder: {lines} predictions over {n} rows")
    print(f"imports (before the clock): median {statistics.median(imports):.3f} s")
    print(
        f"yoxla rescore beyond imports: median {statistics.median(work):.3f} s "
        f"(min {min(work):.3f}, max {max(work):.3f}, {args.repeats} fresh processes; target < 0.3 s)"
    )
    print(f"  of it process CPU: median {statistics.median(cpu):.3f} s; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
