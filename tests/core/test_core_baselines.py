"""Cue-only baselines answer in the task's own format and score through the same evaluators."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from yoxla.baselines.strategies import SEED, STRATEGIES
from yoxla.baselines.strategies import benchmark_answers as answers
from yoxla.baselines.strategies import benchmark_floors as floors
from yoxla.contract.benchmark import parse_answer, task_ids
from yoxla.data.editions import ManifestEntry, fingerprint
from yoxla.data.validate import known_task, validate_rows

ROWS = yaml.safe_load((Path(__file__).parent / "cases" / "task_rows.yaml").read_text(encoding="utf-8"))


def rows(task_id: str) -> list[dict]:
    return copy.deepcopy(ROWS[task_id])


def test_fixture_rows_cover_every_task_and_are_valid():
    assert sorted(ROWS) == sorted(task_ids())
    for tid, task_rows in ROWS.items():
        report = validate_rows(
            known_task(tid), task_rows, ManifestEntry(tid, len(task_rows), fingerprint(task_rows))
        )
        assert report.errors == [], [str(p) for p in report.errors]


@pytest.mark.parametrize("task_id", sorted(task_ids()))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_answers_parse_as_valid(strategy, task_id):
    task, task_rows = task_id, rows(task_id)
    got = answers(strategy, task, task_rows)
    assert len(got) == len(task_rows)
    for row, raw in zip(task_rows, got, strict=True):
        assert isinstance(raw, str)
        parsed = parse_answer(task, raw, row)
        assert parsed.valid, (strategy, row["id"], raw, parsed)


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError, match="unknown baseline strategy"):
        answers("oracle", "nli_v1", rows("nli_v1"))


def test_most_linked_picks_the_candidate_with_most_sitelinks():
    task = "knowledge_choice_v1"
    assert answers("most_linked", task, rows("knowledge_choice_v1")) == ["7", "2"]


def test_most_linked_tie_goes_to_the_first_candidate():
    task = "knowledge_choice_v1"
    row = rows("knowledge_choice_v1")[0]
    row["sitelinks"] = [3, 9, 1, 9, *[0] * 16]
    assert answers("most_linked", task, [row]) == ["2"]


def test_most_linked_without_sitelinks_list_falls_back_to_first():
    task = "knowledge_choice_v1"
    row = rows("knowledge_choice_v1")[0]
    row["sitelinks"] = 120  # a single number, not one per candidate
    assert answers("most_linked", task, [row]) == ["1"]


def test_none_of_them_answers_hec_biri_on_rag_selection():
    task = "rag_selection_v1"
    task_rows = rows("rag_selection_v1")
    got = answers("none_of_them", task, task_rows)
    assert got == ["HEÇ BİRİ"] * len(task_rows)
    assert {parse_answer(task, raw, row).value for raw, row in zip(got, task_rows, strict=True)} == {
        "HEÇ BİRİ"
    }


@pytest.mark.parametrize("strategy", ["abstain", "none_of_them"])
def test_abstain_abstains_on_qa_abstention(strategy):
    task = "qa_abstention_v1"
    task_rows = rows("qa_abstention_v1")
    got = answers(strategy, task, task_rows)
    assert all(parse_answer(task, raw, row).abstained for raw, row in zip(got, task_rows, strict=True))


def test_random_is_reproducible_with_the_fixed_seed():
    for tid in ("sts_v1", "knowledge_choice_v1", "qa_abstention_v1", "nli_v1"):
        task, task_rows = tid, rows(tid)
        assert (
            answers("random", task, task_rows)
            == answers("random", task, task_rows)
            == answers("random", task, task_rows, SEED)
        )


def test_random_depends_on_the_seed():
    task, task_rows = "sts_v1", rows("sts_v1") * 4
    assert answers("random", task, task_rows, seed=1) != answers("random", task, task_rows, seed=2)


def test_first_and_longest_on_a_numeric_task_are_the_range_ends():
    task, task_rows = "sts_v1", rows("sts_v1")
    assert {parse_answer(task, a).value for a in answers("first", task, task_rows)} == {0.0}
    assert {parse_answer(task, a).value for a in answers("longest", task, task_rows)} == {5.0}


def test_majority_answers_the_most_common_gold():
    assert set(answers("majority", "nli_v1", rows("nli_v1"))) == {"neutral"}
    # Numeric: the mean gold, (3.6 + 0.0 + 4.4) / 3.
    assert set(answers("majority", "sts_v1", rows("sts_v1"))) == {"2.67"}


def test_longest_picks_the_longer_sentence_of_a_pair():
    # mp-1: equal lengths -> A (first wins); mp-2: "getdilər" is longer -> B.
    assert answers("longest", "minimal_pairs_v1", rows("minimal_pairs_v1")) == ["A", "B"]


def test_overlap_picks_the_passage_sharing_most_words_with_the_question():
    # rs-1: passage 3 shares bakı, metropoliteni, ildə; rs-2: "tikilib" (1/10) beats "ildə" (1/11);
    # rs-3: passage 2 shares göygöl, yaranıb; rs-4: no word shared anywhere -> the first passage.
    assert answers("overlap", "rag_selection_v1", rows("rag_selection_v1")) == [
        "3",
        "4",
        "2",
        "1",
    ]


def test_floors_score_every_strategy_on_every_task():
    task_rows = {tid: rows(tid) for tid in ROWS}
    result = floors(task_rows, task_ids())
    assert sorted(result) == sorted(ROWS)
    for tid, scores in result.items():
        assert sorted(scores) == sorted(STRATEGIES), tid
        assert all(0.0 <= s <= 100.0 for s in scores.values()), (tid, scores)
    # Half of the rag_selection golds are HEÇ BİRİ, half of the abstention questions unanswerable.
    assert result["rag_selection_v1"]["none_of_them"] == pytest.approx(50.0)
    assert result["qa_abstention_v1"]["abstain"] == pytest.approx(50.0)
    # Most-linked finds Bakı (kn-2) but not 1873 (kn-1).
    assert result["knowledge_choice_v1"]["most_linked"] == pytest.approx(50.0)
    # The longer sentence is the right one in mp-2, and the tie in mp-1 goes to A: a pure cue.
    assert result["minimal_pairs_v1"]["longest"] == pytest.approx(100.0)


def test_floors_respects_the_strategy_list():
    result = floors({"nli_v1": rows("nli_v1")}, task_ids(), ("majority",))
    assert result == {"nli_v1": {"majority": pytest.approx(50.0)}}


def test_the_baseline_provider_answers_prepared_suite_items_only() -> None:
    from types import SimpleNamespace

    from yoxla.contract.benchmark import prepare_rows
    from yoxla.providers.base import ProviderError, ProviderOptions, ProviderSpec, Request
    from yoxla.providers.baseline import BaselineProvider

    rows = [
        {
            "id": "n1",
            "premise": "Uşaqlar parkda oynayır.",
            "hypothesis": "Uşaqlar çöldədir.",
            "label": "entailment",
        }
    ]
    provider = BaselineProvider(ProviderSpec("baseline", "baseline"), "first", ProviderOptions())
    prepared = prepare_rows("nli_v1", rows)
    item = prepared.items[0]
    request = Request(
        task=SimpleNamespace(prepared=prepared), row=item.row, example_id=item.id, messages=[], max_tokens=8
    )
    assert provider.generate(request).text == answers("first", "nli_v1", rows)[0]
    with pytest.raises(ProviderError, match="no prepared suite items"):
        provider.generate(
            Request(task=SimpleNamespace(), row=rows[0], example_id="n1", messages=[], max_tokens=8)
        )
