"""`yoxla suite validate | render`: the shipped examples, and one line for a bad manifest."""

from __future__ import annotations

from pathlib import Path

import pytest
from suites_helpers import task, write_manifest

from yoxla.cli.main import run as cli_run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "suites" / "examples").glob("*/*.yaml"))
COMMITTED = sorted((ROOT / "suites").glob("*/*.yaml")) + sorted((ROOT / "suites").glob("*/*/*.yaml"))


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli_run([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_three_examples_ship():
    assert [p.parent.name for p in EXAMPLES] == ["hesab", "muraciet", "oxu"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_example_validates_offline(path, capsys):
    code, out, err = _cli(capsys, "suite", "validate", path)
    assert code == 0, out + err
    assert "ok: suite hash sha256:" in out and "warning" not in out and "error" not in out


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_committed_suite_matches_its_frozen_hashes(path, capsys):
    code, out, err = _cli(capsys, "suite", "check", path, "--run-code")
    assert code == 0, out + err


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_example_renders(path, capsys):
    from yoxla.contract.loader import load_manifest

    tid = next(iter(load_manifest(path).tasks))
    code, out, _ = _cli(capsys, "suite", "render", path, "--task", tid, "-n", "2", "--run-code")
    assert code == 0
    assert out.count(f"=== {tid} item ") == 2 and "[user]" in out and "[target]" in out


def test_render_shows_fewshot_and_system(capsys):
    path = ROOT / "suites" / "examples" / "oxu" / "oxu.yaml"
    _, out, _ = _cli(capsys, "suite", "render", path, "--task", "oxu_v1", "-n", "1")
    first = out.split("=== ")[1]
    assert first.count("Cavab:") == 3 and "[system]\nSən diqqətli oxucusan." in first


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"output_extraction": {"type": "regex", "pattern": "(a"}},
            "field output_extraction: the regex does not compile",
        ),
        ({"prompt_template": "{{ sual | upper }}"}, "is not a field reference"),
        ({"dataset": {"path": "yoxdur.jsonl"}}, "file yoxdur.jsonl not found"),
        (
            {"preprocess": {"type": "python", "source": "def transform(r):\n    raise ValueError('x')\n"}},
            "failed on row 1",
        ),
    ],
)
def test_bad_manifest_is_one_line_exit_2(folder, capsys, fields, message):
    path = write_manifest(folder, [task(**fields)])
    code, out, err = _cli(capsys, "suite", "validate", path)
    assert code == 2 and out.count("\n") <= 1
    # Where bwrap cannot run, the first worker also says so on stderr (once per process).
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: code isolation")]
    assert len(lines) == 1 and lines[0].startswith("yoxla: error: ") and message in lines[0], err
    assert "Traceback" not in err


def test_validate_reports_a_grader_that_fails(folder, capsys):
    path = write_manifest(
        folder, [task(grader={"type": "python", "source": "def grade(s, i):\n    return 'x'\n"})]
    )
    code, out, _ = _cli(capsys, "suite", "validate", path)
    assert code == 1 and "the grader fails on item s1" in out


def test_validate_warns_about_unknown_fields(folder, capsys):
    path = write_manifest(folder, [task(prompt_template="Sual: {{suall}}", metadata={"breakdowns": "level"})])
    code, out, _ = _cli(capsys, "suite", "validate", path)
    assert code == 0 and "uses {{suall}}" in out and "names level, which no row has" in out


def test_render_unknown_task(folder, capsys):
    path = write_manifest(folder, [task()])
    code, _, err = _cli(capsys, "suite", "render", path, "--task", "yox")
    assert code == 2 and "no task 'yox' (tasks: t1)" in err


def test_imports_stay_light():
    import subprocess
    import sys

    code = (
        "import sys, yoxla, yoxla.cli.main, yoxla.cli.suite, yoxla.contract.loader, yoxla.score.replay, "
        "yoxla.prompt.prepare; yoxla.cli.main.build_parser(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyarrow', 'huggingface_hub', 'datasets', 'regex', 'torch'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
