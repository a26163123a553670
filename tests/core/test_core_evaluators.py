"""The benchmark's built-in graders on the package suite's tasks: verdicts, task metrics, scores.

Every case scores through the one suite replay: a benchmark task's rows become the package
suite task's items (:func:`yoxla.contract.benchmark.prepare_rows`) and their answers are scored
by the built-in fast path (:func:`yoxla.score.replay.score_builtin_task`, the graders of
:mod:`yoxla.score.graders`). The per-example cases are tests/core/cases/evaluator_cases.yaml.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from yoxla.contract.benchmark import benchmark_groups, benchmark_task, prepare_rows
from yoxla.extract.parsing import answer_text
from yoxla.score.graders import SPAN_KEYS
from yoxla.score.replay import ScoringPlan, score_builtin_task
from yoxla.score.samples import SampleResult, TaskScore
from yoxla.score.stats import block_scores, pearson, spearman, yoxla_score

DATA = yaml.safe_load((Path(__file__).parent / "cases" / "evaluator_cases.yaml").read_text(encoding="utf-8"))


def score_task(
    task_id: str,
    rows: list[dict],
    raws: Sequence[str | None],
    finish_reasons: Sequence[str | None] | None = None,
    errors: Sequence[str | None] | None = None,
    breakdowns: Sequence[str] = (),
) -> TaskScore:
    """The package suite task's score of ``raws`` (aligned with ``rows``) on the built-in fast path."""
    prepared = prepare_rows(task_id, rows, breakdowns=breakdowns)
    n = len(rows)
    texts = [None if raw is None else answer_text(raw) for raw in raws]
    return score_builtin_task(
        prepared, prepared.items, texts, finish_reasons or [None] * n, errors or [None] * n
    )


def evaluate_task(task_id, rows, raws, finish_reasons=None, errors=None, breakdowns=()):
    """(per-example results, task metrics, task score)."""
    scored = score_task(task_id, rows, raws, finish_reasons, errors, breakdowns)
    return list(scored.results), scored.metrics, scored.score


def score_answer(task_id: str, row: dict, raw: str | None, fin: str | None = None, err: str | None = None):
    """The verdict on one answer to ``row``."""
    return score_task(task_id, [row], [raw], [fin], [err]).results[0]


def sts_prediction(res: SampleResult) -> float:
    """What the STS closeness was measured from: the valid answer, else the range's midpoint."""
    return float(res.number) if res.valid and res.number is not None else 2.5


def _num(value) -> float:
    return float(Fraction(value)) if isinstance(value, str) else float(value)


def _qa_row(rid: str, context: str, answer: str | None) -> dict:
    return {
        "id": rid,
        "context": context,
        "question": "Bakı metropoliteni nə vaxt açılıb?",
        "answer": answer,
        "is_answerable": answer is not None,
    }


def _sts_rows(golds: list[float]) -> list[dict]:
    return [
        {"id": f"sts-{i}", "sentence1": "Hava istidir.", "sentence2": "Bu gün isti olacaq.", "score": g}
        for i, g in enumerate(golds)
    ]


def _nli_rows(golds: list[str]) -> list[dict]:
    return [
        {
            "id": f"nli-{i}",
            "premise": "Uşaqlar parkda oynayır.",
            "hypothesis": "Uşaqlar çöldədir.",
            "label": g,
        }
        for i, g in enumerate(golds)
    ]


# Abstention -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["abstention"]])
def test_abstention_example(case):
    task = "qa_abstention_v1"
    row = _qa_row("q1", DATA["contexts"][case["context"]], case["answer"])
    got = score_answer(task, row, case["raw"])
    assert got.score == pytest.approx(_num(case["score"]))
    assert got.outcome == case["outcome"]
    assert got.abstained is case["abstained"]


