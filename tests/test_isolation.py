"""The suite's isolation (tests/conftest.py): caches in a per-session temporary folder, no network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(os.environ["YOXLA_TEST_CACHE_ROOT"])
CACHE_VARS = [
    "HF_HOME",
    "HF_HUB_CACHE",
    "HUGGINGFACE_HUB_CACHE",
    "HF_DATASETS_CACHE",
    "XDG_CACHE_HOME",
    "YOXLA_CACHE_DIR",
]


@pytest.mark.parametrize("name", CACHE_VARS)
def test_every_cache_points_into_the_session_folder(name):
    path = Path(os.environ[name])
    assert path.is_relative_to(ROOT)
    assert not path.is_relative_to(Path.home())


def test_the_hub_client_uses_the_session_folder_and_stays_offline():
    from huggingface_hub import constants

    for path in (constants.HF_HOME, constants.HF_HUB_CACHE, constants.HF_XET_CACHE):
        assert Path(path).is_relative_to(ROOT)
    assert constants.HF_HUB_OFFLINE


def test_the_admission_cache_uses_the_session_folder(monkeypatch):
    from yoxla.admission.cache import cache_dir

    monkeypatch.delenv("YOXLA_NO_CACHE", raising=False)
    folder = cache_dir()
    assert folder is not None and folder.is_relative_to(ROOT)
