"""The blind-annotation workflow on the sample edition with two simulated annotators and a model."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from yoxla.annotation import cohen_kappa, compare, input_sha, read_annotations, review_status
from yoxla.annotation.sheets import COLUMNS, MODEL, PERSON, annotatable
from yoxla.cli.main import run
from yoxla.contract.benchmark import benchmark_task, choice_space, gold_field
from yoxla.data.editions import load_edition, load_rows

EDITION = load_edition("sample")
TASKS = {tid: benchmark_task(tid) for tid in EDITION.task_ids if annotatable(benchmark_task(tid))}
ROWS = {tid: load_rows(EDITION, tid) for tid in TASKS}
GOLD = {(tid, str(r["id"])): str(r[gold_field(tid)]) for tid, rows in ROWS.items() for r in rows}


def other_label(tid: str, row_id: str) -> str:
    row = next(r for r in ROWS[tid] if str(r["id"]) == row_id)
    return next(v for v in (choice_space(tid, row) or ()) if v != GOLD[(tid, row_id)])


def read_sheet(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def write_sheet(path: Path, records: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(records)


# What each simulated annotator does, by (task, id): a label other than gold, "?", or a flag.
ALICE_WRONG = [("nli_v1", "nli-s-03"), ("sentiment_v1", "sen-s-06"), ("rag_verification_v1", "rv-s-07")]
ALICE_UNSURE = [("intent_v1", "int-s-02")]
BOB_WRONG = [("nli_v1", "nli-s-03"), ("minimal_pairs_v1", "mp-s-06")]
BOB_FLAG = [("az_tr_interference_v1", "azt-s-11")]
BOB_SKIPS = ["knowledge_choice_v1"]  # bob annotates everything else


def fill(records: list[dict[str, str]], wrong, unsure=(), flags=(), skip=(), style=str) -> None:
    for rec in records:
        key = (rec["task"], rec["id"])
        if rec["task"] in skip:
            continue
        rec["label"] = other_label(*key) if key in wrong else "?" if key in unsure else style(GOLD[key])
        if key in flags:
            rec["not_natural"] = "bəli"
            rec["note"] = "henüz is Turkish"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's annotations folder with alice, bob (people) and a model, filled in."""
    root = tmp_path_factory.mktemp("annotations") / "sample"
    for name, extra in (("alice", []), ("bob", []), ("gpt", ["--model"])):
        assert (
            run(
                ["annotate", "export", "--edition", "sample", "--annotator", name, "--dir", str(root), *extra]
            )
            == 0
        )
    alice, bob = read_sheet(root / "alice.csv"), read_sheet(root / "bob.csv")
    model = read_sheet(root / "model" / "gpt.csv")
    # Alice writes labels as a person would: upper case where the parser allows it.
    fill(alice, ALICE_WRONG, ALICE_UNSURE, style=lambda v: v.upper() if v.isascii() else v)
    fill(bob, BOB_WRONG, flags=BOB_FLAG, skip=BOB_SKIPS)
    fill(model, [])  # the model agrees with gold everywhere
    write_sheet(root / "alice.csv", alice)
    write_sheet(root / "bob.csv", bob)
    write_sheet(root / "model" / "gpt.csv", model)
    return root


def test_export_is_blind_shuffled_and_repeatable(folder, tmp_path):
    alice = read_sheet(folder / "alice.csv")
    assert list(alice[0]) == list(COLUMNS)
    assert len(alice) == sum(len(r) for r in ROWS.values())
    assert {r["task"] for r in alice} == set(TASKS)  # span and STS tasks are not annotated this way
    dataset_order = [(tid, str(r["id"])) for tid, rows in ROWS.items() for r in rows]
    assert [(r["task"], r["id"]) for r in alice] != dataset_order
    bob = read_sheet(folder / "bob.csv")
    assert [(r["task"], r["id"]) for r in alice] != [(r["task"], r["id"]) for r in bob]
    # No gold anywhere: no gold column, and metadata that would give it away is not copied.
    assert "label" in alice[0] and not any(
        k in alice[0] for k in ("gold", "claim_type", "item_type", "answer")
    )
    again = tmp_path / "again"
    assert (
        run(["annotate", "export", "--edition", "sample", "--annotator", "alice", "--dir", str(again)]) == 0
    )
    fresh = read_sheet(again / "alice.csv")
    assert [(r["task"], r["id"]) for r in fresh] == [(r["task"], r["id"]) for r in alice]
    assert all(r["label"] == r["not_natural"] == r["note"] == "" for r in fresh)
    assert (again / "instructions.md").read_text(encoding="utf-8").count("## ") == len(TASKS)


