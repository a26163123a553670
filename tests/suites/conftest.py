"""Fixtures for the suite tests: a folder with rows, a manifest factory, one shared worker pool."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from suites_helpers import FAST, ROWS, write_jsonl, write_manifest

from yoxla.contract.loader import SuiteManifest, load_manifest
from yoxla.score.worker import WorkerPool


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with data.jsonl (four rows) next to where the manifest goes."""
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    return tmp_path


@pytest.fixture
def load(folder: Path) -> Any:
    def make(*tasks: dict[str, Any], **top: Any) -> SuiteManifest:
        return load_manifest(write_manifest(folder, list(tasks), **top))

    return make


@pytest.fixture(scope="session")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(FAST) as p:
        yield p


@pytest.fixture(scope="module")
def pool_module() -> Iterator[WorkerPool]:
    with WorkerPool(FAST) as p:
        yield p
