"""The command line: bad input ends with one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import pytest

from yoxla.cli.main import run
from yoxla.data.editions import frozen_contracts, load_edition


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("yoxla: error:")
    return lines[0]


@pytest.mark.parametrize("command", ["floors", "validate-benchmark"])
def test_unknown_task_exits_2_with_one_line(command, capsys):
    status = run([command, "--task", "nli_v9"])
    out, err = capsys.readouterr()
    assert status == 2
    line = _one_error_line(err)
    assert "nli_v9" in line
    assert "nli_v1" in line  # the known tasks are listed
    assert out == ""


def test_unknown_task_after_a_known_one_exits_2(capsys):
    assert run(["floors", "--task", "nli_v1", "--task", "məntiq_v1"]) == 2
    assert "məntiq_v1" in _one_error_line(capsys.readouterr().err)


def test_missing_data_folder_exits_2_with_one_line(tmp_path, capsys):
    missing = tmp_path / "yoxdur"
    status = run(["validate-benchmark", "--task", "nli_v1", "--data-dir", str(missing)])
    assert status == 2
    assert str(missing) in _one_error_line(capsys.readouterr().err)


def test_tasks_lists_every_task_and_the_suite_hash(capsys):
    assert run(["tasks"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    contracts = frozen_contracts()[1]
    assert len(contracts) == 11
    for tid, contract in contracts.items():
        line = next(x for x in out.splitlines() if x.startswith(tid + " "))
        assert contract[:19] in line
    assert load_edition("v1").suite_hash() in out
