"""How well does --workers scale? Wall time of a full-size run (1443 requests) at 1, 4, 16, 64 workers.

The server is the loopback stand-in (yoxla.testing.fakeserver) in its own process, answering
every request after a fixed latency, so the only thing measured is the runner: its thread
pool, the adaptive limiter, the openai client, in-order consumption, scoring and the
append+flush of predictions.jsonl. The requests are the items of the package suite
``yoxla-sample`` (the bundled sample edition), cycled to the size of the published benchmark
(1443), sent and scored by the suite engine's job (:class:`yoxla.run.executor.RunJob`).

    python bench/bench_workers.py                    # latency 0.2 s, workers 1 4 16 64
    python bench/bench_workers.py --latency 0.1 --workers 1 16 --requests 500

Prints, per worker count: wall time, requests per second, speedup over one worker and its
ratio to the ideal (workers × single-worker throughput). Targets: ≥ 0.9 at 16, ≥ 0.8 at 64.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from yoxla.contract.registry import resolve_suite  # noqa: E402
from yoxla.providers.registry import create_provider, get_spec, with_overrides  # noqa: E402
from yoxla.providers.transport import TransportSettings  # noqa: E402
from yoxla.run.artifacts import PredictionWriter  # noqa: E402
from yoxla.run.executor import RunJob, execute  # noqa: E402
from yoxla.run.judge import RecordingJudge  # noqa: E402
from yoxla.run.plan import make_plan  # noqa: E402
from yoxla.run.settings import RunSettings, provider_options  # noqa: E402

FULL_SIZE = 1443


def items(n: int) -> list:
    """The items of yoxla-sample, (task, item) in run order, cycled to ``n``."""
    plan = make_plan(RunSettings(provider="vllm", model="bench", suite=str(resolve_suite("yoxla-sample"))))
    pool = [(task, item) for task in plan.tasks.values() for item in task.prepared.items]
    return list(itertools.islice(itertools.cycle(pool), n))


def start_server(latency: float, answer: str = "1") -> tuple[subprocess.Popen, str]:
    """The loopback server in its own process, answering ``answer`` after ``latency`` seconds."""
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "yoxla.testing.fakeserver"),
            *("--latency", str(latency), "--deadline", "1800", "--answer", answer),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if not line or line[0] != "PORT":
        proc.kill()
        raise SystemExit("the fake server did not start")
    return proc, f"http://127.0.0.1:{line[1]}/v1"


def run_once(base_url: str, work: list, workers: int, out: Path) -> tuple[float, int]:
    spec = with_overrides(get_spec("vllm"), base_url)
    transport = TransportSettings(workers=workers, timeout=60, max_retries=2)
    settings = RunSettings(provider="vllm", model="bench", progress=False, transport=transport)
    provider = create_provider(spec, "bench", provider_options(settings))
    path = out / f"predictions_w{workers}.jsonl"
    path.unlink(missing_ok=True)
    writer = PredictionWriter(path)
    errors = 0

    def sink(record: dict) -> None:
        nonlocal errors
        errors += record["outcome"] == "generation_error"
        writer.append(record)

    job = RunJob(
        settings, spec.backend, spec.base_url, RecordingJudge(None, None), [], parallel_graders=False
    )
    t0 = time.perf_counter()
    try:
        execute(provider, work, settings, sink, job=job)
    finally:
        job.close()
    wall = time.perf_counter() - t0
    writer.close()
    provider.close()
    return wall, errors


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.2, help="server latency per request, seconds")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 4, 16, 64])
    p.add_argument("--requests", type=int, default=FULL_SIZE)
    p.add_argument("--out", default=str(ROOT / "bench" / "out"))
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = items(args.requests)
    proc, base_url = start_server(args.latency)
    results = []
    try:
        for w in args.workers:
            wall, errors = run_once(base_url, work, w, out if out.exists() else Path(tempfile.mkdtemp()))
            results.append((w, wall, errors))
            print(
                f"workers={w:>3}  wall={wall:8.2f} s  {len(work) / wall:8.1f} req/s  errors={errors}",
                flush=True,
            )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    base = next((wall for w, wall, _ in results if w == 1), None)
    print()
    print(f"{len(work)} requests, server latency {args.latency:g} s")
    print(f"{'workers':>7}  {'wall s':>8}  {'req/s':>8}  {'speedup':>8}  {'of ideal':>8}")
    rows = []
    for w, wall, errors in results:
        speedup = base / wall if base else float("nan")
        ratio = speedup / w if base else float("nan")
        rows.append(
            {
                "workers": w,
                "wall_s": wall,
                "req_per_s": len(work) / wall,
                "speedup": speedup,
                "ratio_to_ideal": ratio,
                "errors": errors,
            }
        )
        print(f"{w:>7}  {wall:8.2f}  {len(work) / wall:8.1f}  {speedup:8.2f}  {ratio:8.2f}")
    (out / "bench_workers.json").write_text(
        json.dumps({"requests": len(work), "latency_s": args.latency, "results": rows}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
