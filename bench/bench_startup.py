"""Start-up cost of the leaderboard: load + admit + first tables, against a bare json.load.

    python bench/bench_startup.py [--counts 10 100 300] [--distinct 40]

Generates N synthetic result files of full v1 size (1,443 predictions each: the bundled
sample rows cycled under new ids to each task's v1 row count) with the core's evaluators
and the runner's own writer (``yoxla.results.finalize`` + ``write_result``), then times, on
a fresh process state for each N:

* ``json``: a plain ``json.load`` of every file (the floor);
* ``admit``: ``load_board`` (read, digest, schema, signature, contract, coverage, full
  re-scoring against the rows: checks 1-7);
* ``tables``: the first tables the app shows (leaderboard with bootstrap B=1000, spreads,
  four block tables);
* ``app``: ``import gradio`` + ``build_app`` on the loaded board (what `python app.py` adds).

``--distinct`` answer sets are generated (models of varied skill); files beyond that reuse
one with a new model name, as different models often give the same answers to the same
choice items. Admission memoises the verdict of (row, raw answer) pairs, so reused answers
are cheaper; the cache is emptied before each N.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yoxla.editions import load_edition
from yoxla.leaderboard import tables
from yoxla.leaderboard.board import Board, load_board
from yoxla.leaderboard.data import DataSource, EditionRows
from yoxla.leaderboard.prepared import prepare
from yoxla.leaderboard.synthetic import build_result, edition_for_rows, random_answers, synthetic_rows
from yoxla.results import finalize, write_result


def first_tables(board: Board) -> None:
    """The first tables the app shows: intervals and ranks (bootstrap), leaderboard, spreads, blocks."""
    ed = prepare(board, floors=False).edition("v1")
    tables.leaderboard_frame(ed)
    tables.spreads_table(ed)
    for b in ed.standard.blocks:
        tables.block_table(ed.standard, b)


def make_files(folder: Path, n: int, pool: list[dict]) -> list[Path]:
    out = []
    for i in range(n):
        doc = json.loads(json.dumps(pool[i % len(pool)]))
        doc["model"]["model"] = doc["model"]["display_name"] = f"synthetic-model-{i:03d}"
        doc["created_at"] = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        out.append(write_result(finalize(doc), folder / f"synthetic__model-{i:03d}.json"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", type=int, nargs="+", default=[10, 100, 300])
    ap.add_argument("--distinct", type=int, default=40)
    ap.add_argument("--no-app", action="store_true", help="skip the gradio build timing")
    args = ap.parse_args()

    rows = synthetic_rows(load_edition("v1"))
    edition = edition_for_rows("v1", rows)
    t = time.perf_counter()
    pool = [
        build_result(
            random_answers(seed, skill=0.3 + 0.6 * seed / max(1, args.distinct)),
            edition=edition,
            rows=rows,
            model=f"m{seed}",
        )
        for seed in range(min(args.distinct, max(args.counts)))
    ]
    print(f"generated {len(pool)} distinct v1-size documents in {time.perf_counter() - t:.1f} s")

    header = (
        f"{'files':>5}  {'MB':>6}  {'json.load':>9}  {'admit':>7}  {'tables':>7}  {'per file':>8}  {'x json':>6}"
        f"  {'warm admit':>10}  {'x json':>6}  {'app build':>9}"
    )
    print(header)
    for n in args.counts:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "results" / "v1"
            folder.mkdir(parents=True)
            files = make_files(folder, n, pool)
            mb = sum(f.stat().st_size for f in files) / 2**20
            t0 = time.perf_counter()
            for f in files:
                with f.open(encoding="utf-8") as fh:
                    json.load(fh)
            t_json = time.perf_counter() - t0

            os.environ["YOXLA_CACHE_DIR"] = str(Path(tmp) / "cache")  # cold: an empty disk cache
            # a fresh DataSource: no shared memo of per-example verdicts
            data = DataSource()
            data._cache["v1"] = EditionRows(rows, "synthetic")
            t0 = time.perf_counter()
            board = load_board(folder.parent, data=data, editions={"v1": edition})
            t_admit = time.perf_counter() - t0
            assert len(board.shown("v1")) == n, [v.reasons for v in board.verdicts if not v.shown][:2]
            t0 = time.perf_counter()
            first_tables(board)
            t_tables = time.perf_counter() - t0
            # warm: a restart (a fresh process state), the disk cache filled
            data2 = DataSource()
            data2._cache["v1"] = EditionRows(rows, "synthetic")
            t0 = time.perf_counter()
            board2 = load_board(folder.parent, data=data2, editions={"v1": edition})
            first_tables(board2)
            t_warm = time.perf_counter() - t0
            t_app = float("nan")
            if not args.no_app:
                t0 = time.perf_counter()
                import app

                app.build_app(board=board)
                t_app = time.perf_counter() - t0
            total = t_admit + t_tables
            print(
                f"{n:>5}  {mb:>6.1f}  {t_json:>8.2f}s  {t_admit:>6.2f}s  {t_tables:>6.2f}s  "
                f"{1000 * total / n:>6.1f}ms  {total / t_json:>6.1f}  {t_warm:>9.2f}s  {t_warm / t_json:>6.1f}"
                f"  {t_app:>8.2f}s"
            )


if __name__ == "__main__":
    main()