def test_abstention_task_metrics():
    task = "qa_abstention_v1"
    ctx = DATA["contexts"]["metro"]
    rows = [
        _qa_row("a1", ctx, "1967-ci ildə"),  # quoted exactly           -> 1
        _qa_row("a2", ctx, "6,5 kilometr"),  # abstained wrongly        -> 0
        _qa_row("a3", ctx, "üç xətt"),  # "üç" of "üç xətt" quoted     -> 2/7
        _qa_row("u1", ctx, None),  # abstained rightly                  -> 1
        _qa_row("u2", ctx, None),  # answered anyway                    -> 0
        _qa_row("u3", ctx, None),  # invalid abstention "Cavab yoxdur." -> 0
    ]
    raws = ["1967-ci ildə", "Cavab yoxdur", "üç", "CAVAB YOXDUR", "6,5 kilometr", "Cavab yoxdur."]
    _, m, score = evaluate_task(task, rows, raws)
    assert m["overall_score"] == pytest.approx((1 + 0 + 2 / 7 + 1 + 0 + 0) / 6)
    assert score == pytest.approx(m["overall_score"] * 100)
    # Answerability: answered an answerable one (a1, a3), abstained on an unanswerable one (u1).
    assert m["answerability_accuracy"] == pytest.approx(3 / 6)
    assert m["unanswerable_accuracy"] == pytest.approx(1 / 3)
    assert m["abstention_rate"] == pytest.approx(2 / 6)
    assert m["n_answerable"] == 3
    assert m["span_recall"] == pytest.approx((1 + 0 + 2 / 7) / 3)
    assert m["near_miss"] == {"trailing_punctuation": 1}


# Correlation (sts_v1) -----------------------------------------------------------------


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["sts"]])
def test_sts_example(case):
    task = "sts_v1"
    got = score_answer(task, _sts_rows([case["gold"]])[0], case["raw"])
    assert sts_prediction(got) == pytest.approx(case["prediction"])
    assert got.score == pytest.approx(case["score"])
    assert got.outcome == case["outcome"]


def test_sts_invalid_output_is_imputed_at_midpoint_for_spearman():
    task = "sts_v1"
    golds = [0.0, 1.0, 3.0, 4.0, 5.0]
    rows = _sts_rows(golds)
    _, perfect, _ = evaluate_task(task, rows, ["0", "1", "3", "4", "5"])
    _, m, score = evaluate_task(task, rows, ["0", "1", "3", "4", "bilmirəm"])
    assert perfect["spearman"] == pytest.approx(1.0)
    oracle = stats.spearmanr([0.0, 1.0, 3.0, 4.0, 2.5], golds).statistic
    assert 0.0 < m["spearman"] < perfect["spearman"]
    assert m["spearman"] == pytest.approx(oracle)
    assert m["spearman"] == pytest.approx(0.7)  # 1 - 6*(0+0+1+1+4)/(5*24)
    assert m["pearson"] == pytest.approx(stats.pearsonr([0.0, 1.0, 3.0, 4.0, 2.5], golds).statistic)
    # Valid-only metrics ignore the invalid row entirely.
    assert m["spearman_valid"] == pytest.approx(1.0)
    assert m["pearson_valid"] == pytest.approx(1.0)
    assert m["mae"] == 0.0 and m["rmse"] == 0.0
    assert m["invalid_output_rate"] == pytest.approx(0.2)
    assert score == pytest.approx(70.0)


def test_sts_errors_are_measured_on_valid_rows():
    task = "sts_v1"
    _, m, _ = evaluate_task(task, _sts_rows([0.0, 2.0, 4.0, 5.0, 1.0]), ["1", "2", "3.5", "5", ""])
    assert m["mae"] == pytest.approx((1 + 0 + 0.5 + 0) / 4)
    assert m["rmse"] == pytest.approx(math.sqrt((1 + 0 + 0.25 + 0) / 4))
    assert m["n_valid"] == 4


@pytest.mark.parametrize(
    "raws",
    [pytest.param(["3"] * 5, id="constant_valid"), pytest.param(["?"] * 5, id="all_invalid")],
)
def test_sts_constant_predictions_give_zero_correlation(raws):
    task = "sts_v1"
    _, m, score = evaluate_task(task, _sts_rows([0.0, 1.0, 3.0, 4.0, 5.0]), raws)
    assert m["spearman"] == 0.0
    assert m["pearson"] == 0.0
    assert score == 0.0


