"""Fixtures for provider tests: a tiny random chat model written to a temporary folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama with seeded random weights and a byte-level BPE tokenizer (no downloads)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from yoxla.testing.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="session")
def copy_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """Copy the tiny model to a new folder, rewriting JSON files: ``copy_model(name, {file: edit})``."""

    def make(name: str, edits: dict[str, dict] | None = None, remove: tuple[str, ...] = ()) -> Path:
        dest = tmp_path_factory.mktemp(name) / "model"
        shutil.copytree(tiny_model_dir, dest)
        for file in remove:
            (dest / file).unlink(missing_ok=True)
        for file, changes in (edits or {}).items():
            data = json.loads((dest / file).read_text(encoding="utf-8"))
            for key, value in changes.items():
                if value is None:
                    data.pop(key, None)
                else:
                    data[key] = value
            (dest / file).write_text(json.dumps(data, indent=2), encoding="utf-8")
        return dest

    return make
