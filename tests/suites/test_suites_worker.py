"""The worker process: hostile graders become per-sample errors; preprocessors fail clearly."""

from __future__ import annotations

import os

import pytest
from suites_helpers import FAST, ROWS, cases

from yoxla.contract.errors import PreprocessError
from yoxla.prompt.prepare import prepare_task
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.score.worker import Worker, WorkerLimits, WorkerPool, worker_env

GRADERS = cases("grader_cases.yaml")
TIMEOUT = 0.5


def _grader_task(source: str) -> dict:
    return {
        "id": "g",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "{{sual}}",
        "target_template": "{{cavab}}",
        "grader": {"type": "python", "source": source, "timeout_seconds": TIMEOUT},
    }


def test_case_names_are_unique():
    names = [c["name"] for c in GRADERS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in GRADERS])
def test_grader_case(case, load, monkeypatch):
    for key in ("OPENAI_API_KEY", "HF_TOKEN", "YOXLA_TEST_SECRET"):
        monkeypatch.setenv(key, "sk-do-not-leak-0123456789")
    task = load(_grader_task(case["source"])).task("g")
    with WorkerPool(FAST) as pool:  # a fresh worker: the environment above is in place
        prepared = prepare_task(task, pool, limit=1)
        outputs = [SampleOutput("Bakı")]
        result = score_suite_task(prepared, outputs, pool=pool).results[0]
    if "error" in case or "error_any" in case:
        expected = case.get("error_any") or [case["error"]]
        assert result.grader_error is not None and any(e in result.grader_error for e in expected), result
        assert result.outcome == "grader_error" and result.scores == {} and result.score is None
    else:
        assert result.grader_error is None, result.grader_error
        expected = case.get("scores") or case["scores_subset"]
        assert {k: result.scores[k] for k in expected} == expected


def test_errors_are_per_sample_and_counted(load, pool):
    source = (
        "def grade(sample, item):\n"
        "    if item['id'] == 's2':\n"
        "        while True:\n"
        "            pass\n"
        "    if item['id'] == 's3':\n"
        "        return float('nan')\n"
        "    return 1.0\n"
    )
    prepared = prepare_task(load(_grader_task(source)).task("g"), pool)
    scored = score_suite_task(prepared, [SampleOutput(r["cavab"]) for r in ROWS], pool=pool)
    assert [r.outcome for r in scored.results] == ["correct", "grader_error", "grader_error", "correct"]
    assert scored.metrics["grader_errors"] == 2
    assert scored.metrics["score"] == 1.0  # the mean over the samples that were scored
    assert scored.metrics["outcomes"] == {"correct": 2, "grader_error": 2}


def test_one_worker_serves_every_sample(load):
    source = "import os\ndef grade(sample, item):\n    return float(os.getpid())\n"
    with WorkerPool(FAST) as pool:
        prepared = prepare_task(load(_grader_task(source)).task("g"), pool)
        outputs = [SampleOutput("x")] * len(prepared.items)
        first = score_suite_task(prepared, outputs, pool=pool)
        second = score_suite_task(prepared, outputs, pool=pool)
        pids = {r.scores["score"] for r in first.results + second.results}
        assert len(pids) == 1 and pids != {float(os.getpid())}
        assert sum(w.starts for w in pool._workers.values()) == 1


def test_a_killed_worker_restarts_for_the_next_samples(load, pool):
    source = "import os\ndef grade(sample, item):\n    if item['id'] == 's1':\n        os._exit(1)\n    return 1.0\n"
    prepared = prepare_task(load(_grader_task(source)).task("g"), pool)
    scored = score_suite_task(prepared, [SampleOutput("x")] * 4, pool=pool)
    assert [r.outcome for r in scored.results] == ["grader_error", "correct", "correct", "correct"]


