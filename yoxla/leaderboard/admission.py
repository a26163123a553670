"""Admission: the one rule that decides whether a result file appears on the leaderboard.

``yoxla verify`` (pull-request CI) and the app call the same :func:`check_file`. A file is
admitted only when every check holds; otherwise it is excluded with every reason that
applies, in plain words:

1. a readable JSON object within :data:`MAX_BYTES`, of a known format version, valid
   against the result format's JSON Schema (no NaN or infinities, no negative counts);
2. ``content_sha256`` equals the digest recomputed from the content;
3. a signature, if present, verifies (a failing one excludes); a valid signature by a key
   in the trusted-keys file makes the row "verified", anything else "community";
4. the edition is known; per task, row count and fingerprint equal the manifest, and the
   suite hash, contract hashes and prompt hashes equal the frozen contract's;
5. every task of the edition is present and its predicted ids equal the dataset's ids;
6. re-scoring the stored raw outputs with the current evaluators reproduces every stored
   score to 1e-9 (when the edition's rows are not available: "scores not re-checked");
7. of two admitted files for the same provider and model in one edition the newer is shown
   and the other is listed as superseded (:func:`admit`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from yoxla.editions import EDITIONS, Edition, load_edition
from yoxla.evaluators import ExampleResult, aggregate, block_scores, score_example, task_score, yoxla_score
from yoxla.leaderboard.data import DataSource, EditionRows
from yoxla.leaderboard.schema import schema_errors
from yoxla.results import FORMAT, FORMAT_VERSION, content_digest, verify_signature
from yoxla.suite import Suite, Task, load_suite

MAX_BYTES = 50 * 1024 * 1024
TOLERANCE = 1e-9
KNOWN_FORMAT_VERSIONS = (FORMAT_VERSION,)
COUNT_KEYS = ("n", "n_valid", "generation_errors", "truncated", "n_answerable", "rows")
VERIFIED, COMMUNITY = "verified", "community"
ADMITTED, SUPERSEDED, EXCLUDED = "admitted", "superseded", "excluded"
NOT_RECHECKED = "scores not re-checked"


# Trusted keys ---------------------------------------------------------------------------


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_trusted_keys_path() -> Path | None:
    for candidate in (Path.cwd() / "trusted_keys.json", repo_root() / "trusted_keys.json"):
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


# Records ----------------------------------------------------------------------------------


@dataclass
class TaskRecord:
    """One task of an admitted file, in dataset order, compact enough to keep 300 in memory."""

    task_id: str
    block: str
    score: float
    primary_raw: float
    metrics: dict[str, Any]
    ids: list[str]
    scores: np.ndarray  # per-example score in [0, 1]
    outcomes: list[str]
    parsed: list[str]  # the parsed value as text ("" when invalid)
    near_miss: list[str | None]
    prediction: np.ndarray | None = None  # correlation tasks: the value scored (midpoint if invalid)


@dataclass
class Verdict:
    """What admission says about one file."""

    path: str
    status: str  # admitted | superseded | excluded
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sha256: str = ""  # of the file's bytes (cache key)
    content_sha256: str = ""
    edition: str | None = None
    provider: str = ""
    model: str = ""
    display_name: str = ""
    trust: str = COMMUNITY
    key_id: str | None = None
    signature_ok: bool = False
    rechecked: bool = False
    generation_errors: int = 0
    created_at: str = ""
    scores: dict[str, Any] = field(default_factory=dict)
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    superseded_by: str | None = None

    @property
    def admitted(self) -> bool:
        return self.status != EXCLUDED

    @property
    def shown(self) -> bool:
        return self.status == ADMITTED

    @property
    def name(self) -> str:
        return self.display_name or self.model

    def summary(self) -> str:
        if self.status == EXCLUDED:
            return "excluded: " + "; ".join(self.reasons)
        bits = [self.status, self.trust]
        if not self.rechecked:
            bits.append(NOT_RECHECKED)
        if self.generation_errors:
            bits.append(f"{self.generation_errors} generation error(s)")
        if self.superseded_by:
            bits.append(f"superseded by {self.superseded_by}")
        return ", ".join(bits)


# Parsing ---------------------------------------------------------------------------------


class _BadNumber(ValueError):
    pass


def _reject_constant(name: str) -> float:
    raise _BadNumber(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(text)
    return value


def parse_json(data: bytes) -> tuple[Any, str | None]:
    """(document, None) or (None, reason). NaN, Infinity and overflowing numbers are refused."""
    try:
        import orjson  # strict JSON: refuses NaN/Infinity and numbers that overflow

        return orjson.loads(data), None
    except ImportError:
        pass
    except Exception:
        pass  # re-parse with the standard library for a message in plain words
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float), None
    except _BadNumber as exc:
        return None, f"contains {exc} (NaN or an infinite number), which the result format does not allow"
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated")
        hint = "; the file looks truncated" if truncated else ""
        return None, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}){hint}"


def _negative_counts(doc: dict[str, Any]) -> list[str]:
    """Counts the schema may not reach (nested metric breakdowns): every one must be >= 0."""
    out: list[str] = []

    def bad(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and v < 0

    if bad(doc.get("generation_errors")):
        out.append("generation_errors is negative")
    tasks = doc.get("tasks")
    for tid, t in tasks.items() if isinstance(tasks, dict) else []:
        if not isinstance(t, dict):
            continue
        if bad(t.get("rows")):
            out.append(f"task {tid}: rows is negative")
        m = t.get("metrics")
        if not isinstance(m, dict):
            continue
        for k in COUNT_KEYS:
            if bad(m.get(k)):
                out.append(f"task {tid}: metric {k} is a negative count")
        for group in ("near_miss", "outcomes"):
            g = m.get(group)
            if isinstance(g, dict) and any(bad(v) for v in g.values()):
                out.append(f"task {tid}: a count in {group} is negative")
        for k, g in m.items():
            if k.startswith("per_") and isinstance(g, dict):
                if any(isinstance(c, dict) and bad(c.get("n")) for c in g.values()):
                    out.append(f"task {tid}: a count n in {k} is negative")
    usage = doc.get("usage")
    if isinstance(usage, dict) and any(bad(v) for v in usage.values()):
        out.append("a usage count is negative")
    return out


# The checks ------------------------------------------------------------------------------

# score_example is pure; many models give the same raw answer to the same row.
_EXAMPLE_CACHE: dict[tuple[Any, ...], ExampleResult] = {}
_EXAMPLE_CACHE_MAX = 2_000_000


def _score(
    task: Task, key: tuple[Any, ...], row: dict[str, Any], raw: Any, fr: Any, err: Any
) -> ExampleResult:
    hit = _EXAMPLE_CACHE.get(key)
    if hit is None:
        hit = score_example(task, row, raw, fr, err)
        if len(_EXAMPLE_CACHE) < _EXAMPLE_CACHE_MAX:
            _EXAMPLE_CACHE[key] = hit
    return hit


def _close(a: Any, b: Any) -> bool:
    return isinstance(a, int | float) and isinstance(b, int | float) and abs(float(a) - float(b)) <= TOLERANCE


def _fmt_ids(ids: Iterable[str], limit: int = 5) -> str:
    ids = list(ids)
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "") + f" ({len(ids)})"


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else str(v)
    return str(v)


def _check_signature(doc: dict[str, Any], trusted: Mapping[str, str], v: Verdict) -> None:
    sig = doc.get("signature")
    if sig is None:
        return
    ok, kid = verify_signature(doc)
    v.key_id = kid
    if not ok:
        v.reasons.append(f"the signature does not verify against the key it names ({kid or 'no key id'})")
        return
    v.signature_ok = True
    if kid is not None and kid in trusted and trusted[kid] == sig.get("public_key"):
        v.trust = VERIFIED
    else:
        v.notes.append(f"signed by {kid}, a key not in the trusted-keys file")


def _check_contract(doc: dict[str, Any], edition: Edition, suite: Suite, v: Verdict) -> None:
    if doc.get("suite_hash") != edition.suite_hash(suite):
        v.reasons.append(
            f"suite hash {doc.get('suite_hash')} differs from the frozen contract's {edition.suite_hash(suite)}"
        )
    tasks: dict[str, Any] = doc["tasks"]
    missing = [t for t in edition.tasks if t not in tasks]
    if missing:
        v.reasons.append(
            f"incomplete run: task(s) missing: {', '.join(missing)} (partial runs are never shown)"
        )
    extra = [t for t in tasks if t not in edition.tasks]
    if extra:
        v.reasons.append(f"task(s) not part of edition {edition.name}: {', '.join(extra)}")
    for tid, entry in edition.tasks.items():
        t = tasks.get(tid)
        if t is None:
            continue
        task = suite.task(tid)
        if t["rows"] != entry.rows:
            v.reasons.append(f"task {tid}: row count {t['rows']} differs from the edition's {entry.rows}")
        if t["fingerprint"] != entry.fingerprint:
            v.reasons.append(f"task {tid}: dataset fingerprint differs from the {edition.name} manifest")
        if t["contract_hash"] != task.contract_hash:
            v.reasons.append(f"task {tid}: contract hash differs from the frozen contract's")
        if t["prompt_hash"] != task.prompt_hash:
            v.reasons.append(f"task {tid}: prompt hash differs from the frozen prompt's")
        if t.get("block") != task.block:
            v.reasons.append(f"task {tid}: block {t.get('block')!r} is not the contract's {task.block!r}")
        if t.get("primary") != task.primary:
            v.reasons.append(
                f"task {tid}: primary metric {t.get('primary')!r} is not the contract's {task.primary!r}"
            )


def _check_coverage(
    tid: str, preds: list[dict[str, Any]], expected: list[str] | None, n: int, v: Verdict
) -> bool:
    ids = [str(p["id"]) for p in preds]
    counts = Counter(ids)
    dup = [i for i, c in counts.items() if c > 1]
    ok = True
    if dup:
        v.reasons.append(f"task {tid}: example ids predicted more than once: {_fmt_ids(dup)}")
        ok = False
    if expected is not None:
        want = set(expected)
        missing = [i for i in expected if i not in counts]
        extra = [i for i in counts if i not in want]
        if missing:
            v.reasons.append(f"task {tid}: example ids missing from the predictions: {_fmt_ids(missing)}")
            ok = False
        if extra:
            v.reasons.append(f"task {tid}: example ids not in the dataset: {_fmt_ids(extra)}")
            ok = False
    elif len(counts) != n:
        v.reasons.append(f"task {tid}: {len(counts)} distinct example ids, the edition has {n}")
        ok = False
    return ok


def _record_rescored(
    task: Task, rows: list[dict[str, Any]], preds: list[dict[str, Any]], ed: str, v: Verdict
) -> TaskRecord:
    by_id = {str(p["id"]): p for p in preds}
    results: list[ExampleResult] = []
    for i, row in enumerate(rows):
        p = by_id[str(row[task.id_field])]
        raw, fr, err = p.get("raw"), p.get("finish_reason"), p.get("error")
        results.append(_score(task, (ed, task.id, i, raw, fr, err), row, raw, fr, err))
    metrics = aggregate(task, rows, results)
    return TaskRecord(
        task_id=task.id,
        block=task.block,
        score=task_score(task, metrics),
        primary_raw=float(metrics[task.primary]),
        metrics=metrics,
        ids=[r.id for r in results],
        scores=np.fromiter((r.score for r in results), dtype=float, count=len(results)),
        outcomes=[r.outcome for r in results],
        parsed=[_text(r.parsed.value) if r.parsed.valid else "" for r in results],
        near_miss=[None if r.parsed.valid else r.parsed.near_miss for r in results],
        prediction=(
            np.fromiter((r.metrics["prediction"] for r in results), dtype=float, count=len(results))
            if task.evaluator == "correlation"
            else None
        ),
    )


def _record_stored(task: Task, t: dict[str, Any]) -> TaskRecord:
    preds = sorted(t["predictions"], key=lambda p: str(p["id"]))
    metrics = t.get("metrics") or {}
    primary = metrics.get(task.primary, t["score"] / 100.0)
    return TaskRecord(
        task_id=task.id,
        block=task.block,
        score=float(t["score"]),
        primary_raw=float(primary) if isinstance(primary, int | float) else float("nan"),
        metrics=metrics,
        ids=[str(p["id"]) for p in preds],
        scores=np.array([float(p.get("score") or 0.0) for p in preds], dtype=float),
        outcomes=[str(p.get("outcome") or "") for p in preds],
        parsed=[_text(p.get("parsed")) if p.get("valid") else "" for p in preds],
        near_miss=[None if p.get("valid") else p.get("near_miss") for p in preds],
        prediction=None,
    )


def _check_scores(doc: dict[str, Any], suite: Suite, v: Verdict) -> None:
    """The summary scores must follow from the task scores (true with or without re-scoring)."""
    scores, tasks = doc["scores"], doc["tasks"]
    for tid, t in tasks.items():
        if not _close(scores["tasks"].get(tid), t["score"]):
            v.reasons.append(
                f"scores.tasks.{tid} ({scores['tasks'].get(tid)}) differs from the task's score ({t['score']})"
            )
    known = {tid: float(t["score"]) for tid, t in tasks.items() if tid in suite.tasks}
    blocks = block_scores(suite, known)
    for b, s in blocks.items():
        if not _close(scores["blocks"].get(b), s):
            v.reasons.append(
                f"block score {b} ({scores['blocks'].get(b)}) is not the mean of its task scores ({s:.6f})"
            )
    if not _close(scores.get("yoxla"), yoxla_score(blocks)):
        v.reasons.append(
            f"YOXLA score ({scores.get('yoxla')}) is not the mean of the block scores ({yoxla_score(blocks):.6f})"
        )


def check_document(
    doc: Any,
    *,
    path: str = "<memory>",
    trusted: Mapping[str, str] | None = None,
    data: DataSource | None = None,
    editions: Mapping[str, Edition] | None = None,
    sha256: str = "",
) -> Verdict:
    """Checks 1 (past parsing) to 6 on a parsed document."""
    v = Verdict(path=path, status=EXCLUDED, sha256=sha256)
    if not isinstance(doc, dict):
        v.reasons.append(f"not a JSON object (found {type(doc).__name__})")
        return v
    if doc.get("format") != FORMAT:
        v.reasons.append(f"not a YOXLA result file (format is {doc.get('format')!r}, expected {FORMAT!r})")
        return v
    if doc.get("format_version") not in KNOWN_FORMAT_VERSIONS:
        v.reasons.append(
            f"unknown format version {doc.get('format_version')!r} (this leaderboard reads "
            f"{', '.join(map(str, KNOWN_FORMAT_VERSIONS))})"
        )
        return v
    problems = schema_errors(doc) + _negative_counts(doc)
    if problems:
        v.reasons.extend(problems)
        return v
    model = doc["model"]
    v.provider, v.model = str(model["provider"]), str(model["model"])
    v.display_name = str(model.get("display_name") or model["model"])
    v.edition = str(doc["edition"])
    v.created_at = str(doc.get("created_at") or (doc.get("run") or {}).get("finished_at") or "")
    v.generation_errors = int(doc.get("generation_errors") or 0)
    v.content_sha256 = str(doc["content_sha256"])

    # 2. digest
    recomputed = content_digest(doc)
    if doc["content_sha256"] != recomputed:
        v.reasons.append(
            "content_sha256 does not match the content (the file was changed after it was written): "
            f"stored {doc['content_sha256'][:23]}…, recomputed {recomputed[:23]}…"
        )
    # 3. signature
    _check_signature(doc, trusted or {}, v)
    # 4. edition and contract
    editions = editions if editions is not None else {name: load_edition(name) for name in EDITIONS}
    edition = editions.get(v.edition)
    if edition is None:
        v.reasons.append(f"unknown edition {v.edition!r} (known: {', '.join(editions)})")
        return v
    suite = load_suite()
    _check_contract(doc, edition, suite, v)
    _check_scores(doc, suite, v)
    # 5. coverage, 6. re-scoring
    rows_info: EditionRows = (data or DataSource()).rows(edition)
    rows = rows_info.rows
    records: dict[str, TaskRecord] = {}
    for tid in edition.tasks:
        t = doc["tasks"].get(tid)
        if t is None:
            continue
        task = suite.task(tid)
        expected = [str(r[task.id_field]) for r in rows[tid]] if rows is not None else None
        if not _check_coverage(tid, t["predictions"], expected, edition.tasks[tid].rows, v):
            continue
        if rows is not None:
            rec = _record_rescored(task, rows[tid], t["predictions"], edition.name, v)
            if abs(rec.score - float(t["score"])) > TOLERANCE:
                v.reasons.append(
                    f"task {tid}: the stored score {float(t['score']):.6f} is not reproduced by re-scoring "
                    f"the stored answers ({rec.score:.6f})"
                )
            records[tid] = rec
        elif rows is None:
            records[tid] = _record_stored(task, t)
    if v.reasons:
        return v
    v.rechecked = rows is not None
    if not v.rechecked:
        v.notes.append(f"{NOT_RECHECKED}: {rows_info.problem}")
    if v.generation_errors:
        v.notes.append(
            f"{v.generation_errors} generation error(s): they can move a score for reasons outside the model"
        )
    v.tasks = records
    v.scores = doc["scores"]
    v.status = ADMITTED
    return v


def check_bytes(data_bytes: bytes, *, path: str = "<memory>", **kw: Any) -> Verdict:
    sha = "sha256:" + hashlib.sha256(data_bytes).hexdigest()
    if len(data_bytes) > MAX_BYTES:
        v = Verdict(path=path, status=EXCLUDED, sha256=sha)
        v.reasons.append(
            f"the file is {len(data_bytes) / 2**20:.1f} MB, over the {MAX_BYTES // 2**20} MB limit"
        )
        return v
    doc, problem = parse_json(data_bytes)
    if problem:
        return Verdict(path=path, status=EXCLUDED, sha256=sha, reasons=[problem])
    return check_document(doc, path=path, sha256=sha, **kw)


# Files, caching and superseding -------------------------------------------------------------


def check_file(
    path: str | os.PathLike[str],
    *,
    trusted: Mapping[str, str] | None = None,
    data: DataSource | None = None,
    editions: Mapping[str, Edition] | None = None,
    use_cache: bool = True,
) -> Verdict:
    """Admission verdict of one file (checks 1-6), cached by the SHA-256 of the file's bytes.

    The cache lives on the DataSource (same rows, or the same lack of them) and its key also
    holds the trusted keys, so a cached verdict is exactly what a fresh check would give.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            v = Verdict(path=str(p), status=EXCLUDED)
            v.reasons.append(f"the file is {size / 2**20:.1f} MB, over the {MAX_BYTES // 2**20} MB limit")
            return v
        raw = p.read_bytes()
    except OSError as exc:
        return Verdict(path=str(p), status=EXCLUDED, reasons=[f"cannot be read: {exc.strerror or exc}"])
    sha = "sha256:" + hashlib.sha256(raw).hexdigest()
    data = data or DataSource()
    # Verdicts live on the DataSource: the same rows (or the same lack of them) stand behind them.
    cache = data.verdicts if use_cache else None
    ed_token = "" if editions is None else hashlib.sha256(repr(sorted(editions.items())).encode()).hexdigest()
    key = (sha, tuple(sorted((trusted or {}).items())), ed_token)
    if cache is not None and key in cache:
        return _copy_verdict(cache[key], str(p))
    from yoxla.leaderboard import cache as disk

    stored: Verdict | None = disk.load(sha, trusted or {}, ed_token) if cache is not None else None
    if stored is None:
        stored = check_bytes(raw, path=str(p), trusted=trusted, data=data, editions=editions)
        if cache is not None:
            disk.store(stored, trusted or {}, ed_token)
    if cache is not None:
        cache[key] = stored
    return _copy_verdict(stored, str(p))


