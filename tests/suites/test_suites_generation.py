"""Generation settings: aliases, limits, unsafe extra_body keys, passthrough per upstream."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from suites_helpers import cases

from yoxla.prompt.generation import GenerationSettings, is_openai, passthrough_allowed

DATA = cases("generation_cases.yaml")


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["valid"]])
def test_valid_settings(case):
    g = GenerationSettings.model_validate(case["input"])
    if "sampling" in case:
        assert g.sampling() == case["sampling"]
    assert list(g.removed_extra_body_keys) == case.get("removed", [])
    for up in case.get("upstreams", []):
        assert g.passthrough(up["backend"], up["base_url"]) == up["passthrough"], up


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["invalid"]])
def test_invalid_settings(case):
    with pytest.raises(ValidationError, match=case["message"]):
        GenerationSettings.model_validate(case["input"])


@pytest.mark.parametrize(
    ("backend", "url", "allowed"),
    [
        ("openai", "https://api.openai.com/v1", False),
        ("openai", "https://eu.api.openai.com/v1", False),
        ("openai", "http://127.0.0.1:8000/v1", True),
        ("openai", None, True),
        ("transformers", None, False),
    ],
)
def test_passthrough_allowed(backend, url, allowed):
    assert passthrough_allowed(backend, url) is allowed
    assert is_openai(url) is (url is not None and "openai.com" in url)


def test_settings_are_immutable():
    g = GenerationSettings.model_validate({"temperature": 0})
    with pytest.raises(ValidationError):
        g.temperature = 1  # type: ignore[misc]
