"""The views read a board's groups and headline from its suite, never from which engine made it.

Two user suites built from the committed example ``oxu`` (its task twice, as ``oxu_v1`` and
``oxu_iki``), run offline with two cue-only strategies: ``oxu_duz`` as committed (no groups:
the headline is the mean of the tasks, the tasks are the leaderboard's columns) and
``oxu_bloklu`` with a ``groups:`` section and a named headline (the mean of the groups: a
block-like board, as the benchmark's).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.board.loading import load_board, suite_board_id
from yoxla.board.prepared import EditionData, Prepared, prepare
from yoxla.cli.main import run as cli_run
from yoxla.views.blocks import BlocksView, block_table
from yoxla.views.compare import compare_table
from yoxla.views.leaderboard_tables import leaderboard_frame, leaderboard_view, unchecked_table
from yoxla.views.model_tables import model_scores
from yoxla.views.tasks import spreads_table

EXAMPLE = Path(__file__).resolve().parents[2] / "suites" / "examples" / "oxu"
GROUPS = [
    {"id": "esas", "name": "Əsas oxu", "tasks": ["oxu_v1"]},
    {"id": "tekrar", "name": "Təkrar oxu", "tasks": ["oxu_iki"]},
]
HEADLINE = "Oxu balı"
STRATEGIES = ("first", "majority")


def _suite(root: Path, name: str, grouped: bool) -> Path:
    """The example copied under ``root/suites/<name>`` with its task twice (and the groups)."""
    from yoxla.contract.hashing import aggregation, hash_file_path, write_hash_file
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import current_hashes

    folder = root / "suites" / name
    shutil.copytree(EXAMPLE / "data", folder / "data")
    doc = yaml.safe_load((EXAMPLE / "oxu.yaml").read_text(encoding="utf-8"))
    doc["metadata"]["name"] = name
    doc["tasks"].append({**copy.deepcopy(doc["tasks"][0]), "id": "oxu_iki", "name": "Yenə oxu"})
    if grouped:
        doc["groups"] = GROUPS
        doc["headline"] = {"name": HEADLINE, "rule": "mean_of_groups"}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    loaded = load_manifest(path)
    write_hash_file(hash_file_path(path), loaded.name, current_hashes(loaded), aggregation(loaded))
    for strategy in STRATEGIES:
        argv = ["run", "--suite", str(path), "--provider", "suite-baseline", "--model", strategy]
        argv += ["--run-id", f"{name}-{strategy}", "--no-progress", "--runs-dir", str(root / "runs")]
        assert cli_run([*argv, "--results-dir", str(root / "results")]) == 0
    return path


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    root = tmp_path_factory.mktemp("groups")
    _suite(root, "oxu_duz", grouped=False)
    _suite(root, "oxu_bloklu", grouped=True)
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites"))
    return prepare(load_board(root / "results", data=data, B=50), floors=False)


def _board(prepared: Prepared, name: str) -> EditionData:
    ed = prepared.edition(suite_board_id(name))
    assert ed.name == suite_board_id(name) and len(ed.standard.models) == len(STRATEGIES)
    return ed


def _cells(ed: EditionData) -> dict[str, Any]:
    """The first row of the compact table, column by column."""
    view = leaderboard_view(leaderboard_frame(ed), ed)
    return dict(zip(view.table.columns, view.table.iloc[0], strict=True))


def test_a_suite_with_groups_shows_its_groups_as_blocks_under_its_headline(prepared: Prepared) -> None:
    ed = _board(prepared, "oxu_bloklu")
    # The groups are the columns (the tasks only on request), named as the suite names them.
    assert list(_cells(ed)) == ["Rank", "Model", HEADLINE, "Əsas oxu", "Təkrar oxu", "Trust"]
    assert ed.headline == HEADLINE and ed.by_groups
    assert ed.groups_of_tasks() == {"esas": ["oxu_v1"], "tekrar": ["oxu_iki"]}
    wide = leaderboard_view(leaderboard_frame(ed), ed, columns=["task scores"]).table.columns
    assert {"oxu_v1", "oxu_iki"} <= set(wide)
    frame = leaderboard_frame(ed)
    for _, row in frame.iterrows():
        v = next(m for m in ed.standard.models if m.key == row["File"])
        groups = v.scores["groups"]
        assert row["Əsas oxu"] == pytest.approx(groups["esas"]) and row["Təkrar oxu"] == pytest.approx(
            groups["tekrar"]
        )
        assert row[HEADLINE] == pytest.approx((groups["esas"] + groups["tekrar"]) / 2)
    # A block-like table per group, the Blocks tab shown, each task's row named by its group.
    assert BlocksView().shown_on(ed)
    table = block_table(ed, "esas")
    assert list(table.columns[:3]) == ["Rank", "Model", "Əsas oxu"] and "oxu_v1" in table.columns
    assert dict(zip(spreads_table(ed)["Task"], spreads_table(ed)["Block"], strict=True)) == {
        "oxu_v1": "Əsas oxu",
        "oxu_iki": "Təkrar oxu",
    }
    a, b = ed.standard.models
    scores = model_scores(a, ed.standard, ed)
    assert list(scores["Level"]) == ["overall", "block", "task", "block", "task"]
    assert list(scores["Name"]) == [HEADLINE, "Əsas oxu", "oxu_v1", "Təkrar oxu", "oxu_iki"]
    assert scores["Primary metric"].iloc[0] == "mean of the blocks"
    diff = compare_table(ed.standard, a.key, b.key)
    assert list(diff["Name"][:3]) == [HEADLINE, "Əsas oxu", "Təkrar oxu"]


def test_a_suite_without_groups_shows_its_tasks(prepared: Prepared) -> None:
    ed = _board(prepared, "oxu_duz")
    assert list(_cells(ed)) == ["Rank", "Model", "Suite score", "oxu_v1", "oxu_iki", "Trust"]
    assert ed.headline == "Suite score" and not ed.by_groups and ed.groups_of_tasks() == {}
    assert not BlocksView().shown_on(ed)
    a, b = ed.standard.models
    scores = model_scores(a, ed.standard, ed)
    assert list(scores["Level"]) == ["overall", "task", "task"]
    assert scores["Primary metric"].iloc[0] == "mean of the tasks with a 0–100 score"
    assert list(compare_table(ed.standard, a.key, b.key)["Level"]) == ["overall", "task", "task"]
    assert list(unchecked_table(ed).columns) == [
        "Model",
        "Provider",
        "Trust",
        "Suite score (as stored)",
        "Why not re-checked",
        "File",
    ]
