"""Hostile manifests: alias bombs, deep nesting, prompts that expand to gigabytes, files from
outside the suite's folder, and a manifest with many problems at once.

Each is written into a temporary folder by the test. Every one ends in one ManifestError
(one line, naming the field where there is one) and, on the command line, a non-zero exit
without a traceback; the commands answer within a bound checked by a subprocess timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from suites_helpers import ROWS, task, write_jsonl, write_manifest

from yoxla.cli.main import run as cli_run
from yoxla.contract.errors import ManifestError
from yoxla.contract.loader import MAX_NESTING, load_manifest, parse_document
from yoxla.prompt.templates import MAX_RENDERED

ROOT = Path(__file__).resolve().parents[2]


def alias_bomb() -> str:
    """About 1 kB of YAML whose aliases expand to 9**9 strings (the 'billion laughs')."""
    lines = ['a0: &a0 ["ha", "ha", "ha", "ha", "ha", "ha", "ha", "ha", "ha"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def _manifest_text(extra: str) -> str:
    return (
        'schema_version: "2026-05-27"\n'
        "metadata: {name: hostile}\n"
        "tasks:\n"
        "  - id: t1\n"
        "    dataset: {path: data.jsonl}\n"
        '    prompt_template: "Sual: {{sual}}"\n' + extra
    )


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli_run([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _yoxla(
    *argv: str, timeout: float = 60.0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The command line in its own process; it must answer within ``timeout`` seconds."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", "from yoxla.cli.main import main; main()", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full,
        cwd=ROOT,
    )


# Parsing: aliases, depth, odd values -----------------------------------------------------------


def test_an_alias_bomb_is_refused_before_it_expands(folder) -> None:
    bomb = alias_bomb()
    assert len(bomb) < 1200
    path = folder / "bomb.yaml"
    path.write_text(_manifest_text("") + "\n" + "x_bomb:\n  " + bomb.replace("\n", "\n  "), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"a YAML alias \(\*a0\)"):
        load_manifest(path)
    done = _yoxla("suite", "validate", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"yoxla: error: {path}: line 10: a YAML alias (*a0)")


@pytest.mark.parametrize(
    "extra",
    [
        "    metadata: &m {qeyd: ağır}\n  - id: t2\n    dataset: {path: data.jsonl}\n"
        '    prompt_template: "x"\n    metadata: *m\n',
        "    generation: &g {temperature: 0}\n  - id: t2\n    dataset: {path: data.jsonl}\n"
        '    prompt_template: "x"\n    generation: {<<: *g, top_p: 1}\n',
    ],
    ids=["alias", "merge key"],
)
def test_every_alias_is_refused_even_a_small_one(folder, extra) -> None:
    path = folder / "suite.yaml"
    path.write_text(_manifest_text(extra), encoding="utf-8")
    with pytest.raises(ManifestError, match="a YAML alias"):
        load_manifest(path)


def test_an_anchor_without_an_alias_is_plain_yaml(folder) -> None:
    path = folder / "suite.yaml"
    path.write_text(_manifest_text('    metadata: &m {qeyd: "ağır"}\n'), encoding="utf-8")
    assert load_manifest(path).tasks["t1"].spec.metadata == {"qeyd": "ağır"}


def _deep(n: int, suffix: str) -> str:
    if suffix == ".json":
        return '{"schema_version": "1", "metadata": {"x": ' + "[" * n + "]" * n + "}}"
    return 'schema_version: "1"\nmetadata:\n  x: ' + "[" * n + "]" * n + "\n"


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize("n", [MAX_NESTING + 1, 100_000])
def test_deep_nesting_is_refused_in_one_line(tmp_path, capsys, suffix, n) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(_deep(n, suffix), encoding="utf-8")
    with pytest.raises(ManifestError, match=f"nested more than {MAX_NESTING} levels deep"):
        load_manifest(path)
    code, _, err = _cli(capsys, "suite", "validate", path)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_nesting_up_to_the_limit_is_read(tmp_path) -> None:
    n = MAX_NESTING - 2  # the document and metadata are two levels
    for suffix in (".yaml", ".json"):
        doc = parse_document(_deep(n, suffix), f"ok{suffix}")
        node, depth = doc["metadata"]["x"], 1
        while node:
            node, depth = node[0], depth + 1
        assert depth == n


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("schema_version: 1\nx: " + "9" * 5000 + "\n", "not a readable manifest"),
        ("? [a, b]\n: 1\n", "not valid YAML"),
        ("a: !!python/object:os.system x\n", "not valid YAML"),
    ],
    ids=["huge integer", "list as a key", "python tag"],
)
def test_odd_yaml_values_give_one_line(tmp_path, text, reason) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ManifestError, match=reason):
        load_manifest(path)


def test_a_json_manifest_with_duplicate_keys_is_refused(tmp_path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"schema_version": "1", "schema_version": "2", "tasks": []}', encoding="utf-8")
    with pytest.raises(ManifestError, match=r"dup\.json: .*schema_version"):
        load_manifest(path)


# Rendered prompts are bounded --------------------------------------------------------------------


def _blowup(folder: Path, **fields) -> Path:
    write_jsonl(
        folder / "data.jsonl", [dict(r, id=f"s{i + 1}", pad="ə" * 200) for i, r in enumerate(ROWS * 30)]
    )
    return write_manifest(folder, [task(**fields)], metadata={"name": "blowup"})


def test_a_prompt_that_expands_to_gigabytes_fails_validate_and_check(folder, capsys) -> None:
    """``{{row}}`` 14,000 times with 100 few-shot examples: gigabytes if rendered."""
    path = _blowup(folder, prompt_template="{{row}}" * 14_000, fewshot={"count": 100})
    for argv in (("validate",), ("check", "--write"), ("render", "--task", "t1", "-n", "1")):
        code, out, err = _cli(capsys, "suite", argv[0], path, *argv[1:])
        assert code == 2, (argv, out, err)
        assert f"task 't1': item s1: the prompt renders more than {MAX_RENDERED:,} characters" in err
        assert len(err.strip().splitlines()) == 1
    assert not (folder / "suite.hashes.json").exists()  # nothing was frozen


def test_few_shot_examples_each_under_the_bound_together_over_it(folder) -> None:
    from yoxla.prompt.prepare import prepare_task

    each = MAX_RENDERED // 40  # one example is well under the bound, 100 of them are not
    write_jsonl(folder / "data.jsonl", [{"id": f"r{i}", "x": "a" * each} for i in range(101)])
    path = write_manifest(folder, [task(prompt_template="{{x}}", fewshot={"count": 100})])
    with pytest.raises(ManifestError, match="with its 100 few-shot example"):
        prepare_task(load_manifest(path).tasks["t1"])
    short = write_manifest(folder, [task(prompt_template="{{x}}", fewshot={"count": 10})])
    items = prepare_task(load_manifest(short).tasks["t1"], limit=1).items
    assert len(items[0].messages[-1]["content"]) < MAX_RENDERED


def test_a_target_over_the_bound_is_named_as_the_target(folder) -> None:
    from yoxla.prompt.prepare import prepare_task

    path = _blowup(folder, target_template="{{row}}" * 14_000)
    with pytest.raises(ManifestError, match="item s1: the target renders more than"):
        prepare_task(load_manifest(path).tasks["t1"])


# Files come only from the suite's folder ------------------------------------------------------


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    """tmp/outside/{secret.jsonl, evil.py} beside tmp/suites/s/ (the suite, with data.jsonl)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    write_jsonl(outside / "secret.jsonl", ROWS)
    (outside / "evil.py").write_text("def grade(sample, item):\n    return 1.0\n", encoding="utf-8")
    folder = tmp_path / "suites" / "s"
    folder.mkdir(parents=True)
    write_jsonl(folder / "data.jsonl", ROWS)
    return folder


