"""Output extraction: every type with edge cases (cases/extraction_cases.yaml), and the regex caps."""

from __future__ import annotations

import time

import pytest
from suites_helpers import cases

from yoxla.contract.spec import TaskSpec
from yoxla.extract import extractors as E
from yoxla.extract import numbers as N

CASES = cases("extraction_cases.yaml")


def _extractor(spec: dict, choices: list[str] | None = None) -> E.Extractor:
    task = TaskSpec.model_validate(
        {
            "id": "t",
            "dataset": {"path": "d.jsonl"},
            "prompt_template": "x",
            "choices": choices,
            "output_extraction": spec,
        }
    )
    return E.build_extractor(task)


def test_case_names_are_unique():
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))


def test_every_extraction_type_has_cases():
    assert {c["spec"]["type"] for c in CASES} == {
        "none", "take_first", "regex", "regex_last", "label_set", "number", "strict",
    }  # fmt: skip


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_extract(case):
    got = _extractor(case["spec"], case.get("choices")).extract(case["raw"])
    assert got.value == case["value"], got
    assert got.valid is (case["value"] is not None), got
    if "reason" in case:
        assert got.reason == case["reason"], got
    if "near_miss" in case:
        assert got.near_miss == case["near_miss"], got
    if "number" in case:
        assert got.number == case["number"], got
    assert got.abstained is case.get("abstained", False), got


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        pytest.param(r"(a+)+$", "a" * 5000 + "b", id="nested_quantifier"),
        pytest.param(r"(a|aa)+$", "a" * 5000 + "b", id="alternation"),
        pytest.param(r"(\w+\s?)+$", "söz " * 2000 + "!", id="words"),
    ],
)
@pytest.mark.parametrize("kind", ["regex", "regex_last"])
def test_catastrophic_regex_is_stopped_by_the_time_cap(pattern, text, kind):
    ex = _extractor({"type": kind, "pattern": pattern})
    start = time.monotonic()
    got = ex.extract(text)
    elapsed = time.monotonic() - start
    # Unstopped, each of these runs for hours; stopped, it ends a little after the cap. The bound is
    # wide so a busy machine (3.1 s seen on two shared cores) cannot fail it, and still far below hours.
    assert elapsed < 40 * E.REGEX_TIMEOUT_S, elapsed
    if got.error is not None:  # the usual outcome: stopped, an extraction error for this sample
        assert got.value is None and got.reason == E.ERROR and "time limit" in got.error


def test_regex_input_is_capped():
    text = "x" * (E.MAX_REGEX_INPUT + 10) + " 42"
    assert _extractor({"type": "regex", "pattern": r"\d+"}).extract(text).value is None  # beyond the cap
    assert (
        _extractor({"type": "regex_last", "pattern": r"\d+"}).extract(text).value == "42"
    )  # the end is kept


def test_regex_last_past_the_match_cap_is_an_extraction_error():
    text = " ".join(str(i) for i in range(E.MAX_MATCHES + 1))
    got = _extractor({"type": "regex_last", "pattern": r"\d+"}).extract(text)
    assert (got.value, got.valid, got.reason) == (None, False, E.ERROR)
    assert got.error == "the regex matched more than 10,000 times"


def test_regex_last_at_the_match_cap_is_still_a_value():
    text = " ".join(str(i) for i in range(E.MAX_MATCHES))
    got = _extractor({"type": "regex_last", "pattern": r"\d+"}).extract(text)
    assert got.value == str(E.MAX_MATCHES - 1) and got.error is None


def test_label_set_has_the_regex_time_cap():
    # each label occurs everywhere but never as a whole word: the old search took over 30 s
    ex = _extractor({"type": "label_set", "labels": ["a" * k for k in range(1, 1001)]})
    start = time.monotonic()
    got = ex.extract("a" * E.MAX_REGEX_INPUT)
    elapsed = time.monotonic() - start
    assert elapsed < 10.0, elapsed  # loose: the machine may be loaded; the outcome is what counts
    assert (got.value, got.reason) == (None, E.ERROR)
    assert got.error == f"the label search hit its time limit ({E.REGEX_TIMEOUT_S:g} s)"


