"""Admission cost per file, by stage, against a bare ``json.load`` of the same files.

    python bench/bench_admission.py [--files 100] [--repeat 2] [--json out.json]

Writes N synthetic result files of full v1 size in the format every run writes
(``yoxla-result`` 3 of the package suite ``yoxla-v1``: 1,443 predictions each, the bundled
sample rows cycled under new ids to v1's item counts, :mod:`yoxla.testing.synthetic_v3`),
every file with its own answers (a different seed and skill per file), then admits them
through the one path (:func:`yoxla.admission.rules.check_file`, which hands a suite
record to :mod:`yoxla.admission.rederive`) with no disk cache and no memo of
verdicts or per-sample results: every answer of every file is extracted and scored. Prints
the total against ``json.load`` of the same files, and the time of each stage measured
separately on the same files:

* read + strict parse (``yoxla.safe.strictjson``: regular file, size, duplicate keys, depth, …);
* typed record (``yoxla.record.result.parse_record``);
* digest (canonical JSON + SHA-256);
* re-derivation (``derive_suite_task`` for every task: extract and score every stored answer);
* compare (the derived tasks and the summary scores against the stored ones);
* the rest: admission's total less the stages (suite and hash checks, coverage, the board's
  task records); negative when the stages apart cost more than the check (each stage keeps
  every document alive).

The stages run with the cyclic garbage collector paused, as admission runs each document.

Times are process CPU (``time.process_time``: the machine is shared, and CPU time moves less
with its load than wall time); ``json.load`` and admission are timed ``--repeat`` times,
interleaved, and the best of each is kept. ``--json`` also writes the figures to a file
(``-``: standard output, instead of the table).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["YOXLA_NO_CACHE"] = "1"

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import MAX_BYTES, check_file
from yoxla.record.base import first_difference
from yoxla.record.derive import derive_suite_task, scores_of
from yoxla.record.result import parse_record
from yoxla.record.signing import content_digest
from yoxla.safe.strictjson import gc_paused, loads_strict, read_regular_file
from yoxla.testing.synthetic_v3 import build_v3, committed_source, prepare_v1, random_raws, write_v1_rows


def timed(fn: Callable[[], Any], paused: bool = False) -> tuple[float, Any]:
    """(process CPU seconds, result) of ``fn()``; ``paused``: with the cyclic collector paused,
    as admission pauses it for each document."""
    with gc_paused() if paused else nullcontext():
        t0 = time.process_time()
        out = fn()
        return time.process_time() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2, help="interleaved timings of json.load and admission")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON here (-: stdout only)")
    args = ap.parse_args()
    if args.files < 1 or args.repeat < 1:
        ap.error("--files and --repeat must be at least 1")
    quiet = args.json == "-"

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        manifest, prepared = prepare_v1(write_v1_rows(folder / "data"))
        source = committed_source(manifest, prepared)
        pool = source.pool
        paths = []
        for i in range(args.files):
            raws = {
                tid: random_raws(p, 1000 + i, skill=0.3 + 0.6 * i / max(1, args.files))
                for tid, p in prepared.items()
            }
            doc = build_v3(manifest, prepared, raws, model=f"synthetic-{i:03d}", pool=pool)
            p = folder / f"m{i:03d}.json"
            p.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
            paths.append(p)
        mb = sum(p.stat().st_size for p in paths) / 2**20
        preds = sum(len(p.items) for p in prepared.values())
        if not quiet:
            print(
                f"wrote {len(paths)} yoxla-result 3 files of yoxla-v1 ({preds:,} predictions each, "
                f"{mb:.1f} MB) in {time.perf_counter() - t:.1f} s"
            )

        def load_all() -> list[Any]:
            out = []
            for p in paths:
                with p.open("rb") as fh:
                    out.append(json.load(fh))
            return out

        def admit_all() -> list[str]:
            data = DataSource(suites=source)  # no verdict memo: use_cache=False
            out = []
            for p in paths:
                v = check_file(p, data=data, use_cache=False)
                out.append(v.status if v.status != "admitted" or v.rechecked else "not re-checked")
                if v.status != "admitted":
                    out[-1] += f": {v.reasons[:1]}"
            return out

        t_json = t_admit = float("inf")
        for _ in range(args.repeat):
            t_json = min(t_json, timed(load_all)[0])
            secs, statuses = timed(admit_all)
            t_admit = min(t_admit, secs)
            assert set(statuses) == {"admitted"}, statuses[:3]

        # Stage by stage, on the same files.
        t_read, docs = timed(
            lambda: [loads_strict(read_regular_file(p, MAX_BYTES)[0] or b"") for p in paths], True
        )
        t_record, records = timed(lambda: [parse_record(d)[0] for d in docs], True)
        t_digest, _ = timed(lambda: [content_digest(d) for d in docs], True)

        def derive_all() -> list[dict[str, Any]]:
            return [
                {
                    tid: derive_suite_task(p, d["tasks"][tid]["predictions"], pool=pool)
                    for tid, p in prepared.items()
                }
                for d in docs
            ]

        t_derive, derived = timed(derive_all, True)

        def compare_all() -> list[Any]:
            out = []
            for d, x, rec in zip(docs, derived, records, strict=True):
                assert rec is not None
                out.extend(first_difference(d["tasks"][tid], x[tid], f"tasks.{tid}") for tid in x)
                scores = scores_of(rec.suite, rec.tasks).model_dump(mode="json", exclude_unset=True)
                out.append(first_difference(d["scores"], scores, "scores"))
            return out

        t_compare, diffs = timed(compare_all, True)
        assert not any(diffs), [d for d in diffs if d][:3]
        source.close()

    n = len(paths)
    stages = {
        "read + strict parse": t_read,
        "typed record": t_record,
        "digest": t_digest,
        "re-derivation": t_derive,
        "compare": t_compare,
    }
    stages["the rest"] = t_admit - sum(stages.values())  # negative: the stages apart cost more
    figures = {
        "files": n,
        "predictions_per_file": preds,
        "megabytes": round(mb, 2),
        "load": round(os.getloadavg()[0], 2),
        "json_load_s": round(t_json, 4),
        "admission_s": round(t_admit, 4),
        "x_json_load": round(t_admit / t_json, 3),
        "stages_s": {k: round(v, 4) for k, v in stages.items()},
    }
    if args.json == "-":
        print(json.dumps(figures, indent=1))
        return
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(
        f"\n{n} files, every answer scored (no verdict memo, no disk cache); process CPU, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'':28}{'total':>9}{'per file':>10}{'x json.load':>13}")
    print(f"{'json.load (the floor)':28}{t_json:9.2f}{1000 * t_json / n:8.1f}ms{1.0:13.1f}")
    print(f"{'admission (check_file)':28}{t_admit:9.2f}{1000 * t_admit / n:8.1f}ms{t_admit / t_json:13.1f}")
    print("stages, measured apart:")
    for name, secs in stages.items():
        print(f"  {name:26}{secs:9.2f}{1000 * secs / n:8.1f}ms{secs / t_json:13.1f}")


if __name__ == "__main__":
    main()
