"""The runner's own cost per request: its throughput as a fraction of a plain ``openai``-client loop's.

Both talk to the loopback stand-in (``yoxla.testing.fakeserver``) in its own process, answering at
once (latency 0) with token log-probabilities whenever a request asks for them, so what differs is
only what each does per request on this side. The runner is the real command (``yoxla run
--provider vllm --edition sample``, in this process, progress bar on unless ``--no-progress``);
its sending session is timed (wall and CPU of this process; plan and final scoring are not). The
plain loop sends the very bodies the runner sent, through one ``openai.OpenAI`` client, from 1 or
N threads, and does nothing with the replies.

The machine may be shared and busy: runner and plain loop are measured alternately, ``--rounds``
times, and the medians are reported (the ratio is the median of each round's paired ratio).

    python bench/bench_overhead.py                         # workers 1 and 8, 7 rounds
    python bench/bench_overhead.py --rounds 11 --json bench/out/bench_overhead.json

Target: the runner at >= 0.9 of the plain loop at both worker counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from yoxla.cli.main import run as cli_run  # noqa: E402
from yoxla.providers.openai_compat import OpenAICompatProvider  # noqa: E402
from yoxla.run import session  # noqa: E402
from yoxla.testing.benchmark_items import examples, gold_answer  # noqa: E402


def write_answers(path: Path) -> None:
    """A scripted model for the sample edition: the gold answer to four prompts in five, an
    answer outside the answer space to the fifth (so both scoring paths are taken)."""
    answers: dict[str, str] = {}
    position: dict[str, int] = {}
    for ex in examples("sample"):
        i = position[ex.task] = position.get(ex.task, -1) + 1  # the row's place in its task
        answers[ex.key] = gold_answer(ex.task, ex.row) if i % 5 else "bilmirəm"
    path.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")


def start_server(answers: Path) -> tuple[subprocess.Popen[str], str]:
    """The loopback server in its own process: no latency, token logprobs when asked."""
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "yoxla.testing.fakeserver", "--latency", "0"),
            *("--answers", str(answers), "--logprobs", "--deadline", "3600"),
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


class SessionTimer:
    """Wall and CPU seconds of the runner's sending session (``HeldRun.send``) and the bodies it sent."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0
        self.bodies: list[dict[str, Any]] = []
        self.recording = False
        send, body = session.HeldRun.send, OpenAICompatProvider.request_body

        def timed_send(held: Any, *args: Any, **kwargs: Any) -> None:
            w, c = time.perf_counter(), time.process_time()
            try:
                send(held, *args, **kwargs)
            finally:
                self.wall += time.perf_counter() - w
                self.cpu += time.process_time() - c

        def recorded_body(provider: Any, request: Any) -> dict[str, Any]:
            out = body(provider, request)
            if self.recording:
                self.bodies.append(out)
            return out

        session.HeldRun.send = timed_send  # type: ignore[method-assign]
        OpenAICompatProvider.request_body = recorded_body  # type: ignore[method-assign]


def run_runner(
    timer: SessionTimer, base_url: str, workers: int, tmp: Path, n: int, progress: bool, repeat: int = 1
) -> dict[str, float]:
    """``repeat`` runs of the sample edition, one after the other; their sending sessions summed."""
    timer.wall = timer.cpu = 0.0
    sent = 0
    for k in range(repeat):
        sent += _one_run(base_url, workers, tmp, f"w{workers}-{n}-{k}", progress)
    return {"wall_s": timer.wall, "cpu_s": timer.cpu, "requests": sent}


