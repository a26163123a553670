from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from leaderboard_helpers import COMMITTED, LEGACY

# Offline and with its own caches: see tests/conftest.py.


@pytest.fixture(scope="session")
def committed() -> list[Path]:
    assert COMMITTED, "no committed result files under results/sample/"
    return COMMITTED


@pytest.fixture()
def base_doc() -> dict[str, Any]:
    """A fresh copy of one legacy-format (``yoxla-result`` v2) result file, the format the
    corruption cases edit field by field (a legacy file stays admissible while any exists)."""
    assert LEGACY, "no legacy result files under tests/leaderboard/cases/legacy-v2/sample/"
    return json.loads(LEGACY[0].read_text(encoding="utf-8"))
