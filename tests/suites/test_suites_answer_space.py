"""YOXLA's row-dependent answer space, numbered lists in templates, and STS per-example scores.

Rows hold a list of options (``variantlar``) of different lengths; the task answers by the
option's number or ``HEÇ BİRİ``. Each item has its own space: ``3`` is valid where a row has
three options and invalid where it has two.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from suites_helpers import task, write_jsonl

from yoxla.contract.errors import ManifestError
from yoxla.prompt.prepare import prepare_task
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput

OPTIONS_ROWS = [
    {"id": "v1", "sual": "Paytaxt?", "variantlar": ["Gəncə", "Bakı", "Şəki"], "cavab": "2"},
    {"id": "v2", "sual": "Dəniz?", "variantlar": ["Xəzər", "Qara"], "cavab": "1"},
    {"id": "v3", "sual": "Ən uzun çay?", "variantlar": ["Araz", "Tərtər"], "cavab": "HEÇ BİRİ"},
]
SPACE = {
    "options_field": "variantlar",
    "options_description": "doğru variantın nömrəsi",
    "labels": [{"value": "HEÇ BİRİ", "description": "heç bir variant doğru deyil"}],
}


def space_task(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "secim_v1",
        "prompt_template": "Sual: {{sual}}\n{{variantlar | numbered}}\nSeçimlər: {{choices}}\n{{answer_space}}",
        "answer_space": SPACE,
        "output_extraction": {"type": "strict"},
        "metrics": [{"id": "accuracy"}],
        "grader": [{"type": "builtin", "name": "accuracy"}, {"type": "builtin", "name": "macro_f1"}],
    }
    return task(**(base | fields))


@pytest.fixture
def space_folder(folder: Path) -> Path:
    write_jsonl(folder / "data.jsonl", OPTIONS_ROWS)
    return folder


def _score(prepared: Any, answers: list[str | None]) -> Any:
    return score_suite_task(prepared, [SampleOutput.from_raw(a) for a in answers])


def test_each_item_renders_and_reads_its_own_space(space_folder, load) -> None:
    prepared = prepare_task(load(space_task()).task("secim_v1"))
    first, second, _ = prepared.items
    assert first.choices == ("1", "2", "3", "HEÇ BİRİ") and second.choices == ("1", "2", "HEÇ BİRİ")
    assert first.messages[-1]["content"] == (
        "Sual: Paytaxt?\n1. Gəncə\n2. Bakı\n3. Şəki\n"
        'Seçimlər: ["1", "2", "3", "HEÇ BİRİ"]\n'
        "- doğru variantın nömrəsi\n- HEÇ BİRİ: heç bir variant doğru deyil"
    )
    got = _score(prepared, ["3", "3", "heç biri"])
    assert [r.valid for r in got.results] == [True, False, True]  # 3 is outside v2's space
    assert [r.outcome for r in got.results] == ["wrong", "invalid", "correct"]
    assert got.results[2].extracted == "HEÇ BİRİ"
    # Azerbaijani casing: dotless I is not İ, so HEÇ BIRI is not the label.
    assert not _score(prepared, ["2", "1", "HEÇ BIRI"]).results[2].valid
    assert _score(prepared, ["2", "1", "HEÇ BİRİ"]).metrics["accuracy"] == 1.0
    assert _score(prepared, ["2) Bakı", "**1**", ""]).results[0].near_miss == "option_with_text"


def test_graders_see_the_items_own_choices(space_folder, load, pool) -> None:
    (space_folder / "grader.py").write_text(
        "def grade(sample, item):\n    return float(len(item['choices']))\n", encoding="utf-8"
    )
    doc = space_task()
    doc.update(
        metrics=[{"id": "n_choices"}],
        grader={"type": "python", "path": "grader.py", "metric_id": "n_choices"},
    )
    prepared = prepare_task(load(doc).task("secim_v1"), pool)
    got = score_suite_task(prepared, [SampleOutput.from_raw("1")] * 3, pool=pool)
    assert [r.scores["n_choices"] for r in got.results] == [4.0, 3.0, 3.0]


def test_labels_only_space_is_the_tasks_choices(space_folder, load) -> None:
    doc = space_task(prompt_template="{{sual}}\n{{choice_list}}\n{{answer_space}}")
    doc["answer_space"] = {"labels": [{"value": "bəli", "description": "doğrudur"}, {"value": "xeyr"}]}
    prepared = prepare_task(load(doc).task("secim_v1"))
    assert prepared.items[0].choices is None
    assert prepared.items[0].messages[-1]["content"] == "Paytaxt?\nbəli\nxeyr\n- bəli: doğrudur\n- xeyr"
    assert _score(prepared, ["Bəli", "XEYR", "bəlkə"]).results[0].extracted == "bəli"


def test_numbered_renders_lists_only_and_plain_templates_are_unchanged(space_folder, load) -> None:
    doc = task(prompt_template="{{ sual | numbered }}|{{variantlar}}|{{answer_space}}")
    item = prepare_task(load(doc).task("t1")).items[0]
    # Not a list: as {{sual}}; a plain MKA1 task keeps lists as JSON and has no answer_space field.
    assert item.messages[-1]["content"] == 'Paytaxt?|["Gəncə", "Bakı", "Şəki"]|'
    assert item.choices is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"choices": ["1", "2"]}, "give either choices or answer_space, not both"),
        (
            {"output_extraction": {"type": "none"}},
            "answer_space needs output_extraction strict in choice mode",
        ),
        (
            {"answer_space": {**SPACE, "labels": [{"value": "4"}]}},
            "label '4' would be read as an option number",
        ),
        (
            {"answer_space": {"options_description": "x"}},
            "an answer space needs options_field, labels, or both",
        ),
        ({"answer_space": {"labels": [{"value": "a"}, {"value": "a"}]}}, "labels repeat"),
        ({"answer_space": {"labels": [{"value": " "}]}}, "a label is blank"),
        ({"answer_space": {"options_field": "bad field!"}}, "answer_space.options_field"),
        ({"prompt_template": "{{variantlar | upper}}"}, "is not a field reference"),
    ],
)
def test_a_bad_answer_space_is_refused_in_one_line(space_folder, load, fields, message) -> None:
    with pytest.raises(ManifestError) as err:
        load(space_task(**fields))
    assert message in str(err.value) and "\n" not in str(err.value)


# STS ---------------------------------------------------------------------------------------------

STS_ROWS = [
    {"id": "q1", "c1": "Bakı böyükdür.", "c2": "Bakı iri şəhərdir.", "bal": 4.5},
    {"id": "q2", "c1": "Hava soyuqdur.", "c2": "Pişik yatır.", "bal": 0.0},
    {"id": "q3", "c1": "Çay içdim.", "c2": "Çay içmişəm.", "bal": 5},
    {"id": "q4", "c1": "Yağış yağır.", "c2": "Göy guruldayır.", "bal": 2.2},
]


def sts_task(**grader: Any) -> dict[str, Any]:
    return task(
        id="sts_x",
        prompt_template="{{c1}} / {{c2}}",
        target_template="{{bal}}",
        output_extraction={"type": "strict", "mode": "numeric", "range": [0, 5]},
        metrics=[{"id": "spearman"}],
        grader={"type": "builtin", "name": "spearman", **grader},
    )


def test_sts_closeness_gives_per_example_scores_and_verdicts(folder, load) -> None:
    write_jsonl(folder / "data.jsonl", STS_ROWS)
    prepared = prepare_task(load(sts_task(closeness=True, correct_within=1.0)).task("sts_x"))
    got = _score(prepared, ["3.5", "1,5", "yox", "2.2"])
    # |error| 1.0, 1.5, 2.5 (invalid: the midpoint 2.5), 0.0 over the range 5.
    assert [r.score for r in got.results] == pytest.approx([0.8, 0.7, 0.5, 1.0])
    assert [r.outcome for r in got.results] == ["correct", "wrong", "invalid", "correct"]
    assert got.results[1].scores["abs_error"] == pytest.approx(1.5)
    assert got.metrics["closeness"] == pytest.approx(0.75)
    plain = _score(prepare_task(load(sts_task()).task("sts_x")), ["3.5", "1,5", "yox", "2.2"])
    assert plain.metrics["spearman"] == pytest.approx(got.metrics["spearman"])
    assert [r.score for r in plain.results] == [None] * 4  # without closeness: no per-example score
    assert [r.outcome for r in plain.results] == ["graded", "graded", "invalid", "graded"]


@pytest.mark.parametrize(
    ("grader", "extraction", "message"),
    [
        ({"closeness": True}, {"type": "number"}, "closeness needs output_extraction strict"),
        ({"closeness": False}, None, "closeness is true or absent"),
        ({"correct_within": -1}, None, "greater than or equal to 0"),
    ],
)
def test_sts_options_are_checked(folder, load, grader, extraction, message) -> None:
    doc = sts_task(**grader)
    if extraction is not None:
        doc["output_extraction"] = extraction
    with pytest.raises(ManifestError) as err:
        load(doc)
    assert message in str(err.value)


def test_closeness_applies_only_to_spearman(folder, load) -> None:
    with pytest.raises(ManifestError, match="option closeness does not apply to the accuracy grader"):
        load(task(grader={"type": "builtin", "name": "accuracy", "closeness": True}))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("Gəncə, Bakı", "row 2 (id 'v2'): answer_space.options_field 'variantlar' is a str, not a list"),
        (None, "row 2 (id 'v2'): answer_space.options_field 'variantlar' is missing"),
        ([str(i) for i in range(1001)], "has 1001 options (at most 1000)"),
    ],
)
def test_a_row_without_a_usable_option_list_is_named(folder, load, options, message) -> None:
    from yoxla.contract.errors import DatasetError

    rows = [dict(r) for r in OPTIONS_ROWS]
    rows[1]["variantlar"] = options
    write_jsonl(folder / "data.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        prepare_task(load(space_task()).task("secim_v1"))
    assert message in str(err.value) and "\n" not in str(err.value)
