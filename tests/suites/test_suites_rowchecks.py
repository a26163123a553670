"""Row checks as grader hooks (:mod:`yoxla.data.rowchecks`): a built-in grader's rules refuse a
malformed row by its id and the rule, in ``yoxla suite validate``/``check`` and before a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from suite_run_helpers import SuiteRunner
from suites_helpers import task, write_jsonl, write_manifest

from yoxla.cli.main import run as cli_run
from yoxla.contract.loader import load_manifest
from yoxla.data.rowchecks import row_problems
from yoxla.prompt.prepare import prepare_task

CHOICE_ROWS = [
    {"id": "c1", "sual": "Bakı hansı ölkənin paytaxtıdır?", "cavab": "A"},
    {"id": "c2", "sual": "Gəncə harada yerləşir?", "cavab": "E"},  # not among A-D
    {"id": "c3", "sual": "Şəki nə ilə tanınır?", "cavab": "C"},
    {"id": "c4", "sual": "Xəzər nədir?", "cavab": "Ç"},  # not among A-D either
]
CHOICE = {
    "choices": ["A", "B", "C", "D"],
    "output_extraction": {"type": "label_set", "labels": ["A", "B", "C", "D"], "case_sensitive": True},
    "grader": {"type": "builtin", "name": "accuracy"},
}
PASSAGE = "Bakı Azərbaycanın paytaxtıdır. İçərişəhər Bakının qədim hissəsidir."
SPAN_ROWS = [
    {"id": "p1", "mətn": PASSAGE, "sual": "Paytaxt?", "cavab": "Bakı", "başlanğıc": 0},
    {"id": "p2", "mətn": PASSAGE, "sual": "Qədim hissə?", "cavab": "Gəncə", "başlanğıc": 0},
    {"id": "p3", "mətn": PASSAGE, "sual": "Qədim hissə?", "cavab": "İçərişəhər", "başlanğıc": 5},
    {"id": "p4", "mətn": PASSAGE, "sual": "Qədim hissə?", "cavab": "İçərişəhər", "başlanğıc": 31},
]
SPAN = {
    "prompt_template": "{{mətn}}\n{{sual}}",
    "grader": {
        "type": "builtin",
        "name": "span",
        "passage_field": "mətn",
        "answer_start_field": "başlanğıc",
    },
}


def _suite(folder: Path, rows: list[dict[str, Any]], **fields: Any) -> Path:
    write_jsonl(folder / "data.jsonl", rows)
    return write_manifest(folder, [task(**fields)], metadata={"name": "yoxlama"})


def _problems(path: Path) -> list[str]:
    manifest = load_manifest(path)
    return [str(p) for t in manifest.tasks.values() for p in row_problems(prepare_task(t))]


def _cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = cli_run([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("rows", "fields", "expected"),
    [
        (  # a gold outside the answer space: each bad item named, and only those
            CHOICE_ROWS,
            CHOICE,
            [
                "task t1: item c2: gold 'E' is not in the answer space (A, B, C, D) [accuracy]",
                "task t1: item c4: gold 'Ç' is not in the answer space (A, B, C, D) [accuracy]",
            ],
        ),
        (  # a span must be in its passage, where answer_start points
            SPAN_ROWS,
            SPAN,
            [
                "task t1: item p2: gold span 'Gəncə' is not found in 'mətn' [span]",
                "task t1: item p3: başlanğıc 5 does not point at the gold span 'İçərişəhər' in 'mətn' [span]",
            ],
        ),
    ],
    ids=["choice", "span"],
)
def test_bad_rows_are_named_by_item_and_rule(tmp_path: Path, rows, fields, expected) -> None:
    assert _problems(_suite(tmp_path, rows, **fields)) == expected


def test_a_case_blind_label_set_accepts_another_casing_but_not_a_folded_letter(tmp_path: Path) -> None:
    rows = [
        {"id": "l1", "sual": "?", "cavab": "bəli"},
        {"id": "l2", "sual": "?", "cavab": "BƏLİ"},
        {"id": "l3", "sual": "?", "cavab": "beli"},  # ə folded to e: another word
    ]
    labels = {"type": "label_set", "labels": ["bəli", "xeyr"], "case_sensitive": False}
    got = _problems(
        _suite(
            tmp_path,
            rows,
            output_extraction=labels,
            grader={"type": "builtin", "name": "exact_match", "case_sensitive": False},
        )
    )  # a case-sensitive exact_match could never score BƏLİ (tests/suites/test_suites_hostile_features.py)
    assert got == ["task t1: item l3: gold 'beli' is not in the answer space (bəli, xeyr) [exact_match]"]


def test_a_row_dependent_space_checks_each_item_against_its_own_options(tmp_path: Path) -> None:
    rows = [
        {"id": "r1", "sual": "?", "variantlar": ["Bakı", "Gəncə", "Şəki"], "cavab": "3"},
        {"id": "r2", "sual": "?", "variantlar": ["Bakı", "Gəncə"], "cavab": "3"},  # only two options
        {"id": "r3", "sual": "?", "variantlar": ["Bakı"], "cavab": "HEÇ BİRİ"},
    ]
    space = {"options_field": "variantlar", "labels": [{"value": "HEÇ BİRİ"}]}
    got = _problems(
        _suite(
            tmp_path,
            rows,
            answer_space=space,
            output_extraction={"type": "strict"},
            grader={"type": "builtin", "name": "accuracy"},
        )
    )
    assert got == ["task t1: item r2: gold '3' is not in the answer space (1, 2, HEÇ BİRİ) [accuracy]"]


def test_an_open_exact_match_task_has_no_space_to_check(tmp_path: Path) -> None:
    rows = [{"id": "o1", "sual": "?", "cavab": "nə olursa olsun"}]
    assert _problems(_suite(tmp_path, rows, grader={"type": "builtin", "name": "exact_match"})) == []


def test_an_unanswerable_abstention_item_has_nothing_to_locate(tmp_path: Path) -> None:
    rows = [
        {"id": "a1", "mətn": PASSAGE, "sual": "?", "cavab": ""},
        {"id": "a2", "mətn": PASSAGE, "sual": "?", "cavab": "Lənkəran"},
        {"id": "a3", "sual": "?", "cavab": "Bakı"},  # no passage at all
    ]
    grader = {"type": "builtin", "name": "abstention", "passage_field": "mətn"}
    strict = {"type": "strict", "mode": "text_or_abstain", "abstain": "CAVAB YOXDUR"}
    got = _problems(
        _suite(tmp_path, rows, prompt_template="{{sual}}", output_extraction=strict, grader=grader)
    )
    assert got == [
        "task t1: item a2: gold span 'Lənkəran' is not found in 'mətn' [abstention]",
        "task t1: item a3: the row has no text in 'mətn' (the passage the abstention grader reads)",
    ]


def test_a_numeric_gold_must_be_a_number_inside_the_strict_range(tmp_path: Path) -> None:
    rows = [
        {"id": "n1", "sual": "?", "cavab": "3,5"},
        {"id": "n2", "sual": "?", "cavab": "7"},
        {"id": "n3", "sual": "?", "cavab": "beş"},
    ]
    got = _problems(
        _suite(
            tmp_path,
            rows,
            output_extraction={"type": "strict", "mode": "numeric", "range": [0, 5]},
            grader={"type": "builtin", "name": "spearman"},
        )
    )
    assert got == [
        "task t1: item n2: gold 7 is outside the range 0–5 [spearman]",
        "task t1: item n3: gold 'beş' is not a number [spearman]",
    ]


@pytest.mark.parametrize("command", ["validate", "check"])
def test_validate_and_check_refuse_one_bad_row_in_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    rows = [r for r in CHOICE_ROWS if r["id"] != "c4"]
    path = _suite(tmp_path, rows, **CHOICE)
    code, out, err = _cli(capsys, "suite", command, path, *(["--write"] if command == "check" else []))
    assert code == 2, out + err
    assert err.strip().splitlines() == [
        "yoxla: error: task t1: item c2: gold 'E' is not in the answer space (A, B, C, D) [accuracy]"
    ]
    assert "Traceback" not in err and not path.with_name("suite.hashes.json").exists()


def test_several_bad_rows_are_listed_one_line_each_then_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(capsys, "suite", "validate", _suite(tmp_path, CHOICE_ROWS, **CHOICE))
    lines = err.strip().splitlines()
    assert code == 2
    assert lines[0].startswith("error: task t1: item c2: gold 'E'")
    assert lines[1].startswith("error: task t1: item c4: gold 'Ç'")
    assert lines[2] == "yoxla: error: 2 row(s) of task(s) t1 break their graders' rules"


def test_a_suite_run_with_a_bad_row_stops_before_any_model_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _suite(tmp_path, SPAN_ROWS, **SPAN)
    runner = SuiteRunner(tmp_path, capsys, monkeypatch)
    rc, _, err = runner("run", "--suite", str(path), "--provider", "suite-baseline", "--model", "first")
    assert rc == 2, err
    assert err.strip().splitlines()[-1] == (
        "yoxla: error: task t1: item p2: gold span 'Gəncə' is not found in 'mətn' [span]; "
        "task t1: item p3: başlanğıc 5 does not point at the gold span 'İçərişəhər' in 'mətn' [span]; "
        "no model was asked"
    )
    assert not runner.runs.exists() or not any(runner.runs.iterdir())


def test_the_strict_span_check_wants_the_gold_exactly_once_as_written(tmp_path: Path) -> None:
    """The hook's stricter form (yoxla validate-benchmark): scoring finds a gold in another casing
    or twice; the frozen benchmark's rows need it once, as written."""
    from yoxla.data.rowchecks import declared_checks, first_problem, span_locatable, span_located_once

    twice = PASSAGE + " İçərişəhər gözəldir."
    rows = [
        {"id": "s1", "mətn": PASSAGE, "sual": "?", "cavab": "İçərişəhər", "başlanğıc": 31},
        {"id": "s2", "mətn": twice, "sual": "?", "cavab": "İçərişəhər", "başlanğıc": 31},
        {"id": "s3", "mətn": PASSAGE, "sual": "?", "cavab": "içərişəhər"},  # another casing
    ]
    manifest = load_manifest(_suite(tmp_path, rows, **SPAN))
    prepared = prepare_task(next(iter(manifest.tasks.values())))
    assert row_problems(prepared) == []  # scoring locates each of them
    graders = prepared.task.graders
    assert [c for _, c in declared_checks(graders)] == [span_locatable]
    strict = declared_checks(graders, strict=True)
    assert [c for _, c in strict] == [span_located_once]
    got = {
        item.id: found[1]
        if (found := first_problem(strict, prepared.task.spec, item.row, item.target, ()))
        else None
        for item in prepared.items
    }
    assert got == {
        "s1": None,
        "s2": "gold span 'İçərişəhər' must occur exactly once in 'mətn' (NFC, collapsed white space); found 2 times [span]",
        "s3": "gold span 'içərişəhər' must occur exactly once in 'mətn' (NFC, collapsed white space); not found [span]",
    }
