"""The committed suites admission re-scores with: found by id under ``suites/``, prepared once.

The only suites the leaderboard knows are the manifests committed under ``suites/`` with their
frozen hash files (:func:`yoxla.contract.registry.find_committed`): reviewed code and data.
Nothing of a result file is ever used as a suite: not its path, not any code in it.
:meth:`CommittedSuites.token` is what a cached verdict of a suite file rests on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yoxla.safe.text import one_line


@dataclass
class CommittedSuite:
    """One committed suite: where it is, and, once prepared, its tasks (or why it cannot be used)."""

    id: str
    path: Path
    hash_file: Path
    repo_path: str
    manifest: Any  # SuiteManifest
    problem: str | None = None
    prepared: dict[str, Any] | None = None  # task id -> PreparedTask, after prepare()
    unreachable: str | None = None  # why its Hub data cannot be read here: files are not re-checked


@dataclass
class CommittedSuites:
    """The committed suites of this repository (``root``: another suites folder, for tests)."""

    root: Path | None = None
    limits: Any = None  # WorkerLimits of the grader workers (default limits when None)
    # False: a suite that reads a Hugging Face dataset is not prepared, its files are listed as
    # not re-checked (``yoxla verify --no-hub``, ``load_board(allow_hub=False)``)
    allow_hub: bool = True
    _suites: dict[str, CommittedSuite] | None = field(default=None, repr=False)
    _broken: dict[str, str] = field(default_factory=dict, repr=False)  # suite id -> why it is unusable
    _pool: Any = field(default=None, repr=False)
    _tokens: dict[str, str] = field(default_factory=dict, repr=False)

    # Finding ------------------------------------------------------------------------------------
    def _discover(self) -> dict[str, CommittedSuite]:
        if self._suites is not None:
            return self._suites
        from yoxla.contract.errors import ManifestError
        from yoxla.contract.loader import load_manifest
        from yoxla.contract.registry import find_committed, repo_path, suite_id, suites_root

        root = self.root if self.root is not None else suites_root()
        found: dict[str, CommittedSuite] = {}
        unreadable: dict[str, str] = {}
        for c in find_committed(root):
            where = repo_path(c.path, root)  # yoxla/… for the package's suites
            try:
                manifest = load_manifest(c.path)
                sid = suite_id(manifest)
            except Exception as exc:  # one bad suite never takes down the others
                why = str(exc) if isinstance(exc, ManifestError) else f"{type(exc).__name__}: {exc}"
                # Its id is unknown: files naming the file's stem get this reason.
                unreadable.setdefault(
                    c.path.stem, one_line(f"the committed suite {where} cannot be loaded: {why}", 400)
                )
                continue
            if sid in found:
                self._broken[sid] = (
                    f"two committed manifests name suite {sid!r} ({found[sid].repo_path}, {where})"
                )
                continue
            found[sid] = CommittedSuite(sid, c.path, c.hash_file, where, manifest)
        for stem, why in unreadable.items():
            if stem not in found:
                self._broken.setdefault(stem, why)
        self._suites = found
        return found

    def ids(self) -> list[str]:
        return sorted(sid for sid in self._discover() if sid not in self._broken)

    def get(self, sid: str) -> tuple[CommittedSuite | None, str | None]:
        """(the committed suite, None), or (None, why no suite can be used for this id)."""
        suites = self._discover()
        if sid in self._broken:
            return None, self._broken[sid]
        suite = suites.get(sid)
        if suite is None:
            return None, (
                f"suite {sid!r} is not committed in this repository (suites/…/<name>.yaml with its "
                "hash file); suite results are re-scored only with a reviewed, committed suite"
            )
        return suite, None

    # Preparing ----------------------------------------------------------------------------------
    @property
    def pool(self) -> Any:
        if self._pool is None:
            from yoxla.score.worker import WorkerPool

            self._pool = WorkerPool(self.limits)
        return self._pool

    def prepare(self, suite: CommittedSuite) -> str | None:
        """Prepare every task of ``suite`` once; the problem when it cannot be used (else None)."""
        if suite.prepared is not None or suite.problem is not None:
            return suite.problem
        from yoxla.contract.errors import ManifestError
        from yoxla.contract.hashing import compare, prepared_hashes, read_hash_file
        from yoxla.data.datasets import HubUnavailable
        from yoxla.prompt.prepare import prepare_task

        if suite.unreachable is not None:
            return None
        if not self.allow_hub:
            hub = _hub_datasets(suite.manifest)
            if hub:
                suite.unreachable = one_line(
                    f"suite {suite.id!r} reads {', '.join(hub)} from the Hugging Face Hub, which is not used here",
                    400,
                )
                return None
        try:
            prepared = {tid: prepare_task(task, self.pool) for tid, task in suite.manifest.tasks.items()}
            frozen = read_hash_file(suite.hash_file)
        except HubUnavailable as exc:  # not a broken suite: its files are listed as not re-checked
            suite.unreachable = one_line(str(exc), 400)
            return None
        except Exception as exc:  # this suite's files only: every other suite stays usable
            why = str(exc) if isinstance(exc, ManifestError) else f"{type(exc).__name__}: {exc}"
            suite.problem = one_line(f"the committed suite {suite.id!r} cannot be prepared here: {why}", 400)
            return suite.problem
        current = {tid: prepared_hashes(p) for tid, p in prepared.items()}
        for line in compare(current, frozen):
            if line.status in ("changed", "new"):
                what = "changed since it was frozen" if line.status == "changed" else "is not frozen"
                suite.problem = (
                    f"task {line.task} of the committed suite {suite.id!r} {what} "
                    f"(`yoxla suite check {suite.repo_path}` fails)"
                )
                return suite.problem
        suite.prepared = prepared
        return None

    # Cache key ----------------------------------------------------------------------------------
    def token(self, sid: str) -> str:
        """What a verdict on a file of suite ``sid`` rests on (cheap: no data is prepared)."""
        if sid not in self._tokens:
            self._tokens[sid] = self._token(sid)
        suite = (self._suites or {}).get(sid)
        # a "not re-checked" verdict rests on the Hub being unreachable: a later process re-checks
        return self._tokens[sid] + (":unreachable" if suite is not None and suite.unreachable else "")

    def _token(self, sid: str) -> str:
        from yoxla.contract import spec as S

        suite, problem = self.get(sid)
        if suite is None:
            return f"none:{sid}:{problem}"
        h = hashlib.sha256(f"suite:{sid}:{suite.repo_path}".encode())
        for name in (suite.path, suite.hash_file):
            h.update(name.read_bytes())
        for tid, task in suite.manifest.tasks.items():
            h.update(f"{tid}={task.definition_hash}".encode())
            for ds in (task.spec.dataset, getattr(task.spec.fewshot_settings, "dataset", None)):
                if isinstance(ds, S.LocalDataset):
                    data = (task.base_dir / ds.path).resolve()
                    h.update(hashlib.sha256(data.read_bytes()).digest() if data.is_file() else b"missing")
        return "suite:" + h.hexdigest()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _hub_datasets(manifest: Any) -> list[str]:
    """The Hugging Face datasets a suite's tasks read (their rows or few-shot examples), sorted."""
    from yoxla.contract import spec as S

    found = set()
    for task in manifest.tasks.values():
        for ds in (task.spec.dataset, getattr(task.spec.fewshot_settings, "dataset", None)):
            if isinstance(ds, S.HubDataset):
                found.add(ds.path)
    return sorted(found)
