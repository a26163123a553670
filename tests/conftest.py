"""Isolation for the whole suite: every cache in a fresh temporary folder, no network.

This runs before any test module (or huggingface_hub, which reads these variables once, at
import) is imported, so no test reads or writes the user's Hugging Face cache, the
leaderboard's admission cache or anything under ``~/.cache``, and no test depends on what an
earlier run left there. Subprocesses inherit the same environment.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

if "huggingface_hub" in sys.modules:  # too late: its cache paths are already fixed
    raise RuntimeError("tests/conftest.py must run before anything imports huggingface_hub")

CACHE_ROOT = Path(tempfile.mkdtemp(prefix="yoxla-test-caches-"))
os.environ["YOXLA_TEST_CACHE_ROOT"] = str(CACHE_ROOT)  # for tests/test_isolation.py

# Cache locations, each under CACHE_ROOT (name -> subfolder).
CACHE_VARS = {
    "HF_HOME": "hf",
    "HF_HUB_CACHE": "hf/hub",
    "HUGGINGFACE_HUB_CACHE": "hf/hub",
    "HF_DATASETS_CACHE": "hf/datasets",
    "HF_ASSETS_CACHE": "hf/assets",
    "HF_XET_CACHE": "hf/xet",
    "XDG_CACHE_HOME": "xdg",
    "YOXLA_CACHE_DIR": "yoxla",
    "TORCH_HOME": "torch",
    "TRITON_CACHE_DIR": "triton",
    "GRADIO_TEMP_DIR": "gradio",
    "MPLCONFIGDIR": "matplotlib",
}
for _name, _sub in CACHE_VARS.items():
    os.environ[_name] = str(CACHE_ROOT / _sub)
# Tests never reach the Hub: Hub code paths are exercised with stand-ins.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ.pop("YOXLA_DATA_DIR", None)  # a developer's local v1 copy must not leak into tests
os.environ.pop("YOXLA_NO_CACHE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(CACHE_ROOT, ignore_errors=True)
