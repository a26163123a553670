"""Admission cost per file, by stage, against a bare ``json.load`` of the same files.

    python bench/bench_admission.py [--files 100] [--repeat 2]

Writes N synthetic result files of full v1 size (1,443 predictions each, the bundled sample
rows cycled under new ids to v1's row counts), every file with its own answers (a different
seed and skill per file), then admits them with no disk cache and no shared memo of
per-example verdicts (``ScoreCache(max_entries=0)``): every answer of every file is parsed
and scored. Prints the total against ``json.load`` of the same files, and the time of each
stage measured separately on the same files:

* read + strict parse (``yoxla.strictjson``: regular file, size, duplicate keys, depth, …);
* typed record (``yoxla.record.parse_record``);
* digest (canonical JSON + SHA-256);
* re-derivation (``derive_task`` for every task: parse and score every stored answer);
* compare (the derived tasks against the stored ones).

Times are process CPU (``time.process_time``: the machine is shared, and CPU time moves less
with its load than wall time); ``json.load`` and admission are timed ``--repeat`` times,
interleaved, and the best of each is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["YOXLA_NO_CACHE"] = "1"

from yoxla.editions import load_edition
from yoxla.leaderboard.admission import MAX_BYTES, check_file
from yoxla.leaderboard.data import DataSource, EditionRows
from yoxla.leaderboard.synthetic import build_result, edition_for_rows, random_answers, synthetic_rows
from yoxla.record import parse_record
from yoxla.record_base import first_difference
from yoxla.record_derive import derive_task
from yoxla.results import content_digest
from yoxla.strictjson import loads_strict, read_regular_file
from yoxla.suite import load_suite


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2, help="interleaved timings of json.load and admission")
    args = ap.parse_args()

    rows = synthetic_rows(load_edition("v1"))
    edition = edition_for_rows("v1", rows)
    suite = load_suite()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        paths = []
        for i in range(args.files):
            doc = build_result(
                random_answers(1000 + i, skill=0.3 + 0.6 * i / max(1, args.files)),
                edition=edition,
                rows=rows,
                model=f"synthetic-{i:03d}",
                display_name=f"synthetic {i:03d}",
            )
            p = folder / f"m{i:03d}.json"
            p.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
            paths.append(p)
        mb = sum(p.stat().st_size for p in paths) / 2**20
        print(f"wrote {len(paths)} v1-size files ({mb:.1f} MB) in {time.perf_counter() - t:.1f} s")

        def timed(fn):
            t0 = time.process_time()
            out = fn()
            return time.process_time() - t0, out

        def load_all() -> list[Any]:
            out = []
            for p in paths:
                with p.open("rb") as fh:
                    out.append(json.load(fh))
            return out

        def admit_all() -> list[str]:
            data = DataSource()
            data._cache["v1"] = EditionRows(rows, "synthetic")
            return [check_file(p, data=data, editions={"v1": edition}, use_cache=False).status for p in paths]

        t_json = t_admit = float("inf")
        for _ in range(max(1, args.repeat)):
            t_json = min(t_json, timed(load_all)[0])
            secs, statuses = timed(admit_all)
            t_admit = min(t_admit, secs)
            assert set(statuses) == {"admitted"}, statuses

        # Stage by stage, on the same files.
        t_read, docs = timed(lambda: [loads_strict(read_regular_file(p, MAX_BYTES)[0] or b"") for p in paths])
        t_record, records = timed(lambda: [parse_record(d)[0] for d in docs])
        t_digest, _ = timed(lambda: [content_digest(d) for d in docs])

        def derive_all() -> list[dict]:
            out = []
            for rec in records:
                assert rec is not None
                derived = {}
                for tid, t in rec.tasks.items():
                    preds = t.predictions
                    derived[tid] = derive_task(
                        suite.task(tid),
                        rows[tid],
                        [p.raw for p in preds],
                        [p.finish_reason for p in preds],
                        [p.error for p in preds],
                        fingerprint=edition.tasks[tid].fingerprint,
                    )
                out.append(derived)
            return out

        t_derive, derived = timed(derive_all)
        t_compare, _ = timed(
            lambda: [first_difference(d["tasks"], x, "tasks") for d, x in zip(docs, derived, strict=True)]
        )

    n = len(paths)
    print(
        f"\n{n} files, every answer scored (no shared memo, no disk cache); process CPU, load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'':28}{'total':>9}{'per file':>10}{'x json.load':>13}")
    print(f"{'json.load (the floor)':28}{t_json:9.2f}{1000 * t_json / n:8.1f}ms{1.0:13.1f}")
    print(f"{'admission (check_file)':28}{t_admit:9.2f}{1000 * t_admit / n:8.1f}ms{t_admit / t_json:13.1f}")
    print("stages, measured apart:")
    for name, secs in (
        ("read + strict parse", t_read),
        ("typed record", t_record),
        ("digest", t_digest),
        ("re-derivation", t_derive),
        ("compare", t_compare),
    ):
        print(f"  {name:26}{secs:9.2f}{1000 * secs / n:8.1f}ms{secs / t_json:13.1f}")


if __name__ == "__main__":
    main()
