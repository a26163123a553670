"""A row's gold as its answer mode reads it, from plain data (yoxla.data.gold)."""

from __future__ import annotations

import pytest

from yoxla.data.gold import gold_in


def test_a_label_is_text_and_an_unanswerable_row_has_none() -> None:
    assert gold_in({"label": 3}, "label", "choice") == "3"
    assert gold_in({"label": None}, "label", "choice") is None


def test_a_number_is_a_float_and_a_span_stays_as_stored() -> None:
    assert gold_in({"score": "4"}, "score", "numeric") == 4.0
    assert gold_in({"answer": "Bakı şəhəri"}, "answer", "span") == "Bakı şəhəri"
    assert gold_in({"answer": None}, "answer", "span") is None


def test_a_missing_gold_field_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        gold_in({"label": "a"}, "gold", "choice")
