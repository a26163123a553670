"""Is scoring one answer linear in its length? The suite replay of one answer, 1 KB to 4 MB.

    python bench/bench_parsing.py                      # sizes 1K 100K 1M 4M, every shape
    python bench/bench_parsing.py --sizes 1000 100000 --shapes quotes think

Every answer reaches the scorer from a model or from a result file someone sent, so one
answer of any shape must cost time linear in its length (a quadratic parser took 6.7 s for
1 MB and two minutes for 4 MB of ``'``). For each shape and each kind of task (the answer
modes and evaluators of the suite: labels, numbered options, span, abstention, number),
this prints the CPU seconds the suite replay of one row (``score_builtin_task`` over the
row's package suite item, as a run scores an answer) takes for one answer of each size and the
nanoseconds per byte; a constant ns/B across sizes is linear time. Target: well under a
second at 4 MB for every task.

Shapes: the pathological ones (all ``'``; nested ``"'"'…'"'"``; ``*`` repeated; ``<think>``
repeated and never closed; a span quote as long as the answer, in guillemets) and, beyond
the brief, ordinary Azerbaijani text, a letter with a long run of combining marks in the
wrong canonical order, and wrappers with white space on one side only (no mirror to exploit).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yoxla.contract.benchmark import prepare_rows
from yoxla.data.editions import load_edition, load_rows
from yoxla.extract.parsing import answer_text
from yoxla.score.replay import score_builtin_task

TASKS = {
    "labels": "nli_v1",
    "numbered": "knowledge_choice_v1",
    "span": "extractive_qa_v1",
    "abstention": "qa_abstention_v1",
    "number": "sts_v1",
}
WORDS = (
    "Bakı Azərbaycanın paytaxtı və ən böyük şəhəridir Xəzər dənizinin sahilində yerləşir "
    "İçərişəhər qədim hissəsi UNESCO irsi siyahısına daxil edilmişdir Şəki Gəncə Lənkəran "
    "çay ağac dağ göl şəhər kənd məktəb universitet kitabxana muzey teatr"
).split()


def _fill(unit: str, size: int) -> str:
    """``unit`` repeated to ``size`` bytes of UTF-8 (about)."""
    per_char = len(unit.encode()) / len(unit)
    return (unit * (int(size / per_char) // len(unit) + 1))[: int(size / per_char)]


def _mirror(half: str) -> str:
    return half + "x" + half[::-1].translate(str.maketrans("«»“”", "»«”“"))


def _az_text(size: int) -> str:
    rng = random.Random(7)
    words, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        words.append(w)
        n += len(w.encode()) + 1
    return " ".join(words)


def _quote(passage: str, size: int) -> str:
    return "«" + _fill(passage + " ", size - 4) + "»"


SHAPES = {
    "quotes": lambda size, passage: "'" * size,
    "nested": lambda size, passage: _mirror(_fill("\"'", size // 2)),
    "stars": lambda size, passage: "*" * size,
    "think": lambda size, passage: _fill("<think>", size),
    "az-text": lambda size, passage: _az_text(size),
    "span-quote": lambda size, passage: _quote(passage, size),
    "marks": lambda size, passage: "a" + _fill("\u0301\u0316", size),
    "one-sided": lambda size, passage: _fill("' ", size // 2) + "x" + "'" * (size // 4),
}


def timed(task_id: str, row, raw: str) -> float:
    """CPU seconds of scoring one answer, its row prepared as a run's (process time: other load
    on the machine does not count)."""
    start = time.process_time()
    prepared = prepare_rows(task_id, [row])
    score_builtin_task(prepared, prepared.items, [answer_text(raw)], [None], [None])
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000, 4_000_000])
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    args = ap.parse_args()

    edition = load_edition("sample")
    rows = {kind: load_rows(edition, TASKS[kind])[0] for kind in args.tasks}
    passage = rows.get("span", load_rows(edition, "extractive_qa_v1")[0])["context"]
    for kind in args.tasks:  # warm up: imports, codecs, caches of the row's passage
        timed(TASKS[kind], rows[kind], SHAPES["marks"](2_000, passage))

    sizes = args.sizes
    head = " | ".join(f"{s / 1000:g} KB" for s in sizes)
    print(f"| shape | task | {head} | ns/B at each size |")
    print("|---|---|" + "---:|" * len(sizes) + "---|")
    worst = 0.0
    for shape in args.shapes:
        answers = {size: SHAPES[shape](size, passage) for size in sizes}
        for kind in args.tasks:
            task, row = TASKS[kind], rows[kind]
            secs, per_byte = [], []
            for size in sizes:
                raw = answers[size]
                reps = 1 if size >= 1_000_000 else 3
                t = min(timed(task, row, raw) for _ in range(reps))
                secs.append(f"{t:.4f} s")
                per_byte.append(f"{t / len(raw.encode()) * 1e9:.0f}")
                if size == max(sizes):
                    worst = max(worst, t)
            print(f"| {shape} | {kind} | " + " | ".join(secs) + " | " + " / ".join(per_byte) + " |")
    print(f"\nslowest answer of {max(sizes) / 1e6:g} MB: {worst:.3f} s (target: well under 1 s)")


if __name__ == "__main__":
    main()