def test_sts_negative_correlation_scores_zero():
    task = "sts_v1"
    _, m, score = evaluate_task(task, _sts_rows([0.0, 1.0, 3.0, 4.0, 5.0]), ["5", "4", "3", "1", "0"])
    assert m["spearman"] == pytest.approx(-1.0)
    assert score == 0.0


TIED = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, 3.0, 3.5, 5.0]), min_size=2, max_size=25)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_spearman_and_pearson_match_scipy(data):
    x = data.draw(TIED)
    y = data.draw(st.lists(st.sampled_from([0.0, 1.2, 2.0, 3.8, 4.4, 5.0]), min_size=len(x), max_size=len(x)))
    if len(set(x)) < 2 or len(set(y)) < 2:
        assert spearman(x, y) == 0.0 and pearson(x, y) == 0.0
    else:
        assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-9)
        assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    value=st.sampled_from([i / 10 for i in range(51)]),
    golds=st.lists(st.floats(0, 5, allow_nan=False), min_size=2, max_size=30),
)
def test_constant_predictions_never_correlate(value, golds):
    # Exactly 0, not float noise: a - a.mean() is not exactly 0 for values like 0.1.
    assert pearson([value] * len(golds), golds) == 0.0
    assert spearman([value] * len(golds), golds) == 0.0


@pytest.mark.parametrize(("x", "y"), [([0.1] * 3, [0.1] * 3), ([0.1] * 3, [0.7] * 3), ([0.1] * 6, [1.1] * 6)])
def test_pearson_of_constant_float_vectors_is_zero_not_plus_minus_one(x, y):
    # Regression: centring [0.1, 0.1, 0.1] leaves identical rounding residues in both vectors,
    # which used to give a "perfect" correlation of +1 or -1.
    assert pearson(x, y) == 0.0


# Classification -------------------------------------------------------------------------


def test_classification_metrics():
    task = "nli_v1"
    golds = ["entailment", "entailment", "neutral", "neutral", "contradiction", "contradiction"]
    raws = ["entailment", "Entailment", "neutral", "entailment", "contradiction", "Neutral."]
    results, m, score = evaluate_task(task, _nli_rows(golds), raws)
    assert [r.outcome for r in results] == ["correct", "correct", "correct", "wrong", "correct", "invalid"]
    assert m["accuracy"] == pytest.approx(4 / 6)
    assert score == pytest.approx(400 / 6)
    # F1 per class: entailment tp2 fp1 fn0 -> 4/5; neutral tp1 fp0 fn1 -> 2/3; contradiction tp1 fp0 fn1 -> 2/3.
    assert m["macro_f1"] == pytest.approx((4 / 5 + 2 / 3 + 2 / 3) / 3)
    assert m["per_class_accuracy"] == {
        "contradiction": {"accuracy": pytest.approx(0.5), "n": 2},
        "entailment": {"accuracy": pytest.approx(1.0), "n": 2},
        "neutral": {"accuracy": pytest.approx(0.5), "n": 2},
    }
    assert m["modal_answer"] == "entailment"
    assert m["modal_answer_share"] == pytest.approx(3 / 5)  # among the 5 valid answers
    assert m["invalid_output_rate"] == pytest.approx(1 / 6)
    assert m["near_miss"] == {"trailing_punctuation": 1}


def test_invalid_output_is_wrong_even_if_it_names_the_gold():
    task = "rag_verification_v1"
    row = {
        "id": "r1",
        "context": "Bakı Azərbaycanın paytaxtıdır.",
        "claim": "Bakı paytaxtdır.",
        "label": "TƏSDİQ",
    }
    for raw in ("TESDIQ", "TƏSDİQ.", "Cavab: TƏSDİQ", "tesdiq"):
        got = score_answer(task, row, raw)
        assert (got.score, got.outcome) == (0.0, "invalid"), raw
    assert score_answer(task, row, "təsdiq").score == 1.0