def test_worker_environment_is_an_allow_list(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    env = worker_env("/tmp/w")
    assert "OPENAI_API_KEY" not in env and "PYTHONPATH" not in env
    assert env["HOME"] == env["TMPDIR"] == "/tmp/w"


def test_worker_call_and_close():
    w = Worker("def f(x):\n    return x * 2\n", "<t>", FAST)
    assert w.call(["g", "f"], [21], 1.0).value == 42
    folder_count = w.starts
    w.close()
    assert not w.alive and folder_count == 1


# Preprocessors ----------------------------------------------------------------------------------


def _pre_task(source: str, contract: str = "row") -> dict:
    return {
        "id": "p",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "{{sual}}",
        "target_template": "{{cavab}}",
        "preprocess": {"type": "python", "contract": contract, "source": source, "timeout_seconds": TIMEOUT},
    }


@pytest.mark.parametrize(
    ("source", "contract", "ids"),
    [
        pytest.param(
            "def transform_row(row):\n    return row\n", "row", ["s1", "s2", "s3", "s4"], id="identity"
        ),
        pytest.param(
            "def transform(row):\n    return None if row['mövzu'] == 'coğrafiya' else row\n",
            "row",
            ["s2", "s3"],
            id="drops",
        ),
        pytest.param(
            "def process_doc(row):\n    return [row, {**row, 'id': row['id'] + '-b'}]\n",
            "row",
            ["s1", "s1-b", "s2", "s2-b", "s3", "s3-b", "s4", "s4-b"],
            id="duplicates_with_new_ids",
        ),
        pytest.param(
            "def transform(row):\n    return [row, row]\n",
            "row",
            [str(i) for i in range(1, 9)],
            id="duplicates_same_ids",
        ),
        pytest.param(
            "def transform_batch(rows):\n    return list(reversed(rows))[:3]\n",
            "batch",
            ["s4", "s3", "s2"],
            id="batch",
        ),
        pytest.param(
            "def process_docs(rows):\n    return rows + [{'id': 'yeni', 'sual': 'S', 'cavab': 'C'}]\n",
            "batch",
            ["s1", "s2", "s3", "s4", "yeni"],
            id="batch_adds",
        ),
    ],
)
def test_preprocessor_changes_rows(load, pool, source, contract, ids):
    prepared = prepare_task(load(_pre_task(source, contract)).task("p"), pool)
    assert [i.id for i in prepared.items] == ids


@pytest.mark.parametrize(
    ("source", "contract", "message"),
    [
        pytest.param(
            "def transform(row):\n    if row['id'] == 's3':\n        raise ValueError('pis sətir')\n    return row\n",
            "row",
            "preprocess (dataset) failed on row 3 (id 's3'): ValueError: pis sətir (line 3)",
            id="raises_on_a_row",
        ),
        pytest.param(
            "def transform(row):\n    while row:\n        pass\n",
            "row",
            "failed on row 1 (id 's1'): timed out",
            id="loops",
        ),
        pytest.param("def transform(row):\n    return 'x'\n", "row", "returned str", id="wrong_type"),
        pytest.param(
            "def transform(row):\n    return [row, 3]\n", "row", "a list with non-objects", id="wrong_list"
        ),
        pytest.param(
            "def transform(row):\n    return None\n", "row", "no rows are left", id="drops_everything"
        ),
        pytest.param(
            "def foo(row):\n    return row\n", "row", "defines none of transform_row()", id="no_function"
        ),
        pytest.param(
            "def transform_batch(rows):\n    1 / 0\n", "batch", "ZeroDivisionError", id="batch_raises"
        ),
        pytest.param(
            "def transform(row):\n    return row\n",
            "batch",
            "transform_batch(), process_docs()",
            id="wrong_contract",
        ),
    ],
)
def test_failing_preprocessor_fails_the_task_naming_the_row(load, pool, source, contract, message):
    with pytest.raises(PreprocessError) as err:
        prepare_task(load(_pre_task(source, contract)).task("p"), pool)
    assert message in str(err.value)
    assert "task 'p'" in str(err.value)


# Forged protocol lines ----------------------------------------------------------------------------
# A grader can reach the protocol stream (here through the child's own object); whatever it
# writes there is read as hostile: the item in flight gets one grader error, the others are
# scored by a restarted worker, and the parent never raises.

FORGE = (
    "import gc\n"
    "def _send(data):\n"
    "    out = next(o for o in gc.get_objects() if type(o).__name__ == 'Child').proto_out\n"
    "    out.flush()\n"
    "    out.buffer.write(data + b'\\n')\n"
    "    out.buffer.flush()\n"
    "def grade(sample, item):\n"
    "    if item['id'] == 's2':\n"
    "        _send({line!r})\n"
    "    return 1.0\n"
)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param('{"i": 3, "ok": true, "value": 1.0}', "a result for another item", id="other_item"),
        pytest.param('{"ok": true, "value": 1.0}', "a result for another item", id="no_index"),
        pytest.param('{"i": 1, "ok": true, "value": NaN}', "not a finite number", id="nan_score"),
        pytest.param('{"i": 1, "ok": true, "value": Infinity}', "not a finite number", id="infinite_score"),
        pytest.param("[" * 200_000 + "]" * 200_000, "nested more than", id="nested_200000"),
        pytest.param('{"i": 1, "value": 1.0}', "not a result", id="no_ok"),
        pytest.param('{"i": 1, "ok": "yes"}', "not a result", id="ok_not_bool"),
        pytest.param('{"i": 1, "ok": false, "error": {"x": 1}}', "without its error", id="error_not_text"),
        pytest.param(
            '{"op": "judge", "i": 9999999, "request": {}}', "judge request for another", id="judge_far"
        ),
        pytest.param(
            '{"op": "judge", "i": -1, "request": {}}', "judge request for another", id="judge_negative"
        ),
        pytest.param('{"done": 4}', "ended a batch early", id="done_early"),
        pytest.param("42", "not a protocol line", id="not_an_object"),
        pytest.param(b"\xff\xfe", "not a protocol line", id="not_utf8"),
    ],
)
def test_a_forged_protocol_line_is_one_grader_error(load, pool, line, message):
    data = line if isinstance(line, bytes) else line.encode("utf-8")
    prepared = prepare_task(load(_grader_task(FORGE.format(line=data))).task("g"), pool)
    scored = score_suite_task(prepared, [SampleOutput("x")] * 4, pool=pool)
    outcomes = [r.outcome for r in scored.results]
    # s2's grader error, then the genuine reply for s2 (after a forged line with s2's index) may be
    # taken for s3: never more than those two, and s4 is always scored.
    assert outcomes[0] == "correct" and outcomes[1] == "grader_error" and outcomes[3] == "correct", outcomes
    assert message in (scored.results[1].grader_error or ""), scored.results[1].grader_error
    assert scored.metrics["grader_errors"] <= 2


