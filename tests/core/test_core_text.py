"""Azerbaijani text rules: case mapping, normalisation, diagnostics-only folding."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yoxla.extract import text
from yoxla.extract.text import (
    az_key,
    az_lower,
    az_upper,
    collapse_ws,
    flatten,
    fold_letters,
    normalize,
    tokens,
    turkish_spelling,
)

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


# Linear-time rewrites give the old results -----------------------------------------------

# Letters, their precomposed forms, marks of many combining classes, characters that
# decompose into marks only (U+0344, U+0F73), Hangul jamo and syllables, Indic vowel signs
# that compose backwards, compatibility characters.
MARK_RICH = (
    "aeoAəsıiIİé"
    "\u0300\u0301\u0302\u0316\u0323\u0327\u0345\u0344\u05b0\u093c\u0f71\u0f72\u0f73\u302a\u3099"
    "ᾷệ가\u1100\u1161\u11a8\u0dd9\u0dcf\u0dca\uff21ﬁ²か\ud800\U0001d15e"
)
FORMS = ["NFC", "NFD", "NFKC", "NFKD"]


@settings(max_examples=400, deadline=None)
@given(s=st.text(alphabet=MARK_RICH, max_size=60), form=st.sampled_from(FORMS))
def test_normalize_is_unicodedata_normalize(s, form):
    # direct=0 and long_run=2 send every text through the decompose-and-order path.
    assert normalize(form, s, direct=0, long_run=2) == unicodedata.normalize(form, s)
    assert normalize(form, s) == unicodedata.normalize(form, s)


def test_normalize_with_whole_unicode_tables(monkeypatch):
    # Text with very many distinct characters uses tables of every code point.
    monkeypatch.setattr(text, "_FEW", 8)
    rng = random.Random(5)
    s = "".join(rng.choice(MARK_RICH + "bcdfgxyz\u0305\u0306") for _ in range(3000))
    for form in ("NFC", "NFKD"):
        text._normalize_long.cache_clear()
        assert normalize(form, s, long_run=4) == unicodedata.normalize(form, s)


def test_normalize_of_a_long_run_of_marks_is_right():
    s = "e" + "\u0302\u0323" * 5000 + " Bakı"
    for form in FORMS:
        assert normalize(form, s) == unicodedata.normalize(form, s)


_OLD_WS = re.compile(r"\s+")
_OLD_FOLD = str.maketrans({"ə": "e", "ş": "s", "ı": "i", "ö": "o", "ü": "u", "ç": "c", "ğ": "g"})
_OLD_TURKISH = str.maketrans({"x": "k", "q": "k", "ə": "e"})


@settings(max_examples=400, deadline=None)
@given(s=st.text(alphabet="aIİıiəƏşŞxXqQçÇğĞöÖüÜß \n\t\u3000\u2028\u00a0\x1c", max_size=20))
def test_case_mapping_and_folding_give_the_old_results(s):
    assert az_lower(s) == _translated_lower(s)
    assert collapse_ws(s) == _OLD_WS.sub(" ", s).strip()
    assert fold_letters(s) == az_lower(s).translate(_OLD_FOLD)
    assert turkish_spelling(s) == az_lower(az_lower(s).translate(_OLD_TURKISH)).translate(_OLD_FOLD).replace(
        " ", ""
    )


def _translated_lower(s: str) -> str:
    fast = s.translate(str.maketrans({"I": "ı", "İ": "i"})).lower()
    assert len(fast) == len(s)
    return fast


def test_the_unicode_facts_the_fast_paths_rely_on():
    everything = "".join(map(chr, range(0x110000)))
    spaces = {c for c in everything if c.isspace()}
    # re's \s, str.isspace, str.split and str.strip know the same white space, all below U+3001.
    assert set(re.findall(r"\s", everything)) == spaces == {c for c in everything if not c.strip()}
    assert max(map(ord, spaces)) <= 0x3000
    # re's \w is str.isalnum plus "_".
    assert set(re.findall(r"\w", everything)) == {c for c in everything if c.isalnum() or c == "_"}
    lowered = [(c, c.lower()) for c in everything if c.lower() != c]
    assert [c for c, low in lowered if len(low) > 1] == ["İ"]  # az_lower maps it first
    assert not [c for c, low in lowered if "<" in low or " " in low]  # answer_text, near misses
