"""Task and suite hashes, the frozen hash file, and ``yoxla suite check``.

What a task's hash covers (its **definition**, :func:`task_definition`, and the **fingerprints**
of the data it read) and what it does not, the suite hash, the item count recorded next to each
task, and the rules of ``<manifest stem>.hashes.json`` are in docs/suites.md, *Hashes and
versions*. Fields added to the format (``answer_space``, ``group_field``, controls) enter the
definition only when declared, so that the frozen hashes of tasks without them stay as they were;
the ``analysis`` section is covered by :func:`analysis_hash` alone, never by a task hash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yoxla.contract import spec as S
from yoxla.contract.canonical import canonical_json, sha256_text
from yoxla.contract.errors import ManifestError
from yoxla.safe.text import one_line

if TYPE_CHECKING:
    from yoxla.contract.loader import SuiteManifest, SuiteTask

HASH_FORMAT = "yoxla-suite-hashes"
HASH_VERSION = 1
MAX_HASH_FILE_BYTES = 1024 * 1024


def _dataset_identity(ds: S.LocalDataset | S.HubDataset | None) -> dict[str, Any] | None:
    """Which data (its ``required_columns`` are checks on it, not hashed: declaring them keeps
    every task hash)."""
    return None if ds is None else ds.model_dump(mode="json", exclude_none=True, exclude={"required_columns"})


def task_definition(task: SuiteTask) -> dict[str, Any]:
    """The hashed content of a task's definition, as plain data."""
    spec = task.spec
    fs = spec.fewshot_settings
    graders = []
    for i, g in enumerate(task.graders):
        if isinstance(g, S.PythonGrader):
            code = task.grader_code[i]
            graders.append(
                {"type": "python", "contract": g.contract, "metric_id": g.metric_id, "source": code.sha256}
            )
        else:
            graders.append(g.model_dump(mode="json", exclude_none=True))
    out: dict[str, Any] = {
        "id": spec.id,
        "dataset": _dataset_identity(spec.dataset),
        "prompt_template": spec.prompt_template,
        "target_template": spec.target_template or "",
        "choices": spec.choices,
        "fewshot": None
        if fs is None
        else {
            **fs.model_dump(mode="json", exclude_none=True, exclude={"dataset"}),
            "dataset": _dataset_identity(fs.dataset),
        },
        "preprocess": None
        if spec.preprocess is None or task.preprocess_code is None
        else {"contract": spec.preprocess.contract, "source": task.preprocess_code.sha256},
        "output_extraction": spec.output_extraction.model_dump(mode="json", exclude_none=True),
        "metrics": [m.model_dump(mode="json", exclude={"description"}) for m in task.metrics],
        "graders": graders,
        "instructions": task.instructions,
        "breakdowns": list(spec.declared_breakdowns),  # the analysis section's are hashed apart
    }
    if spec.answer_space is not None:
        out["answer_space"] = spec.answer_space.model_dump(mode="json", exclude_none=True)
    # Only when declared in the task's metadata, so that the hashes of tasks without them stay
    # what they were frozen as (declared in the analysis section, they are hashed apart).
    if spec.metadata.get("group_field", "").strip():
        out["group_field"] = spec.group_field
    if spec.metadata.get("control_field", "").strip():
        out["controls"] = {"field": spec.control_field, "values": list(spec.control_values)}
    return out


def task_hash(task: SuiteTask, fingerprints: dict[str, str]) -> str:
    return sha256_text(canonical_json({"definition": task.definition_hash, "data": fingerprints}))


def aggregation(manifest: SuiteManifest | S.Manifest) -> dict[str, Any] | None:
    """How the suite score is made (groups and headline rule), as hashed; None when not declared."""
    spec = manifest if isinstance(manifest, S.Manifest) else manifest.spec
    if spec is None or (spec.groups is None and spec.headline is None):
        return None
    return {
        "groups": [{"id": g.id, "tasks": list(g.tasks)} for g in spec.groups or ()],
        "headline": spec.headline_rule,
    }


def analysis_hash(manifest: SuiteManifest) -> str | None:
    """The hash of the manifest's analysis section (YOXLA); None when it has none.

    Breakdowns, groups and controls, gate thresholds and the ranking declared there change what
    a board shows and what re-scoring derives, never what is asked or judged: no task hash
    covers them, this one does (the hash file and the result file record it).
    """
    spec = manifest.spec
    if spec is None or spec.analysis is None:
        return None
    return sha256_text(canonical_json(spec.analysis.model_dump(mode="json", exclude_none=True)))


