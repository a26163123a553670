"""Admission in worker processes, and a verdict cache that every process can read.

* Checking files in worker processes gives exactly the verdicts of checking them one after
  another in this process: committed files, hostile ones and files with distributions alike.
* The restart cache's keys are digests of canonical content: two processes with different
  ``PYTHONHASHSEED`` share it, also when editions with their own analysis section are passed in.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from yoxla.admission import cache, workers
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import admit, editions_token

ROOT = Path(__file__).resolve().parents[2]


def _plain(obj: Any) -> Any:
    """A comparable form of a verdict: arrays as lists (NaN as text), dataclasses as dicts."""
    if isinstance(obj, np.ndarray):
        return [repr(x) for x in obj.tolist()]
    if isinstance(obj, float):
        return repr(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if hasattr(obj, "model_dump"):
        return _plain(obj.model_dump(mode="json"))
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(x) for x in obj]
    return obj


def _folder(tmp_path: Path) -> Path:
    """The committed result files, one with a changed score, one truncated, one not JSON."""
    folder = tmp_path / "results"
    for p in sorted((ROOT / "results").rglob("*.json")):
        dest = folder / p.relative_to(ROOT / "results")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(p.read_bytes())
    first = sorted((folder / "sample").glob("*.json"))[0]
    doc = json.loads(first.read_text(encoding="utf-8"))
    tid = next(iter(doc["tasks"]))
    doc["tasks"][tid]["score"] = 99.5
    (folder / "sample" / "forged__score.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "sample" / "cut__short.json").write_bytes(first.read_bytes()[:5000])
    (folder / "sample" / "not__json.json").write_text("{nope", encoding="utf-8")
    return folder


_PARALLEL = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_admission_workers import _plain
from yoxla.admission import workers
from yoxla.admission.rules import admit
from yoxla.admission.gold import DataSource
forks = []
real = workers.ProcessPoolExecutor
workers.ProcessPoolExecutor = lambda n, **kw: forks.append(n) or real(n, **kw)
folder = Path({folder!r})
files = sorted(folder.rglob("*.json"))
seen = []
vs = admit(files, data=DataSource(allow_hub=False), root=folder, workers=2, progress=lambda d, t: seen.append([d, t]))
print(json.dumps({{"forks": forks, "seen": seen, "verdicts": [_plain(v) for v in vs]}}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
def test_workers_give_exactly_the_verdicts_of_one_process(tmp_path, monkeypatch):
    """A fresh process (no thread left by another test) checks in two workers; this one alone."""
    folder = _folder(tmp_path)
    files = sorted(folder.rglob("*.json"))
    monkeypatch.setenv("YOXLA_NO_CACHE", "1")
    script = tmp_path / "parallel.py"
    script.write_text(
        _PARALLEL.format(tests=str(Path(__file__).parent), folder=str(folder)), encoding="utf-8"
    )
    out = subprocess.run(
        [sys.executable, str(script)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["forks"] == [2], "the files were not checked in worker processes"
    seen = got["seen"]
    assert seen[-1] == [len(files), len(files)] and [d for d, _ in seen] == sorted(d for d, _ in seen)
    alone = admit(files, data=DataSource(allow_hub=False), root=folder, workers=1)
    assert {v.status for v in alone} >= {"admitted", "excluded"}
    assert len(got["verdicts"]) == len(alone)
    for a, b in zip(alone, got["verdicts"], strict=True):
        assert json.loads(json.dumps(_plain(a))) == b, a.key


def test_a_fork_safe_thread_does_not_stop_the_workers():
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="yoxla-worker-spawner", daemon=True)
    other = threading.Thread(target=stop.wait, name="some-server", daemon=True)
    t.start()
    try:
        assert workers.can_fork() == all(
            x is threading.current_thread() or x.name in workers.FORK_SAFE_THREADS
            for x in threading.enumerate()
        )
        other.start()
        assert workers.can_fork() is False  # any other thread: files are checked in this process
    finally:
        stop.set()
        t.join()
        other.join()


def _admit_script(folder: Path) -> str:
    return textwrap.dedent(
        f"""
        import json
        from yoxla.data.editions import load_edition
        from yoxla.admission import rules as admission
        from yoxla.admission.gold import DataSource
        from dataclasses import replace
        from yoxla.contract.spec import Analysis, TaskAnalysis
        from yoxla.data.editions import load_rows
        calls = []
        real = admission.check_bytes
        admission.check_bytes = lambda *a, **k: calls.append(1) or real(*a, **k)
        sample = load_edition("sample")
        files = sorted(__import__("pathlib").Path({str(folder)!r}).rglob("*.json"))
        # an edition passed in whose analysis section names controls by id, taken from a set
        # (whose order changes with the hash seed)
        ids = sorted(frozenset(str(r["id"]) for r in load_rows(sample, "sentiment_v1")[:6]))
        own = Analysis(tasks={{"sentiment_v1": TaskAnalysis(control_ids=ids)}})
        eds = {{"sample": replace(sample, analysis=own)}}
        vs = admission.admit(files, data=DataSource(allow_hub=False), editions=eds, workers=1)
        print(json.dumps({{"checked": len(calls), "token": admission.editions_token(eds),
                           "admitted": sum(v.admitted for v in vs)}}))
        """
    )


def test_processes_with_different_hash_seeds_share_the_cache(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    for p in sorted((ROOT / "results" / "sample").glob("*.json"))[:3]:
        (folder / p.name).write_bytes(p.read_bytes())
    script = tmp_path / "admit.py"
    script.write_text(_admit_script(folder), encoding="utf-8")
    env = dict(os.environ, YOXLA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    env.pop("YOXLA_NO_CACHE", None)
    got = []
    for seed in ("1", "2", "3"):
        out = subprocess.run(
            [sys.executable, str(script)],
            env={**env, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        got.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert got[0]["checked"] == 3
    assert got[1]["checked"] == 0 and got[2]["checked"] == 0, got  # every verdict from the cache
    assert got[0]["token"] == got[1]["token"] == got[2]["token"]


def test_sets_digest_the_same_whatever_the_order():
    a = {"control_ids": frozenset(["b-1", "a-2", "c-3"])}
    b = {"control_ids": frozenset(["c-3", "b-1", "a-2"])}
    c = {"control_ids": frozenset(["c-3", "b-1"])}
    assert cache.stable_digest(a) == cache.stable_digest(b) != cache.stable_digest(c)
    assert cache.stable_digest({"x": 1, "y": [1.5, None]}) == cache.stable_digest({"y": [1.5, None], "x": 1})
    assert cache.stable_digest({"x": 1}) != cache.stable_digest({"x": 1.0})


def test_editions_token_follows_content():
    from yoxla.data.editions import load_edition

    sample = load_edition("sample")
    changed = dataclasses.replace(sample, description=sample.description + " (changed)")
    assert editions_token({"sample": sample}) == editions_token({"sample": sample})
    assert editions_token({"sample": sample}) != editions_token({"sample": changed})


def test_cache_place_and_start_up_line(tmp_path, monkeypatch):
    monkeypatch.setenv("YOXLA_CACHE_DIR", str(tmp_path / "c"))
    assert cache.cache_dir() == tmp_path / "c" / "admission"
    assert "first start" not in cache.describe()
    monkeypatch.delenv("YOXLA_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPACE_ID", "someone/yoxla")
    monkeypatch.setattr(cache, "PERSISTENT_ROOT", tmp_path / "no-data")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the user's cache folder, when set
    assert cache.cache_dir() == tmp_path / "xdg" / "yoxla" / "admission"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")  # ignored, as the XDG rules say
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "yoxla" / "admission"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "yoxla" / "admission"
    assert "every start is a first start" in cache.describe()
    (tmp_path / "data").mkdir()
    monkeypatch.setattr(cache, "PERSISTENT_ROOT", tmp_path / "data")
    assert cache.cache_dir() == tmp_path / "data" / "yoxla-cache" / "admission"
    assert "first start" not in cache.describe()
    monkeypatch.setenv("YOXLA_NO_CACHE", "1")
    assert cache.cache_dir() is None and "every start checks every file" in cache.describe()


def test_bootstrap_replicates_come_back_from_the_cache_unchanged(tmp_path, monkeypatch):
    from yoxla.board import bootstrap

    monkeypatch.setenv("YOXLA_CACHE_DIR", str(tmp_path / "c"))
    rng = np.random.default_rng(7)
    scores = (rng.random((4, 30)) > 0.4).astype(float)
    pred, gold = rng.random((4, 30)) * 5, rng.random(30) * 5
    tasks = [
        bootstrap.TaskInput("nli_v1", "understanding", scores.mean(axis=1) * 100, scores),
        bootstrap.TaskInput("sts_v1", "understanding", np.full(4, 50.0), scores, pred, gold),
        bootstrap.TaskInput("knowledge_choice_v1", "knowledge", np.full(4, 20.0), None),
    ]
    calls: list[int] = []
    real = bootstrap._resample
    monkeypatch.setattr(bootstrap, "_resample", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = bootstrap.run_bootstrap(tasks, ["understanding", "knowledge"], 4, B=200)
    again = bootstrap.run_bootstrap(tasks, ["understanding", "knowledge"], 4, B=200)
    assert calls == [1]  # the second came from the disk
    for a, b in ((first.task_reps, again.task_reps), (first.yoxla_reps, again.yoxla_reps)):
        assert np.array_equal(a, b, equal_nan=True)
    changed = [
        tasks[0],
        tasks[1],
        bootstrap.TaskInput("knowledge_choice_v1", "knowledge", np.full(4, 21.0), None),
    ]
    bootstrap.run_bootstrap(changed, ["understanding", "knowledge"], 4, B=200)
    assert calls == [1, 1]  # other inputs: resampled
