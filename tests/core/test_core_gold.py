"""A row's gold as its answer mode reads it, from plain data (yoxla.gold)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from yoxla.gold import gold_in, gold_value


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


@dataclass(frozen=True)
class _Answer:
    mode: str


@dataclass(frozen=True)
class _Task:
    id: str
    gold: str
    answer: _Answer


def test_gold_value_reads_the_field_and_mode_off_any_task() -> None:
    task = _Task("sts_v1", "score", _Answer("numeric"))
    assert gold_value(task, {"score": 2}) == 2.0
    assert gold_value(_Task("nli_v1", "label", _Answer("choice")), {"label": "neytral"}) == "neytral"
