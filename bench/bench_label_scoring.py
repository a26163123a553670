"""Cost of exact label scoring against plain generation, on the local Transformers provider.

Builds the small random Llama of bench_batching.py (``yoxla.testing.tiny_model``, no
downloads), renders the sample edition's rows of every task with a closed answer space
through the chat template, and times, one example at a time:

* generation: ``TransformersProvider.generate`` with the task's ``max_tokens`` (the random
  model never stops early, so every request decodes all of them; a real model stops after a
  few tokens, see ``--gen-tokens``);
* label scoring, ``mode="shared"``: one pass over the prompt, then one batched pass over all
  labels reusing its key/value cache;
* label scoring, ``mode="full"``: one batched pass over prompt + label for every label.

Prints seconds per example and the ratio scoring / generation per task (below 1: scoring is
cheaper than generating the answer).

    python bench/bench_label_scoring.py                 # 4 rows per task, 1 thread
    python bench/bench_label_scoring.py --rows 8 --gen-tokens 4

Needs requirements-local.txt (torch, transformers, tokenizers).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from yoxla.contract.benchmark import benchmark_task, prepare_rows
from yoxla.providers.base import ProviderOptions, ProviderSpec, Request

TASKS = (
    "minimal_pairs_v1",
    "nli_v1",
    "sentiment_v1",
    "rag_verification_v1",
    "rag_selection_v1",
    "knowledge_choice_v1",
    "intent_v1",
)


def sample_rows(task_id: str) -> list[dict[str, Any]]:
    text = resources.files("yoxla").joinpath("editions", "sample", task_id, "test.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def timed(repeats: int, fn: Any) -> float:
    """The fastest of ``repeats`` runs (other processes share the CPU)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4, help="rows per task (default 4)")
    ap.add_argument(
        "--gen-tokens", type=int, default=None, help="new tokens per generation (default: task's)"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--model", default=None, help="an existing model folder instead of the tiny one")
    args = ap.parse_args(argv)

    import torch
    import transformers

    from yoxla.contract.benchmark import choice_space
    from yoxla.providers.transformers_local import TransformersProvider
    from yoxla.score.calibration.label_scoring import score_labels
    from yoxla.testing.tiny_model import build_tiny_model

    torch.set_num_threads(args.threads)
    transformers.utils.logging.disable_progress_bar()
    with tempfile.TemporaryDirectory() as tmp:
        path = (
            Path(args.model)
            if args.model
            else build_tiny_model(
                Path(tmp) / "model",
                hidden_size=args.hidden,
                num_layers=args.layers,
                num_heads=args.heads,
                vocab_size=args.vocab,
            )
        )
        spec = ProviderSpec(
            name="bench", backend="transformers", settings={"device_map": "cpu", "dtype": "float32"}
        )
        prov = TransformersProvider(spec, str(path), ProviderOptions(batch_size=1))
        n_params = sum(p.numel() for p in prov.model.parameters())
        print(
            f"model: Llama hidden={args.hidden} layers={args.layers} heads={args.heads} "
            f"params={n_params / 1e6:.1f}M, float32, cpu, {args.threads} thread(s); {args.rows} rows per task"
        )
        print()
        head = f"{'task':<22}{'labels':>7}{'prompt':>8}{'new tok':>8}{'generate':>10}{'shared':>9}{'ratio':>7}{'full':>9}{'ratio':>7}"
        print(head)
        totals = {"gen": 0.0, "shared": 0.0, "full": 0.0}
        for tid in TASKS:
            task = benchmark_task(tid)
            rows = sample_rows(tid)[: args.rows]
            new = (
                args.gen_tokens
                or (task.spec.generation.max_output_tokens if task.spec.generation else None)
                or 16
            )
            items = prepare_rows(tid, rows).items
            reqs = [Request(task, i.row, i.id, list(i.messages), max_tokens=new) for i in items]
            prompts = [prov.render(r.messages) for r in reqs]
            spaces = [choice_space(tid, r) or () for r in rows]
            prov.generate(reqs[0])  # warm-up
            score_labels(prov.model, prov.tokenizer, prompts[0], spaces[0], end_ids=prov.eos_ids)
            gen = timed(args.repeats, lambda reqs=reqs: [prov.generate(r) for r in reqs])
            per = {}
            for mode in ("shared", "full"):
                per[mode] = timed(
                    args.repeats,
                    lambda mode=mode, prompts=prompts, spaces=spaces: [
                        score_labels(prov.model, prov.tokenizer, p, s, end_ids=prov.eos_ids, mode=mode)
                        for p, s in zip(prompts, spaces, strict=True)
                    ],
                )
            n_prompt = sum(
                len(prov.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts
            ) / len(rows)
            totals["gen"] += gen
            totals["shared"] += per["shared"]
            totals["full"] += per["full"]
            k = len(rows)
            print(
                f"{tid:<22}{len(spaces[0]):>7}{n_prompt:>8.0f}{new:>8}{gen / k:>9.3f}s{per['shared'] / k:>8.3f}s"
                f"{per['shared'] / gen:>7.2f}{per['full'] / k:>8.3f}s{per['full'] / gen:>7.2f}"
            )
        print()
        print(
            f"all tasks: scoring (shared cache) costs {totals['shared'] / totals['gen']:.2f}x generation, "
            f"scoring (full batch) {totals['full'] / totals['gen']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
