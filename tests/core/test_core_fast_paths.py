"""The fast paths of re-scoring give what the general ones give.

Span tokens listed for a short quote against counted by pattern for a long one; the shared-token
count against ``Counter`` intersection; the replay with an empty, a full or a partly filled memo;
answer columns against :class:`SampleOutput` objects; the modal answer on a tie; and admission
of a file reading its bytes once.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from yoxla.contract.benchmark import benchmark_task, choice_space, prepare_rows, task_ids
from yoxla.data.editions import load_edition, load_rows
from yoxla.extract.text import tokens
from yoxla.score import spans

WORDS = ["Bakı", "BAKI", "şəhər", "İçərişəhər", "ı", "i", "İ", "I", "və", "2000-ci", "e\u0301", "_", "ilə"]
GLUE = [" ", ", ", ".", "-", "«", "»", "\n", ""]
texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(GLUE)), max_size=12).map(
    lambda parts: "".join(w + g for w, g in parts)
)


@settings(max_examples=400, deadline=None)
@given(quote=texts, gold=texts)
def test_listed_quote_tokens_score_as_the_pattern_count(quote, gold):
    """A quote up to ``_LISTED`` characters has its tokens listed; counting them by pattern (the
    path of a longer quote) gives the same token F1 and normalised EM."""
    gold_tokens = tokens(spans.trim_quote(gold))
    q = spans.trim_quote(quote)
    listed = spans._token_scores(q, gold_tokens)
    with mock.patch.object(spans, "_LISTED", -1):
        counted = spans._token_scores(q, gold_tokens)
    assert listed == counted


@settings(max_examples=300, deadline=None)
@given(p=st.lists(st.sampled_from("abcdə"), max_size=8), g=st.lists(st.sampled_from("abcdə"), max_size=8))
def test_shared_token_count_is_the_counter_intersection(p, g):
    assert spans._common(p, g) == sum((Counter(p) & Counter(g)).values())


def _answers(prepared, shift: int) -> list[str]:
    """Each item's target (the gold, or the abstention phrase) in one of five forms."""
    gold = [item.target for item in prepared.items]
    forms = ("{}", "Cavab: {}", "**{}**", "bilmirəm", "")
    return [forms[(i + shift) % len(forms)].format(g) for i, g in enumerate(gold)]


def _verdicts(res) -> list[tuple]:
    return [
        (r.id, r.extracted, r.valid, r.reason, r.near_miss, r.outcome, r.score, r.scores) for r in res.results
    ]


def test_answer_columns_score_as_sample_outputs():
    from yoxla.score.replay import TaskScorer
    from yoxla.score.samples import SampleOutput
    from yoxla.score.worker import WorkerPool

    for tid in ("qa_abstention_v1", "intent_v1"):
        rows = load_rows(load_edition("sample"), tid)
        prepared = prepare_rows(tid, rows, breakdowns=benchmark_task(tid).spec.breakdowns)
        scorer = TaskScorer(prepared, WorkerPool())
        answers = _answers(prepared, 1)
        finish = ["length" if i % 3 == 0 else "stop" for i in range(len(rows))]
        errors = ["HTTP 500" if i % 5 == 4 else None for i in range(len(rows))]
        outputs = [SampleOutput.from_raw(a, f, e) for a, f, e in zip(answers, finish, errors, strict=True)]
        a = scorer.score(prepared.items, outputs)
        b, _, _ = scorer.score_columns(prepared.items, [o.output_text for o in outputs], finish, errors)
        assert [r.__dict__ for r in a] == [r.__dict__ for r in b]
        assert {r.outcome for r in b} >= {"generation_error", "truncated"}


def test_modal_answer_on_a_tie_is_the_one_counted_first():
    """The tally counts answers in a plain dict: on a tie the modal answer is still the one
    ``Counter.most_common`` gives (the first counted)."""
    from yoxla.score.replay import score_builtin_task

    rows = load_rows(load_edition("sample"), "nli_v1")
    prepared = prepare_rows("nli_v1", rows)
    labels = list(choice_space("nli_v1", None) or ())
    assert len(labels) == 3
    for first in (labels[2], labels[0], labels[1]):
        order = [first, *[x for x in labels if x != first]]
        answers = [order[i % len(order)] for i in range(len(rows))]
        tied = Counter(answers)
        assert len(set(list(tied.values())[:2])) == 1  # the first two labels tie
        blank = [None] * len(rows)
        got = score_builtin_task(prepared, prepared.items, answers, blank, blank).metrics
        assert got["modal_answer"] == Counter(answers).most_common(1)[0][0] == first


def test_check_file_reads_and_hashes_the_file_once(tmp_path):
    from yoxla.admission import rules as admission

    path = tmp_path / "r.json"
    path.write_bytes(b'{"schema_version": 1}')
    reads: list[str] = []
    real = admission.read_regular_file

    def counted(p, *a, **k):
        reads.append(str(p))
        return real(p, *a, **k)

    with mock.patch.object(admission, "read_regular_file", counted):
        v = admission.check_file(path, use_cache=False)
    assert reads == [str(path)]
    assert v.sha256 == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert v.status == admission.EXCLUDED and v.reasons


def test_a_tally_taken_in_bulk_is_the_tally_taken_one_sample_at_a_time():
    """``Tally.add_all`` (counts in one pass each) against :meth:`Tally.add` per sample, on
    every task: grader errors, samples without a score or a source, rows without the
    breakdown field, and rows that are not plain dicts (which take the per-sample way)."""
    from dataclasses import replace
    from types import MappingProxyType

    from yoxla.score.replay import TaskScorer
    from yoxla.score.tally import Tally
    from yoxla.score.worker import WorkerPool

    seen_cells = 0
    for tid in task_ids():
        rows = load_rows(load_edition("sample"), tid)
        breakdowns = benchmark_task(tid).spec.breakdowns
        prepared = prepare_rows(tid, rows, breakdowns=breakdowns)
        scorer = TaskScorer(prepared, WorkerPool())
        items = list(scorer.prepared.items)
        results = scorer.score_columns(items, _answers(prepared, 2), [None] * len(rows), [None] * len(rows))[
            0
        ]
        results[0] = replace(results[0], grader_error="broken", scores={}, score=None)
        results[-1] = replace(results[-1], source=None)
        if breakdowns:  # a row without the first breakdown field
            items[1] = replace(items[1], row={k: v for k, v in items[1].row.items() if k != breakdowns[0]})
        for kind in (dict, MappingProxyType):
            its = [replace(it, row=kind(it.row)) for it in items] if kind is not dict else items
            bulk, each = Tally(scorer.plan), Tally(scorer.plan)
            bulk.add_all(its, results)
            for it, r in zip(its, results, strict=True):
                each.add(it, r)
            assert vars(bulk) == vars(each), tid
            assert scorer.metrics_of(bulk)[0] == scorer.metrics_of(each)[0]
            seen_cells += sum(len(keys) for _, _, keys, _ in bulk._cells)
    assert seen_cells  # some breakdown was counted
