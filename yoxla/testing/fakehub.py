"""A stand-in for the Hugging Face Hub in tests: a folder plays the dataset repository.

:meth:`FakeHub.install` replaces what :mod:`yoxla.data.hub` calls (``huggingface_hub.snapshot_download``
and the commit check) and forgets the process's snapshots, so a test sees every request the one
loading path makes: which repository, at which revision, with which ``allow_patterns``, offline
or not. A download copies the matching files into ``<cache>/snapshots/<revision>`` (or
``local_dir``), as the real client does; offline (``local_files_only``) it returns what an
earlier download left there, or raises the client's ``LocalEntryNotFoundError``.
"""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path
from typing import Any

COMMIT = "c0ffee" * 6 + "c0de"


class FakeHub:
    def __init__(self, remote: Path, cache: Path, commit: str = COMMIT) -> None:
        self.remote = remote
        self.cache = cache
        self.commit = commit
        self.calls: list[dict[str, Any]] = []
        self.commit_calls: list[tuple[str, str | None]] = []

    def hub_commit(self, repo: str, revision: str | None, timeout: float = 3.0) -> str:
        self.commit_calls.append((repo, revision))
        return self.commit

    def snapshot_download(self, repo_id: str, **kwargs: Any) -> str:
        self.calls.append({"repo_id": repo_id, **kwargs})
        local_dir = kwargs.get("local_dir")
        dest = Path(local_dir) if local_dir else self.cache / "snapshots" / (kwargs["revision"] or "main")
        if kwargs.get("local_files_only"):  # offline: what an earlier download left, as the client does
            if not dest.is_dir():
                from huggingface_hub.errors import LocalEntryNotFoundError

                raise LocalEntryNotFoundError("Cannot find an appropriate cached snapshot folder")
            return str(dest)
        dest.mkdir(parents=True, exist_ok=True)
        for path in self.remote.rglob("*"):
            rel = path.relative_to(self.remote).as_posix()
            if path.is_file() and any(fnmatch.fnmatch(rel, p) for p in kwargs["allow_patterns"]):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, dest / rel)
        return str(dest)

    def folder(self) -> Path:
        return self.cache / "snapshots" / self.commit

    def fetched(self) -> set[str]:
        """The files downloaded at the commit, relative to the snapshot."""
        folder = self.folder()
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}

    def install(self, monkeypatch: Any) -> FakeHub:
        """Stand in for the Hub (online) for the rest of the test (``monkeypatch``: pytest's)."""
        import huggingface_hub

        from yoxla.data import hub

        monkeypatch.setattr(huggingface_hub, "snapshot_download", self.snapshot_download)
        monkeypatch.setattr(hub, "hub_commit", self.hub_commit)
        monkeypatch.setattr(hub, "_SNAPSHOTS", {})
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)  # .ci/run exports both
        return self