def test_near_miss_counts_are_reported_per_kind():
    task = "rag_verification_v1"
    rows = [{"id": f"r{i}", "context": "Mətn.", "claim": "İddia.", "label": "YOXDUR"} for i in range(5)]
    _, m, _ = evaluate_task(task, rows, ["YOKDUR", "yokdur", "YOXDUR.", "TESDIQ", "YOXDUR"])
    assert m["near_miss"] == {"letter_folded": 1, "trailing_punctuation": 1, "turkish_spelling": 2}
    assert m["accuracy"] == pytest.approx(0.2)
    assert m["invalid_output_rate"] == pytest.approx(0.8)


def test_breakdown_accuracy_for_claim_type():
    task = "rag_verification_v1"
    spec = [
        ("original", "TƏSDİQ", "TƏSDİQ"),
        ("original", "ZİDD", "ZİDD"),
        ("counterfactual", "ZİDD", "TƏSDİQ"),
        ("counterfactual", "TƏSDİQ", "TƏSDİQ"),
        ("counterfactual", "ZİDD", "ZIDD"),
        ("absent", "YOXDUR", "YOXDUR"),
    ]
    rows = [
        {"id": f"r{i}", "context": "Mətn.", "claim": "İddia.", "label": g, "claim_type": t}
        for i, (t, g, _) in enumerate(spec)
    ]
    _, m, _ = evaluate_task(task, rows, [raw for _, _, raw in spec], breakdowns=("claim_type",))
    assert m["per_claim_type_accuracy"] == {
        "absent": {"accuracy": pytest.approx(1.0), "n": 1},
        "counterfactual": {"accuracy": pytest.approx(1 / 3), "n": 3},
        "original": {"accuracy": pytest.approx(1.0), "n": 2},
    }


def test_breakdown_key_follows_the_task():
    rows = [
        {
            "id": "p1",
            "sentence_a": "Mən gəldim.",
            "sentence_b": "Mən gəldin.",
            "label": "A",
            "phenomenon": "uzlaşma",
        }
    ]
    _, m, _ = evaluate_task("minimal_pairs_v1", rows, ["A"], breakdowns=("phenomenon",))
    assert m["per_phenomenon_accuracy"] == {"uzlaşma": {"accuracy": 1.0, "n": 1}}
    _, m, _ = evaluate_task("nli_v1", _nli_rows(["neutral"]), ["neutral"])
    assert not any(k.startswith("per_") and k != "per_class_accuracy" for k in m)


def test_generation_error_and_truncation_score_like_invalid():
    task = "nli_v1"
    rows = _nli_rows(["neutral", "neutral", "neutral"])
    results, m, _ = evaluate_task(
        task,
        rows,
        ["neutral", "neutral", "The answer is"],
        finish_reasons=[None, None, "length"],
        errors=[None, "timeout", None],
    )
    assert [r.outcome for r in results] == ["correct", "generation_error", "truncated"]
    assert [r.score for r in results] == [1.0, 0.0, 0.0]
    assert m["generation_errors"] == 1 and m["truncated"] == 1


# Scores ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "metrics", "expected"),
    [
        ("nli_v1", {"accuracy": 0.8}, 80.0),
        ("sts_v1", {"spearman": -0.4}, 0.0),
        ("sts_v1", {"spearman": 1.0000001}, 100.0),
        ("qa_abstention_v1", {"overall_score": 0.25}, 25.0),
        ("extractive_qa_v1", {"span_recall": 0.5, "span_precision": 0.9}, 50.0),
    ],
)
def test_task_score_is_primary_metric_clamped_times_100(task_id, metrics, expected):
    primary = ScoringPlan(benchmark_task(task_id)).primary
    scored = TaskScore(task_id, "", primary, True, (), metrics, (), ())
    assert scored.score == pytest.approx(expected)


def test_block_score_is_macro_average_of_task_scores():
    scores = {"extractive_qa_v1": 90.0, "sentiment_v1": 50.0, "nli_v1": 40.0, "knowledge_choice_v1": 30.0}
    blocks = block_scores(benchmark_groups(), scores)
    assert blocks == {"understanding": pytest.approx(60.0), "knowledge": pytest.approx(30.0)}
    # Blocks keep their declared order; a block with no scored task is left out.
    assert list(benchmark_groups()) == ["understanding", "language", "knowledge", "rag"]
    assert block_scores({"a": ("x", "y"), "b": ("z",)}, {"y": 10.0, "x": 20.0}) == {"a": 15.0}


