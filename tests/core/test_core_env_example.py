"""`.env.example` lists every key the bundled provider registry knows, each with a comment."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_env_example_lists_every_registry_key_with_a_comment():
    registry = yaml.safe_load(
        resources.files("yoxla").joinpath("providers/providers.yaml").read_text("utf-8")
    )
    keys = {spec["api_key_env"] for spec in registry["providers"].values() if spec.get("api_key_env")}
    lines = (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    listed = {}
    for i, line in enumerate(lines):
        if line and not line.startswith("#"):
            name, sep, value = line.partition("=")
            assert sep and value == "", f"{line!r}: an example holds names, never values"
            listed[name] = lines[i - 1]
    assert set(listed) == keys
    assert all(comment.startswith("# ") for comment in listed.values())
