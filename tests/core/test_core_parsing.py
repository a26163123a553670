"""Strict answer parsing: table-driven cases (cases/parse_cases.yaml) and properties."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from yoxla.contract.benchmark import benchmark_manifest
from yoxla.contract.benchmark import parse_answer as parse
from yoxla.extract import parsing
from yoxla.extract.parsing import NEAR_MISS_KINDS, answer_text, near_miss_kind, strip_wrappers
from yoxla.extract.text import az_key, az_lower, az_upper, fold_letters, tokens, turkish_spelling

DATA = yaml.safe_load((Path(__file__).parent / "cases" / "parse_cases.yaml").read_text(encoding="utf-8"))
ROWS = DATA["rows"]
TASKS = benchmark_manifest().tasks  # the benchmark's package suite, by task id
WRAPPERS = [("```", "```"), ("**", "**"), ("`", "`"), ('"', '"'), ("'", "'"), ("«", "»"), ("“", "”")]


def _cases(section: str) -> list:
    return [pytest.param(c, id=c["name"]) for c in DATA[section]]


def _check(case: dict) -> None:
    task = case["task"]
    row = ROWS[case["row"]] if "row" in case else None
    got = parse(task, case["raw"], row)
    assert got.valid is case["valid"], got
    if case["valid"]:
        assert got.value == case["value"], got
        assert got.reason is None and got.near_miss is None, got
    else:
        assert got.value is None, got
        assert got.reason == case["reason"], got
        if "near_miss" in case:
            assert got.near_miss == case["near_miss"], got
        assert got.near_miss in NEAR_MISS_KINDS, got
    assert got.abstained is case.get("abstained", False), got


def test_case_names_are_unique():
    names = [c["name"] for section in ("choice", "numeric", "text") for c in DATA[section]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", _cases("choice"))
def test_parse_choice(case):
    _check(case)


@pytest.mark.parametrize("case", _cases("numeric"))
def test_parse_number(case):
    _check(case)


@pytest.mark.parametrize("case", _cases("text"))
def test_parse_text_and_abstention(case):
    _check(case)


def test_option_17_is_1873_in_the_fixture_row():
    # Guards the meaning of the `17. 1873` case: option 17 really is 1873, and it still is invalid.
    assert ROWS["knowledge_20"]["candidates"][16] == "1873"
    assert len(ROWS["knowledge_20"]["candidates"]) == 20


def test_numbered_options_follow_the_row_list_length():
    task = "knowledge_choice_v1"
    three = {"candidates": ["Bakı", "Gəncə", "Şəki"]}
    assert parse(task, "3", three).valid
    assert not parse(task, "4", three).valid
    assert parse(task, "4", ROWS["knowledge_20"]).valid


# Reasoning ------------------------------------------------------------------------------


def test_answer_text_removes_think_blocks():
    assert answer_text("<think>uzun fikir\nikinci sətir</think>ZİDD") == "ZİDD"
    assert answer_text(None) == ""
    assert answer_text("") == ""


def test_answer_text_unterminated_think_leaves_nothing():
    assert answer_text("<think>TƏSDİQ olmalıdır, çünki") == ""


# Properties -----------------------------------------------------------------------------

AZ_LOWER = "abcçdeəfgğhxıijkqlmnoöprsştuüvyz"
_valid_cores = [c for c in DATA["choice"] + DATA["numeric"] + DATA["text"] if c["raw"]]
CORES = [
    c
    for c in _valid_cores
    if "<think>" not in c["raw"].lower()
    and c["raw"] == c["raw"].strip()
    and c["raw"][0] not in "`*\"'«“"
    and c["raw"][-1] not in "`*\"'»”"
]


@settings(max_examples=150, deadline=None)
@given(
    case=st.sampled_from(CORES),
    wrappers=st.lists(st.sampled_from(WRAPPERS), max_size=4),
    pads=st.lists(st.sampled_from(["", " ", "\n", "  \t"]), min_size=2, max_size=2),
)
def test_wrappers_never_change_the_verdict(case, wrappers, pads):
    task = case["task"]
    row = ROWS[case["row"]] if "row" in case else None
    bare = parse(task, case["raw"], row)
    wrapped = case["raw"]
    for left, right in wrappers:
        wrapped = f"{pads[0]}{left}{wrapped}{right}{pads[1]}"
    got = parse(task, wrapped, row)
    assert (got.valid, got.value, got.reason, got.near_miss, got.abstained) == (
        bare.valid,
        bare.value,
        bare.reason,
        bare.near_miss,
        bare.abstained,
    )


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=0, max_size=30))
def test_strip_wrappers_is_idempotent(text):
    once = strip_wrappers(text)
    assert strip_wrappers(once) == once


@settings(max_examples=150, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=AZ_LOWER + "AXYİIƏ .,!`*\"'«»", max_size=25),
        st.sampled_from(["Cavab yoxdur", "Cavab yoxdur.", "Cavab yokdur", "cavab  yoxdur!", "CAVAB YOXDUR?"]),
    )
)
def test_invalid_output_is_never_an_abstention(text):
    got = parse("qa_abstention_v1", text)
    if not got.valid:
        assert not got.abstained
    if got.abstained:
        assert got.valid and got.value == "Cavab yoxdur"


@settings(max_examples=150, deadline=None)
@given(word=st.text(alphabet=AZ_LOWER + " ", min_size=1, max_size=10))
def test_only_the_exact_lower_case_labels_are_valid(word):
    # Lower-case input is valid only when it is the label itself, letter for letter.
    got = parse("rag_verification_v1", word)
    assert got.valid is (word.strip() in ("təsdiq", "zidd", "yoxdur"))


_UPPER_FOLDS = {"Ə": "E", "İ": "I", "Ş": "S", "Ç": "C", "Ğ": "G", "Ö": "O", "Ü": "U"}
_LOWER_FOLDS = {"ə": "e", "ı": "i", "ş": "s", "ç": "c", "ğ": "g", "ö": "o", "ü": "u"}


def _foldings(label: str, folds: dict[str, str]) -> list[str]:
    """Every spelling of label with at least one Azerbaijani letter folded to its ASCII look-alike."""
    spots = [i for i, ch in enumerate(label) if ch in folds]
    out = []
    for mask in range(1, 2 ** len(spots)):
        chars = list(label)
        for bit, i in enumerate(spots):
            if mask >> bit & 1:
                chars[i] = folds[chars[i]]
        out.append("".join(chars))
    return out


@pytest.mark.parametrize(
    ("task_id", "label", "n_upper", "n_lower"),
    [
        ("rag_verification_v1", "TƏSDİQ", 3, 1),  # lower: only ə can fold (i is already right)
        ("rag_verification_v1", "ZİDD", 1, 0),  # "zidd" is the label itself
        ("rag_selection_v1", "HEÇ BİRİ", 7, 1),
    ],
)
def test_letter_folded_label_is_invalid_letter_folded(task_id, label, n_upper, n_lower):
    task = task_id
    upper = _foldings(label, _UPPER_FOLDS)
    lower = _foldings(az_lower(label), _LOWER_FOLDS)
    assert (len(upper), len(lower)) == (n_upper, n_lower)
    for raw in upper + lower:
        got = parse(task, raw, ROWS["selection_6"])
        assert not got.valid, raw
        assert got.near_miss == "letter_folded", raw


@pytest.mark.parametrize("label", ["TƏSDİQ", "ZİDD", "YOXDUR", "HEÇ BİRİ"])
def test_lower_case_written_with_azerbaijani_rules_is_the_label(label):
    lower = az_lower(label)
    assert lower in ("təsdiq", "zidd", "yoxdur", "heç biri")
    task = "rag_selection_v1" if label == "HEÇ BİRİ" else "rag_verification_v1"
    assert parse(task, lower, ROWS["selection_6"]).value == label


LABELS = [
    (tid, value)
    for tid, task in TASKS.items()
    if task.spec.strict_mode == "choice"
    for value in task.spec.fixed_choices
]


def test_label_table_covers_every_choice_task_with_labels():
    assert {t for t, _ in LABELS} == {
        "nli_v1",
        "sentiment_v1",
        "intent_v1",
        "minimal_pairs_v1",
        "az_tr_interference_v1",
        "rag_verification_v1",
        "rag_selection_v1",
    }


@settings(max_examples=200, deadline=None)
@given(pair=st.sampled_from(LABELS), data=st.data())
def test_every_label_parses_in_any_azerbaijani_casing(pair, data):
    task_id, label = pair
    task = task_id
    flips = data.draw(st.lists(st.booleans(), min_size=len(label), max_size=len(label)))
    mixed = "".join(az_upper(ch) if up else az_lower(ch) for ch, up in zip(label, flips, strict=True))
    space = TASKS[task_id].spec.answer_space
    row = ROWS["selection_6"] if space is not None and space.options_field else None
    for raw in (label, az_lower(label), az_upper(label), mixed):
        got = parse(task, raw, row)
        assert got.valid and got.value == label, raw


# The linear-time rewrites give the old results -------------------------------------------
#
# The quadratic implementations are kept here, verbatim, as the reference.


def _old_strip_wrappers(text: str) -> str:
    prev = None
    while prev != text:
        prev = text
        text = text.strip()
        for left, right in WRAPPERS:
            if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : len(text) - len(right)]
                break
    return text


_OLD_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def _old_answer_text(raw: str | None) -> str:
    if not raw:
        return ""
    text = _OLD_THINK.sub("", raw)
    low = text.lower()
    if "<think>" in low:
        text = text[: low.index("<think>")]
    return text


def _old_near_miss_kind(text: str, values: tuple[str, ...]) -> str:
    if not text.strip():
        return "empty"
    keys = {az_key(v) for v in values}
    stripped = _old_strip_wrappers(text.rstrip(".!?,;:…。" + " "))
    if stripped != text and az_key(stripped) in keys:
        return "trailing_punctuation"
    m = re.match(r"^(\d+)\s*[.):\-–—]\s*\S", text)
    if m and m.group(1) in values:
        return "option_with_text"
    folded = fold_letters(stripped)
    if any(fold_letters(v) == folded for v in values):
        return "letter_folded"
    turkish = turkish_spelling(stripped)
    if any(turkish_spelling(v) == turkish for v in values):
        return "turkish_spelling"
    words = " " + " ".join(tokens(text)) + " "
    if any(" " + " ".join(tokens(v)) + " " in words for v in values if tokens(v)):
        return "label_in_extra_words"
    return "other"


@contextmanager
def _bulk_rounds(size: int, after: int):
    """Take rounds in bulk from texts longer than ``size`` after ``after`` single rounds."""
    saved = parsing._BULK, parsing._ONE_AT_A_TIME
    parsing._BULK, parsing._ONE_AT_A_TIME = size, after
    try:
        yield
    finally:
        parsing._BULK, parsing._ONE_AT_A_TIME = saved


PIECES = ["`", "```", "*", "**", '"', "'", "«", "»", "“", "”", " ", "\n", "\u3000", "a", "x y", "."]
MARKS = ["`", "*", '"', "'", "«", "“", " ", "\n", "  "]
_RIGHT_MARK = str.maketrans("«“", "»”")


@st.composite
def wrapped_texts(draw):
    """Text rich in wrappers: free strings, and two ends that mirror each other but for noise."""
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(PIECES), max_size=24)))
    left = draw(st.lists(st.sampled_from(MARKS), max_size=40))
    right = []
    for mark in left:
        change = draw(st.sampled_from(["same"] * 6 + ["drop", "space", "other"]))
        if change == "drop":
            continue
        if change == "space":
            right.append(" ")
        right.append(draw(st.sampled_from(["`", "*", "'", "»", "”"])) if change == "other" else mark)
    middle = draw(st.sampled_from(["", "x", "core text", "*", "`", "'", " ", "**", "```"]))
    right_end = "".join(reversed(right)).translate(_RIGHT_MARK)
    return "".join(left) + middle + right_end


@settings(max_examples=600, deadline=None)
@given(text=wrapped_texts())
def test_strip_wrappers_gives_the_old_result(text):
    assert strip_wrappers(text) == _old_strip_wrappers(text)


@settings(max_examples=400, deadline=None)
@given(text=wrapped_texts(), bulk=st.sampled_from([(0, 0), (2, 0), (4, 1), (8, 3)]))
def test_strip_wrappers_in_bulk_gives_the_old_result(text, bulk):
    # Small thresholds send short texts through the bulk path (``_lockstep``).
    with _bulk_rounds(*bulk):
        assert strip_wrappers(text) == _old_strip_wrappers(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="`*\"'«»“” \n\u2028\u00a0ab", max_size=40))
def test_strip_wrappers_gives_the_old_result_on_any_mix(text):
    with _bulk_rounds(4, 1):
        assert strip_wrappers(text) == _old_strip_wrappers(text)


THINK_PIECES = ["<think>", "</think>", "<THINK>", "</ThInK>", "<thİnk>", "<thınk>", "</thin\u212a>", "İ"]


@settings(max_examples=400, deadline=None)
@given(
    raw=st.lists(st.sampled_from([*THINK_PIECES, "a", " ", "<", "</think", "\n"]), max_size=12).map("".join)
)
def test_answer_text_gives_the_old_result(raw):
    # Including the old quirks: re's IGNORECASE takes <thİnk> and <thınk> for tags, str.lower
    # does not, and "İ".lower() is two characters long.
    assert answer_text(raw) == _old_answer_text(raw)


NEAR_MISS_VALUES = [
    ("TƏSDİQ", "ZİDD", "YOXDUR"),
    ("entailment", "neutral", "contradiction"),
    ("HEÇ BİRİ", "1", "2", "3"),
    ("Cavab yoxdur",),
    tuple(str(i) for i in range(1, 21)),
    ("a b", "b", ""),
]
NEAR_MISS_PIECES = [
    *["TƏSDİQ", "TESDIQ", "zidd", "YOKDUR", "yoxdur", "HEÇ", "BİRİ", "hecbiri", "Cavab", "yokdur"],
    *["neutral", "1", "17", "2.", ". ", ")", " ", "\n", ".", "!", "**", "`", "'", "a", "b", "a b"],
    *["İ", "I", "ı", "ə", "—", ":", "e\u0301", "é", "_"],
]


@settings(max_examples=500, deadline=None)
@given(
    values=st.sampled_from(NEAR_MISS_VALUES),
    text=st.lists(st.sampled_from(NEAR_MISS_PIECES), max_size=6).map("".join),
)
def test_near_miss_kind_gives_the_old_result(values, text):
    assert near_miss_kind(text, values) == _old_near_miss_kind(text, values)


def test_the_parser_reads_a_strict_rule_over_the_items_own_choices():
    from yoxla.contract.spec_answers import StrictExtraction
    from yoxla.extract.parsing import parse as strict

    rule = StrictExtraction(type="strict")  # no mode: choice over given choices, else text
    assert strict(rule, "**bəli**", ("Bəli", "Xeyr")).value == "Bəli"
    assert strict(rule, "Beli", ("Bəli", "Xeyr")).near_miss == "letter_folded"
    assert strict(rule, "Bəli").value == "Bəli" and strict(rule, "Bəli").valid  # free text
    numeric = StrictExtraction(type="strict", mode="numeric", range=[0, 5])
    assert strict(numeric, "4,5").value == 4.5
    assert strict(numeric, "6").reason == "out_of_range"
    abstain = StrictExtraction(type="strict", mode="text_or_abstain", abstain="Cavab yoxdur")
    got = strict(abstain, "CAVAB YOXDUR")
    assert got.valid and got.abstained and got.value == "Cavab yoxdur"
    assert strict(abstain, "Bakıda").value == "Bakıda" and not strict(abstain, "Bakıda").abstained
