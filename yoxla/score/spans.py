"""Span scoring on character offsets.

Passage, gold and quote are flattened (NFC, collapsed white space). The gold is located in
the passage; the model's quote, with surrounding quotes and closing punctuation trimmed,
is located case-insensitively (Azerbaijani case rules, length-preserving, so offsets agree).

``span_recall`` is overlap / gold length, but 0 when the quote reaches outside the
sentences the gold occupies: otherwise copying the whole passage would score 1.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from yoxla.extract.text import _TOKEN, az_lower, flatten, nfc, token_count, tokens, words_pattern

# A sentence ends at a run of these, followed by white space and a capital or a digit.
_END_RUN = re.compile(r"[.!?…]+[\"'»”)]*")
_NEXT_SENTENCE = re.compile(r"\s+[\"'«“(]?[A-ZÇƏĞIİÖŞÜ0-9]")
# A full stop after these does not end a sentence (lower-cased, without the dot).
_ABBREVIATIONS = frozenset(
    "prof dr akad dos müəl red məs səh bax küç ş r qəs kənd ç yy əs il e.ə b.e s t.e.d f.r.d".split()
)
_WORD_BACKWARDS = re.compile(r"[\w.]*")
_QUOTE_CHARS = "\"'«»“”„`"
_CLOSING = ".,;:!?…"
_WS = re.compile(r"\s+")
_LISTED = 4096  # a quote up to this long has its tokens listed; a longer one is counted by pattern


class SpanScore(NamedTuple):
    """The span metrics of one answer (a named tuple: immutable, and built once per span answer
    several times faster than a frozen dataclass)."""

    span_recall: float
    span_precision: float
    exact_span: float
    unsupported: float
    over_sentence: float
    token_f1: float
    normalized_em: float
    strict_em: float


ZERO = SpanScore(0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0)


def trim_quote(quote: str) -> str:
    """Remove surrounding quote marks and closing punctuation, repeatedly.

    Rounds of strip, strip(quotes), rstrip(closing), strip until nothing changes come to one
    lstrip and one rstrip of the union (the flattened text holds no white space but " "):
    each end loses characters of its set until one outside the set is left.
    """
    return flatten(quote).lstrip(_QUOTE_CHARS + " ").rstrip(_QUOTE_CHARS + _CLOSING + " ")


def sentence_bounds(flat: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a flattened passage; the end includes its punctuation.

    A sentence ends with a run of ``.!?…`` and closing quotes followed by white space and a
    capital letter or a digit (a failed run is skipped at once, not tried from each of its characters).
    """
    bounds: list[tuple[int, int]] = []
    start = 0
    backwards = ""
    for m in _END_RUN.finditer(flat):
        if not _NEXT_SENTENCE.match(flat, m.end()):
            continue
        if flat[m.start()] == ".":
            backwards = backwards or flat[::-1]
            if _is_abbreviation(flat, m.start(), backwards):
                continue
        bounds.append((start, m.end()))
        start = m.end()
        while start < len(flat) and flat[start] == " ":
            start += 1
    if start < len(flat) or not bounds:
        bounds.append((start, len(flat)))
    return bounds


def _is_abbreviation(flat: str, dot: int, backwards: str) -> bool:
    """Is the full stop at ``dot`` part of an initial (``Ü.``) or a known abbreviation (``prof.``)?

    The word before it is the run of word characters and dots that ends at ``dot`` (or just
    before a newline there: ``$``), read on the reversed text so the cost is the word's length.
    """
    end = dot - 1 if flat[dot - 1 : dot] == "\n" else dot
    word_match = _WORD_BACKWARDS.match(backwards, len(flat) - end)
    assert word_match is not None  # the pattern matches the empty string
    length = word_match.end() - (len(flat) - end)
    if length == 0:
        return False
    word = flat[end - length : end]
    return (len(word) == 1 and word.isalpha()) or az_lower(word).strip(".") in _ABBREVIATIONS


