"""Helpers for the suite tests: manifests written into a folder, sample rows, short worker limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from yoxla.score.worker import WorkerLimits

CASES = Path(__file__).parent / "cases"
ROWS = [
    {"id": "s1", "sual": "Azərbaycanın paytaxtı haradır?", "cavab": "Bakı", "mövzu": "coğrafiya"},
    {"id": "s2", "sual": "Nizami Gəncəvi hansı şəhərdə doğulub?", "cavab": "Gəncə", "mövzu": "tarix"},
    {"id": "s3", "sual": "Şəki nə ilə tanınır?", "cavab": "İpək", "mövzu": "mədəniyyət"},
    {"id": "s4", "sual": "Xəzər nədir?", "cavab": "Dəniz", "mövzu": "coğrafiya"},
]
# Short limits keep the hostile-code tests fast; the hard deadline is timeout + grace.
FAST = WorkerLimits(memory_mb=1024, load_timeout_s=20.0, grace_s=0.5)


def cases(name: str) -> Any:
    return yaml.safe_load((CASES / name).read_text(encoding="utf-8"))


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


class _NoAliases(yaml.SafeDumper):
    """Every value written out: a manifest may not use YAML aliases (the loader refuses them),
    so a dict shared between two tasks of a test is written twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_manifest(folder: Path, tasks: list[dict[str, Any]], **top: Any) -> Path:
    doc = {"schema_version": "2026-05-27", "tasks": tasks, **top}
    path = folder / "suite.yaml"
    text = yaml.dump(doc, Dumper=_NoAliases, allow_unicode=True, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def task(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "t1",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "Sual: {{sual}}",
        "target_template": "{{cavab}}",
    }
    base.update(fields)
    return base
