from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from leaderboard_helpers import COMMITTED

# Offline, and never touching the user's admission cache.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ["YOXLA_CACHE_DIR"] = tempfile.mkdtemp(prefix="yoxla-test-cache-")


@pytest.fixture(scope="session")
def committed() -> list[Path]:
    assert COMMITTED, "no committed result files under results/sample/"
    return COMMITTED


@pytest.fixture()
def base_doc(committed: list[Path]) -> dict[str, Any]:
    """A fresh copy of one committed result file."""
    return json.loads(committed[0].read_text(encoding="utf-8"))
