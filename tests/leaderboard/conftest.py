from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from leaderboard_helpers import COMMITTED

# Offline and with its own caches: see tests/conftest.py.


@pytest.fixture(scope="session")
def committed() -> list[Path]:
    assert COMMITTED, "no committed result files under results/sample/"
    return COMMITTED


@pytest.fixture()
def base_doc(committed: list[Path]) -> dict[str, Any]:
    """A fresh copy of one committed result file."""
    return json.loads(committed[0].read_text(encoding="utf-8"))
