"""Edge cases of the built-in graders that the case table does not reach."""

from __future__ import annotations

import math

from suites_helpers import write_jsonl

from yoxla.prompt.prepare import prepare_task
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.views.format import NA, metric_text

_SPEARMAN = {
    "id": "b",
    "dataset": {"path": "rows.jsonl"},
    "prompt_template": "{{t}}",
    "target_template": "{{t}}",
    "output_extraction": {"type": "strict", "mode": "numeric", "range": [0, 4]},
    "grader": {"type": "builtin", "name": "spearman"},
}


def _scored(folder, load, pool, outputs):
    write_jsonl(folder / "rows.jsonl", [{"id": f"r{i}", "t": str(i)} for i in range(len(outputs))])
    prepared = prepare_task(load(_SPEARMAN).task("b"), pool)
    return score_suite_task(prepared, [SampleOutput.from_raw(o) for o in outputs], pool=pool)


def test_spearman_without_a_valid_answer_reports_no_error(folder, load, pool):
    # every answer invalid: each is imputed for the correlation, but no error was measured,
    # and 0.0 would read as a perfect prediction
    scored = _scored(folder, load, pool, ["x", "yox", "", "beş"])
    m = scored.metrics
    assert m["n_valid"] == 0
    assert m["mae"] is None and m["rmse"] is None
    assert metric_text("mae", m["mae"]) == NA and metric_text("rmse", m["rmse"]) == NA


def test_spearman_with_valid_answers_reports_their_error(folder, load, pool):
    scored = _scored(folder, load, pool, ["0", "2", "x", "3"])  # errors on the valid ones: 0, 1, 0
    m = scored.metrics
    assert m["n_valid"] == 3
    assert math.isclose(m["mae"], 1 / 3) and math.isclose(m["rmse"], math.sqrt(1 / 3))
