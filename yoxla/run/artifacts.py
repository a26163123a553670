"""The run folder: run.json, predictions.jsonl (append + flush), task_scores.json, summary.json.

``predictions.jsonl`` is written one complete line per example, in example order, flushed
after each line. A crash can leave at most one torn last line; :func:`read_predictions`
detects it and :func:`repair_predictions` cuts it off before a resumed run appends.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

RUN_JSON = "run.json"
PREDICTIONS = "predictions.jsonl"
TASK_SCORES = "task_scores.json"
SUMMARY = "summary.json"


class CorruptRun(ValueError):
    """The run folder cannot be read back (a broken line in the middle, a missing run.json)."""


def dumps_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def write_json(path: Path, data: Any) -> Path:
    """Atomic write of pretty, deterministic JSON (sorted keys, no NaN)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True, allow_nan=False) + "\n",
        encoding="utf-8",
    )
    tmp.replace(path)
    return path


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptRun(f"{path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise CorruptRun(f"{path} is not valid JSON: {exc}") from None


def read_predictions(path: Path) -> tuple[list[dict[str, Any]], int]:
    """(records, byte length of the good prefix). A torn or unparsable *last* line is dropped."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
    good = 0
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            break  # torn last line: no newline
        line = data[pos:end]
        try:
            records.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError):
            if data[end + 1 :].strip():
                raise CorruptRun(f"{path}: line {len(records) + 1} is not valid JSON") from None
            break  # a broken last line
        pos = end + 1
        good = pos
    return records, good


def repair_predictions(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Read the records and truncate a torn tail; returns (records, bytes discarded)."""
    records, good = read_predictions(path)
    size = path.stat().st_size if path.exists() else 0
    if size > good:
        with path.open("r+b") as fh:
            fh.truncate(good)
    return records, size - good


class PredictionWriter:
    """Appends one line per example and flushes it, so a killed run loses nothing on disk."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        self._fh.write(dumps_line(record))
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


def rewrite_predictions(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace the whole file atomically (used when --retry-errors merges new answers)."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(dumps_line(record))
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
