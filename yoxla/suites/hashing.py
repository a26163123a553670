"""Task and suite hashes, the frozen hash file, and ``yoxla suite check``.

A task's hash covers everything that changes its results:

* its **definition** (no data): the dataset's identity (local path and format, or Hub path,
  config, split, revision, data files, row cap), prompt and target templates, choices,
  few-shot settings (and the few-shot dataset's identity), the preprocessor (contract and
  source), the output extraction, the metrics (id, aggregation, direction), the graders
  (built-in options, or contract, metric id and source), ``generation.instructions`` (the
  system message), ``metadata.breakdowns`` and, when declared, ``metadata.group_field``,
  ``metadata.control_field`` and ``metadata.control_values`` (controls leave the metrics);
* the **fingerprints** of the data it read (task dataset, few-shot dataset).

Not hashed: names, type labels, descriptions, other metadata (``ranking`` included), and run-specific choices
(models, sampling settings, retries, timeouts, concurrency, sample caps), which the run records.

A suite's frozen hashes live next to its manifest, in ``<manifest stem>.hashes.json``. A
task id, once frozen, keeps its hash: ``yoxla suite check`` refuses a changed task (give it a
new id, e.g. ``…_v2``) and ``--write`` adds new tasks, never rewrites a frozen one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yoxla.suite import canonical_json, sha256_text
from yoxla.suites import spec as S
from yoxla.suites.errors import ManifestError

if TYPE_CHECKING:
    from yoxla.suites.loader import SuiteManifest, SuiteTask

HASH_FORMAT = "yoxla-suite-hashes"
HASH_VERSION = 1
MAX_HASH_FILE_BYTES = 1024 * 1024


def _dataset_identity(ds: S.LocalDataset | S.HubDataset | None) -> dict[str, Any] | None:
    return None if ds is None else ds.model_dump(mode="json", exclude_none=True)


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
        "breakdowns": list(spec.breakdowns),
    }
    # Only when declared, so that the hashes of tasks without them stay what they were frozen as.
    if spec.group_field:
        out["group_field"] = spec.group_field
    if spec.control_field:
        out["controls"] = {"field": spec.control_field, "values": list(spec.control_values)}
    return out


def task_hash(task: SuiteTask, fingerprints: dict[str, str]) -> str:
    return sha256_text(canonical_json({"definition": task.definition_hash, "data": fingerprints}))


def suite_hash(task_hashes: dict[str, str]) -> str:
    """The suite's hash: its tasks' hashes by id."""
    return sha256_text(canonical_json(task_hashes))


def hash_file_path(manifest_path: Path) -> Path:
    return manifest_path.with_name(manifest_path.stem + ".hashes.json")


@dataclass(frozen=True)
class TaskHashes:
    hash: str
    definition: str
    data: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"hash": self.hash, "definition": self.definition, "data": dict(sorted(self.data.items()))}


def read_hash_file(path: Path) -> dict[str, TaskHashes]:
    """The frozen hashes (strict JSON, at most MAX_HASH_FILE_BYTES); ManifestError in one line."""
    from yoxla.strictjson import parse_file

    doc, _, problem = parse_file(path, MAX_HASH_FILE_BYTES)
    if problem is not None:
        raise ManifestError(f"{path}: cannot read the frozen hashes ({problem})")
    try:
        if doc.get("format") != HASH_FORMAT or doc.get("version") != HASH_VERSION:
            raise ValueError(f"not a {HASH_FORMAT} file, version {HASH_VERSION}")
        return {
            tid: TaskHashes(entry["hash"], entry["definition"], dict(entry["data"]))
            for tid, entry in doc["tasks"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ManifestError(f"{path}: cannot read the frozen hashes ({exc})") from None


def write_hash_file(path: Path, suite: str, tasks: dict[str, TaskHashes]) -> None:
    doc = {
        "format": HASH_FORMAT,
        "version": HASH_VERSION,
        "suite": suite,
        "suite_hash": suite_hash({tid: t.hash for tid, t in tasks.items()}),
        "tasks": {tid: tasks[tid].as_dict() for tid in sorted(tasks)},
    }
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class CheckLine:
    task: str
    status: str  # unchanged | new | changed | removed
    detail: str = ""


def compare(current: dict[str, TaskHashes], frozen: dict[str, TaskHashes]) -> list[CheckLine]:
    """Each task's status against the frozen hashes; ``changed`` says which part changed."""
    out = []
    for tid, now in current.items():
        before = frozen.get(tid)
        if before is None:
            out.append(CheckLine(tid, "new"))
        elif before == now:  # the task hash and every part of it (a hash file kept consistent)
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


def current_hashes(manifest: SuiteManifest, pool: Any = None) -> dict[str, TaskHashes]:
    """Hashes of every task of a manifest (reads each task's data, runs preprocessors, and
    renders every item, so that a prompt over the size limit fails here too)."""
    from yoxla.suites.prepare import prepare_task

    out = {}
    for tid, task in manifest.tasks.items():
        prepared = prepare_task(task, pool)
        out[tid] = TaskHashes(prepared.task_hash, task.definition_hash, prepared.fingerprints)
    return out
