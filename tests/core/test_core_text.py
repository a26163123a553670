"""Azerbaijani text rules: case mapping, normalisation, diagnostics-only folding."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yoxla.text import az_key, az_lower, az_upper, flatten, fold_letters, tokens, turkish_spelling

AZ_LOWER = "abcçdeəfgğhxıijkqlmnoöprsştuüvyz"
AZ_UPPER = "ABCÇDEƏFGĞHXIİJKQLMNOÖPRSŞTUÜVYZ"


@pytest.mark.parametrize(
    ("upper", "lower"),
    [("İ", "i"), ("I", "ı"), ("Ə", "ə"), ("Ş", "ş"), ("Ç", "ç"), ("Ğ", "ğ"), ("Ö", "ö"), ("Ü", "ü")],
)
def test_az_case_pairs(upper, lower):
    assert az_lower(upper) == lower
    assert az_upper(lower) == upper


def test_az_lower_of_words():
    assert az_lower("İSMAYILLI") == "ismayıllı"
    assert az_lower("BAKI") == "bakı"
    assert az_upper("işıq") == "İŞIQ"


def test_alphabet_round_trips_letter_by_letter():
    assert az_lower(AZ_UPPER) == AZ_LOWER
    assert az_upper(AZ_LOWER) == AZ_UPPER


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_az_lower_and_az_upper_preserve_length(text):
    assert len(az_lower(text)) == len(text)
    assert len(az_upper(text)) == len(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=AZ_LOWER + AZ_UPPER + " -0123456789"))
def test_case_mapping_never_folds_letters(text):
    # Lower-casing an Azerbaijani text and upper-casing it back gives the upper-cased text:
    # no ə became e, no ı became i on the way.
    assert az_upper(az_lower(text)) == az_upper(text)
    assert az_lower(az_upper(text)) == az_lower(text)


def test_python_lower_would_break_offsets_but_az_lower_does_not():
    # str.lower() turns İ into two code points; az_lower keeps one, so offsets stay valid.
    assert len("İ".lower()) == 2
    assert az_lower("İ") == "i"


def test_flatten_is_nfc_and_collapsed_whitespace():
    decomposed = unicodedata.normalize("NFD", "Şuşa  \n gözəldir ")
    assert decomposed != "Şuşa  \n gözəldir "
    assert flatten(decomposed) == "Şuşa gözəldir"
    assert az_key("  HEÇ   BİRİ\n") == "heç biri"


def test_tokens_are_lower_case_words():
    assert tokens("Bakı, İçərişəhər!") == ["bakı", "içərişəhər"]


def test_diagnostic_folding_maps_azerbaijani_letters_to_ascii():
    assert fold_letters("TƏSDİQ") == "tesdiq"
    assert fold_letters("ŞÜÇĞÖ ı") == "sucgo i"
    assert turkish_spelling("YOXDUR") == turkish_spelling("YOKDUR")
    assert turkish_spelling("Cavab yoxdur") == "cavabyokdur"
