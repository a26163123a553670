"""Scoring one answer costs time linear in its length, whatever the answer looks like.

No timing asserts: the steps that could repeat per character are counted (calls of the
peeling helpers, regular-expression searches, what reaches the C normaliser), and answers of
1 MB in every pathological shape are scored once per kind of task. A quadratic step takes
minutes at this size (the old wrapper stripping took 6.7 s for 1 MB of quotes), so a
regression shows as a test run that does not finish, not as a flaky threshold.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable

import pytest

from yoxla.contract.benchmark import prepare_rows
from yoxla.data.editions import load_edition, load_rows
from yoxla.extract import parsing, text
from yoxla.extract.parsing import answer_text, strip_wrappers
from yoxla.score import spans
from yoxla.score.replay import score_builtin_task

MB = 1_000_000
_MIRROR = str.maketrans("«»“”", "»«”“")


def _mirrored(half: str, middle: str = "x") -> str:
    return half + middle + half[::-1].translate(_MIRROR)


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


WRAPPER_SHAPES: dict[str, Callable[[int], str]] = {
    "quotes": lambda n: "'" * n,
    "nested quotes": lambda n: _mirrored(_fill("\"'", n // 2)),
    "stars": lambda n: "*" * n,
    "backticks": lambda n: "`" * n,
    "guillemets": lambda n: "«" * (n // 2) + "»" * (n // 2),
    "stars and quotes": lambda n: _mirrored(_fill('**"', n // 2)),
    "spaced quotes": lambda n: _mirrored(_fill("' ", n // 2)),
    "spaces on one side": lambda n: _fill("' ", n // 2) + "x" + "'" * (n // 4),
    "runs split on one side": lambda n: "`" * (n // 2) + "x" + _fill("` ", n // 2),
    "marks only, one side spaced": lambda n: _fill("' ", n // 2) + "'" * (n // 2),
    "white space": lambda n: " " * n,
}


def _count_calls(monkeypatch, module, names: list[str]) -> Counter:
    calls: Counter = Counter()
    for name in names:
        original = getattr(module, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("shape", list(WRAPPER_SHAPES))
def test_peeling_wrappers_takes_a_logarithmic_number_of_steps(monkeypatch, shape):
    # Every step (a helper call) works on a window that at most doubles the part it removes,
    # so few steps means linear time; the old loop took one step, and one copy, per round.
    helpers = ["_lockstep", "_peel_runs", "_lstrip_index", "_rstrip_index"]
    calls = _count_calls(monkeypatch, parsing, helpers)
    small = WRAPPER_SHAPES[shape](2**16)
    strip_wrappers(small)
    steps_small = sum(calls.values())
    calls.clear()
    large = WRAPPER_SHAPES[shape](2**20)
    strip_wrappers(large)
    steps_large = sum(calls.values())
    assert steps_large <= 120, calls
    assert steps_large <= steps_small + 40, (steps_small, calls)  # sixteen times the text


class _CountingPattern:
    def __init__(self, pattern):
        self.pattern, self.searches = pattern, 0

    def search(self, *args):
        self.searches += 1
        return self.pattern.search(*args)


def test_unterminated_think_tags_are_searched_once(monkeypatch):
    opening, closing = _CountingPattern(parsing._THINK_OPEN), _CountingPattern(parsing._THINK_CLOSE)
    monkeypatch.setattr(parsing, "_THINK_OPEN", opening)
    monkeypatch.setattr(parsing, "_THINK_CLOSE", closing)
    assert answer_text("<think>" * (MB // 7)) == ""
    assert (opening.searches, closing.searches) == (1, 1)
    assert answer_text("<think>a</think>" * 1000 + "neutral") == "neutral"
    assert (opening.searches, closing.searches) == (1 + 1001, 1 + 1000)


def test_long_runs_of_marks_reach_the_c_normaliser_in_canonical_order(monkeypatch):
    # CPython sorts marks by insertion: quadratic on a long run out of order. What it gets
    # from yoxla.extract.text.normalize must already be in order (its NFD is itself).
    seen: list[str] = []

    class Recording:
        def __getattr__(self, name):
            return getattr(unicodedata, name)

        @staticmethod
        def normalize(form, s):
            seen.append(s)
            return unicodedata.normalize(form, s)

    monkeypatch.setattr(text, "unicodedata", Recording())
    text._normalize_long.cache_clear()
    hostile = "a" + "\u0301\u0316" * (MB // 4)
    out = text.nfc(hostile)
    long_inputs = [s for s in seen if len(s) > 1000]
    assert long_inputs and all(unicodedata.normalize("NFD", s) == s for s in long_inputs)
    assert out == "á" + "\u0316" * (MB // 4) + "\u0301" * (MB // 4 - 1)


def test_sentence_ends_are_tried_once_per_run_of_punctuation(monkeypatch):
    matches = Counter()
    pattern = spans._NEXT_SENTENCE

    class Counting:
        @staticmethod
        def match(*args):
            matches["match"] += 1
            return pattern.match(*args)

    monkeypatch.setattr(spans, "_NEXT_SENTENCE", Counting())
    assert spans.sentence_bounds("!" * MB) == [(0, MB)]
    assert matches["match"] == 1
    flat = "Bu " + "a." * (MB // 2) + " Son."
    assert len(spans.sentence_bounds(flat)) == 2  # the word before each dot is read backwards


EDITION = load_edition("sample")
TASKS = ["nli_v1", "knowledge_choice_v1", "extractive_qa_v1", "qa_abstention_v1", "sts_v1"]
ROWS = {tid: load_rows(EDITION, tid)[0] for tid in TASKS}
ANSWER_SHAPES: dict[str, Callable[[int], str]] = {
    "quotes": lambda n: "'" * n,
    "nested quotes": lambda n: _mirrored(_fill("\"'", n // 2)),
    "stars": lambda n: "*" * n,
    "unterminated think": lambda n: _fill("<think>", n),
    "marks out of order": lambda n: "a" + _fill("\u0301\u0316", n),
    "spaces on one side": lambda n: _fill("' ", n // 2) + "x" + "'" * (n // 4),
    "long quote": lambda n: "«" + _fill(ROWS["extractive_qa_v1"]["context"] + " ", n) + "».",
    "trailing quote marks": lambda n: "Bakı" + _fill('."', n),
    "digits": lambda n: "1" * n + "x",
}


@pytest.mark.parametrize("shape", list(ANSWER_SHAPES))
def test_a_pathological_answer_of_a_megabyte_scores_for_every_kind_of_task(shape):
    raw = ANSWER_SHAPES[shape](MB)
    for tid in TASKS:
        prepared = prepare_rows(tid, [ROWS[tid]])  # the package suite task, on the built-in fast path
        result = score_builtin_task(prepared, prepared.items, [answer_text(raw)], [None], [None]).results[0]
        assert result.outcome in ("correct", "wrong", "invalid", "abstained"), (tid, result.outcome)