def _one_run(base_url: str, workers: int, tmp: Path, run_id: str, progress: bool) -> int:
    argv = [
        *("run", "--provider", "vllm", "--model", "bench/model", "--base-url", base_url),
        *("--edition", "sample", "--run-id", run_id, "--workers", str(workers)),
        *("--runs-dir", str(tmp / "runs"), "--results-dir", str(tmp / "results")),
        *([] if progress else ["--no-progress"]),
    ]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        rc = cli_run(argv)
    if rc != 0:
        raise SystemExit(f"the runner failed: {sink.getvalue()[-2000:]}")
    lines = (tmp / "runs" / run_id / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    errors = sum(json.loads(line).get("outcome") == "generation_error" for line in lines)
    if errors:
        raise SystemExit(f"the runner had {errors} generation errors")
    return len(lines)


def run_plain(base_url: str, bodies: list[dict[str, Any]], workers: int) -> dict[str, float]:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0, timeout=60)

    def send(body: dict[str, Any]) -> None:
        client.chat.completions.create(**body)

    w, c = time.perf_counter(), time.process_time()
    if workers == 1:
        for body in bodies:
            send(body)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(send, bodies))
    out = {"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c, "requests": len(bodies)}
    client.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 8])
    p.add_argument("--rounds", type=int, default=7, help="runner/plain pairs per worker count")
    p.add_argument("--repeat", type=int, default=3, help="runs of the sample edition per measurement")
    p.add_argument("--no-progress", action="store_true", help="run the runner without its progress bar")
    p.add_argument("--json", metavar="OUT", help="also write the figures as JSON to OUT")
    args = p.parse_args()
    os.environ.setdefault("VLLM_API_KEY", "not-needed")
    timer = SessionTimer()
    samples: dict[int, list[tuple[dict[str, float], dict[str, float]]]] = {w: [] for w in args.workers}
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp_name:
        tmp = Path(tmp_name)
        write_answers(tmp / "answers.json")
        proc, base_url = start_server(tmp / "answers.json")
        try:
            timer.recording = True
            run_runner(timer, base_url, 1, tmp, 0, not args.no_progress)  # warm-up; records the bodies
            timer.recording = False
            bodies = list(timer.bodies) * args.repeat
            run_plain(base_url, bodies, 1)  # warm-up
            for i in range(1, args.rounds + 1):
                for w in args.workers:
                    # Alternate which goes first, so a change of load between the two cancels out.
                    if i % 2:
                        plain = run_plain(base_url, bodies, w)
                        runner = run_runner(timer, base_url, w, tmp, i, not args.no_progress, args.repeat)
                    else:
                        runner = run_runner(timer, base_url, w, tmp, i, not args.no_progress, args.repeat)
                        plain = run_plain(base_url, bodies, w)
                    samples[w].append((runner, plain))
                    print(
                        f"round {i:>2}  workers={w}  runner {runner['requests'] / runner['wall_s']:7.1f} req/s  "
                        f"plain {plain['requests'] / plain['wall_s']:7.1f} req/s  "
                        f"ratio {plain['wall_s'] / runner['wall_s'] * runner['requests'] / plain['requests']:.2f}",
                        flush=True,
                    )
        finally:
            proc.terminate()
            proc.wait(timeout=10)

    def rate(m: dict[str, float]) -> float:
        return m["requests"] / m["wall_s"]

    def cpu_ms(m: dict[str, float]) -> float:
        return 1000 * m["cpu_s"] / m["requests"]

    rows = []
    for w, pairs in samples.items():
        rows.append(
            {
                "workers": w,
                "runner_req_per_s": statistics.median(rate(r) for r, _ in pairs),
                "plain_req_per_s": statistics.median(rate(q) for _, q in pairs),
                "fraction_of_plain": statistics.median(rate(r) / rate(q) for r, q in pairs),
                "runner_cpu_ms_per_request": statistics.median(cpu_ms(r) for r, _ in pairs),
                "plain_cpu_ms_per_request": statistics.median(cpu_ms(q) for _, q in pairs),
                "rounds": len(pairs),
            }
        )
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print()
    print(
        f"{len(bodies)} requests per measurement, server latency 0 (its own process); load average {' '.join(load)}"
    )
    print(
        f"{'workers':>7}  {'runner req/s':>12}  {'plain req/s':>11}  {'of plain':>8}  {'runner CPU/req':>14}  {'plain CPU/req':>13}"
    )
    for r in rows:
        print(
            f"{r['workers']:>7}  {r['runner_req_per_s']:12.1f}  {r['plain_req_per_s']:11.1f}  "
            f"{r['fraction_of_plain']:8.2f}  {r['runner_cpu_ms_per_request']:11.2f} ms  "
            f"{r['plain_cpu_ms_per_request']:10.2f} ms"
        )
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"requests": len(bodies), "latency_s": 0.0, "load_average": load, "results": rows}
        out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
