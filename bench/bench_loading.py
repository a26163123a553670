"""Loading a full-size local copy: ``load_rows`` of all eleven configs against a bare json parse.

    python bench/bench_loading.py [--repeats 5] [--keep DIR]

Builds a local copy in the Hub layout with v1's row counts (1,443 rows: the bundled sample
rows cycled under new ids, ``yoxla.testing.synthetic.synthetic_rows``), one
``<config>/test.jsonl`` per config plus the sample's README (its ``configs:`` declaration),
then times, each in a fresh process (so nothing is cached in memory) and takes the median of
``--repeats`` runs:

* ``json``: read every ``test.jsonl`` and ``json.loads`` each line (the floor);
* ``load_rows``: ``yoxla.data.editions.load_rows`` of every task with ``data_dir`` set to the
  copy: layout resolution, reading, schema unification, content-keyed caching. The suite
  and the edition manifest are loaded before the clock starts (the floor reads no suite);
* ``load_rows again``: the same calls a second time in that process (content cache hit:
  the files are re-read and hashed, not re-parsed).

The target is ``load_rows`` ≤ 2× the bare parse. The ratio is printed, not asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_copy(folder: Path) -> int:
    """Write the full-size copy; returns the number of rows written."""
    from yoxla.data.editions import bundled_path, load_edition
    from yoxla.testing.synthetic import synthetic_rows

    edition = load_edition("v1")
    rows = synthetic_rows(edition)
    for tid, entry in edition.tasks.items():
        path = folder / entry.config / "test.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as f:
            for row in rows[tid]:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    shutil.copy(bundled_path("sample") / "README.md", folder / "README.md")
    return sum(len(r) for r in rows.values())


def measure(kind: str, folder: Path) -> dict[str, float]:
    """One measurement, run in a fresh child process (``--measure``)."""
    if kind == "json":
        files = sorted(folder.glob("*/test.jsonl"))
        start = time.perf_counter()
        n = 0
        for path in files:
            with path.open(encoding="utf-8") as f:
                n += len([json.loads(line) for line in f if line.strip()])
        return {"seconds": time.perf_counter() - start, "rows": n}
    from yoxla.contract.benchmark import benchmark_manifest
    from yoxla.data.editions import load_edition, load_rows

    benchmark_manifest()
    edition = load_edition("v1")
    start = time.perf_counter()
    n = sum(len(load_rows(edition, tid, data_dir=folder)) for tid in edition.tasks)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    sum(len(load_rows(edition, tid, data_dir=folder)) for tid in edition.tasks)
    return {"seconds": cold, "again": time.perf_counter() - start, "rows": n}


def in_child(kind: str, folder: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", kind, str(folder)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--keep", help="build the copy in this folder and keep it")
    ap.add_argument("--measure", nargs=2, metavar=("KIND", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], Path(args.measure[1]))))
        return

    with tempfile.TemporaryDirectory(prefix="yoxla-bench-loading-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "v1-copy"
        total = build_copy(folder)
        size = sum(p.stat().st_size for p in folder.glob("*/test.jsonl"))
        print(f"full-size local copy: {total} rows in 11 configs, {size / 1e6:.2f} MB, at {folder}")
        bare = [in_child("json", folder) for _ in range(args.repeats)]
        load = [in_child("load", folder) for _ in range(args.repeats)]
        assert {b["rows"] for b in bare} == {ld["rows"] for ld in load} == {total}
        t_json = statistics.median(b["seconds"] for b in bare)
        t_load = statistics.median(ld["seconds"] for ld in load)
        t_again = statistics.median(ld["again"] for ld in load)
        print(f"median of {args.repeats} fresh processes each")
        print(f"  json parse (floor)        {t_json * 1000:8.1f} ms")
        print(
            f"  load_rows, 11 configs     {t_load * 1000:8.1f} ms   ratio {t_load / t_json:.2f}x (target <= 2x)"
        )
        print(f"  load_rows again (cached)  {t_again * 1000:8.1f} ms   ratio {t_again / t_json:.2f}x")


if __name__ == "__main__":
    main()
