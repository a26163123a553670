"""The one row validator on benchmark rows: small valid rows built here, then one rule broken at a time."""

from __future__ import annotations

import copy

import pytest
from suites_helpers import task

from yoxla.contract.benchmark import benchmark_task, task_ids
from yoxla.data.editions import ManifestEntry, fingerprint
from yoxla.data.validate import declared_columns, known_task, read_columns, required_columns, validate_rows

# The columns the old contract record (yoxla/suite/yoxla.yaml) required of each task's rows:
# the package suite's task must require the same ones.
OLD_COLUMNS = {
    "extractive_qa_v1": (
        "id", "context", "question", "answer", "title", "answer_start", "answer_type", "context_bucket", "source_id",
    ),
    "qa_abstention_v1": (
        "id", "context", "question", "answer", "title", "is_answerable", "expected_answer_type",
        "context_bucket", "source_id",
    ),
    "nli_v1": ("id", "premise", "hypothesis", "label", "length_bucket", "source_id"),
    "sts_v1": ("id", "sentence1", "sentence2", "score", "scaled_score", "score_band", "length_bucket", "source_id"),
    "sentiment_v1": ("id", "text", "label", "length_bucket", "source_id"),
    "intent_v1": ("id", "text", "label", "category", "length_bucket", "source_id"),
    "minimal_pairs_v1": (
        "id", "sentence_a", "sentence_b", "label", "phenomenon", "target_correct", "target_corrupted", "domain",
        "difficulty", "source_id",
    ),
    "az_tr_interference_v1": (
        "id", "sentence_a", "sentence_b", "label", "interference_type", "azerbaijani_word", "turkish_word",
        "az_count", "tr_count",
    ),
    "knowledge_choice_v1": (
        "id", "question", "candidates", "answer_index", "answer", "category", "probe", "value_kind", "subject",
        "subject_qid", "sitelinks", "source_id",
    ),
    "rag_verification_v1": ("id", "context", "claim", "label", "claim_type", "subject", "subject_qid", "source_id"),
    "rag_selection_v1": (
        "id", "question", "passages", "label", "item_type", "answer", "subject", "subject_qid", "category", "probe",
    ),
}  # fmt: skip


def nli_rows() -> list[dict]:
    base = {"premise": "Uşaqlar parkda top oynayır.", "length_bucket": "short", "source_id": "src"}
    return [
        {**base, "id": "nli-1", "hypothesis": "Uşaqlar çöldədir.", "label": "entailment"},
        {**base, "id": "nli-2", "hypothesis": "Uşaqlar məktəbdən qayıdıb.", "label": "neutral"},
        {**base, "id": "nli-3", "hypothesis": "Uşaqlar evdə yatır.", "label": "contradiction"},
    ]


def sts_rows() -> list[dict]:
    base = {"score_band": "mid", "length_bucket": "short", "source_id": "src"}
    return [
        {
            **base,
            "id": "sts-1",
            "sentence1": "Hava istidir.",
            "sentence2": "Bu gün isti olacaq.",
            "score": 3.5,
            "scaled_score": 0.7,
        },
        {
            **base,
            "id": "sts-2",
            "sentence1": "Pişik yatır.",
            "sentence2": "Qatar gecikdi.",
            "score": 0.0,
            "scaled_score": 0.0,
        },
    ]


CONTEXT = "Bakı metropoliteni 1967-ci ildə istifadəyə verilib. Hazırda metroda üç xətt var."
WHEN = "Metro nə vaxt açılıb?"
PASSAGE = {"context": CONTEXT, "title": "Bakı metropoliteni", "context_bucket": "short", "source_id": "src"}


def qa_rows() -> list[dict]:
    base, lines = {**PASSAGE, "answer_type": "date"}, CONTEXT.index("üç")
    return [
        {**base, "id": "qa-1", "question": WHEN, "answer": "1967-ci ildə", "answer_start": 19},
        {
            **base,
            "id": "qa-2",
            "question": "Metroda neçə xətt var?",
            "answer": "üç xətt",
            "answer_start": lines,
        },
    ]


