"""Span scoring on character offsets: table-driven cases (cases/span_cases.yaml) and properties."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from yoxla.extract.text import az_lower, az_upper, flatten, tokens
from yoxla.score import spans
from yoxla.score.spans import score_span, sentence_bounds, trim_quote

DATA = yaml.safe_load((Path(__file__).parent / "cases" / "span_cases.yaml").read_text(encoding="utf-8"))
PASSAGES = DATA["passages"]


def _num(value) -> float:
    return float(Fraction(value)) if isinstance(value, str) else float(value)


def _nfd(text: str) -> str:
    out = unicodedata.normalize("NFD", text)
    assert out != text, f"NFD does not change {text!r}: the case would test nothing"
    return out


def test_case_names_are_unique():
    names = [c["name"] for c in DATA["cases"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["cases"]])
def test_score_span(case):
    passage = PASSAGES[case["passage"]]
    fields = {
        "passage": passage,
        "gold": case["gold"],
        "quote": passage if case.get("quote_is_passage") else case["quote"],
    }
    for name in case.get("nfd", []):
        fields[name] = _nfd(fields[name])
    got = score_span(fields["passage"], fields["gold"], fields["quote"], case.get("answer_start"))._asdict()
    expected = {k: _num(v) for k, v in case["expect"].items()}
    note = "known bug, see the test report" if case.get("bug") else ""
    assert {k: pytest.approx(got[k]) for k in expected} == expected, (note, got)


def test_whole_passage_quote_is_really_longer_than_one_sentence():
    # Guards whole_passage_quote_scores_zero_recall: the passage has several sentences.
    assert len(sentence_bounds(PASSAGES["baki"])) == 3


def test_decomposed_schwa_does_not_exist():
    # ə has no canonical decomposition; ü, ç, ş, ğ, ö, İ do (they are covered by the NFD cases).
    assert unicodedata.normalize("NFD", "ə") == "ə"
    for ch in "üçşğöİ":
        assert len(unicodedata.normalize("NFD", ch)) == 2


def test_sentence_bounds_split_before_capital_letters_only():
    flat = "Bakı böyükdür. Gəncə də. və s. bitdi"
    spans = [flat[s:e] for s, e in sentence_bounds(flat)]
    assert spans == ["Bakı böyükdür.", "Gəncə də. və s. bitdi"]


def test_trim_quote_removes_quotes_and_closing_punctuation_repeatedly():
    assert trim_quote(' «"Bakı şəhəri",» ') == "Bakı şəhəri"
    assert trim_quote("Bakı?!") == "Bakı"


# Properties -----------------------------------------------------------------------------

AZ_LOWER = "abcçdeəfgğhxıijkqlmnoöprsştuüvyz"
WORD = st.text(alphabet=AZ_LOWER + AZ_LOWER.upper().replace("I", "İ") + "I", min_size=1, max_size=8)
PHRASE = st.lists(WORD, min_size=1, max_size=4).map(" ".join)


def _capitalize(text: str) -> str:
    return az_upper(text[:1]) + text[1:]


# Sentences end with a real verb: a one-letter word before a full stop reads as an initial ("Ü.").
FINAL = st.sampled_from(["edir", "idi", "olur", "yazır", "gəlir"])
SENTENCE = st.tuples(st.lists(WORD, min_size=1, max_size=5), FINAL).map(
    lambda t: _capitalize(" ".join([*t[0], t[1]])) + "."
)


@st.composite
def passage_with_gold(draw):
    before = draw(st.lists(SENTENCE, max_size=2))
    after = draw(st.lists(SENTENCE, max_size=2))
    left = draw(st.lists(WORD, max_size=3).map(" ".join))
    right = draw(st.lists(WORD, max_size=3).map(" ".join))
    gold = draw(PHRASE)
    middle = " ".join(x for x in [_capitalize(left) or "Bu", gold, right, draw(FINAL)] if x) + "."
    passage = " ".join([*before, middle, *after])
    return passage, gold


def _recase(text: str, flips: list[bool]) -> str:
    return "".join(az_upper(ch) if up else az_lower(ch) for ch, up in zip(text, flips, strict=True))


@settings(max_examples=100, deadline=None)
@given(pg=passage_with_gold(), data=st.data())
def test_quote_equal_to_gold_has_recall_and_precision_one_in_any_case(pg, data):
    passage, gold = pg
    flips = data.draw(st.lists(st.booleans(), min_size=len(gold), max_size=len(gold)))
    got = score_span(passage, gold, _recase(gold, flips))
    assert got.span_recall == 1.0
    assert got.span_precision == 1.0
    assert got.unsupported == 0.0 and got.over_sentence == 0.0


@settings(max_examples=100, deadline=None)
@given(pg=passage_with_gold(), data=st.data())
def test_substring_of_gold_has_precision_one(pg, data):
    passage, gold = pg
    i = data.draw(st.integers(0, len(gold) - 1))
    j = data.draw(st.integers(i + 1, len(gold)))
    quote = gold[i:j].strip()
    assume(quote)
    got = score_span(passage, gold, quote)
    assert got.span_precision == 1.0
    assert got.span_recall == pytest.approx(len(quote) / len(gold))


@settings(max_examples=150, deadline=None)
@given(
    passage=st.text(alphabet=AZ_LOWER + "İIƏ .,!?«»\"'\n", max_size=60),
    gold=st.text(alphabet=AZ_LOWER + "İIƏ .,«»", max_size=10),
    quote=st.text(alphabet=AZ_LOWER + "İIƏ .,!?«»\"'", max_size=20),
)
def test_every_metric_is_between_zero_and_one(passage, gold, quote):
    got = score_span(passage, gold, quote)._asdict()
    for name, value in got.items():
        assert 0.0 <= value <= 1.0, (name, value)
    if got["unsupported"]:
        assert got["span_recall"] == 0.0 and got["span_precision"] == 0.0


@settings(max_examples=100, deadline=None)
@given(pg=passage_with_gold(), extra=st.lists(SENTENCE, min_size=1, max_size=2))
def test_copying_the_whole_passage_never_earns_recall(pg, extra):
    passage, gold = pg
    passage = passage + " " + " ".join(extra)  # at least one sentence after the gold's
    got = score_span(passage, gold, passage)
    assert got.span_recall == 0.0
    assert got.over_sentence == 1.0


# The linear-time rewrites give the old results -------------------------------------------
#
# The old implementations, verbatim, as the reference.

_OLD_SENTENCE_END = re.compile(r"[.!?…]+[\"'»”)]*(?=\s+[\"'«“(]?[A-ZÇƏĞIİÖŞÜ0-9])")
_OLD_WORD_BEFORE = re.compile(r"([\w.]+)$")


def _old_trim_quote(quote: str) -> str:
    prev = None
    text = flatten(quote)
    while prev != text:
        prev = text
        text = text.strip().strip("\"'«»“”„`").rstrip(".,;:!?…").strip()
    return text


def _old_is_abbreviation(flat: str, dot: int) -> bool:
    if flat[dot] != ".":
        return False
    m = _OLD_WORD_BEFORE.search(flat, 0, dot)
    if m is None:
        return False
    word = m.group(1)
    return (len(word) == 1 and word.isalpha()) or az_lower(word).strip(".") in spans._ABBREVIATIONS


def _old_sentence_bounds(flat: str) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    start = 0
    for m in _OLD_SENTENCE_END.finditer(flat):
        if _old_is_abbreviation(flat, m.start()):
            continue
        bounds.append((start, m.end()))
        start = m.end()
        while start < len(flat) and flat[start] == " ":
            start += 1
    if start < len(flat) or not bounds:
        bounds.append((start, len(flat)))
    return bounds


def _old_token_scores(quote: str, gold: str) -> tuple[float, float]:
    p, g = tokens(quote), tokens(gold)
    if not p or not g:
        f1 = float(p == g)
    else:
        common = sum((Counter(p) & Counter(g)).values())
        f1 = (
            0.0
            if common == 0
            else 2 * (common / len(p)) * (common / len(g)) / (common / len(p) + common / len(g))
        )
    return f1, float(bool(p) and p == g)


SENTENCE_PIECES = [
    *["prof", "dr", "Ü", "a", "Bakı", "e.ə", "İ", "Ə", "5", "x", "s"],
    *[".", "!", "?", "…", ")", '"', "'", "»", "«", "“", "”", "(", "„", "`", ",", ";", ":"],
    *[" ", "  ", "\n", "\t", "\u3000"],
]
sentence_texts = st.lists(st.sampled_from(SENTENCE_PIECES), max_size=20).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=sentence_texts)
def test_trim_quote_gives_the_old_result(text):
    assert trim_quote(text) == _old_trim_quote(text)


@settings(max_examples=500, deadline=None)
@given(text=sentence_texts)
def test_sentence_bounds_give_the_old_result(text):
    assert sentence_bounds(text) == _old_sentence_bounds(text)
    flat = flatten(text)
    assert sentence_bounds(flat) == _old_sentence_bounds(flat)


@settings(max_examples=500, deadline=None)
@given(
    quote=st.lists(
        st.sampled_from(["Bakı", "BAKI", "bakı", "şəhər", "İçəri", " ", ",", "-", "a_b", "1"]), max_size=12
    ),
    gold=st.lists(st.sampled_from(["Bakı", "bakı", "şəhər", "İçəri", " ", "a_b", "1", "x"]), max_size=5),
)
def test_token_scores_give_the_old_result(quote, gold):
    q, g = "".join(quote), "".join(gold)
    assert spans._token_scores(q, tokens(g)) == _old_token_scores(q, g)