def _code(path: str) -> dict:
    return {"type": "python", "path": path}


OUTSIDE = [
    ("dataset up and out", {"dataset": {"path": "../../outside/secret.jsonl"}}, "dataset.path"),
    (
        "few-shot dataset out",
        {"fewshot": {"count": 1, "dataset": {"path": "../../outside/secret.jsonl"}}},
        "fewshot.dataset.path",
    ),
    ("grader up and out", {"grader": _code("../../outside/evil.py")}, "grader.path"),
    ("absolute grader", {"grader": "ABSOLUTE"}, "grader.path"),
    (
        "second grader out",
        {"grader": [{"type": "builtin", "name": "exact_match"}, _code("../../outside/evil.py")]},
        "grader[1].path",
    ),
    ("preprocessor out", {"preprocess": _code("../../outside/evil.py")}, "preprocess.path"),
    ("home folder", {"grader": _code("~/evil.py")}, "grader.path"),
]


@pytest.mark.parametrize(("what", "fields", "field"), OUTSIDE, ids=[o[0] for o in OUTSIDE])
def test_a_file_outside_the_suite_folder_is_refused(suite_dir, what, fields, field) -> None:
    if fields.get("grader") == "ABSOLUTE":
        fields = {"grader": _code(str(suite_dir.parent.parent / "outside" / "evil.py"))}
    path = write_manifest(suite_dir, [task(**fields)])
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert f"task 't1', field {field}: " in str(caught.value), str(caught.value)
    assert "a suite reads only files inside its own folder" in str(caught.value)


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_symbolic_link_out_of_the_suite_folder_is_refused(suite_dir, kind) -> None:
    outside = suite_dir.parent.parent / "outside"
    if kind == "file":
        (suite_dir / "linked.jsonl").symlink_to(outside / "secret.jsonl")
        fields = {"dataset": {"path": "linked.jsonl"}}
    else:
        (suite_dir / "code").symlink_to(outside, target_is_directory=True)
        fields = {"grader": _code("code/evil.py")}
    path = write_manifest(suite_dir, [task(**fields)])
    with pytest.raises(ManifestError, match="leads through a symbolic link outside the suite's folder"):
        load_manifest(path)