def abstention_rows() -> list[dict]:
    base = {**PASSAGE, "expected_answer_type": "date"}
    return [
        {**base, "id": "ab-1", "question": WHEN, "answer": "1967-ci ildə", "is_answerable": True},
        {**base, "id": "ab-2", "question": "Metronun memarı kimdir?", "answer": None, "is_answerable": False},
    ]


def knowledge_rows() -> list[dict]:
    base = {
        "answer": "1873",
        "category": "tarix",
        "probe": "il",
        "value_kind": "year",
        "subject": "teatr",
        "subject_qid": "Q1",
        "sitelinks": [1] * 20,
        "source_id": "src",
    }
    return [
        {
            **base,
            "id": "kn-1",
            "question": "İlk tamaşa hansı ildə olub?",
            "candidates": [str(1857 + i) for i in range(20)],
            "answer_index": 17,
        },
    ]


ROWS = {
    "nli_v1": nli_rows,
    "sts_v1": sts_rows,
    "extractive_qa_v1": qa_rows,
    "qa_abstention_v1": abstention_rows,
    "knowledge_choice_v1": knowledge_rows,
}


def _validate(task_id: str, rows: list[dict], n: int | None = None, fp: str | None = None):
    entry = ManifestEntry(task_id, len(rows) if n is None else n, fp or fingerprint(rows))
    return validate_rows(known_task(task_id), rows, entry)


def _only_error(report, rule: str, row: str | None):
    assert [p.rule for p in report.errors] == [rule], [str(p) for p in report.errors]
    problem = report.errors[0]
    assert problem.row == row
    text = str(problem)
    assert f"[{rule}]" in text
    if row is not None:
        assert f"row {row}" in text
    assert not report.ok
    return problem


def test_every_task_requires_the_columns_the_old_contract_record_did():
    assert sorted(task_ids()) == sorted(OLD_COLUMNS)
    for task_id, old in OLD_COLUMNS.items():
        assert sorted(required_columns(benchmark_task(task_id))) == sorted(old), task_id
        assert len(required_columns(benchmark_task(task_id))) == len(old), task_id


def test_read_columns_come_from_the_package_suite_task():
    """Templates, target, options, passage, answer start and breakdowns: what the task reads."""
    assert read_columns(benchmark_task("extractive_qa_v1")) == (
        "id", "context", "question", "answer", "answer_start", "answer_type", "context_bucket",
    )  # fmt: skip
    assert "answer_start" not in read_columns(
        benchmark_task("qa_abstention_v1")
    )  # unanswerable items have no start
    assert read_columns(benchmark_task("knowledge_choice_v1")) == (
        "id", "question", "candidates", "answer_index", "category", "probe", "value_kind",
    )  # fmt: skip
    assert read_columns(benchmark_task("sts_v1")) == (
        "id",
        "sentence1",
        "sentence2",
        "score",
        "score_band",
        "length_bucket",
    )
    for task_id in OLD_COLUMNS:
        task = benchmark_task(task_id)
        assert declared_columns(task), task_id  # the package suite declares them
        assert not set(read_columns(task)) & set(declared_columns(task)), task_id


@pytest.mark.parametrize("task_id", sorted(ROWS))
def test_valid_rows_have_no_problem(task_id):
    report = _validate(task_id, ROWS[task_id]())
    assert report.errors == [] and report.ok
    assert report.fingerprint_ok


def test_valid_nli_rows_have_no_warning_either():
    assert _validate("nli_v1", nli_rows()).warnings == []


def test_wrong_row_count():
    report = _validate("nli_v1", nli_rows(), n=100)
    problem = _only_error(report, "row_count", None)
    assert "100" in problem.message and "3" in problem.message


def test_missing_column():
    rows = nli_rows()
    for r in rows:
        del r["hypothesis"]
    problem = _only_error(_validate("nli_v1", rows), "columns", None)
    assert "hypothesis" in problem.message


def test_missing_metadata_column():
    rows = knowledge_rows()
    for r in rows:
        del r["sitelinks"]
    assert "sitelinks" in _only_error(_validate("knowledge_choice_v1", rows), "columns", None).message


def test_duplicate_id():
    rows = nli_rows()
    rows[2]["id"] = "nli-1"
    problem = _only_error(_validate("nli_v1", rows), "duplicate_id", "nli-1")
    assert "2" in problem.message