def test_export_never_overwrites_and_refuses_open_answer_tasks(folder, capsys):
    assert (
        run(["annotate", "export", "--edition", "sample", "--annotator", "alice", "--dir", str(folder)]) == 2
    )
    assert "--force" in capsys.readouterr().err
    status = run(
        [
            "annotate",
            "export",
            "--edition",
            "sample",
            "--annotator",
            "x",
            "--task",
            "sts_v1",
            "--dir",
            "/tmp/x",
        ]
    )
    assert status == 2 and "no closed answer space" in capsys.readouterr().err
    assert (
        run(["annotate", "export", "--edition", "sample", "--annotator", "../evil", "--dir", str(folder)])
        == 2
    )
    assert (
        run(["annotate", "compare", "--edition", "sample", "--annotator", "nobody", "--dir", str(folder)])
        == 2
    )


def test_compare_reports_agreement_kappa_and_every_disagreement(folder, capsys):
    assert (
        run(["annotate", "compare", "--edition", "sample", "--annotator", "alice", "--dir", str(folder)]) == 0
    )
    out = capsys.readouterr().out
    for tid, rid in ALICE_WRONG:
        assert (
            f"disagreement: {rid} ({tid}): alice wrote {other_label(tid, rid)}, gold is {GOLD[(tid, rid)]}"
            in out
        )
    assert out.count("disagreement:") == len(ALICE_WRONG)
    assert "unsure: int-s-02 (intent_v1)" in out
    total = sum(len(r) for r in ROWS.values())
    labelled = total - len(ALICE_UNSURE)
    assert f"{100 * (labelled - len(ALICE_WRONG)) / labelled:.1f}%" in out


def test_kappa_matches_scikit_learn(folder):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    for name in ("alice", "bob"):
        anns, problems = read_annotations(folder / f"{name}.csv", name, PERSON, TASKS, ROWS)
        assert problems == []
        result = compare(anns, TASKS, ROWS)
        for agreement in result.tasks:
            pairs = [(a.label, GOLD[(a.task, a.id)]) for a in anns if a.task == agreement.task and a.label]
            given, gold = zip(*pairs, strict=True)
            assert agreement.labelled == len(pairs)
            expected = sklearn_metrics.cohen_kappa_score(given, gold)
            assert agreement.kappa == pytest.approx(expected, abs=1e-12), (name, agreement.task)
        pooled = [(f"{a.task}:{a.label}", f"{a.task}:{GOLD[(a.task, a.id)]}") for a in anns if a.label]
        given, gold = zip(*pooled, strict=True)
        assert result.overall.kappa == pytest.approx(
            sklearn_metrics.cohen_kappa_score(given, gold), abs=1e-12
        )


@pytest.mark.parametrize(
    "a, b, kappa",
    [
        (["x", "x", "y", "y"], ["x", "x", "y", "y"], 1.0),
        (["x", "y", "x", "y"], ["y", "x", "y", "x"], -1.0),
        (["x", "x", "y", "y"], ["x", "y", "x", "y"], 0.0),
        (["x", "x"], ["x", "x"], None),  # both constant and equal: p_e = 1, undefined
        ([], [], None),
    ],
)
def test_kappa_by_hand(a, b, kappa):
    assert cohen_kappa(a, b) == kappa


def test_review_status_counts_only_people_and_resolutions(folder):
    status, problems = review_status(folder, TASKS, ROWS)
    assert problems == []
    doubted = set(ALICE_WRONG) | set(ALICE_UNSURE) | set(BOB_WRONG) | set(BOB_FLAG)
    for tid, review in status.items():
        rows = ROWS[tid]
        open_rows = {rid for t, rid in doubted if t == tid}
        assert review.people == (("alice",) if tid in BOB_SKIPS else ("alice", "bob"))
        assert review.models == ("gpt",)
        assert review.open == len(open_rows)
        assert review.reviewed == review.by_agreement == len(rows) - len(open_rows)
        assert all(review.row_status[rid] == "open" for rid in open_rows)


def test_a_model_alone_never_reviews_a_row(folder, tmp_path):
    only_model = tmp_path / "sample"
    (only_model / "model").mkdir(parents=True)
    (only_model / "model" / "gpt.csv").write_bytes((folder / "model" / "gpt.csv").read_bytes())
    status, _ = review_status(only_model, TASKS, ROWS)
    assert all(
        s.reviewed == 0 and s.not_annotated == s.rows and s.models == ("gpt",) for s in status.values()
    )
    anns, _ = read_annotations(only_model / "model" / "gpt.csv", "gpt", MODEL, TASKS, ROWS)
    assert compare(anns, TASKS, ROWS).overall.agreement == 1.0  # compared like anyone else