def test_a_symbolic_link_inside_the_suite_folder_is_allowed(suite_dir) -> None:
    (suite_dir / "rows").mkdir()
    (suite_dir / "rows" / "alias.jsonl").symlink_to(suite_dir / "data.jsonl")
    path = write_manifest(suite_dir, [task(dataset={"path": "rows/alias.jsonl"})])
    from yoxla.prompt.prepare import prepare_task

    assert [i.id for i in prepare_task(load_manifest(path).tasks["t1"]).items] == ["s1", "s2", "s3", "s4"]


def test_the_dataset_reader_refuses_an_outside_path_on_its_own(suite_dir) -> None:
    """The loading path checks again, whatever called it."""
    from yoxla.contract.spec_data import LocalDataset
    from yoxla.data.datasets import load_dataset

    spec = LocalDataset(path="../../outside/secret.jsonl")
    with pytest.raises(ManifestError, match="outside the suite's folder"):
        load_dataset(spec, suite_dir, "test", "dataset")


def test_a_dataset_may_read_the_shipped_editions(tmp_path) -> None:
    """The exception for data: the package's own edition files (the parity suite reads them)."""
    from yoxla.contract.paths import outside_reason, shipped_data

    sample = shipped_data() / "sample" / "nli_v1" / "test.jsonl"
    assert sample.is_file()
    rel = os.path.relpath(sample, tmp_path)
    assert outside_reason(tmp_path, rel, data=True) is None
    assert outside_reason(tmp_path, rel) == "leads outside the suite's folder"  # never as code


# Every problem of a manifest is listed -----------------------------------------------------------


