"""An attacker's pass over the newest suite features: row checks, ``--data-dir``/``--revision``,
"not re-checked" admission, suites by id and the public API, each fed hostile input.

Every case expects what the project promises for hostile input: one clear line and a non-zero
exit (never a traceback), bounded in size and time, one bad row never hiding the others, no
credential in a message or a stored file, and nothing a result file names ever read or run.
"""

from __future__ import annotations

import builtins
import copy
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from suite_run_helpers import ROWS, SuiteRunner, make_suite, manifest
from suites_helpers import task, write_jsonl, write_manifest

import yoxla
from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.admission.verdict import NOT_RECHECKED
from yoxla.board.loading import Board
from yoxla.board.prepared import prepare
from yoxla.cli.main import run as cli_run
from yoxla.contract.errors import ManifestError
from yoxla.contract.loader import load_manifest
from yoxla.contract.registry import find_committed, load_suite_manifest, resolve_suite
from yoxla.data.rowchecks import row_problems
from yoxla.extract.extractors import build_extractor
from yoxla.prompt.prepare import prepare_task
from yoxla.record.signing import content_digest
from yoxla.score import graders
from yoxla.testing.fakehub import FakeHub

LONGEST_LINE = 600  # characters: a message quotes a hostile value cut short


def _one_clean_line(err: str, limit: int = LONGEST_LINE) -> str:
    """The single error line of a refused command: no traceback, printable, bounded."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    (line,) = lines
    assert "Traceback" not in err and line.startswith("yoxla: error: ")
    assert len(line) <= limit, line[:200]
    assert all(c.isprintable() for c in line), ascii(line)
    return line


# Row checks ---------------------------------------------------------------------------------------

PASSAGE = "Bakı Azərbaycanın paytaxtıdır. İçərişəhər Bakının qədim hissəsidir."
SPAN = {
    "prompt_template": "{{mətn}}",
    "grader": {"type": "builtin", "name": "span", "passage_field": "mətn", "answer_start_field": "start"},
}


def _problems(folder: Path, rows: list[dict[str, Any]], **fields: Any) -> dict[str, str]:
    """item id -> its rule, for every row the task's graders refuse."""
    write_jsonl(folder / "data.jsonl", rows)
    manifest_ = load_manifest(write_manifest(folder, [task(**fields)], metadata={"name": "yoxlama"}))
    (t,) = manifest_.tasks.values()
    return {p.item: p.rule for p in row_problems(prepare_task(t))}


@pytest.mark.parametrize(
    ("start", "refused"),
    [
        (0, False),
        (None, False),  # no offset given: the span is located by its text
        (-len(PASSAGE), True),  # Python's slice would land on "Bakı" from the end
        (-1, True),
        (10**30, True),
        (2**63, True),
        ("0", True),
        (True, True),  # a bool is not an offset (True == 1 in Python)
        (False, True),
        (0.0, True),
        ([0], True),
        ({"at": 0}, True),
    ],
    ids=repr,
)
def test_answer_start_must_be_a_character_offset(tmp_path: Path, start: Any, refused: bool) -> None:
    rows = [
        {"id": "bad", "mətn": PASSAGE, "cavab": "Bakı", "start": start},
        {"id": "other", "mətn": PASSAGE, "cavab": "Gəncə", "start": 0},  # still checked
    ]
    got = _problems(tmp_path, rows, **SPAN)
    assert got["other"] == "gold span 'Gəncə' is not found in 'mətn' [span]"
    if refused:
        assert got["bad"] == (
            f"start {start!r} is not a character offset "
            f"in 'mətn' (an integer from 0 to {len(PASSAGE)}) [span]"
        )
    else:
        assert "bad" not in got


def test_a_row_whose_check_raises_is_one_reason_and_the_others_are_still_checked(
    tmp_path: Path, monkeypatch
) -> None:
    from yoxla.data import rowchecks

    def fragile(spec: Any, grader: Any, row: Any, target: str, space: Any) -> str | None:
        if row["id"] == "boom":
            raise RecursionError("a row built to break the check")
        return rowchecks.span_locatable(spec, grader, row, target, space)

    monkeypatch.setitem(rowchecks.GRADER_CHECKS, "span", (fragile,))
    rows = [
        {"id": "boom", "mətn": PASSAGE, "cavab": "Bakı", "start": 0},
        {"id": "ok", "mətn": PASSAGE, "cavab": "Bakı", "start": 0},
        {"id": "bad", "mətn": PASSAGE, "cavab": "Gəncə", "start": 0},
    ]
    assert _problems(tmp_path, rows, **SPAN) == {
        "boom": "the row cannot be checked (RecursionError) [span]",
        "bad": "gold span 'Gəncə' is not found in 'mətn' [span]",
    }


