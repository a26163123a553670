"""Analysis declarations: the committed files parse and fit their rows; bad files are refused."""

from __future__ import annotations

import copy

import pytest

from yoxla.declarations import (
    DEFAULT_GATE_STRATEGIES,
    DeclarationError,
    TaskDeclarations,
    check_declarations,
    load_declarations,
    parse_declarations,
)
from yoxla.editions import load_edition, load_rows

GOOD = {
    "edition": "sample",
    "ranking": ["accuracy", "mean_gold_p"],
    "gate": {"margin": 10, "strategies": ["overlap"]},
    "tasks": {
        "minimal_pairs_v1": {"groups": {"field": "phenomenon"}, "note": "for the test only"},
        "nli_v1": {
            "groups": {"ids": {"g1": ["nli-s-01", "nli-s-02"]}},
            "controls": {"ids": ["nli-s-03"]},
            "gate": {"threshold": 60, "reason": "a test reason"},
        },
        "rag_selection_v1": {"controls": {"field": "item_type", "values": ["none_of_them"]}},
    },
}


@pytest.mark.parametrize("edition", ["sample", "v1"])
def test_committed_declarations_parse(edition):
    decl = load_declarations(edition)
    assert decl.edition == edition
    assert decl.ranking[0] == "yoxla"  # the board's headline score first, then the tie-breakers
    assert decl.gate_margin == 15.0 and "random" not in decl.gate_strategies
    # A threshold override always carries its reason.
    assert all(td.gate_reason for td in decl.tasks.values() if td.gate_threshold is not None)


def test_committed_sample_declarations_fit_the_rows():
    edition = load_edition("sample")
    rows = {tid: load_rows(edition, tid) for tid in edition.task_ids}
    assert check_declarations(load_declarations("sample"), rows) == []


def test_a_full_declaration_reads_and_applies_to_rows():
    decl = parse_declarations(GOOD)
    assert decl.ranking == ("accuracy", "mean_gold_p") and decl.gate_strategies == ("overlap",)
    nli = decl.task("nli_v1")
    assert nli.group_of({"id": "nli-s-02"}) == "g1" and nli.group_of({"id": "nli-s-09"}) is None
    assert nli.is_control({"id": "nli-s-03"}) and not nli.is_control({"id": "nli-s-01"})
    assert (nli.gate_threshold, nli.gate_reason) == (60.0, "a test reason")
    sel = decl.task("rag_selection_v1")
    assert sel.is_control({"id": "x", "item_type": "none_of_them"}) and not sel.is_control(
        {"item_type": "answerable"}
    )
    mp = decl.task("minimal_pairs_v1")
    assert (
        mp.group_of({"phenomenon": "vowel_harmony"}) == "vowel_harmony"
        and mp.group_of({"phenomenon": None}) is None
    )
    assert decl.task("sts_v1") == TaskDeclarations()  # undeclared: no groups, no controls, default gate
    edition = load_edition("sample")
    rows = {tid: load_rows(edition, tid) for tid in edition.task_ids}
    assert check_declarations(decl, rows) == []


def _with(path: str, value):
    data = copy.deepcopy(GOOD)
    *head, last = path.split(".")
    target = data
    for key in head:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    "data, message",
    [
        (_with("tasks.nli_v1.gate", {"threshold": 60}), "missing key.*reason"),
        (_with("tasks.nli_v1.gate", {"threshold": 60, "reason": " "}), "non-empty text"),
        (_with("tasks.nli_v1.gate", {"threshold": 160, "reason": "r"}), r"\[0, 100\]"),
        (_with("tasks.nli_v1.group", {"field": "x"}), "unknown key"),
        (_with("tasks.nli_v1.groups", {"field": "x", "ids": {"g": ["a"]}}), "exactly one"),
        (_with("tasks.nli_v1.groups", {"ids": {"g": ["a"], "h": ["a"]}}), "two groups"),
        (_with("tasks.nli_v1.controls", {"ids": ["a", "a"]}), "twice"),
        (_with("tasks.nli_v1.controls", {"field": "x"}), "missing key.*values"),
        (_with("ranking", ["accuracy", "speed"]), "unknown ranking metric"),
        (_with("gate", {"strategies": ["oracle"]}), "gate.strategies"),
        (_with("gate", {"margin": "15"}), "expected a number"),
        (_with("edition", KeyError), "missing key.*edition"),
        ({**GOOD, "extra": 1}, "unknown key"),
    ],
)
def test_bad_declarations_are_refused(data, message):
    with pytest.raises(DeclarationError, match=message):
        parse_declarations(data)


def test_declarations_that_do_not_fit_the_rows_are_reported():
    data = _with("tasks.nli_v1.controls", {"ids": ["nli-s-99"]})
    data["tasks"]["sentiment_v1"] = {"groups": {"field": "source_id"}}  # unique per row: no real group
    data["tasks"]["intent_v1"] = {"groups": {"field": "no_such_column"}}
    data["tasks"]["nli_v9"] = {}
    edition = load_edition("sample")
    rows = {tid: load_rows(edition, tid) for tid in edition.task_ids}
    problems = "\n".join(check_declarations(parse_declarations(data), rows))
    assert "nli-s-99" in problems
    assert "sentiment_v1: the declared groups have no group of two or more rows" in problems
    assert "no_such_column" in problems
    assert "nli_v9: declared but not a task" in problems


def test_default_gate_leaves_out_only_random():
    from yoxla.suites.baselines import STRATEGIES

    assert set(STRATEGIES) - set(DEFAULT_GATE_STRATEGIES) == {"random"}
