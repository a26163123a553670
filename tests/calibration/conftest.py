"""Fixtures for calibration tests: the tiny random chat model, loaded once (no downloads)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """(model, tokenizer) of a tiny Llama with seeded random weights, in float32 on the CPU."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from yoxla.testing.tiny_model import build_tiny_model

    path = build_tiny_model(tmp_path_factory.mktemp("tiny-calibration") / "model", seed=3)
    return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
