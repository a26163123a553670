"""The task page: one description and one prompt panel for every board (issue 13).

What a board shows more (our task notes, a chance level, cue-only floors) follows from the data
it has, never from whether it is a benchmark edition or a committed suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from yoxla.admission.gold import DataSource
from yoxla.board.loading import load_board
from yoxla.board.prepared import Prepared, prepare
from yoxla.views.base import Context, Downloads
from yoxla.views.tasks import breakdown_by, example, task_choices, task_markdown

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Context:
    prepared: Prepared = prepare(load_board(REPO / "results", data=DataSource(allow_hub=False), B=50))
    return Context(prepared, Downloads(tmp_path_factory.mktemp("csv")))


def test_a_benchmark_task_shows_its_notes_chance_and_floor_from_the_board_data(ctx: Context) -> None:
    ed = ctx.prepared.edition("sample")
    text = task_markdown(ed, "nli_v1")
    assert text.startswith("### Məntiqi nəticə · `nli_v1` · edition `sample` · Understanding group")
    assert "**What it measures.**" in text  # our note on this task id
    assert "**Chance level:** 33.3" in text  # the sample rows are here
    assert "**Best cue-only floor on edition `sample`:**" in text
    assert "**Suite definition:** `yoxla/editions/yoxla-sample.yaml`" in text
    assert "**Breakdowns** (from the suite's `metadata.breakdowns`): length\\_bucket" in text


def test_a_board_without_rows_says_why_it_has_no_floors(ctx: Context) -> None:
    text = task_markdown(ctx.prepared.edition("v1"), "nli_v1")
    assert "**Items:** 100" in text  # no file yet: the edition's declared rows
    assert "**Cue-only floors:** not available here (" in text


def test_a_suite_task_has_the_same_page_without_what_it_lacks(ctx: Context) -> None:
    ed = ctx.prepared.edition("suite:oxu")
    text = task_markdown(ed, "oxu_v1")
    assert text.startswith("### Mətni oxuyub anlama · `oxu_v1` · suite `oxu`")
    assert "**What it measures.**" not in text  # we wrote no note for it
    assert "suite\\-baseline files" in text  # its board's reason for no floors, escaped
    assert "**Suite definition:** `suites/examples/oxu/oxu.yaml`" in text
    assert task_choices(ed) == [("oxu_v1 · Mətni oxuyub anlama", "oxu_v1")]
    assert task_choices(ctx.prepared.edition("sample"))[2] == ("NLI · nli_v1", "nli_v1")


@pytest.mark.parametrize(
    ("board", "task", "in_user", "gold", "space"),
    [
        # A package suite's space as its instructions tell it: each answer with its description.
        ("sample", "nli_v1", "Müddəa:", "entailment", "- entailment: müddəa doğrudursa, fərziyyə də mütləq"),
        ("v1", "knowledge_choice_v1", "[user]", "3", "- doğru namizədin nömrəsi (1-dən 20-yə qədər"),
        (
            "sample",
            "qa_abstention_v1",
            "Sual:",
            "rütubətli subtropik iqlimi",
            "A quote copied from the passage, or:\n- Cavab yoxdur: ",
        ),
        ("sample", "extractive_qa_v1", "Sual:", "2000", "A quote copied from the passage (no fixed list"),
        ("suite:oxu", "oxu_v1", "Sual:", "A", "A\nB\nC\nD"),
    ],
)
def test_every_board_shows_the_prompt_a_model_is_sent(
    ctx: Context, board: str, task: str, in_user: str, gold: str, space: str
) -> None:
    got_space, system, user, target = example(ctx, ctx.prepared.edition(board), task)
    assert in_user in user
    assert target == gold
    assert got_space.startswith(space)
    assert system


def test_the_breakdown_is_a_declared_field_the_files_store(ctx: Context) -> None:
    assert breakdown_by(ctx.prepared.edition("sample"), "minimal_pairs_v1") == (
        "per_phenomenon_accuracy",
        True,
    )
    assert breakdown_by(ctx.prepared.edition("suite:oxu"), "oxu_v1") == ("per_topic_accuracy", True)
    assert breakdown_by(ctx.prepared.edition("v1"), "nli_v1") == (None, False)  # no file: nothing drawn
