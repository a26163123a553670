"""Views read a board's suite, whichever board it is (issue 13): the benchmark's boards show
their package suite where a committed suite's board shows its manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from yoxla.admission.gold import DataSource
from yoxla.board.loading import load_board
from yoxla.board.prepared import Prepared, prepare
from yoxla.board.versions import data_version
from yoxla.views.leaderboard import suite_about
from yoxla.views.model_tables import model_facts

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prepared() -> Prepared:
    return prepare(load_board(REPO / "results", data=DataSource(allow_hub=False), B=50))


def test_a_model_page_names_the_suite_of_its_board(prepared: Prepared) -> None:
    for board, suite, path in [
        ("sample", "yoxla-sample", "yoxla/editions/yoxla-sample.yaml"),
        ("suite:oxu", "oxu", "suites/examples/oxu/oxu.yaml"),
    ]:
        ed = prepared.edition(board)
        facts = model_facts(ed.all_models()[0], ed)
        got = dict(zip(facts["Field"], facts["Value"], strict=True))
        assert (got["Suite"], got["Suite definition"]) == (suite, path)
        assert got["Judge-scored tasks"] == "none"


def test_the_data_line_names_the_suite_and_the_edition_rows(prepared: Prepared) -> None:
    assert data_version(prepared, "sample") == (
        "the suite definition `yoxla/editions/yoxla-sample.yaml` over edition `sample`, bundled with the code"
    )
    v1 = data_version(prepared, "v1")
    assert v1.startswith("the suite definition `yoxla/editions/yoxla-v1.yaml` over edition `v1`: ")
    assert (
        data_version(prepared, "suite:oxu")
        == "the suite definition `suites/examples/oxu/oxu.yaml` as committed"
    )


def test_every_board_describes_its_suite(prepared: Prepared) -> None:
    text = suite_about(prepared.edition("v1"))
    assert text.splitlines()[:3] == [
        "Suite yoxla-v1",
        "The published YOXLA benchmark (frozen data on the Hugging Face Hub).",
        "Suite definition: yoxla/editions/yoxla-v1.yaml",
    ]
    assert (
        "Task nli_v1 · Məntiqi nəticə (classification; primary metric accuracy; breakdowns by length_bucket)"
        in text
    )
    assert "Group Anlama (understanding): " in text
    assert suite_about(prepared.edition("suite:oxu")).startswith("Suite oxu\nQısa Azərbaycan mətnləri")