def declared_aggregation(manifest: SuiteManifest) -> dict[str, Any]:
    """The result file's ``suite.groups`` and ``suite.headline`` ({} when neither is declared)."""
    spec = manifest.spec
    if spec is None or (spec.groups is None and spec.headline is None):
        return {}
    out: dict[str, Any] = {}
    if spec.groups:
        out["groups"] = [
            {"id": g.id, **({"name": g.name} if g.name else {}), "tasks": list(g.tasks)} for g in spec.groups
        ]
    name = spec.headline.name if spec.headline is not None else None
    out["headline"] = {**({"name": name} if name else {}), "rule": spec.headline_rule}
    return out


def suite_hash(task_hashes: dict[str, str], how: dict[str, Any] | None = None) -> str:
    """The suite's hash: its tasks' hashes by id (and its :func:`aggregation`, when declared)."""
    if how is None:
        return sha256_text(canonical_json(task_hashes))
    return sha256_text(canonical_json({"tasks": task_hashes, "aggregation": how}))


def hash_file_path(manifest_path: Path) -> Path:
    return manifest_path.with_name(manifest_path.stem + ".hashes.json")


@dataclass(frozen=True)
class FrozenHashes:
    hash: str
    definition: str
    data: dict[str, str]
    items: int | None = None  # the task's item count; None: not recorded (an older hash file)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hash": self.hash,
            "definition": self.definition,
            "data": dict(sorted(self.data.items())),
        }
        if self.items is not None:
            out["items"] = self.items
        return out

    def same_hashes(self, other: FrozenHashes) -> bool:
        return (self.hash, self.definition, self.data) == (other.hash, other.definition, other.data)


def _item_count(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**9:
        raise ValueError(f"items must be a count, not {one_line(repr(value), 40)}")
    return value


def read_analysis_hash(path: Path) -> str | None:
    """The analysis hash a hash file records (None: none, or the file is unreadable)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("analysis_hash")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def read_hash_file(path: Path) -> dict[str, FrozenHashes]:
    """The frozen hashes (strict JSON, at most MAX_HASH_FILE_BYTES); ManifestError in one line."""
    from yoxla.safe.strictjson import parse_file

    doc, _, problem = parse_file(path, MAX_HASH_FILE_BYTES)
    if problem is not None:
        raise ManifestError(f"{path}: cannot read the frozen hashes ({problem})")
    try:
        if doc.get("format") != HASH_FORMAT or doc.get("version") != HASH_VERSION:
            raise ValueError(f"not a {HASH_FORMAT} file, version {HASH_VERSION}")
        return {
            tid: FrozenHashes(
                entry["hash"], entry["definition"], dict(entry["data"]), _item_count(entry.get("items"))
            )
            for tid, entry in doc["tasks"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ManifestError(f"{path}: cannot read the frozen hashes ({exc})") from None


def write_hash_file(
    path: Path,
    suite: str,
    tasks: dict[str, FrozenHashes],
    how: dict[str, Any] | None = None,
    analysis: str | None = None,
) -> None:
    doc: dict[str, Any] = {
        "format": HASH_FORMAT,
        "version": HASH_VERSION,
        "suite": suite,
        "suite_hash": suite_hash({tid: t.hash for tid, t in tasks.items()}, how),
        "tasks": {tid: tasks[tid].as_dict() for tid in sorted(tasks)},
    }
    if analysis is not None:
        doc["analysis_hash"] = analysis
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class CheckLine:
    task: str
    status: str  # unchanged | new | changed | removed
    detail: str = ""


def compare(current: dict[str, FrozenHashes], frozen: dict[str, FrozenHashes]) -> list[CheckLine]:
    """Each task's status against the frozen hashes; ``changed`` says which part changed."""
    out = []
    for tid, now in current.items():
        before = frozen.get(tid)
        if before is None:
            out.append(CheckLine(tid, "new"))
        elif before.same_hashes(now):  # the task hash and every part of it (a hash file kept consistent)
            if None not in (before.items, now.items) and before.items != now.items:
                detail = f"its item count: frozen {before.items}, now {now.items}"
                out.append(CheckLine(tid, "changed", detail))
            else:
                out.append(CheckLine(tid, "unchanged"))
        else:
            parts = []
            if before.definition != now.definition:
                parts.append("its definition (templates, extraction, metrics, graders, …)")
            for role in sorted(set(before.data) | set(now.data)):
                if before.data.get(role) != now.data.get(role):
                    parts.append(f"the rows of its {role}")
            out.append(CheckLine(tid, "changed", " and ".join(parts) or "its hash"))
    for tid in frozen:
        if tid not in current:
            out.append(CheckLine(tid, "removed", "results for it can no longer be re-scored"))
    return out


def prepared_hashes(prepared: Any) -> FrozenHashes:
    """The hashes and item count of a prepared task (:class:`yoxla.prompt.prepare.PreparedTask`)."""
    return FrozenHashes(
        prepared.task_hash, prepared.task.definition_hash, prepared.fingerprints, len(prepared.items)
    )