def test_a_gold_that_occurs_very_often_is_checked_in_linear_time(tmp_path: Path) -> None:
    passage = "a" * 200_000
    rows = [{"id": f"q{i}", "mətn": passage, "cavab": "a" * (i + 1), "start": 0} for i in range(150)]
    rows.append({"id": "miss", "mətn": passage, "cavab": "b", "start": 0})
    started = time.monotonic()
    got = _problems(tmp_path, rows, **SPAN)
    assert list(got) == ["miss"]
    assert time.monotonic() - started < 10  # every occurrence of each gold: ~50 s


def test_a_large_answer_space_is_normalised_once_not_per_row(tmp_path: Path) -> None:
    labels = [f"etiket{i}" for i in range(1_000)]  # MAX_CHOICES
    write_jsonl(
        tmp_path / "data.jsonl",
        [{"id": f"r{i}", "sual": "?", "cavab": labels[i % 1_000]} for i in range(20_000)],
    )
    extraction = {"type": "label_set", "labels": labels, "case_sensitive": False}
    grader = {"type": "builtin", "name": "exact_match", "case_sensitive": False}
    path = write_manifest(
        tmp_path, [task(output_extraction=extraction, grader=grader)], metadata={"name": "y"}
    )
    (t,) = load_manifest(path).tasks.values()
    prepared = prepare_task(t)
    started = time.monotonic()
    assert row_problems(prepared) == []
    assert time.monotonic() - started < 4  # each row's space normalised again: ~8 s


# What a perfect answer (the gold written back) scores under the task's extraction and grader:
# the gold check refuses exactly the golds that could never score.
LABELS_CI = {"type": "label_set", "labels": ["bəli", "xeyr", "İçəri"], "case_sensitive": False}
LABELS_CS = {"type": "label_set", "labels": ["A", "B", "C\u0327", "D"], "case_sensitive": True}
STRICT = {"type": "strict", "mode": "choice"}
STRICT_CHOICES = ["A", "B", "C\u0327", "HEÇ BİRİ"]
GOLD_CASES = [
    # (extraction, grader, gold)
    (LABELS_CI, {"name": "exact_match"}, "bəli"),
    (LABELS_CI, {"name": "exact_match"}, "BƏLİ"),  # another casing: a case-sensitive grader
    (LABELS_CI, {"name": "exact_match", "case_sensitive": False}, "BƏLİ"),
    (LABELS_CI, {"name": "exact_match", "case_sensitive": False}, "BƏLI"),  # dotless I: bəlı
    (LABELS_CI, {"name": "exact_match", "case_sensitive": False}, "İÇƏRİ"),
    (LABELS_CI, {"name": "exact_match", "case_sensitive": False}, "ICERI"),  # letters folded
    (LABELS_CI, {"name": "accuracy"}, "xeyr"),
    (LABELS_CI, {"name": "accuracy"}, "XEYR"),  # accuracy compares the label exactly
    (LABELS_CS, {"name": "accuracy"}, "A"),
    (LABELS_CS, {"name": "accuracy"}, "\u0410"),  # Cyrillic А
    (LABELS_CS, {"name": "accuracy"}, "Ç"),  # the label's NFC form: what extraction gives
    (LABELS_CS, {"name": "accuracy"}, "C\u0327"),  # decomposed: never equal to the extracted "Ç"
    (LABELS_CS, {"name": "exact_match"}, "C\u0327"),  # exact_match compares in NFC
    (LABELS_CS, {"name": "exact_match"}, "A\u200b"),  # a zero-width space is a character
    (LABELS_CS, {"name": "accuracy"}, "A "),
    (LABELS_CS, {"name": "exact_match"}, "A "),  # exact_match trims
    (STRICT, {"name": "accuracy"}, "Ç"),  # a strict choice is given as declared (decomposed)
    (STRICT, {"name": "accuracy"}, "C\u0327"),
    (STRICT, {"name": "accuracy"}, "HEÇ BİRİ"),
    (STRICT, {"name": "accuracy"}, "heç biri"),
    (STRICT, {"name": "exact_match"}, "Ç"),
]


