"""Output extraction: every type with edge cases (cases/extraction_cases.yaml), and the regex caps."""

from __future__ import annotations

import time

import pytest
from suites_helpers import cases

from yoxla.suites import extraction as E
from yoxla.suites.spec import TaskSpec

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
    assert elapsed < 5 * E.REGEX_TIMEOUT_S + 1.0, elapsed
    if got.error is not None:  # the usual outcome: stopped, an extraction error for this sample
        assert got.value is None and got.reason == E.ERROR and "time limit" in got.error


def test_regex_input_is_capped():
    text = "x" * (E.MAX_REGEX_INPUT + 10) + " 42"
    assert _extractor({"type": "regex", "pattern": r"\d+"}).extract(text).value is None  # beyond the cap
    assert (
        _extractor({"type": "regex_last", "pattern": r"\d+"}).extract(text).value == "42"
    )  # the end is kept


def test_regex_last_stops_after_the_match_cap():
    text = " ".join(str(i) for i in range(E.MAX_MATCHES + 50))
    got = _extractor({"type": "regex_last", "pattern": r"\d+"}).extract(text)
    assert got.value == str(E.MAX_MATCHES - 1)


@pytest.mark.parametrize(
    ("pattern", "flags", "message"),
    [("(a", "", "does not compile"), ("a" * 1001, "", "at most 1000"), ("a", "q", "unknown regex flag")],
)
def test_compile_pattern_refuses(pattern, flags, message):
    with pytest.raises(ValueError, match=message):
        E.compile_pattern(pattern, flags)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3.0),
        ("-2", -2.0),
        ("3,5", 3.5),
        ("3.5", 3.5),
        ("12 500", 12500.0),
        ("−4", -4.0),
        ("3 manat", None),
        ("", None),
    ],
)
def test_parse_number(text, value):
    assert E.parse_number(text) == value


@pytest.mark.parametrize(("value", "text"), [(3.0, "3"), (3.5, "3.5"), (-0.25, "-0.25"), (1e20, "1e+20")])
def test_number_text(value, text):
    assert E.number_text(value) == text
