"""The golden oracle: today's built-in path, recomputed, matches tests/golden/sample_scores.json.

The golden file pins what must not change when the two engines merge: on the sample edition,
for all eleven tasks and every answer set (gold, the eight cue-only strategies, a messy set),
the prompt digests, per-example verdicts, every metric, task, block and YOXLA score; and the
re-derivation of every committed result file under results/. Regenerate it with
``python -m yoxla.testing.golden --write`` only when a change of score is intended.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from yoxla.baselines.strategies import SUITE_STRATEGIES
from yoxla.data.editions import load_edition
from yoxla.testing import golden

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads((ROOT / golden.GOLDEN_PATH).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def computed() -> dict:
    return golden.oracle(ROOT)


def test_todays_path_reproduces_the_golden_file(stored, computed):
    found = golden.differences(stored, computed)
    assert not found, f"{len(found)} difference(s) from {golden.GOLDEN_PATH}:\n" + "\n".join(found[:40])


def test_the_golden_file_covers_every_task_answer_set_and_result_file(stored):
    tasks = set(load_edition("sample").tasks)
    assert set(golden.STRATEGIES) <= set(SUITE_STRATEGIES)  # every pinned strategy still answers
    assert len(tasks) == 11
    assert set(stored["sample"]["prompts"]) == tasks
    assert set(stored["sample"]["sets"]) == {
        "gold",
        *golden.STRATEGIES,
        golden.MESSY,
        golden.PARITY_MESSY,
        *golden.EDGE_SETS,
    }
    for name, entry in stored["sample"]["sets"].items():
        assert set(entry["tasks"]) == tasks, name
        assert set(entry["blocks"]) == {"knowledge", "language", "rag", "understanding"}, name
    files = {p.relative_to(ROOT).as_posix() for p in golden.result_files(ROOT)}
    assert files and set(stored["results"]) == files
    assert any(f.startswith("results/suites/") for f in files)
    assert all(r["status"] == "admitted" and r["rechecked"] for r in stored["results"].values())


def test_the_messy_set_meets_every_kind_of_failure(stored):
    messy = stored["sample"]["sets"][golden.MESSY]["tasks"]
    outcomes: set[str] = set()
    near: set[str] = set()
    for entry in messy.values():
        outcomes |= set(entry["metrics"]["outcomes"])
        near |= set(entry["metrics"]["near_miss"])
    assert {"correct", "wrong", "invalid", "truncated", "generation_error", "abstained"} <= outcomes
    assert len(near) >= 2
    with_calibration = {tid for tid, e in messy.items() if "calibration" in e}
    assert {"nli_v1", "knowledge_choice_v1", "rag_selection_v1"} <= with_calibration
    assert "extractive_qa_v1" not in with_calibration  # an open answer space has no distribution


def test_a_difference_names_the_answer_set_task_metric_and_both_values(stored):
    changed = copy.deepcopy(stored)
    changed["sample"]["sets"]["majority"]["tasks"]["nli_v1"]["metrics"]["macro_f1"] += 1e-6
    changed["sample"]["sets"]["messy"]["tasks"]["sts_v1"]["examples"][0][4] = "surprise"
    found = golden.differences(stored, changed)
    assert len(found) == 2
    assert any("sets.majority.tasks.nli_v1.metrics.macro_f1" in line for line in found)
    old = stored["sample"]["sets"]["majority"]["tasks"]["nli_v1"]["metrics"]["macro_f1"]
    assert any(repr(old) in line and repr(old + 1e-6) in line for line in found)
    assert any("sets.messy.tasks.sts_v1.examples[0][4]" in line and "'surprise'" in line for line in found)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (0.5, 0.5 + 1e-10, True),
        (0.5, 0.5 + 1e-8, False),
        (float("nan"), float("nan"), True),
        (float("nan"), 0.0, False),
        (3, 4, False),
        (True, 1, False),
        (None, 0.0, False),
        ("ə", "e", False),
        ([1, 2], [1, 2, 3], False),
        ({"a": 1}, {"b": 1}, False),
    ],
)
def test_floats_agree_within_the_tolerance_and_the_rest_exactly(a, b, same):
    assert (golden.differences({"x": a}, {"x": b}) == []) is same


def test_the_command_line_checks_and_writes(tmp_path, capsys):
    assert golden.main(["--root", str(tmp_path)]) == 2
    assert "no golden file" in capsys.readouterr().err
    assert golden.main(["--root", str(tmp_path), "--write"]) == 0
    assert golden.main(["--root", str(tmp_path)]) == 0
    written = json.loads((tmp_path / golden.GOLDEN_PATH).read_text(encoding="utf-8"))
    assert written["results"] == {}  # no results folder there
    written["sample"]["sets"]["gold"]["yoxla"] = 0.0
    (tmp_path / golden.GOLDEN_PATH).write_text(json.dumps(written), encoding="utf-8")
    assert golden.main(["--root", str(tmp_path)]) == 1
    assert "golden.sample.sets.gold.yoxla: golden 0.0, now 100.0" in capsys.readouterr().out
