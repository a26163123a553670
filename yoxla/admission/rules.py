"""Admission: the one rule that decides whether a result file appears on the leaderboard.

``yoxla verify`` and the app call the same :func:`check_file` and :func:`admit`. The checks
(1 reading, 2 digest, 3 signature, 4-6 contract, coverage, re-derivation) and the board rules
are in docs/leaderboard.md; 4-6 are :func:`yoxla.admission.rederive.check_suite_record` for a
suite body and :func:`yoxla.admission.v2.check_legacy_record` for a ``yoxla-result`` 2 body.
A file is admitted only when every check holds; otherwise it is excluded, each reason one line.
"""

from __future__ import annotations

import hashlib
import json
import os
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from yoxla.admission.gold import DataSource
from yoxla.admission.verdict import (
    ADMITTED,
    EXCLUDED,
    SUPERSEDED,
    TRUST_RANK,
    VERIFIED,
    Verdict,
)
from yoxla.admission.workers import check_jobs
from yoxla.data.editions import Edition
from yoxla.record.result import ResultFile, parse_record
from yoxla.record.signing import content_digest, verify_signature
from yoxla.record.v2 import ResultFileV2
from yoxla.safe.strictjson import StrictJSONError, gc_paused, loads_strict, read_regular_file
from yoxla.safe.text import one_line, skeleton

MAX_BYTES = 50 * 1024 * 1024
MAX_REASONS = 8


# Trusted keys ---------------------------------------------------------------------------


def default_trusted_keys_path(root: str | os.PathLike[str] | None = None) -> Path | None:
    """``trusted_keys.json`` of the working directory, else of the repository ``root``
    (:func:`yoxla.contract.registry.repo_root`: given, else ``$YOXLA_ROOT``, else the working
    directory)."""
    from yoxla.contract.registry import repo_root

    for candidate in (Path.cwd() / "trusted_keys.json", repo_root(root) / "trusted_keys.json"):
        if candidate.is_file():
            return candidate
    return None


