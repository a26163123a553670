"""Untrusted names and text: one printable line, name checks, look-alike skeletons.

Table-driven cases in cases/safetext_cases.yaml, and properties of ``one_line``.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from yoxla.safe.text import BIDI_CONTROLS, ZERO_WIDTH, name_problems, one_line, skeleton

DATA = yaml.safe_load((Path(__file__).parent / "cases" / "safetext_cases.yaml").read_text(encoding="utf-8"))


def test_case_names_are_unique():
    names = [c["name"] for c in DATA["one_line"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["one_line"]])
def test_one_line(case):
    assert one_line(case["text"], case.get("limit", 300)) == case["line"]


@pytest.mark.parametrize("case", [pytest.param(c, id=repr(c["name"])) for c in DATA["name_problems"]])
def test_name_problems(case):
    assert name_problems(case["name"]) == case["problems"]


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c['a']}|{c['b']}") for c in DATA["confusable"]])
def test_confusable(case):
    assert (skeleton(case["a"]) == skeleton(case["b"])) is case["same"], (
        skeleton(case["a"]),
        skeleton(case["b"]),
        case["why"],
    )


def test_name_too_long():
    assert name_problems("a" * 129) == ["is too long: 129 characters (at most 128)"]
    assert name_problems("a" * 20, max_len=10) == ["is too long: 20 characters (at most 10)"]
    assert name_problems("a" * 128) == []


def test_a_huge_hostile_name_is_judged_quickly():
    # Five megabytes: the length is reported, the characters are scanned only so far.
    huge = "a" * 5_000_000 + "\x1b"
    assert name_problems(huge) == [
        "is too long: 5000001 characters (at most 128)",
        "contains non-printable characters after the first 4096",
    ]
    assert one_line(huge, 10) == "aaaaaaaaaa… (5000001 characters)"
    assert skeleton("Q" * 1_000_000 + "\u200b") == "q" * 1_000_000


def test_skeleton_is_stable_and_ignores_case_and_separators():
    assert skeleton("  Meta-Llama_3  ") == skeleton("meta llama-3") == "meta-iiama-3"
    assert skeleton(skeleton("Ağıllı-Model")) == skeleton("Ağıllı-Model")


def test_look_alike_table_maps_only_letters_of_other_scripts_to_latin():
    from yoxla.safe.text import _LOOK_ALIKE

    for source, target in _LOOK_ALIKE.items():
        assert unicodedata.normalize("NFKC", source) == source, source  # NFKC runs first
        if unicodedata.category(source).startswith("L"):
            assert not source.isascii() and (target.isascii() or target in "Əə"), source
            script = unicodedata.name(source).split()[0]
            assert script in ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "LATIN"), source


# Properties ------------------------------------------------------------------------------

HOSTILE = st.text(
    alphabet=st.one_of(
        st.sampled_from(sorted(BIDI_CONTROLS | ZERO_WIDTH) + list(":#[ \n\r\t\x1b\x85\u2028\\")),
        st.characters(),
    ),
    max_size=80,
)


@settings(max_examples=500, deadline=None)
@given(text=HOSTILE, limit=st.integers(0, 40))
def test_one_line_is_one_safe_printable_line(text, limit):
    line = one_line(text, limit)
    note = f"… ({len(text)} characters)"
    assert len(line) <= limit + len(note)
    assert line.isprintable()  # no control, bidi, zero-width, format or separator character
    assert not any(ch in BIDI_CONTROLS or ch in ZERO_WIDTH or ch in "\n\r\x1b" for ch in line)
    assert not line.lstrip().startswith("::")
    assert "##[" not in line
    if line.endswith(note) and len(line) > len(note):
        assert len(line) - len(note) <= limit
    line.encode("utf-8")  # no lone surrogate left


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_characters="\\"), max_size=40))
def test_one_line_leaves_printable_text_alone(text):
    if text.isprintable() and not text.lstrip().startswith("::") and "##[" not in text:
        assert one_line(text, 1000) == text