def occurrences(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while needle and i >= 0:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def _flat_offset(original: str, offset: int) -> int:
    """Where a character offset of the original text lands in its flattened form."""
    return len(_WS.sub(" ", nfc(original[:offset])).lstrip())


@lru_cache(maxsize=8192)
def _passage(passage: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """Flattened passage, its lower-cased form and its sentence bounds (cached: passages repeat)."""
    flat = flatten(passage)
    return flat, az_lower(flat), tuple(sentence_bounds(flat))


@lru_cache(maxsize=8192)
def locate_gold(passage: str, gold: str, answer_start: int | None = None) -> tuple[int, int] | None:
    """Offsets of the gold in the flattened passage, or None if it is not there.

    The gold is trimmed like a quote, so that a gold in guillemets and the same text copied
    by the model meet on the same characters.
    """
    flat, lower, _ = _passage(passage)
    g = trim_quote(gold)
    hits = occurrences(flat, g) or occurrences(lower, az_lower(g))
    if not hits or not g:
        return None
    if answer_start is not None and len(hits) > 1:
        target = _flat_offset(passage, answer_start)
        hits.sort(key=lambda i: abs(i - target))
    return hits[0], hits[0] + len(g)


def _region(bounds: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    first = next((s for s, e in bounds if s <= start < e), bounds[0][0])
    last = next((e for s, e in bounds if s < end <= e), bounds[-1][1])
    return first, last


def token_f1(pred: str, gold: str) -> float:
    return _token_f1(tokens(pred), tokens(gold))


def _token_f1(p: Sequence[str], g: Sequence[str]) -> float:
    if not p or not g:
        return float(len(p) == len(g))
    return _f1(_common(p, g), len(p), len(g))


def _common(p: Sequence[str], g: Sequence[str]) -> int:
    """How many tokens the two lists share, each as often as both have it (``sum((Counter(p) & Counter(g)).values())``,
    without building two counters: this runs once per span answer)."""
    left: dict[str, int] = {}
    for t in g:
        left[t] = left.get(t, 0) + 1
    common = 0
    for t in p:
        n = left.get(t, 0)
        if n:
            left[t] = n - 1
            common += 1
    return common


def _f1(common: int, n_pred: int, n_gold: int) -> float:
    if common == 0:
        return 0.0
    precision, recall = common / n_pred, common / n_gold
    return 2 * precision * recall / (precision + recall)


def _token_scores(quote: str, gold_tokens: Sequence[str], lowered: str | None = None) -> tuple[float, float]:
    """(token_f1, normalized_em) of a quote against the gold's tokens.

    A quote with more tokens than the gold cannot equal it, and its F1 needs only how often
    each gold token occurs in it: counted by pattern, without listing the quote's tokens
    (an answer can hold millions of them). ``lowered``: ``az_lower(nfc(quote))`` when the
    caller has it.
    """
    if lowered is None:
        lowered = az_lower(nfc(quote))
    listed = len(lowered) <= _LISTED
    q = _TOKEN.findall(lowered) if listed else []  # tokens(quote), from the lowered text already made
    n_quote = len(q) if listed else token_count(lowered)
    if n_quote <= len(gold_tokens):
        q = q if listed else _TOKEN.findall(lowered)
        return _token_f1(q, gold_tokens), float(bool(q) and q == list(gold_tokens))
    if not gold_tokens:
        return 0.0, 0.0
    if listed:
        # a token of the quote is a maximal run of word characters, so it equals a gold token
        # exactly where that token's whole-word pattern below would match
        common = _common(q, gold_tokens)
    else:
        common = sum(
            min(n, len(words_pattern((word,)).findall(lowered))) for word, n in Counter(gold_tokens).items()
        )
    return _f1(common, n_quote, len(gold_tokens)), 0.0


@lru_cache(maxsize=8192)
def _gold(gold: str) -> tuple[str, tuple[str, ...], str]:
    """The trimmed gold, its tokens and its NFC form without outer white space (cached: a row's
    gold is the same for every answer to it)."""
    g = trim_quote(gold)
    return g, tuple(tokens(g)), nfc(gold).strip()


@lru_cache(maxsize=8192)
def _gold_region(passage: str, gold: str, answer_start: int | None) -> tuple[int, int, int, int] | None:
    """The gold's offsets in the flattened passage and the sentences it occupies (cached: the
    same for every answer to a row), or None when the gold is not in the passage."""
    gold_span = locate_gold(passage, gold, answer_start)
    if gold_span is None:
        return None
    gs, ge = gold_span
    return (gs, ge, *_region(_passage(passage)[2], gs, ge))


def score_span(passage: str, gold: str, quote: str, answer_start: int | None = None) -> SpanScore:
    lower = _passage(passage)[1]
    q = trim_quote(quote)
    _, gold_tokens, gold_nfc = _gold(gold)
    nq = nfc(q)
    lowered = az_lower(nq)
    tf1, nem = _token_scores(q, gold_tokens, lowered)
    sem = float(nfc(quote).strip() == gold_nfc)
    located = _gold_region(passage, gold, answer_start)
    # the quote lower-cased as located: az_lower(q) (the same text as ``lowered`` when q is NFC)
    hits = occurrences(lower, lowered if nq == q else az_lower(q)) if q else []
    if located is None or not hits:
        return SpanScore(0.0, 0.0, 0.0, float(not hits), 0.0, tf1, nem, sem)
    gs, ge, rs, re_ = located

    def rank(qs: int) -> tuple[bool, int]:
        qe = qs + len(q)
        return (rs <= qs and qe <= re_, max(0, min(qe, ge) - max(qs, gs)))

    qs = max(hits, key=rank)
    within, overlap = rank(qs)
    recall = overlap / (ge - gs) if within else 0.0
    precision = overlap / len(q)
    exact = float(qs == gs and qs + len(q) == ge)
    return SpanScore(recall, precision, exact, 0.0, float(not within), tf1, nem, sem)