def load_trusted_keys(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """{key_id: base64 public key} from a trusted-keys file ({"keys": [{key_id, public_key, owner}]})."""
    p = Path(path) if path else default_trusted_keys_path()
    if p is None or not p.is_file():
        return {}
    data = json.loads(p.read_text(encoding="utf-8"))
    return {str(k["key_id"]): str(k["public_key"]) for k in data.get("keys", [])}


# The checks ------------------------------------------------------------------------------


def _check_signature(doc: dict[str, Any], trusted: Mapping[str, str], v: Verdict) -> None:
    sig = doc.get("signature")
    if sig is None:
        return
    ok, kid = verify_signature(doc)
    v.key_id = kid
    if not ok:
        v.reasons.append(f"the signature does not verify against the key it names ({kid or 'no key id'})")
        return
    if kid is not None and kid in trusted and trusted[kid] == sig.get("public_key"):
        v.trust = VERIFIED
    else:
        v.notes.append(f"signed by {kid}, a key not in the trusted-keys file")


def check_document(
    doc: Any,
    *,
    path: str = "<memory>",
    trusted: Mapping[str, str] | None = None,
    data: DataSource | None = None,
    editions: Mapping[str, Edition] | None = None,
    sha256: str = "",
) -> Verdict:
    """Checks 1 (past the bytes) to 6 on a parsed document. Never raises."""
    v = Verdict(path=path, status=EXCLUDED, sha256=sha256)
    try:
        _check_document(doc, v, trusted or {}, data or DataSource(), editions)
    except Exception as exc:  # one hostile file must never stop the others
        where = traceback.extract_tb(exc.__traceback__)[-1]
        v.status = EXCLUDED
        v.reasons.append(
            one_line(
                f"could not be checked ({type(exc).__name__} at {Path(where.filename).name}:{where.lineno})"
            )
        )
    v.reasons = _bounded(v.reasons)
    v.notes = _bounded(v.notes)
    return v


def _bounded(lines: list[str]) -> list[str]:
    out = [one_line(r) for r in lines[:MAX_REASONS]]
    if len(lines) > MAX_REASONS:
        out.append(f"… and {len(lines) - MAX_REASONS} more")
    return out


def _check_document(
    doc: Any,
    v: Verdict,
    trusted: Mapping[str, str],
    data: DataSource,
    editions: Mapping[str, Edition] | None,
) -> None:
    rec, problems = parse_record(doc)
    if rec is None:
        v.reasons.extend(problems)
        return
    v.provider, v.model = rec.model.provider, rec.model.model
    v.display_name = rec.model.display_name
    v.model_info = rec.model
    v.usage = rec.usage
    v.edition = rec.edition if isinstance(rec, ResultFileV2) else None
    v.result_format = f"{rec.format} v{rec.format_version}"
    v.created_at = rec.created_at
    v.conditions = rec.run.conditions
    v.run_id = rec.run.run_id
    v.generation_errors = rec.generation_errors
    v.content_sha256 = rec.content_sha256

    # 2. digest
    recomputed = content_digest(doc)
    if rec.content_sha256 != recomputed:
        v.reasons.append(
            "content_sha256 does not match the content (the file was changed after it was written): "
            f"stored {rec.content_sha256[:23]}…, recomputed {recomputed[:23]}…"
        )
    # 3. signature
    _check_signature(doc, trusted, v)
    if isinstance(rec, ResultFile):  # 4-6 for an eval suite: only with its committed suite
        from yoxla.admission.rederive import check_suite_record

        check_suite_record(doc, rec, v, data)
        return
    # 4-6 for a v2 file: through the package suite of its edition
    from yoxla.admission.v2 import check_legacy_record

    check_legacy_record(doc, rec, v, data, editions)


def check_bytes(data_bytes: bytes, *, path: str = "<memory>", **kw: Any) -> Verdict:
    return _check_raw(data_bytes, "sha256:" + hashlib.sha256(data_bytes).hexdigest(), path=path, **kw)


def _check_raw(data_bytes: bytes, sha: str, *, path: str, **kw: Any) -> Verdict:
    """:func:`check_bytes` of bytes whose digest ``sha`` the caller has just computed."""
    if len(data_bytes) > MAX_BYTES:
        v = Verdict(path=path, status=EXCLUDED, sha256=sha)
        v.reasons.append(
            f"the file is {len(data_bytes) / 2**20:.1f} MB, over the {MAX_BYTES // 2**20} MB limit"
        )
        return v
    with gc_paused():  # the document and its derivation are freed by reference counting
        try:
            doc = loads_strict(data_bytes)
        except StrictJSONError as exc:
            return Verdict(path=path, status=EXCLUDED, sha256=sha, reasons=[one_line(str(exc))])
        return check_document(doc, path=path, sha256=sha, **kw)


# Files, caching and board rules ---------------------------------------------------------------


def editions_token(editions: Mapping[str, Edition]) -> str:
    """A digest of the editions passed in, the same in every process (sets sorted, no ``repr``)."""
    from yoxla.admission.cache import stable_digest

    return stable_digest(dict(editions))


@dataclass
class _Job:
    """One file to check: where it is, its bytes' digest, and the keys its verdict goes under."""

    path: Path
    sha: str
    key: tuple[Any, ...]
    ed_token: str
    # the bytes ``sha`` is the digest of, when the job is checked at once in this process
    # (check_file); a job sent to a worker process carries none and is read there
    raw: bytes | None = field(default=None, repr=False, compare=False)


def _lookup(
    p: Path,
    trusted: Mapping[str, str],
    data: DataSource,
    editions: Mapping[str, Edition] | None,
    use_cache: bool,
    root: str | os.PathLike[str] | None,
    keep_bytes: bool = False,
) -> Verdict | _Job:
    """The file's verdict if it is known (unreadable, or in the memory or disk cache), else its job
    (holding the bytes read with ``keep_bytes``)."""
    raw, problem = read_regular_file(p, MAX_BYTES, root)
    if raw is None:
        return Verdict(path=str(p), status=EXCLUDED, reasons=[one_line(problem or "cannot be read")])
    sha = "sha256:" + hashlib.sha256(raw).hexdigest()
    ed_token = "" if editions is None else editions_token(editions)
    job = _Job(p, sha, (sha, tuple(sorted(trusted.items())), ed_token), ed_token, raw if keep_bytes else None)
    if not use_cache:
        return job
    cached = data.verdicts.get(job.key)
    if cached is None:
        from yoxla.admission import cache as disk

        cached = disk.load(sha, trusted, ed_token, data, editions)
        if cached is not None:
            data.verdicts[job.key] = cached
    return job if cached is None else _copy_verdict(cached, str(p))


def _check_job(
    job: _Job,
    trusted: Mapping[str, str],
    data: DataSource,
    editions: Mapping[str, Edition] | None,
    root: str | os.PathLike[str] | None,
) -> Verdict:
    """Check the file afresh: the bytes the job holds (read and hashed for its key just before, in
    this process), else read again (a file changed meanwhile is judged as it is now)."""
    if job.raw is not None:
        return _check_raw(job.raw, job.sha, path=str(job.path), trusted=trusted, data=data, editions=editions)
    raw, problem = read_regular_file(job.path, MAX_BYTES, root)
    if raw is None:
        return Verdict(path=str(job.path), status=EXCLUDED, reasons=[one_line(problem or "cannot be read")])
    return check_bytes(raw, path=str(job.path), trusted=trusted, data=data, editions=editions)


def _remember(
    job: _Job,
    v: Verdict,
    trusted: Mapping[str, str],
    data: DataSource,
    editions: Mapping[str, Edition] | None,
    use_cache: bool,
) -> Verdict:
    if use_cache and v.sha256:
        from yoxla.admission import cache as disk

        disk.store(v, trusted, job.ed_token, data, editions)
        data.verdicts[(v.sha256, *job.key[1:])] = v
    return _copy_verdict(v, str(job.path))


def check_file(
    path: str | os.PathLike[str],
    *,
    trusted: Mapping[str, str] | None = None,
    data: DataSource | None = None,
    editions: Mapping[str, Edition] | None = None,
    use_cache: bool = True,
    root: str | os.PathLike[str] | None = None,
) -> Verdict:
    """Admission verdict of one file (checks 1-6), cached by the SHA-256 of the file's bytes.

    The cache key also holds the trusted keys, any non-default editions and the data the
    edition's re-scoring used (the rows' fingerprints, or why there were none), so a cached
    verdict is exactly what a fresh check would give. Never raises.
    """
    trusted = trusted or {}
    data = data or DataSource()
    found = _lookup(Path(path), trusted, data, editions, use_cache, root, keep_bytes=True)
    if isinstance(found, Verdict):
        return found
    return _remember(
        found, _check_job(found, trusted, data, editions, root), trusted, data, editions, use_cache
    )


def _copy_verdict(v: Verdict, path: str) -> Verdict:
    return replace(v, path=path, key=path, reasons=list(v.reasons), notes=list(v.notes), superseded_by=None)


def board_key(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> str:
    """A file's key on the board: its path under the results folder (``/`` separated)."""
    p = Path(path)
    if root is not None:
        try:
            return Path(os.path.abspath(p)).relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            pass
    return p.as_posix()


def _instant(ts: str) -> float:
    """A stored timestamp as seconds since the epoch (time zones compared correctly)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return 0.0


def _priority(v: Verdict) -> tuple[int, float, str]:
    """Who keeps the board when files compete: higher trust, then newer, then key."""
    return (TRUST_RANK.get(v.trust, 0), _instant(v.created_at), v.key)


def supersede(verdicts: list[Verdict]) -> list[Verdict]:
    """Per (edition or suite, board, provider, model) one file is shown: the newest of the highest trust."""
    groups: dict[tuple[Any, ...], list[Verdict]] = {}
    for v in verdicts:
        if v.admitted:
            groups.setdefault((v.edition, v.suite, v.rechecked, v.group, v.provider, v.model), []).append(v)
    for group in groups.values():
        group.sort(key=_priority, reverse=True)
        top = group[0]
        top.status = ADMITTED
        for other in group[1:]:
            other.status = SUPERSEDED
            other.superseded_by = top.key
            if TRUST_RANK[other.trust] < TRUST_RANK[top.trust] and _instant(other.created_at) > _instant(
                top.created_at
            ):
                other.reasons = [
                    f"not shown: the verified {one_line(top.key, 120)} is on the board for the same model "
                    "(a community file never replaces a verified one)"
                ]
            else:
                other.reasons = [f"superseded by {one_line(top.key, 120)} (same provider and model)"]
    return verdicts


def unique_names(verdicts: list[Verdict]) -> list[Verdict]:
    """Display names are unique per board; a look-alike of a listed name is excluded."""
    boards: dict[tuple[Any, ...], list[Verdict]] = {}
    for v in verdicts:
        if v.shown:
            boards.setdefault((v.edition, v.suite, v.rechecked, v.group), []).append(v)
    for group in boards.values():
        # The name belongs to the most trusted, then the earliest file.
        group.sort(key=lambda v: (-TRUST_RANK.get(v.trust, 0), _instant(v.created_at), v.key))
        holders: dict[str, Verdict] = {}
        for v in group:
            sk = skeleton(v.name)
            holder = holders.get(sk)
            if holder is None:
                holders[sk] = v
                continue
            same = "the same as" if holder.name == v.name else "confusable with"
            v.status = EXCLUDED
            v.reasons = [
                f"display name {one_line(repr(v.name), 90)} is {same} {one_line(repr(holder.name), 90)} "
                f"of {one_line(holder.key, 120)}; names on the board must be unique (run with --display-name)"
            ]
    return verdicts


def admit(
    paths: Iterable[str | os.PathLike[str]],
    *,
    trusted: Mapping[str, str] | None = None,
    data: DataSource | None = None,
    editions: Mapping[str, Edition] | None = None,
    root: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Verdict]:
    """Verdicts for many files (one each, whatever the others hold), board rules applied.

    Files whose verdict is not cached are checked in ``workers`` processes (default
    :func:`yoxla.admission.workers.admission_workers`); every stored number is re-derived either way, and the verdicts
    are exactly those of a check in this process. ``progress(done, total)`` hears each file."""
    data = data or DataSource()
    trusted = trusted or {}
    files = [Path(p) for p in paths]
    found: list[Verdict | _Job] = [_lookup(p, trusted, data, editions, True, root) for p in files]
    jobs = [(i, j) for i, j in enumerate(found) if isinstance(j, _Job)]
    total, done = len(files), len(files) - len(jobs)
    if progress is not None:
        progress(done, total)

    def check(job: _Job) -> Verdict:
        return _check_job(job, trusted, data, editions, root)

    for k, checked in check_jobs([j for _, j in jobs], check, data, workers):
        i, job = jobs[k]
        found[i] = _remember(job, checked, trusted, data, editions, True)
        done += 1
        if progress is not None:
            progress(done, total)
    verdicts: list[Verdict] = []
    for p, got in zip(files, found, strict=True):
        assert isinstance(got, Verdict)
        got.key = board_key(p, root)
        verdicts.append(got)
    return unique_names(supersede(verdicts))
