"""Admission in worker processes: the files a restart has no verdict for, checked on every core.

Each worker is a fork of the admitting process (same rows, suites, editions and keys, nothing
pickled); it reads the file again, checks it with the function admission hands in, and sends the
verdict back; the parent alone writes the caches. The first file is checked before any fork, so
what it loads is inherited. Forking with other threads alive can deadlock a child, so then (but
for :data:`FORK_SAFE_THREADS`), or off Linux, files are checked here in turn. A child never uses
the grader workers it inherited: it starts its own.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yoxla.admission.gold import DataSource
    from yoxla.admission.verdict import Verdict

WORKERS_ENV = "YOXLA_ADMISSION_WORKERS"

MIN_JOBS = 8  # fewer files than this are checked here unless workers are asked for: a fork costs more

# What a forked worker checks with: set in the parent just before the pool forks.
_STATE: tuple[Any, ...] | None = None
# Grader workers a forked child inherited from the parent: kept referenced and never used or
# closed here (their pipes and processes are the parent's; collecting them would end them).
_INHERITED: list[Any] = []


def admission_workers() -> int:
    """How many worker processes check files: ``$YOXLA_ADMISSION_WORKERS``, else one per core (at most 8)."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw.isdigit():
        return max(1, int(raw))
    return max(
        1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    )


def _child_init() -> None:
    """In a forked worker: grader workers of its own (closed when it exits), never the parent's."""
    assert _STATE is not None
    suites = getattr(_STATE[1], "suites", None)
    if suites is None:
        return
    if getattr(suites, "_pool", None) is not None:
        _INHERITED.append(suites._pool)
        suites._pool = None
    multiprocessing.util.Finalize(suites, suites.close, exitpriority=10)


# Threads known to be safe across a fork: idle daemons that hold no lock while they wait and
# whose module starts afresh in a forked child (yoxla.score.sandbox's spawner).
FORK_SAFE_THREADS = frozenset({"yoxla-worker-spawner"})


def can_fork() -> bool:
    """Whether worker processes may be forked here: Linux, from the main thread, and no other
    thread alive but those known to be safe across a fork."""
    me = threading.current_thread()
    return (
        sys.platform.startswith("linux")
        and me is threading.main_thread()
        and all(t is me or t.name in FORK_SAFE_THREADS for t in threading.enumerate())
    )


def _run(job: Any) -> Verdict:
    assert _STATE is not None
    check, _data = _STATE
    return check(job)


def check_jobs(
    jobs: list[Any], check: Callable[[Any], Verdict], data: DataSource, workers: int | None
) -> Iterator[tuple[int, Verdict]]:
    """``(index, verdict)`` for every job, in the order they finish: ``check(job)`` here or in a
    forked worker (``data``: the rows and suites the check reads, whose grader workers a child
    replaces with its own)."""
    n = min(workers or admission_workers(), max(0, len(jobs) - 1))
    if n <= 1 or not can_fork() or (workers is None and len(jobs) < MIN_JOBS):
        for k, job in enumerate(jobs):
            yield k, check(job)
        return
    yield 0, check(jobs[0])  # loads what the others share
    if not can_fork():  # that check started a thread that a fork is not safe with
        for k in range(1, len(jobs)):
            yield k, check(jobs[k])
        return
    global _STATE
    _STATE = (check, data)
    left = set(range(1, len(jobs)))
    try:
        with ProcessPoolExecutor(
            n, mp_context=multiprocessing.get_context("fork"), initializer=_child_init
        ) as pool:
            futures = {pool.submit(_run, jobs[k]): k for k in sorted(left)}
            for fut in as_completed(futures):
                k = futures[fut]
                try:
                    v = fut.result()
                except BrokenProcessPool:
                    break  # a worker died (killed for memory, say): the rest are checked here
                except Exception:  # a verdict that could not come back: checked here below
                    continue
                left.discard(k)
                yield k, v
    finally:
        _STATE = None
    for k in sorted(left):
        yield k, check(jobs[k])