@pytest.mark.parametrize(
    ("labels", "text", "value"),
    [
        (["A", "AB", "B"], "AB və ya A", "AB"),  # first occurrence, the longer label at a tie
        (["B", "A"], "x A, B", "A"),  # first in the text, not first in the list
        (["İLHAM", "ilham"], "İlham gəldi", "İLHAM"),  # the same needle: the earlier label
        (["ZİDD", "yes"], "YES, yox: ZİDD", "yes"),  # two case rules, one text
        (["ZİDD", "yes"], "zidd, then yes", "ZİDD"),
        (["a+", "b"], "x a+ b", "a+"),  # a label ending in punctuation needs no boundary there
        (["ışıq"], "IŞIQ", "ışıq"),
        (["söz"], "sözlər", None),  # inside a word: no label
    ],
)
def test_label_set_search(labels, text, value):
    assert _extractor({"type": "label_set", "labels": labels}).extract(text).value == value


@pytest.mark.parametrize(
    ("pattern", "flags", "message"),
    [("(a", "", "does not compile"), ("a" * 1001, "", "at most 1000"), ("a", "q", "unknown regex flag")],
)
def test_compile_pattern_refuses(pattern, flags, message):
    with pytest.raises(ValueError, match=message):
        E.compile_pattern(pattern, flags)


NUMBER_CASES = cases("number_cases.yaml")


def test_number_cases_cover_both_languages_and_every_refusal():
    assert {c["lang"] for c in NUMBER_CASES} == {"az", "en"}
    assert {c.get("refused") for c in NUMBER_CASES} == {
        None, N.FORMULA, N.AMBIGUOUS, N.POWER, N.TOO_LARGE,
    }  # fmt: skip


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c['lang']}-{c['text']!r}-{c.get('last', False)}") for c in NUMBER_CASES]
)
def test_number_rule(case):
    spec = {"type": "number", "position": "last" if case.get("last") else "first"}
    got = _extractor(spec).extract(case["text"])
    assert got.number == case["value"], got
    assert got.valid is (case["value"] is not None), got
    if case["value"] is not None:
        assert got.value == E.number_text(float(case["value"]))
    elif "refused" in case:
        assert (got.reason, got.near_miss) == (E.NOT_A_NUMBER, case["refused"]), got
    else:
        assert (got.reason, got.near_miss) == (E.NO_MATCH, None), got


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("2 " * 50_000, 2.0, 2.0),
        ("x=1 " * 25_000, 1.0, 1.0),
        ("3x+" * 30_000, N.FORMULA, N.FORMULA),
        ("1 + " * 25_000, N.FORMULA, N.FORMULA),
        ("5 1²" * 20_000, 5.0, N.POWER),
        ("1.2." * 25_000, N.AMBIGUOUS, N.AMBIGUOUS),
        ("Q3 " * 30_000, None, None),
    ],
    ids=["numbers", "assignments", "glued_formula", "spaced_formula", "powers", "dots", "codes"],
)
def test_number_rule_on_long_hostile_text(text, first, last):
    # 100,000 characters of one pattern: the scan is linear (bench-free: the value is checked)
    for position, expected in ((False, first), (True, last)):
        got = N.find_number(text[: E.MAX_REGEX_INPUT], last=position)
        assert (got.refused if isinstance(expected, str) else got.value) == expected, got


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3.0),
        ("-2", -2.0),
        ("3,5", 3.5),
        ("3.5", 3.5),
        ("12 500", 12500.0),
        ("−4", -4.0),
        (" 1e3 ", 1000.0),
        (".5", 0.5),
        ("1,000", None),
        ("3 manat", None),
        ("3x", None),
        ("1e400", None),
        ("", None),
    ],
)
def test_parse_number(text, value):
    assert N.parse_number(text) == value


@pytest.mark.parametrize(("value", "text"), [(3.0, "3"), (3.5, "3.5"), (-0.25, "-0.25"), (1e20, "1e+20")])
def test_number_text(value, text):
    assert E.number_text(value) == text