def test_resolutions_settle_open_rows(folder, tmp_path):
    copy = tmp_path / "sample"
    copy.mkdir()
    for name in ("alice.csv", "bob.csv"):
        (copy / name).write_bytes((folder / name).read_bytes())
    row = next(r for r in ROWS["nli_v1"] if r["id"] == "nli-s-03")
    sha = input_sha(TASKS["nli_v1"], row)
    lines = [
        "task,id,input_sha,gold,decided_by,reason",
        f"nli_v1,nli-s-03,{sha},{GOLD[('nli_v1', 'nli-s-03')]},Leyla,the hypothesis adds a wish: neutral",
        # A resolution that changes gold only counts once the row says so.
        f"sentiment_v1,sen-s-06,{input_sha(TASKS['sentiment_v1'], ROWS['sentiment_v1'][5])},positive,Leyla,x",
        # A resolution without a person or reason, and one for an unknown row, are problems.
        f"intent_v1,int-s-02,{sha},card_arrival,,",
        "nli_v1,nli-s-99,abc,neutral,Leyla,typo",
    ]
    (copy / "resolutions.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, problems = review_status(copy, TASKS, ROWS)
    assert status["nli_v1"].row_status["nli-s-03"] == "reviewed" and status["nli_v1"].by_resolution == 1
    assert status["sentiment_v1"].row_status["sen-s-06"] == "open"
    assert any("decided_by, reason must be filled in" in p for p in problems)
    assert any("nli-s-99" in p for p in problems)


def test_stale_annotations_and_sheet_problems(folder, tmp_path, capsys):
    copy = tmp_path / "sample"
    copy.mkdir()
    records = read_sheet(folder / "bob.csv")
    changed = next(r for r in records if r["task"] == "nli_v1" and r["label"])
    changed["input_sha"] = "0" * 16  # the text bob saw is not the row's text any more
    bad = next(r for r in records if r["task"] == "sentiment_v1")
    bad["label"] = "Positive."  # not a label the strict parser accepts
    write_sheet(copy / "bob.csv", records)
    anns, problems = read_annotations(copy / "bob.csv", "bob", PERSON, TASKS, ROWS)
    assert problems == [
        f"bob.csv line {records.index(bad) + 2} (sentiment_v1 {bad['id']}): label 'Positive.' is not in the answer space"
    ]
    result = compare(anns, TASKS, ROWS)
    assert next(a for a in result.tasks if a.task == "nli_v1").stale == 1
    status, _ = review_status(copy, TASKS, ROWS)
    assert status["nli_v1"].row_status[changed["id"]] == "not_annotated"
    assert run(["annotate", "compare", "--edition", "sample", "--annotator", "bob", "--dir", str(copy)]) == 1
    assert "problem: bob.csv line" in capsys.readouterr().out


def test_status_command_lists_every_task(folder, capsys):
    assert run(["annotate", "status", "--edition", "sample", "--dir", str(folder)]) == 0
    out = capsys.readouterr().out
    for tid in EDITION.task_ids:
        assert tid in out
    assert "not annotatable" in out and "alice, bob" in out


def test_a_sheet_shows_the_messages_and_answers_of_the_package_suite(tmp_path) -> None:
    """Each row's text is the user message the frozen contracts render (the committed oracle of
    tests/suites/test_suites_parity.py), its answers the row's own space, its hash over the
    task's input fields only."""
    import json

    from yoxla.annotation.sheets import export_sheet, input_fields, write_instructions

    oracle = json.loads(
        (Path(__file__).parents[1] / "suites" / "cases" / "benchmark_messages.json").read_text(
            encoding="utf-8"
        )
    )["tasks"]
    path = tmp_path / "ayla.csv"
    assert export_sheet(path, list(TASKS.values()), ROWS, shuffle_key="ayla") == sum(map(len, ROWS.values()))
    for line in read_sheet(path):
        want = next(x for x in oracle[line["task"]]["items"] if x["id"] == line["id"])
        assert line["text"] == want["user"], (line["task"], line["id"])
        row = next(r for r in ROWS[line["task"]] if str(r["id"]) == line["id"])
        assert line["answers"] == " | ".join(choice_space(line["task"], row) or ())
    assert input_fields("rag_selection_v1") == ("question", "passages")
    assert input_fields("nli_v1") == ("premise", "hypothesis")
    doc = write_instructions(tmp_path, list(TASKS.values())).read_text(encoding="utf-8")
    assert oracle["nli_v1"]["system"] in doc and "## nli_v1: " in doc
