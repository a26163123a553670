"""How well does a suite run scale with --workers? A full run of 1,000 rows with a Python grader.

A generated suite (1,000 arithmetic rows, one few-shot example, ``regex_last`` extraction, a
Python sample grader in a worker process) is run with ``python runner.py --suite`` against
the loopback stand-in (yoxla.testing.fakeserver) in its own process, which answers every
request after a fixed latency. Each answer is scored as it arrives (the grader in its
worker), lines are appended and flushed in item order, and the run finishes with the result
file, as any suite run does.

    python bench/bench_suite_run.py                          # latency 0.2 s, workers 1 16
    python bench/bench_suite_run.py --latency 0.05 --rows 500 --workers 1 4 16

Prints, per worker count: the sending session's wall time (what the workers parallelise:
requests, per-item scoring, writing), the whole command's wall time (also loading, preparing
and the final scoring), speedup over one worker and its ratio to the ideal. Target: ≥ 0.9
of the ideal at 16 workers (sending session).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_workers import start_server  # noqa: E402

from yoxla.cli.main import run as cli_run  # noqa: E402

GRADER = """
def grade(sample, item):
    got = sample["extracted_output"]
    return 1.0 if got is not None and int(got) == int(item["target"]) else 0.0
"""


def write_suite(folder: Path, rows: int) -> Path:
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "data.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(rows):
            fh.write(json.dumps({"id": f"r{i:05d}", "a": i, "b": 7, "cavab": str(i + 7)}) + "\n")
    (folder / "grader.py").write_text(GRADER, encoding="utf-8")
    doc = {
        "schema_version": "2026-05-27",
        "metadata": {"name": "bench"},
        "tasks": [
            {
                "id": "toplama_v1",
                "dataset": {"path": "data.jsonl"},
                "prompt_template": "Sual: {{a}} + {{b}} neçədir?",
                "target_template": "{{cavab}}",
                "num_fewshot": 1,
                "output_extraction": {"type": "regex_last", "pattern": r"-?\d+"},
                "grader": {"type": "python", "path": "grader.py", "metric_id": "accuracy"},
                "generation": {"instructions": "Yalnız ədədi yaz.", "temperature": 0, "max_output_tokens": 8},
            }
        ],
    }
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def run_once(suite: Path, base_url: str, workers: int, out: Path) -> tuple[float, float, int]:
    """(sending session wall s, whole command wall s, generation errors)."""
    run_id = f"w{workers}"
    argv = ["run", "--suite", str(suite), "--provider", "vllm", "--model", "bench", "--base-url", base_url]
    argv += ["--workers", str(workers), "--run-id", run_id, "--no-progress", "--timeout", "60"]
    argv += ["--runs-dir", str(out / "runs"), "--results-dir", str(out / "results")]
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary table
        status = cli_run(argv)
    total = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"the run at {workers} workers failed")
    info = json.loads((out / "runs" / run_id / "run.json").read_text(encoding="utf-8"))
    summary = json.loads((out / "runs" / run_id / "summary.json").read_text(encoding="utf-8"))
    return float(info["sessions"][0]["wall_s"]), total, int(summary["generation_errors"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.2, help="server latency per request, seconds")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 16])
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--out", default=str(ROOT / "bench" / "out"))
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="yoxla-bench-suite-"))
    suite = write_suite(work / "suite", args.rows)
    proc, base_url = start_server(args.latency, "Cavab: 7")
    results = []
    try:
        for w in args.workers:
            session, total, errors = run_once(suite, base_url, w, work)
            results.append((w, session, total, errors))
            print(
                f"workers={w:>3}  session={session:8.2f} s  whole run={total:8.2f} s  errors={errors}",
                flush=True,
            )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    base = next((r for r in results if r[0] == 1), None)
    print()
    print(f"{args.rows} rows, Python sample grader, server latency {args.latency:g} s")
    print(
        f"{'workers':>7}  {'session s':>9}  {'speedup':>8}  {'of ideal':>8}  {'whole s':>8}  {'of ideal':>8}"
    )
    rows = []
    for w, session, total, errors in results:
        speedup = base[1] / session if base else float("nan")
        whole = base[2] / total if base else float("nan")
        rows.append(
            {
                "workers": w,
                "session_s": session,
                "whole_s": total,
                "speedup": speedup,
                "ratio_to_ideal": speedup / w,
                "whole_speedup": whole,
                "whole_ratio_to_ideal": whole / w,
                "errors": errors,
            }
        )
        print(f"{w:>7}  {session:9.2f}  {speedup:8.2f}  {speedup / w:8.2f}  {total:8.2f}  {whole / w:8.2f}")
    (out / "bench_suite_run.json").write_text(
        json.dumps({"rows": args.rows, "latency_s": args.latency, "results": rows}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