def test_a_long_task_does_not_outweigh_a_short_one():
    # 200 rows all wrong (nli) and 50 rows all right (sentiment): the block is 50, not 20.
    nli, senti = "nli_v1", "sentiment_v1"
    nli_rows = _nli_rows(["neutral"] * 200)
    senti_rows = [{"id": f"s{i}", "text": "Xidmət əla idi!", "label": "positive"} for i in range(50)]
    s_nli = evaluate_task(nli, nli_rows, ["contradiction"] * 200)[2]
    s_senti = evaluate_task(senti, senti_rows, ["positive"] * 50)[2]
    assert (s_nli, s_senti) == (0.0, 100.0)
    assert block_scores(benchmark_groups(), {"nli_v1": s_nli, "sentiment_v1": s_senti}) == {
        "understanding": 50.0
    }


def test_yoxla_score_is_mean_of_block_scores():
    blocks = {"understanding": 92.48, "language": 99.50, "knowledge": 50.67, "rag": 97.06}
    assert round(yoxla_score(blocks), 2) == 84.93


def test_yoxla_score_from_task_scores_end_to_end():
    scores = {
        "nli_v1": 80.0,
        "sts_v1": 60.0,
        "minimal_pairs_v1": 90.0,
        "az_tr_interference_v1": 70.0,
        "knowledge_choice_v1": 30.0,
        "rag_selection_v1": 100.0,
    }
    blocks = block_scores(benchmark_groups(), scores)
    assert blocks == {"understanding": 70.0, "language": 80.0, "knowledge": 30.0, "rag": 100.0}
    assert yoxla_score(blocks) == pytest.approx(70.0)


def test_task_metrics_count_outcomes():
    task = "nli_v1"
    _, m, _ = evaluate_task(task, _nli_rows(["neutral", "entailment"]), ["neutral", ""])
    assert m["outcomes"] == {"correct": 1, "invalid": 1}
    assert (m["n"], m["n_valid"]) == (2, 1)
    assert m["near_miss"] == {"empty": 1}


# Each built-in grader's per-sample scores -----------------------------------------------------

SPAN = [name for _, name in SPAN_KEYS]  # the span grader's scores, in the order it reports them


def test_per_sample_scores_of_each_grader():
    row = _nli_rows(["neutral"])[0]
    assert score_answer("nli_v1", row, "neutral").scores == {"accuracy": 1.0}
    assert score_answer("nli_v1", row, "Neutral.").scores == {"accuracy": 0.0}

    row = _sts_rows([3.0])[0]
    got = score_answer("sts_v1", row, "4.5")
    assert (sts_prediction(got), got.scores) == (4.5, {"closeness": pytest.approx(0.7), "abs_error": 1.5})
    # an invalid answer or a failed request is measured at the range's midpoint
    got = score_answer("sts_v1", row, "bilmirəm")
    assert (sts_prediction(got), got.scores) == (2.5, {"closeness": pytest.approx(0.9), "abs_error": 0.5})
    failed = score_answer("sts_v1", row, None, None, "HTTP 503")
    assert failed.outcome == "generation_error"
    assert (sts_prediction(failed), failed.scores["abs_error"]) == (2.5, 0.5)

    ctx = DATA["contexts"]["metro"]
    row = _qa_row("q1", ctx, "1967-ci ildə")
    span = score_answer("extractive_qa_v1", row, "1967-ci ildə").scores
    assert list(span) == SPAN and len(SPAN) == 8
    assert span["span_recall"] == 1.0 and span["exact_span_rate"] == 1.0 and span["unsupported_rate"] == 0.0
    invalid = score_answer("extractive_qa_v1", row, "").scores
    assert list(invalid) == SPAN and set(invalid.values()) == {0.0}

    unanswerable = _qa_row("u1", ctx, None)
    assert score_answer("qa_abstention_v1", unanswerable, "CAVAB YOXDUR").scores == {"overall_score": 1.0}
    answered = score_answer("qa_abstention_v1", row, "1967-ci ildə").scores
    assert list(answered) == ["overall_score", *SPAN] and answered["overall_score"] == 1.0