def _copy_verdict(v: Verdict, path: str) -> Verdict:
    from dataclasses import replace

    return replace(v, path=path, reasons=list(v.reasons), notes=list(v.notes), superseded_by=None)


def _recency(v: Verdict) -> tuple[str, str]:
    return (v.created_at, v.path)


def supersede(verdicts: list[Verdict]) -> list[Verdict]:
    """Check 7: per (edition, provider, model) the newest admitted file is shown."""
    groups: dict[tuple[str | None, str, str], list[Verdict]] = {}
    for v in verdicts:
        if v.admitted:
            groups.setdefault((v.edition, v.provider, v.model), []).append(v)
    for group in groups.values():
        group.sort(key=_recency, reverse=True)
        newest = group[0]
        newest.status = ADMITTED
        for old in group[1:]:
            old.status = SUPERSEDED
            old.superseded_by = Path(newest.path).name
            old.reasons = [f"superseded by the newer {Path(newest.path).name} (same provider and model)"]
    return verdicts


def admit(
    paths: Iterable[str | os.PathLike[str]],
    *,
    trusted: Mapping[str, str] | None = None,
    data: DataSource | None = None,
    editions: Mapping[str, Edition] | None = None,
) -> list[Verdict]:
    """Verdicts for many files, superseding applied."""
    data = data or DataSource()
    return supersede([check_file(p, trusted=trusted, data=data, editions=editions) for p in paths])


def public_key_id(public_key_b64: str) -> str:
    from yoxla.results import key_id

    return key_id(base64.b64decode(public_key_b64))
