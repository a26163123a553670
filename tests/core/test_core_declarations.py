"""Analysis declarations: the package suites' analysis sections read as the board's declarations
and fit their rows; declarations made in code are parsed, bad ones refused."""

from __future__ import annotations

import copy

import pytest

from yoxla.declarations import (
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
    "tasks": {
        "minimal_pairs_v1": {"groups": {"field": "phenomenon"}, "note": "for the test only"},
        "nli_v1": {
            "groups": {"ids": {"g1": ["nli-s-01", "nli-s-02"]}},
            "controls": {"ids": ["nli-s-03"]},
        },
        "rag_selection_v1": {"controls": {"field": "item_type", "values": ["none_of_them"]}},
    },
}


@pytest.mark.parametrize("edition", ["sample", "v1"])
def test_committed_declarations_are_the_package_suites_analysis(edition):
    decl = load_declarations(edition)
    assert decl.edition == edition
    # the board's headline score first, then the tie-breakers (the analysis section's ranking)
    assert decl.ranking == ("yoxla", "group_consistency", "high_confidence_error_rate", "mean_gold_p")
    assert decl.tasks == {}  # neither edition declares groups or controls yet
    assert decl.about.startswith(
        f"Analysis declarations of the {'sample' if edition == 'sample' else 'published v1'}"
    )


def test_groups_and_controls_by_field_are_read_from_the_analysis_section(monkeypatch, tmp_path):
    import shutil

    import yaml

    from yoxla.suites.registry import manifest_path

    src = manifest_path("sample")
    folder = tmp_path / "editions"
    shutil.copytree(src.parent, folder)
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    doc["analysis"]["tasks"]["minimal_pairs_v1"]["group_field"] = "phenomenon"
    doc["analysis"]["tasks"]["rag_selection_v1"].update(
        control_field="item_type", control_values=["none_of_them"]
    )
    (folder / src.name).write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr("yoxla.suites.registry.manifest_path", lambda edition: folder / src.name)
    load_declarations.cache_clear()
    try:
        decl = load_declarations("sample")
    finally:
        load_declarations.cache_clear()
    assert set(decl.tasks) == {"minimal_pairs_v1", "rag_selection_v1"}
    assert decl.task("minimal_pairs_v1").group_of({"phenomenon": "vowel_harmony"}) == "vowel_harmony"
    sel = decl.task("rag_selection_v1")
    assert sel.is_control({"item_type": "none_of_them"}) and not sel.is_control({"item_type": "answerable"})


def test_committed_sample_declarations_fit_the_rows():
    edition = load_edition("sample")
    rows = {tid: load_rows(edition, tid) for tid in edition.task_ids}
    assert check_declarations(load_declarations("sample"), rows) == []


def test_a_full_declaration_reads_and_applies_to_rows():
    decl = parse_declarations(GOOD)
    assert decl.ranking == ("accuracy", "mean_gold_p")
    nli = decl.task("nli_v1")
    assert nli.group_of({"id": "nli-s-02"}) == "g1" and nli.group_of({"id": "nli-s-09"}) is None
    assert nli.is_control({"id": "nli-s-03"}) and not nli.is_control({"id": "nli-s-01"})
    sel = decl.task("rag_selection_v1")
    assert sel.is_control({"id": "x", "item_type": "none_of_them"}) and not sel.is_control(
        {"item_type": "answerable"}
    )
    mp = decl.task("minimal_pairs_v1")
    assert (
        mp.group_of({"phenomenon": "vowel_harmony"}) == "vowel_harmony"
        and mp.group_of({"phenomenon": None}) is None
    )
    assert decl.task("sts_v1") == TaskDeclarations()  # undeclared: no groups, no controls
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
        (_with("tasks.nli_v1.group", {"field": "x"}), "unknown key"),
        (
            _with("tasks.nli_v1.gate", {"threshold": 60, "reason": "r"}),
            "unknown key.*gate",
        ),  # the gate: yoxla.gate
        (_with("gate", {"margin": 15}), "unknown key.*gate"),
        (_with("tasks.nli_v1.groups", {"field": "x", "ids": {"g": ["a"]}}), "exactly one"),
        (_with("tasks.nli_v1.groups", {"ids": {"g": ["a"], "h": ["a"]}}), "two groups"),
        (_with("tasks.nli_v1.controls", {"ids": ["a", "a"]}), "twice"),
        (_with("tasks.nli_v1.controls", {"field": "x"}), "missing key.*values"),
        (_with("ranking", ["accuracy", "speed"]), "unknown ranking metric"),
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