@pytest.mark.parametrize(
    ("task_id", "row_index", "gold_field", "gold"),
    [
        ("nli_v1", 1, "label", "neytral"),
        ("nli_v1", 1, "label", "Neutral"),  # the gold must be the label as written
        ("nli_v1", 1, "label", None),
        ("sts_v1", 0, "score", 5.5),
        ("sts_v1", 0, "score", "yüksək"),
        ("knowledge_choice_v1", 0, "answer_index", 21),
        ("knowledge_choice_v1", 0, "answer_index", 0),
        ("extractive_qa_v1", 0, "answer", None),  # no abstention in this task
    ],
)
def test_gold_outside_answer_space(task_id, row_index, gold_field, gold):
    rows = ROWS[task_id]()
    rows[row_index][gold_field] = gold
    rid = rows[row_index]["id"]
    _only_error(_validate(task_id, rows), "gold_in_answer_space", rid)


def test_span_gold_not_found():
    rows = qa_rows()
    rows[1]["answer"] = "dörd xətt"
    rows[1]["answer_start"] = None
    assert "not found" in _only_error(_validate("extractive_qa_v1", rows), "gold_span", "qa-2").message


def test_span_gold_found_twice():
    rows = qa_rows()
    for r in rows:
        r["context"] = CONTEXT + " Hər xətt üç xətt qədər uzun deyil."
    assert "2 times" in _only_error(_validate("extractive_qa_v1", rows), "gold_span", "qa-2").message


def test_span_answer_start_inconsistent():
    rows = qa_rows()
    rows[0]["answer_start"] = 0
    assert "answer_start" in _only_error(_validate("extractive_qa_v1", rows), "gold_span", "qa-1").message


def test_span_gold_in_abstention_task_checked_too():
    rows = abstention_rows()
    rows[0]["answer"] = "1968-ci ildə"
    _only_error(_validate("qa_abstention_v1", rows), "gold_span", "ab-1")


@pytest.mark.parametrize(("index", "is_answerable"), [(0, False), (1, True)])
def test_is_answerable_disagrees_with_null_answer(index, is_answerable):
    rows = abstention_rows()
    rows[index]["is_answerable"] = is_answerable
    _only_error(_validate("qa_abstention_v1", rows), "abstention_gold", rows[index]["id"])


def test_row_that_does_not_render_a_prompt():
    rows = nli_rows()
    rows[1]["premise"] = None  # the column is there, but a null cannot fill {premise}
    problem = _only_error(_validate("nli_v1", rows), "prompt", "nli-2")
    assert "premise" in problem.message


def test_fingerprint_difference_is_a_warning_not_an_error():
    rows = nli_rows()
    report = _validate("nli_v1", rows, fp="sha256:" + "0" * 64)
    assert report.ok and report.errors == []
    assert not report.fingerprint_ok
    assert [p.rule for p in report.warnings] == ["fingerprint"]
    assert fingerprint(rows) in report.warnings[0].message


def test_one_edited_letter_changes_the_fingerprint_warning():
    rows = nli_rows()
    published = fingerprint(rows)
    edited = copy.deepcopy(rows)
    edited[0]["hypothesis"] = "Usaqlar çöldədir."  # ş folded to s
    report = _validate("nli_v1", edited, fp=published)
    assert report.ok and not report.fingerprint_ok


def test_unused_label_is_an_invariant_warning():
    rows = nli_rows()[:2]
    report = _validate("nli_v1", rows)
    assert report.ok
    assert [p.rule for p in report.warnings] == ["invariant"]
    assert "contradiction" in report.warnings[0].message


# Known robustness bugs (see report): validation must report, not crash -----------------


def test_null_candidate_list_is_reported_not_a_crash():
    rows = knowledge_rows()
    rows[0]["candidates"] = None  # a null in a list column of the Arrow table
    report = _validate("knowledge_choice_v1", rows)
    assert "list_input" in [p.rule for p in report.errors]