def test_validate_lists_every_problem_with_its_field(suite_dir, capsys) -> None:
    tasks = [task(id=f"t{i}", num_fewshot=500, bogus=i) for i in range(10)]
    tasks.append(task(id="kod", grader=_code("../../outside/evil.py"), prompt_template="{{x | upper}}"))
    tasks.append(task(id="bad id"))
    path = write_manifest(suite_dir, tasks)
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    problems = caught.value.problems
    assert len(problems) == 23
    assert str(caught.value) == problems[0] + " (and 22 more problem(s))"
    code, _, err = _cli(capsys, "suite", "validate", path)
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1] == f"yoxla: error: {path}: 23 problem(s) in the manifest (listed above)"
    assert lines[:-1] == [f"error: {p}" for p in problems]
    for i in range(10):
        assert (
            f"error: {path}: task 't{i}', field bogus: unknown field (not part of the manifest format)"
            in lines
        )
        assert (
            f"error: {path}: task 't{i}', field num_fewshot: Input should be less than or equal to 100"
            in lines
        )
    assert any("task 'kod', field grader.path: '../../outside/evil.py' leads outside" in x for x in lines)
    assert any(
        "task 'kod', field prompt_template: '{{x | upper}}' is not a field reference" in x for x in lines
    )
    assert any("task 'bad id', field id: use letters" in x for x in lines)


def test_one_problem_is_still_one_line(folder, capsys) -> None:
    path = write_manifest(folder, [task(num_fewshot=500)])
    code, _, err = _cli(capsys, "suite", "validate", path)
    assert code == 2 and err.strip().splitlines() == [
        f"yoxla: error: {path}: task 't1', field num_fewshot: Input should be less than or equal to 100"
    ]


def test_the_json_form_of_a_manifest_is_read_like_the_yaml_one(folder) -> None:
    path = folder / "suite.json"
    doc = {"schema_version": "2026-05-27", "tasks": [task()]}
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    yaml_path = write_manifest(folder, [task()])
    assert yaml.safe_load(yaml_path.read_text(encoding="utf-8")) == doc
    assert (
        load_manifest(path).tasks["t1"].definition_hash
        == load_manifest(yaml_path).tasks["t1"].definition_hash
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than"),
        ('{"format": "yoxla-suite-hashes", "format": "x"}', "appears twice"),
        (" " * (2 * 1024 * 1024), "over the 1 MB limit"),
    ],
    ids=["deep", "duplicate key", "too large"],
)
def test_a_hostile_hash_file_gives_one_line(folder, capsys, text, reason) -> None:
    path = write_manifest(folder, [task()])
    (folder / "suite.hashes.json").write_text(text, encoding="utf-8")
    code, _, err = _cli(capsys, "suite", "check", path)
    lines = err.strip().splitlines()
    assert (
        code == 2 and len(lines) == 1 and "cannot read the frozen hashes" in lines[0] and reason in lines[0]
    )


def test_a_union_lists_the_problem_of_the_branch_the_value_took(folder) -> None:
    """A grader mapping with an unknown field: that field, not also "should be a valid list"."""
    (folder / "g.py").write_text("def grade(sample, item):\n    return 1.0\n", encoding="utf-8")
    path = write_manifest(folder, [task(grader={"type": "python", "path": "g.py", "bogus": 1})])
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert caught.value.problems == (
        f"{path}: task 't1', field grader.bogus: unknown field (not part of the manifest format)",
    )


@pytest.mark.parametrize("part", ["definition", "data"])
def test_a_hash_file_with_one_part_changed_and_its_task_hash_kept_fails_check(folder, capsys, part) -> None:
    path = write_manifest(folder, [task()])
    assert _cli(capsys, "suite", "check", path, "--write")[0] == 0
    hashes = folder / "suite.hashes.json"
    doc = json.loads(hashes.read_text(encoding="utf-8"))
    entry = doc["tasks"]["t1"]
    if part == "definition":
        entry["definition"] = "sha256:" + "9" * 64
    else:
        entry["data"]["dataset"] = "sha256:" + "9" * 64
    hashes.write_text(json.dumps(doc), encoding="utf-8")
    code, out, _ = _cli(capsys, "suite", "check", path)
    assert code == 1 and "error: task t1 changed in place" in out
    assert ("its definition" if part == "definition" else "the rows of its dataset") in out
