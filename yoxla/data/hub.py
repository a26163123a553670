"""The Hugging Face Hub half of the one loading path: a dataset repository at a pinned commit,
downloaded (only the files asked for) into a folder that :mod:`yoxla.data.files` reads.

Every Hub read (the ``v1`` edition, ``yoxla download``, a suite's Hub datasets) goes through
:func:`snapshot`: the revision is resolved to a commit with one request and a 3 s timeout (an
unreachable Hub fails in seconds, and what is read is pinned), then ``README.md`` and the files
the conventions could pick are fetched, and the card's other paths in a second request. Offline
mode (``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE``) reads only the local cache. A failure is one
:class:`~yoxla.data.files.DataUnavailable` line starting ``Hub dataset <repo>``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from yoxla.data.files import DataUnavailable, download_patterns, split_globs

HUB_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Snapshot:
    """A dataset repository's files at one commit, in a local folder."""

    repo: str
    commit: str  # the commit read (offline: the cached snapshot's, or the revision asked for)
    folder: Path


def hub_offline() -> bool:
    return any(os.environ.get(v, "").lower() in _TRUE for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def hub_reachable(repo: str, revision: str | None, timeout: float = HUB_TIMEOUT_S) -> tuple[bool, str]:
    """A quick look at the Hub before anything slow: offline mode, then one request with a short timeout."""
    if hub_offline():
        return False, "offline mode (HF_HUB_OFFLINE) is set"
    try:
        hub_commit(repo, revision, timeout)
    except Exception as exc:  # any failure means "not now"
        return False, f"the Hub did not answer ({type(exc).__name__})"
    return True, ""


def hub_commit(repo: str, revision: str | None, timeout: float = HUB_TIMEOUT_S) -> str:
    """The commit a revision (branch, tag or hash; ``None`` is the default branch) points at."""
    from huggingface_hub import HfApi

    sha = HfApi().dataset_info(repo, revision=revision, timeout=timeout).sha
    return sha or revision or "main"


_SNAPSHOTS: dict[
    tuple[str, str | None, tuple[tuple[str | None, str], ...], tuple[str, ...], bool], Snapshot
] = {}


def snapshot(
    repo: str,
    revision: str | None,
    configs: Sequence[tuple[str | None, str]] = (),
    *,
    files: Sequence[str] = (),
    local_dir: str | os.PathLike[str] | None = None,
) -> Snapshot:
    """``repo`` at ``revision`` resolved to a commit, with the files of ``configs`` (config, split)
    pairs, or exactly ``files``. Into the Hugging Face cache once per process, or into ``local_dir``."""
    offline = hub_offline()
    key = (repo, revision, tuple(configs), tuple(files), offline)
    if local_dir is None and key in _SNAPSHOTS:
        return _SNAPSHOTS[key]
    label = f"Hub dataset {repo}" + (f" at {revision}" if revision else "")
    rev = revision
    if not offline:
        try:  # fail in seconds, not after the Hub client's minute of retries; pin what we read
            rev = hub_commit(repo, revision)
        except Exception as exc:
            raise DataUnavailable(f"{label}: the Hub did not answer ({type(exc).__name__})") from None
    try:
        folder = _fetch(repo, rev, configs, files, local_dir, offline)
    except DataUnavailable as exc:  # the card could not be read
        raise DataUnavailable(f"{label}: {exc}") from None
    except Exception as exc:  # huggingface_hub raises many types; all mean "not available here"
        why = f"{type(exc).__name__}: {_first_line(exc)}"
        why = "not in the local Hugging Face cache (offline mode)" if offline else why
        raise DataUnavailable(f"{label}: {why}") from None
    commit = rev or "main"
    if offline and local_dir is None and re.fullmatch(r"[0-9a-f]{40}", folder.name):
        commit = folder.name  # the cache's snapshots/<commit> folder that the revision resolved to
    snap = Snapshot(repo, commit, folder)
    if local_dir is None:
        _SNAPSHOTS[key] = snap
    return snap


def _first_line(exc: BaseException) -> str:
    """The first non-empty line of an error (the Hub client's run to several), bounded."""
    return next((line.strip()[:200] for line in str(exc).splitlines() if line.strip()), "")


def _fetch(
    repo: str,
    revision: str | None,
    configs: Sequence[tuple[str | None, str]],
    files: Sequence[str],
    local_dir: str | os.PathLike[str] | None,
    offline: bool,
) -> Path:
    from huggingface_hub import snapshot_download

    def fetch(patterns: list[str]) -> Path:
        path = snapshot_download(
            repo_id=repo,
            repo_type="dataset",
            revision=revision,
            allow_patterns=patterns,
            local_dir=str(local_dir) if local_dir else None,
            local_files_only=offline,
        )
        return Path(path)

    if files:
        return fetch(list(dict.fromkeys(files)))
    first = ["README.md", *dict.fromkeys(p for c, s in configs for p in split_globs(c, s))]
    folder = fetch(first)
    needed = dict.fromkeys(p for c, s in configs for p in download_patterns(folder, c, s))
    missing = [p for p in needed if not any(fnmatch(p, q) for q in first)]
    if missing:
        folder = fetch(["README.md", *missing])
    return folder


def file_url(url: str) -> tuple[str, str | None, str]:
    """(repo, revision, file) of a Hugging Face dataset file URL
    (``https://huggingface.co/datasets/<repo>/resolve/<revision>/<file>`` or
    ``hf://datasets/<repo>@<revision>/<file>``); any other host is refused."""
    if url.startswith("hf://datasets/"):
        pieces = url[len("hf://datasets/") :].split("/")
        if len(pieces) < 3:
            raise DataUnavailable(f"{url} does not name a file")
        repo, revision = "/".join(pieces[:2]), None
        if "@" in repo:
            repo, revision = repo.split("@", 1)
        return repo, revision, _inside("/".join(pieces[2:]), url)
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.hostname != "huggingface.co" or parts.username or parts.password:
        raise DataUnavailable(
            "data_files must be Hugging Face dataset file URLs "
            "(https://huggingface.co/datasets/<repo>/resolve/<revision>/<file>); other hosts are not fetched"
        )
    m = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", unquote(parts.path))
    if not m:
        raise DataUnavailable(f"{url} is not a …/datasets/<repo>/resolve/<revision>/<file> URL")
    return m.group(1), m.group(2), _inside(m.group(3), url)


def _inside(name: str, url: str) -> str:
    if ".." in PurePosixPath(name).parts or name.startswith("/"):
        raise DataUnavailable(f"{url} names a file outside its repository")
    return name