def test_a_forged_score_of_1e308_is_kept_as_the_grader_s_own_answer(load, pool):
    # A finite number written with the right index is indistinguishable from the grader's own
    # answer (the grader decides its scores); the reply it then sends is the one left over.
    line = b'{"i": 1, "ok": true, "value": 1e308}'
    prepared = prepare_task(load(_grader_task(FORGE.format(line=line))).task("g"), pool)
    scored = score_suite_task(prepared, [SampleOutput("x")] * 4, pool=pool)
    assert [r.outcome for r in scored.results][3] == "correct"
    assert scored.results[1].scores == {"score": 1e308}
    assert "another item" in (scored.results[2].grader_error or "")


def test_a_forged_line_while_loading_is_a_load_error():
    source = (
        "import gc\nnext(o for o in gc.get_objects() if type(o).__name__ == 'Child').send('{\"i\": 5}')\n"
    )
    with Worker(source, "<t>", FAST) as w:
        res = w.call(["f"], [], 1.0)
    assert not res.ok and "an item it was not asked about" in (res.error or "")


def test_an_oversized_protocol_line_is_an_error_not_a_crash():
    limits = WorkerLimits(memory_mb=1024, load_timeout_s=20.0, grace_s=0.5, max_response_bytes=1 << 16)
    with Worker("def f():\n    return 'ə' * 100_000\n", "<t>", limits) as w:
        res = w.call(["f"], [], 2.0)
        assert not res.ok and "larger than" in (res.error or "")
        assert w.call(["g", "len"], [[1, 2]], 2.0).ok is False  # restarted: the code defines no g()
