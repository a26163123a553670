"""Throughput of batched vs one-at-a-time generation with the local Transformers provider.

Builds a small random Llama (``yoxla.testing.tiny_model``, no downloads), renders real
benchmark prompts (the bundled sample edition's rows through each task's template) and
times ``generate_batch`` at several batch sizes (handed over ``batch_size`` requests at a
time, as the runner does) against ``generate`` one request at a time, all with the same fixed
``max_tokens``. Greedy decoding: the outputs must be identical. Exit status 1 when a batched
run is less than 3x as fast as one-at-a-time.

    python bench/bench_batching.py          # 96 prompts from 6 tasks, 64 new tokens, 1 thread
    python bench/bench_batching.py --n 128 --batch-sizes 4 8 16 --threads 2

One thread by default: on a shared machine, torch's thread barriers make two-thread timings
swing wildly. The random model never emits EOS early, so every request runs to max_tokens.

Needs requirements-local.txt (torch, transformers, tokenizers).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from yoxla.contract.benchmark import benchmark_task, prepare_rows
from yoxla.contract.benchmark import task_ids as all_task_ids
from yoxla.providers.base import ProviderOptions, ProviderSpec, Request


def sample_rows(task_id: str) -> list[dict[str, Any]]:
    """Rows of the bundled sample edition for one task (empty if the task has none)."""
    path = resources.files("yoxla").joinpath("editions", "sample", task_id, "test.jsonl")
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def build_requests(n: int, max_tokens: int, task_ids: list[str] | None, per_task: int) -> list[Request]:
    """``n`` requests, ``per_task`` from each task in turn (sample rows reused as needed).

    Real tasks have hundreds of rows and the runner goes task after task, so a batch rarely
    mixes tasks; with ``per_task`` a multiple of the batch size no batch does here either.
    """
    tasks = task_ids or list(all_task_ids())
    pools = [(tid, rows) for tid in tasks if (rows := sample_rows(tid))]
    if not pools:
        sys.exit("no sample rows found under yoxla/editions/sample")
    reqs: list[Request] = []
    k = 0
    while len(reqs) < n:
        tid, rows = pools[k % len(pools)]
        items = prepare_rows(tid, rows).items
        for i in range(min(per_task, n - len(reqs))):
            item = items[i % len(items)]
            reqs.append(
                Request(
                    task=benchmark_task(tid),
                    row=item.row,
                    example_id=f"{item.id}#{i}",
                    messages=list(item.messages),
                    max_tokens=max_tokens,
                )
            )
        k += 1
    return reqs


def best_of(repeats: int, fn) -> tuple[float, Any]:
    """The fastest of ``repeats`` runs (other processes share the CPU) and its result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def run_batched(provider: Any, reqs: list[Request], batch_size: int) -> list[Any]:
    """As the runner does: hand over ``batch_size`` requests at a time."""
    out: list[Any] = []
    for start in range(0, len(reqs), batch_size):
        out.extend(provider.generate_batch(reqs[start : start + batch_size]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=96, help="number of prompts (default 96)")
    ap.add_argument("--max-tokens", type=int, default=64, help="new tokens per prompt (default 64)")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 16])
    ap.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (default 1: steadier on a shared machine)"
    )
    ap.add_argument(
        "--tasks", nargs="*", default=None, help="task ids (default: every task with sample rows)"
    )
    # Narrow but deep: like a real model on a GPU, a decoding step costs mostly its fixed
    # per-layer overhead, and prefill is cheap next to it.
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=2, help="time each mode this many times, keep the best")
    ap.add_argument("--model", default=None, help="an existing model folder instead of building the tiny one")
    args = ap.parse_args(argv)

    import torch
    import transformers

    from yoxla.providers.transformers_local import TransformersProvider
    from yoxla.testing.tiny_model import build_tiny_model

    torch.set_num_threads(args.threads)
    transformers.utils.logging.disable_progress_bar()
    with tempfile.TemporaryDirectory() as tmp:
        if args.model:
            path = Path(args.model)
        else:
            path = build_tiny_model(
                Path(tmp) / "model",
                hidden_size=args.hidden,
                num_layers=args.layers,
                num_heads=args.heads,
                vocab_size=args.vocab,
            )
        spec = ProviderSpec(
            name="bench", backend="transformers", settings={"device_map": "cpu", "dtype": "float32"}
        )
        reqs = build_requests(args.n, args.max_tokens, args.tasks, per_task=max(args.batch_sizes))

        single = TransformersProvider(spec, str(path), ProviderOptions(batch_size=1))
        n_params = sum(p.numel() for p in single.model.parameters())
        single.generate(reqs[0])  # warm-up
        base_s, base_out = best_of(args.repeats, lambda: [single.generate(r) for r in reqs])
        prompt_tokens = [c.usage["prompt_tokens"] for c in base_out]
        new_tokens = sum(c.usage["completion_tokens"] for c in base_out)
        print(
            f"model: Llama hidden={args.hidden} layers={args.layers} heads={args.heads} "
            f"vocab={len(single.tokenizer)} params={n_params / 1e6:.1f}M, float32, cpu, {args.threads} threads"
        )
        print(
            f"prompts: {len(reqs)} from {len({r.task.id for r in reqs})} tasks, prompt tokens "
            f"min/mean/max {min(prompt_tokens)}/{sum(prompt_tokens) / len(prompt_tokens):.0f}/{max(prompt_tokens)}, "
            f"max_tokens={args.max_tokens}, {new_tokens} tokens generated"
        )
        print()
        print(f"{'mode':<16}{'seconds':>10}{'requests/s':>12}{'speed-up':>10}  identical")
        print(f"{'one-at-a-time':<16}{base_s:>10.2f}{len(reqs) / base_s:>12.2f}{1.0:>9.2f}x  -")
        worst = float("inf")
        for bs in args.batch_sizes:
            prov = TransformersProvider(spec, str(path), ProviderOptions(batch_size=bs))
            prov.generate_batch(reqs[:bs])  # warm-up
            secs, out = best_of(args.repeats, lambda prov=prov, bs=bs: run_batched(prov, reqs, bs))
            same = [(c.text, c.finish_reason) for c in out] == [(c.text, c.finish_reason) for c in base_out]
            ratio = base_s / secs
            worst = min(worst, ratio)
            label = f"batch {bs}"
            print(
                f"{label:<16}{secs:>10.2f}{len(reqs) / secs:>12.2f}{ratio:>9.2f}x  {'yes' if same else 'NO'}"
            )
    print()
    print(f"slowest batched run is {worst:.2f}x one-at-a-time (target: at least 3x)")
    return 0 if worst >= 3.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