def _perfect_score(spec: Any, grader: Any, gold: str) -> float:
    extracted = build_extractor(spec).extract(gold)
    scores = graders.build(grader, None, True).score({}, gold, extracted)
    return scores[next(iter(scores))]


def test_the_gold_check_refuses_exactly_the_golds_a_perfect_answer_cannot_score(tmp_path: Path) -> None:
    disagree = []
    for n, (extraction, grader, gold) in enumerate(GOLD_CASES):
        folder = tmp_path / str(n)
        folder.mkdir()
        choices = {"choices": STRICT_CHOICES} if extraction is STRICT else {}
        got = _problems(
            folder,
            [{"id": "g", "sual": "?", "cavab": gold}],
            output_extraction=extraction,
            grader={"type": "builtin", **grader},
            **choices,
        )
        (t,) = load_manifest(folder / "suite.yaml").tasks.values()
        scoreable = _perfect_score(t.spec, t.spec.graders[0], gold) == 1.0
        if scoreable == ("g" in got):
            disagree.append((grader["name"], ascii(gold), got.get("g"), scoreable))
    assert disagree == []


def test_a_gold_in_another_casing_is_told_apart_in_the_message(tmp_path: Path) -> None:
    got = _problems(
        tmp_path,
        [{"id": "g", "sual": "?", "cavab": "BƏLİ"}],
        output_extraction=LABELS_CI,
        grader={"type": "builtin", "name": "exact_match"},
    )
    assert got["g"] == (
        "gold 'BƏLİ' is not in the answer space (bəli, xeyr, İçəri) (another casing, spacing or "
        "Unicode form of a label, which this grader tells apart) [exact_match]"
    )


