"""Start-up cost of the leaderboard on a free Space: first start, restart, and memory.

    python bench/bench_startup.py [--counts 100 300] [--distinct 300] [--json OUT.json]

Writes N synthetic result files of full v1 size (1,443 predictions each, with answer
distributions on half of the distinct answer sets: :func:`yoxla.testing.boards.write_synthetic_folder`)
next to copies of the committed sample and suite files, then measures each N in fresh
processes, so nothing carries over but what a Space keeps on disk:

* ``json_load_s``: a plain ``json.load`` of every file (the floor), wall time;
* ``first_start_s``: nothing cached: every file admitted (read, digest, schema, signature,
  contract, coverage, every stored number re-derived from the stored answers, in worker
  processes on every core) and the first tables the app shows (intervals and ranks with the
  bootstrap, the leaderboard, spreads, the four block tables), wall time;
* ``restart_s``: the same in a new process with a different ``PYTHONHASHSEED``, the verdict
  and bootstrap caches left by the first start;
* ``peak_rss_mb``: the first start's process, after the app is built with every view of every
  board prepared: its peak resident memory (the admission workers are forks of it, started
  while it is small, and end before the views are prepared).

``--distinct`` answer sets are generated (default: every file its own). Ratios are to
``json_load_s`` of the same run; the load average is printed beside them. Imports (pandas,
which ``import gradio`` brings in anyway) are not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def first_tables(board: Any) -> None:
    """The first tables the app shows: intervals and ranks (bootstrap), leaderboard, spreads, blocks."""
    from yoxla.board.prepared import prepare
    from yoxla.views.blocks import block_table
    from yoxla.views.leaderboard_tables import leaderboard_frame
    from yoxla.views.tasks import spreads_table

    ed = prepare(board, floors=False).edition("v1")
    leaderboard_frame(ed)
    spreads_table(ed)
    for b in ed.standard.blocks:
        block_table(ed, b)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.is_file())


def child(mode: str, folder: Path) -> dict[str, Any]:
    """One measurement in this (fresh) process; the caller sets the cache folder and hash seed."""
    if mode == "json":
        t0 = time.perf_counter()
        for f in _files(folder):
            with f.open(encoding="utf-8") as fh:
                json.load(fh)
        return {"wall_s": time.perf_counter() - t0}
    import yoxla.board.prepared
    import yoxla.views.tabs  # noqa: F401  (gradio, pandas: `python app.py` imports them, untimed here)
    from yoxla.testing.boards import synthetic_board, synthetic_v1

    data = synthetic_v1()  # the rows the files were written against (not timed)
    heard: list[tuple[int, int]] = []
    t0 = time.perf_counter()
    board = synthetic_board(folder, data, progress=lambda d, t: heard.append((d, t)))
    t_admit = time.perf_counter() - t0
    first_tables(board)
    out: dict[str, Any] = {"wall_s": time.perf_counter() - t0, "admit_s": t_admit}
    out["shown"] = len(board.shown("v1"))
    out["from_cache"], out["files_total"] = heard[0] if heard else (0, 0)  # verdicts the cache had
    if mode == "first":
        import app

        t1 = time.perf_counter()
        app.build_app(board=board)  # every view of every board prepared
        out["app_build_s"] = time.perf_counter() - t1
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_child(mode: str, folder: Path, cache: Path, seed: str) -> dict[str, Any]:
    env = dict(os.environ, YOXLA_CACHE_DIR=str(cache), PYTHONHASHSEED=seed)
    env.pop("YOXLA_NO_CACHE", None)
    got = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(folder)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if got.returncode != 0:
        raise SystemExit(f"bench child {mode} failed:\n{got.stderr[-3000:]}")
    return dict(json.loads(got.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", type=int, nargs="+", default=[100, 300])
    ap.add_argument("--distinct", type=int, default=0, help="distinct answer sets (0: every file its own)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]))))
        return

    from yoxla.testing.boards import synthetic_v1, write_synthetic_folder

    data = synthetic_v1()
    rows_out: list[dict[str, Any]] = []
    print(
        f"{'files':>5}  {'MB':>6}  {'json.load':>9}  {'first start':>11}  {'x json':>6}  "
        f"{'restart':>8}  {'x json':>6}  {'peak RSS':>9}  load average",
        flush=True,
    )
    for n in args.counts:
        with tempfile.TemporaryDirectory(prefix="yoxla-startup-") as tmp:
            folder = Path(tmp) / "results"
            distinct = args.distinct or n
            t0 = time.perf_counter()
            write_synthetic_folder(folder, n, distinct=min(distinct, n), data=data)
            made = time.perf_counter() - t0
            mb = sum(f.stat().st_size for f in _files(folder)) / 2**20
            cache = Path(tmp) / "cache"
            j = run_child("json", folder, cache, "1")
            first = run_child("first", folder, cache, "2")
            restart = run_child("restart", folder, cache, "3")
            assert first["shown"] == restart["shown"], (first, restart)
            load = (
                " ".join(Path("/proc/loadavg").read_text().split()[:3])
                if Path("/proc/loadavg").exists()
                else "?"
            )
            row = {
                "files": n,
                "distinct": min(distinct, n),
                "mb": round(mb, 1),
                "json_load_s": j["wall_s"],
                "first_start_s": first["wall_s"],
                "first_admit_s": first["admit_s"],
                "restart_s": restart["wall_s"],
                "restart_admit_s": restart["admit_s"],
                "restart_from_cache": restart["from_cache"],
                "files_total": restart["files_total"],
                "first_x_json": first["wall_s"] / j["wall_s"],
                "restart_x_json": restart["wall_s"] / j["wall_s"],
                "app_build_s": first["app_build_s"],
                "peak_rss_mb": first["peak_rss_mb"],
                "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
                "load_average": load,
                "generated_s": made,
            }
            rows_out.append(row)
            print(
                f"{n:>5}  {mb:>6.1f}  {row['json_load_s']:>8.2f}s  {row['first_start_s']:>10.2f}s  "
                f"{row['first_x_json']:>6.1f}  {row['restart_s']:>7.2f}s  {row['restart_x_json']:>6.1f}  "
                f"{row['peak_rss_mb']:>7.0f}MB  {load}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": rows_out}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