def test_later_row_without_gold_is_reported_not_a_crash():
    rows = nli_rows()
    del rows[2]["label"]  # columns are checked on the first row only
    report = _validate("nli_v1", rows)
    assert not report.ok
    assert all(p.row == "nli-3" for p in report.errors)


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("answer", 7, "gold_in_answer_space"),  # a number where the span should be
        ("answer", ["1967-ci ildə"], "gold_in_answer_space"),
        ("context", 7, "gold_span"),  # no passage to find the span in
        ("answer_start", "19", "gold_span"),  # an offset must be an integer
    ],
)
def test_a_wrongly_typed_span_row_is_reported_not_a_crash(field, value, rule):
    rows = qa_rows()
    rows[0][field] = value
    report = _validate("extractive_qa_v1", rows)
    assert rule in [p.rule for p in report.errors]
    assert {p.row for p in report.errors} == {"qa-1"}


def test_an_unanswerable_row_without_a_passage_is_refused():
    rows = abstention_rows()
    rows[1]["context"] = 7  # renders a prompt, but there is no passage to abstain over
    assert _only_error(_validate("qa_abstention_v1", rows), "gold_span", "ab-2")


def test_unknown_task_is_one_clear_error():
    from yoxla.contract.errors import SuiteError

    with pytest.raises(SuiteError, match="unknown task 'nli_v9'"):
        _validate("nli_v9", nli_rows())


# The same validator on a suite's prepared items (yoxla suite validate) -------------------------


def test_prepared_items_get_the_invariant_and_fingerprint_warnings():
    from yoxla.contract.benchmark import prepare_rows
    from yoxla.contract.hashing import FrozenHashes
    from yoxla.data.validate import validate_prepared

    prepared = prepare_rows("nli_v1", nli_rows()[:2])
    report = validate_prepared(prepared)
    assert report.ok and [p.rule for p in report.warnings] == ["invariant"]
    assert "contradiction" in report.warnings[0].message
    frozen = FrozenHashes("h", "d", {"dataset": "sha256:" + "0" * 64})
    report = validate_prepared(prepare_rows("nli_v1", nli_rows()), frozen)
    assert [p.rule for p in report.warnings] == ["fingerprint"]
    assert "differs from the frozen sha256:000" in report.warnings[0].message


def test_prepared_item_that_breaks_its_graders_rule_is_an_error():
    from yoxla.contract.benchmark import prepare_rows
    from yoxla.data.validate import validate_prepared

    rows = nli_rows()
    rows[1]["label"] = "neytral"
    report = validate_prepared(prepare_rows("nli_v1", rows))
    assert [(p.row, p.rule) for p in report.errors] == [("nli-2", "graders")]
    assert "not in the answer space" in report.errors[0].message


def _suite_validate(capsys, path) -> tuple[int, str, str]:
    from yoxla.cli.main import run

    code = run(["suite", "validate", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_suite_validate_refuses_a_row_without_a_declared_column(folder, capsys):
    from suites_helpers import write_manifest

    path = write_manifest(
        folder, [task(dataset={"path": "data.jsonl", "required_columns": ["mövzu", "mənbə"]})]
    )
    code, out, err = _suite_validate(capsys, path)
    assert code == 2, out + err
    assert "task t1: item s1: row lacks columns: mənbə" in err and "Traceback" not in err
    path = write_manifest(folder, [task(dataset={"path": "data.jsonl", "required_columns": ["mövzu"]})])
    assert _suite_validate(capsys, path)[0] == 0


def test_suite_validate_warns_when_the_data_is_not_the_frozen_data(folder, capsys):
    from suites_helpers import ROWS, write_jsonl, write_manifest

    from yoxla.cli.main import run

    path = write_manifest(folder, [task()])
    assert run(["suite", "check", str(path), "--write"]) == 0
    code, out, _ = _suite_validate(capsys, path)
    assert code == 0 and "warning" not in out
    write_jsonl(folder / "data.jsonl", [*ROWS[:3], {**ROWS[3], "cavab": "Göl"}])
    code, out, _ = _suite_validate(capsys, path)
    assert code == 0 and "  warning: fingerprint sha256:" in out and "differs from the frozen sha256:" in out


def test_required_columns_change_no_hash(load):
    from yoxla.contract.hashing import task_definition

    plain = load(task()).tasks["t1"]
    declared = load(task(dataset={"path": "data.jsonl", "required_columns": ["mövzu"]})).tasks["t1"]
    assert declared_columns(declared) == ("mövzu",) and declared_columns(plain) == ()
    assert task_definition(declared) == task_definition(plain)
    assert declared.definition_hash == plain.definition_hash