def test_numbers_that_are_no_value_are_refused_and_a_near_bound_is_shown_as_it_is(tmp_path: Path) -> None:
    golds = ["NaN", "Infinity", "-inf", "1e400", "٣", "5.0000001", "5", "-0"]
    got = _problems(
        tmp_path,
        [{"id": f"n{i}", "sual": "?", "cavab": g} for i, g in enumerate(golds)],
        output_extraction={"type": "strict", "mode": "numeric", "range": [0, 5]},
        grader={"type": "builtin", "name": "numeric_tolerance"},
    )
    assert got == {
        "n0": "gold 'NaN' is not a number [numeric_tolerance]",
        "n1": "gold 'Infinity' is not a number [numeric_tolerance]",
        "n2": "gold '-inf' is not a number [numeric_tolerance]",
        "n3": "gold '1e400' is not a number [numeric_tolerance]",
        "n4": "gold '٣' is not a number [numeric_tolerance]",
        "n5": "gold 5.0000001 is outside the range 0–5 [numeric_tolerance]",
    }


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"id": "n1", "sual": "?", "cavab": NaN}', "NaN is not a JSON value"),
        ('{"id": "n1", "sual": "?", "cavab": Infinity}', "Infinity is not a JSON value"),
        (
            '{"id": "n1", "sual": "?", "cavab": "1", "x": ' + "[" * 50_000 + "]" * 50_000 + "}",
            "nested too deeply",
        ),
    ],
    ids=["NaN", "Infinity", "deep"],
)
def test_a_row_file_with_no_json_values_or_deep_nesting_is_one_line(
    tmp_path: Path, capsys, line: str, reason: str
) -> None:
    (tmp_path / "data.jsonl").write_text(
        line + '\n{"id": "n2", "sual": "?", "cavab": "3"}\n', encoding="utf-8"
    )
    numeric = {"type": "strict", "mode": "numeric", "range": [0, 5]}
    path = write_manifest(tmp_path, [task(output_extraction=numeric)], metadata={"name": "y"})
    started = time.monotonic()
    assert cli_run(["suite", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 1 (row n1)" in _one_clean_line(err) and reason in err
    assert time.monotonic() - started < 10


# Suites by id, and the roots they are looked for in -------------------------------------------------

HOSTILE_REFS = [
    "../../x",
    "yoxla-sample/../..",
    "yoxla-sample/",
    "yo\x00x",
    "yo\x1b[31mx",
    "yoxla-sample\n",
    "a" * 5_000,  # longer than a file name may be: the OS refuses to look
    "a/" * 3_000,  # longer than a path may be
    "\udced\udca0",  # bytes that are no UTF-8, as Python hands them over from argv
]


@pytest.mark.parametrize("ref", HOSTILE_REFS, ids=lambda r: ascii(r)[:30])
def test_a_hostile_suite_reference_names_no_suite_in_one_line(
    ref: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_suite(ref) is None
    with pytest.raises(ManifestError) as caught:
        load_suite_manifest(ref)
    assert "no committed suite has this id" in str(caught.value) and len(str(caught.value)) < LONGEST_LINE
    for argv in (
        ["suite", "check", ref],
        ["suite", "validate", ref],
        ["suite", "render", ref, "--task", "nli_v1"],
        ["run", "--suite", ref, "--provider", "suite-baseline", "--model", "echo"],
    ):
        assert cli_run(argv) == 2, argv[:2]
        line = _one_clean_line(capsys.readouterr().err)
        assert "no committed suite has this id" in line
    assert not (tmp_path / "runs").exists()
    with pytest.raises(ValueError) as api_error:
        yoxla.load_suite(ref)
    assert len(str(api_error.value)) < LONGEST_LINE and "\n" not in str(api_error.value)


def test_a_path_too_long_to_look_up_is_no_run_folder_for_rescore(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    verdict = yoxla.rescore("a" * 5_000)  # a result file that cannot be read: excluded, no OSError
    assert verdict.status == "excluded" and len(verdict.reasons) == 1


@pytest.mark.parametrize(
    "options",
    [
        ["--retry-errors", "a" * 5_000],
        ["--retry-errors", "a/" * 3_000],
        ["--resume", "--run-id", "a" * 5_000],
    ],
    ids=["retry-long-name", "retry-long-path", "resume-long-id"],
)
def test_a_run_folder_name_that_cannot_be_a_path_is_one_short_line(
    options: list[str], tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_run(["run", "--provider", "suite-baseline", "--model", "echo", *options]) == 2
    line = _one_clean_line(capsys.readouterr().err)
    assert line.endswith(": no such run folder or result file (File name too long)"), line


def _loop(tmp_path: Path) -> Path:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    return loop


def _file(tmp: Path) -> Path:
    (tmp / "fayl").write_text("x", encoding="utf-8")
    return tmp / "fayl"


@pytest.mark.parametrize("variable", ["YOXLA_ROOT", "YOXLA_SUITES_DIR"])
@pytest.mark.parametrize(
    "root",
    [
        lambda tmp: tmp / "yoxdur",  # nowhere
        lambda tmp: Path(os.devnull),  # a device
        _file,
        _loop,  # a symbolic-link loop
        lambda tmp: tmp / ("a" * 300),  # a name the OS refuses
    ],
    ids=["nowhere", "device", "file", "link-loop", "too-long"],
)
def test_a_root_that_is_no_folder_holds_no_suites_and_says_so(
    root, variable: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, str(root(tmp_path)))
    assert [c.path.stem for c in find_committed()] == ["yoxla-sample", "yoxla-v1"]  # the package's
    assert resolve_suite("yoxla-sample") is not None
    assert resolve_suite("oxu") is None
    assert cli_run(["suite", "check", "oxu"]) == 2
    line = _one_clean_line(capsys.readouterr().err)
    assert line.startswith("yoxla: error: oxu: no such file, and no committed suite has this id (")
    assert "no suites folder at" in line and line.endswith(f"from ${variable})"), line


def test_a_suites_folder_with_a_link_loop_is_walked_without_following_it(tmp_path: Path) -> None:
    suites = tmp_path / "suites"
    make_suite(tmp_path)
    (suites / "sinaq" / "self").symlink_to(suites)
    (suites / "loop").symlink_to(suites / "loop")
    found = [c.path for c in find_committed(suites, package=False)]
    assert found == [suites / "sinaq" / "sinaq.yaml"]
    assert resolve_suite("sinaq", root=tmp_path) == suites / "sinaq" / "sinaq.yaml"


# --revision and --data-dir on a suite run -------------------------------------------------------------

HUB = {"source": "huggingface", "path": "acme/toplama", "revision": "v1.0"}


@pytest.fixture
def hub_run(tmp_path: Path, capsys, monkeypatch) -> tuple[SuiteRunner, Path, FakeHub]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "remote").mkdir()
    write_jsonl(tmp_path / "remote" / "test.jsonl", ROWS)
    fake = FakeHub(tmp_path / "remote", tmp_path / "hf-cache").install(monkeypatch)
    return SuiteRunner(tmp_path, capsys, monkeypatch), make_suite(tmp_path, manifest(dataset=HUB)), fake


def _suite_run(runner: SuiteRunner, suite: Path, *extra: str) -> tuple[int, str]:
    rc, _, err = runner(
        "run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "echo", *extra
    )
    return rc, err


@pytest.mark.parametrize(
    "revision",
    [
        "x" * 10_000_000,
        "v1\x1b[31m\nqırmızı",
        "https://user:s3cr3t-token@huggingface.co/x",
        "../../etc",
        "refs/../../x",
        "/main",
        "main/",
        "a//b",
        ".hidden",
        "v1 v2",
        "",
    ],
    ids=lambda r: ascii(r)[:24],
)
def test_a_hostile_revision_is_refused_before_the_hub_or_a_run_folder(hub_run, revision: str) -> None:
    runner, suite, fake = hub_run
    fake.commit_calls.clear()
    started = time.monotonic()
    rc, err = _suite_run(runner, suite, "--revision", revision)
    assert rc == 2
    line = _one_clean_line(err)
    assert "not a revision" in line and "s3cr3t" not in line
    assert time.monotonic() - started < 10
    assert fake.commit_calls == []  # the Hub client never saw it
    assert not runner.runs.exists() or not any(runner.runs.iterdir())
    assert not runner.results.exists()


def test_a_branch_with_slashes_is_still_a_revision(hub_run) -> None:
    runner, suite, _ = hub_run
    rc, err = _suite_run(runner, suite, "--revision", "refs/pr/1")
    assert rc == 0, err
    assert runner.result("suite-baseline__echo.json")["run"]["dataset"]["revision"] == "refs/pr/1"


@pytest.mark.parametrize(
    "data_dir",
    [_loop, lambda tmp: tmp / ("a/" * 3_000), lambda tmp: Path(os.devnull), lambda tmp: tmp / "yo\x1bx"],
    ids=["link-loop", "too-long", "device", "control-character"],
)
def test_a_data_dir_that_is_no_folder_is_one_line(hub_run, tmp_path: Path, data_dir) -> None:
    runner, suite, _ = hub_run
    rc, err = _suite_run(runner, suite, "--data-dir", str(data_dir(tmp_path)))
    assert rc == 2
    assert _one_clean_line(err).endswith(": no such folder")


def test_a_data_dir_too_long_to_record_is_refused_before_the_model_is_asked(hub_run, tmp_path) -> None:
    runner, suite, _ = hub_run
    deep = tmp_path.joinpath(*["d" * 200] * 3)  # a real folder; its path is over 500 characters
    deep.mkdir(parents=True)
    write_jsonl(deep / "test.jsonl", ROWS)
    rc, err = _suite_run(runner, suite, "--data-dir", str(deep))
    assert rc == 2  # not a traceback when the result file is written, after every model call
    line = _one_clean_line(err)
    assert "characters, more than the 500 a result file records" in line
    assert not runner.runs.exists() or not any(runner.runs.iterdir())


def test_a_data_dir_whose_repository_folder_loops_is_one_line(hub_run, tmp_path: Path) -> None:
    runner, suite, _ = hub_run
    local = tmp_path / "kopiya"
    (local / "acme").mkdir(parents=True)
    (local / "acme" / "toplama").symlink_to(local / "acme")  # DIR/<owner>/<name> points back up
    rc, err = _suite_run(runner, suite, "--data-dir", str(local))
    assert rc == 2
    assert "no 'test' data" in _one_clean_line(err, limit=2_000)  # it names two tmp folders


# Result files that name paths, or claim to be "not re-checked" ----------------------------------------


@pytest.fixture
def local_doc(tmp_path: Path, capsys, monkeypatch) -> dict[str, Any]:
    """The result file of a run of a committed suite with local data (so it is re-checked)."""
    monkeypatch.chdir(tmp_path)
    suite = make_suite(tmp_path)
    runner = SuiteRunner(tmp_path, capsys, monkeypatch)
    rc, err = _suite_run(runner, suite)
    assert rc == 0, err
    return runner.result("suite-baseline__echo.json")


def _data(tmp_path: Path) -> DataSource:
    return DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites"))


def _sealed(doc: dict[str, Any]) -> dict[str, Any]:
    doc["content_sha256"] = content_digest(doc)
    return doc


TRAP = "yoxla-trap-8c1f"


class _Reads:
    """Every path the process opens, stats or lists while active (``touched``: those with TRAP)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.touched: list[str] = []
        for module, name in ((os, "stat"), (os, "lstat"), (os, "open"), (os, "scandir"), (os, "listdir")):
            monkeypatch.setattr(module, name, self._wrap(getattr(module, name)))
        monkeypatch.setattr(builtins, "open", self._wrap(builtins.open))
        monkeypatch.setattr(io, "open", self._wrap(io.open))

    def _wrap(self, real: Any) -> Any:
        def spy(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, str | os.PathLike) and TRAP in os.fspath(path):
                self.touched.append(os.fspath(path))
            return real(path, *args, **kwargs)

        return spy


@pytest.mark.parametrize(
    "dataset",
    [
        {"source": f"../../{TRAP}/etc/passwd", "revision": None},
        {"source": f"/tmp/{TRAP}/kopiya", "revision": None},
        {
            "source": f"https://user:token@example.org/{TRAP}",
            "revision": None,
        },  # a URL revision: tests/runner/test_hostile_paths_and_revisions.py
        {"source": f"file:///{TRAP}", "revision": "../../x"},
    ],
    ids=["relative", "absolute", "credentials", "file-url"],
)
def test_a_result_files_run_dataset_is_never_read(local_doc, tmp_path: Path, monkeypatch, dataset) -> None:
    plain = check_document(copy.deepcopy(local_doc), data=_data(tmp_path))
    assert plain.status == "admitted" and plain.rechecked, plain.reasons
    doc = copy.deepcopy(local_doc)
    doc["run"]["dataset"] = dataset
    reads = _Reads(monkeypatch)
    data = _data(tmp_path)
    v = check_document(_sealed(doc), path="results/suites/sinaq/x.json", data=data)
    board = Board([v], data)
    board.shown("suite:sinaq")
    prepare(board, floors=False)  # every table and view model of the app
    assert reads.touched == []
    Path(dataset["source"]).exists()  # the spy sees a look at the path, had anything looked
    assert reads.touched
    # The file is judged on its answers, as without it: run.dataset is provenance, not data.
    assert (v.status, v.rechecked, v.scores) == (plain.status, plain.rechecked, plain.scores), v.reasons


@pytest.mark.parametrize(
    "claim",
    [
        lambda d: d.update(rechecked=False),
        lambda d: d.update(status="admitted", notes=[f"{NOT_RECHECKED}: the Hub is down"]),
        lambda d: d["run"].update(rechecked=False),
        lambda d: d["suite"].update(unreachable="offline"),
    ],
    ids=["top-level", "notes", "run", "suite"],
)
def test_a_file_claiming_to_be_not_re_checked_is_excluded_not_listed(
    local_doc, tmp_path: Path, claim
) -> None:
    doc = copy.deepcopy(local_doc)
    doc["scores"]["suite"] = 99.0  # the forged number the claim would carry onto the board
    claim(doc)
    data = _data(tmp_path)
    v = check_document(_sealed(doc), path="results/suites/sinaq/x.json", data=data)
    assert v.status == "excluded" and not v.rechecked
    board = Board([v], data)
    assert board.shown("suite:sinaq") == [] and board.unchecked("suite:sinaq") == []


def test_a_forged_score_with_the_data_at_hand_is_excluded_never_not_re_checked(local_doc, tmp_path) -> None:
    doc = copy.deepcopy(local_doc)
    doc["scores"]["suite"] = 99.0
    data = _data(tmp_path)
    v = check_document(_sealed(doc), path="results/suites/sinaq/x.json", data=data)
    assert v.status == "excluded" and any("summary scores" in r for r in v.reasons), v.reasons
    assert not any(n.startswith(NOT_RECHECKED) for n in v.notes)


def test_a_not_re_checked_file_is_never_ranked_whatever_it_claims(
    hub_run, tmp_path: Path, monkeypatch
) -> None:
    runner, suite, _ = hub_run
    rc, err = _suite_run(runner, suite)
    assert rc == 0, err
    doc = runner.result("suite-baseline__echo.json")
    FakeHub(tmp_path / "remote", tmp_path / "empty-cache").install(monkeypatch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the suite's Hub data cannot be read here
    data = _data(tmp_path)
    v = check_document(json.loads(json.dumps(doc)), path="results/suites/sinaq/x.json", data=data)
    assert v.status == "admitted" and not v.rechecked, v.reasons
    board = Board([v], data)
    assert board.shown("suite:sinaq") == [] and len(board.unchecked("suite:sinaq")) == 1
