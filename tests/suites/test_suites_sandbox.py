"""What suite code can reach: a probe grader and preprocessor, sandboxed (bwrap) and reduced."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from suites_helpers import FAST, ROWS, write_jsonl, write_manifest

from yoxla.contract.loader import load_manifest
from yoxla.score import sandbox
from yoxla.score.worker import WorkerPool

FAKE_KEY = "sk-or-v1-planted-" + "7" * 40

# Each check is one number: 1.0 when the probe reached what it tried, 0.0 when it did not.
PROBE = """
import os, socket, subprocess, sys

PARENT, KEY, MARK = __PARENT__, {key!r}, {mark!r}  # PARENT: the process that runs the worker
DOTENV, SSH, OUTSIDE, SUITE_FILE, PORT = {dotenv!r}, {ssh!r}, {outside!r}, {suite_file!r}, {port}


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _environ_leak():
    found = 0.0
    for pid in {{str(PARENT), str(os.getppid()), *[p for p in os.listdir("/proc") if p.isdigit()]}}:
        data = _read(f"/proc/{{pid}}/environ")
        if data is not None and KEY.encode() in data:
            found = 1.0
    return found


def _wrote(path):
    try:
        with open(path, "w") as fh:
            fh.write("probe")
        return 1.0
    except OSError:
        return 0.0


def _connected():
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=1):
            return 1.0
    except OSError:
        return 0.0


def _detach():
    # a double fork into a new session, eight times: a bounded fork storm of sleepers
    inner = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', MARK], start_new_session=True)"
    for _ in range(8):
        subprocess.Popen([sys.executable, "-c", inner.replace("MARK", repr(MARK))], start_new_session=True).wait()


def checks():
    _detach()
    return {{
        "environ_parent_readable": float(_read(f"/proc/{{PARENT}}/environ") is not None),
        "environ_key": _environ_leak(),
        "dotenv": float(_read(DOTENV) is not None),
        "ssh": float(_read(SSH) is not None),
        "wrote_outside": _wrote(OUTSIDE),
        "wrote_suite": _wrote(SUITE_FILE + ".probe"),
        "connected": _connected(),
        "suite_readable": float(_read(SUITE_FILE) is not None),
    }}


def grade(sample, item):
    return {{"scores": checks()}}


def transform_row(row):
    return {{**row, **{{k: str(v) for k, v in checks().items()}}}}
"""


@pytest.fixture
def mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Forget the probed mode before and after (each test chooses it through the environment)."""
    sandbox.reset_for_tests()
    yield monkeypatch
    monkeypatch.undo()
    sandbox.reset_for_tests()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """A checkout with a .env, a HOME with ~/.ssh, a suite folder, a listening loopback port."""
    repo = tmp_path / "repo"
    suite = repo / "suites" / "probe"
    suite.mkdir(parents=True)
    write_jsonl(suite / "data.jsonl", ROWS)
    (repo / ".env").write_text(f"OPENROUTER_API_KEY={FAKE_KEY}\n", encoding="utf-8")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_KEY)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    mark = f"yoxla-probe-{uuid.uuid4().hex}"
    values = {
        "key": FAKE_KEY,
        "mark": mark,
        "dotenv": str(repo / ".env"),
        "ssh": str(home / ".ssh" / "id_ed25519"),
        "outside": str(repo / "written-by-probe.txt"),
        "suite_file": str(suite / "data.jsonl"),
        "port": listener.getsockname()[1],
    }
    try:
        yield {"suite": suite, "source": PROBE.format(**values), "mark": mark, "listener": listener, **values}
    finally:
        listener.close()
        _kill_marked(mark)  # never leave a sleeper behind, even when an assertion failed


def _marked(mark: str) -> list[int]:
    """Live processes (zombies are dead) whose command line holds ``mark``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmdline and state != b"Z":
            found.append(int(name))
    return found


def _kill_marked(mark: str) -> None:
    for pid in _marked(mark):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def _left_behind(mark: str) -> list[int]:
    deadline = time.monotonic() + 3
    while (left := _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _probe_task(source: str, role: str) -> dict[str, object]:
    code = {"type": "python", "source": source, "timeout_seconds": 20}
    task: dict[str, object] = {
        "id": "probe",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "{{sual}}",
        "target_template": "{{cavab}}",
    }
    if role == "grader":
        task["grader"] = code
    else:
        task["preprocess"] = {**code, "contract": "row"}
    return task


# The probe runs in a process of its own, started with the planted key in its environment, so
# that the key is really in its /proc/<pid>/environ (a variable set later is not).
RUNNER = """
import json, os, sys
args = json.loads(sys.argv[1])
sys.path.insert(0, args["helpers"])
from suites_helpers import FAST, write_manifest
from pathlib import Path
from yoxla.contract.loader import load_manifest
from yoxla.prompt.prepare import prepare_task
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.score.worker import WorkerPool

task = args["task"]
code = task.get("grader") or task["preprocess"]
code["source"] = code["source"].replace("__PARENT__", str(os.getpid()))
manifest = load_manifest(write_manifest(Path(args["suite"]), [task]))
def marked():
    n = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            n += args["mark"].encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            pass
    return n
with WorkerPool(FAST) as pool:
    prepared = prepare_task(manifest.task("probe"), pool, limit=1)
    if "grader" in task:
        result = score_suite_task(prepared, [SampleOutput("Bakı")], pool=pool).results[0]
        found = dict(result.scores) if result.grader_error is None else {"error": result.grader_error}
    else:
        found = {k: float(v) for k, v in prepared.items[0].row.items() if k not in ("id", "sual", "cavab", "mövzu")}
    running = marked()
print(json.dumps({"found": found, "running": running}))
"""


def _run_probe(world: dict[str, object], role: str) -> tuple[dict[str, float], str]:
    """What the probe reached, and the stderr of the process that ran it."""
    root = Path(__file__).resolve().parents[2]
    args = {
        "helpers": str(Path(__file__).parent),
        "suite": str(world["suite"]),
        "task": _probe_task(str(world["source"]), role),
        "mark": world["mark"],
    }
    env = dict(os.environ, OPENROUTER_API_KEY=FAKE_KEY)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(args)],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    reply = json.loads(done.stdout.decode("utf-8").strip().splitlines()[-1])
    assert "error" not in reply["found"], reply["found"]
    assert reply["running"] >= 8, "the probe's detached sleepers should be running while the worker is"
    return reply["found"], done.stderr.decode("utf-8", "replace")


def _nothing_accepted(world: dict[str, object]) -> bool:
    listener = world["listener"]
    assert isinstance(listener, socket.socket)
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


def _bwrap_or_skip(mode: pytest.MonkeyPatch) -> None:
    mode.delenv(sandbox.FORCE_ENV, raising=False)
    chosen = sandbox.isolation()
    if not chosen.sandboxed:
        pytest.skip(chosen.reason)


@pytest.mark.parametrize("role", ["grader", "preprocess"])
def test_sandboxed_probe_finds_nothing_reaches_nothing_leaves_nothing(mode, world, role):
    _bwrap_or_skip(mode)
    found, _ = _run_probe(world, role)
    assert found["suite_readable"] == 1.0  # its own folder is there, read-only
    # A write "outside" can only land in its private /tmp (where the suite's folder is mounted when
    # it lies under /tmp, as here): the real file must not exist.
    reached = {k: v for k, v in found.items() if k not in ("suite_readable", "wrote_outside") and v}
    assert reached == {}, reached
    assert not Path(str(world["outside"])).exists()
    assert not Path(str(world["suite_file"]) + ".probe").exists()
    assert _nothing_accepted(world)
    assert _left_behind(str(world["mark"])) == []


def test_reduced_mode_is_announced_blocks_proc_environ_and_ends_every_descendant(
    mode, world, capsys, role="grader"
):
    mode.setenv(sandbox.FORCE_ENV, "reduced")
    chosen = sandbox.isolation()
    assert not chosen.sandboxed and "reduced" in chosen.reason
    found, err = _run_probe(world, role)
    assert "code isolation is reduced" in err
    assert found["environ_parent_readable"] == 0.0
    assert found["environ_key"] == 0.0
    assert _left_behind(str(world["mark"])) == []


def test_the_announcement_is_made_once_per_process(mode, capsys):
    mode.setenv(sandbox.FORCE_ENV, "reduced")
    for _ in range(3):
        sandbox.announce(sandbox.isolation())
    assert capsys.readouterr().err.count("code isolation is reduced") == 1
    sandbox.reset_for_tests()
    mode.delenv(sandbox.FORCE_ENV)
    sandbox.announce(sandbox.Isolation(True, "bwrap"))
    assert capsys.readouterr().err == ""


def test_without_bwrap_on_path_the_mode_is_reduced_with_the_reason(mode, tmp_path):
    mode.delenv(sandbox.FORCE_ENV, raising=False)
    mode.setenv("PATH", str(tmp_path))
    chosen = sandbox.isolation()
    assert not chosen.sandboxed and "bwrap" in chosen.reason and "not installed" in chosen.reason
    assert "code isolation is reduced" in chosen.line()


def test_a_bwrap_that_cannot_run_gives_the_reduced_mode(mode, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    mode.delenv(sandbox.FORCE_ENV, raising=False)
    mode.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    chosen = sandbox.isolation()
    assert not chosen.sandboxed and "No permissions to creating new namespace" in chosen.reason


def test_the_sandbox_never_shows_a_home_or_a_checkout_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    argv = sandbox.bwrap_argv("bwrap", str(tmp_path), tmp_path / "repo")
    shown = {argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"}
    assert str(tmp_path / "repo") not in shown
    assert str(Path.home()) not in shown and "/" not in shown
    assert str(sandbox.PACKAGE) in shown
    prefix = os.path.realpath(sys.prefix)  # the interpreter's own folder, unless /usr shows it
    assert prefix in shown or prefix.startswith("/usr/") or prefix == "/usr"
    suite = tmp_path / "suites" / "x"
    suite.mkdir(parents=True)
    argv = sandbox.bwrap_argv("bwrap", str(tmp_path), suite)
    assert str(suite.resolve()) in {argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"}


# `suite render` and `suite check` run no code unless asked ---------------------------------------

PRE = "def transform_row(row):\n    return row\n"


def _two_tasks(folder: Path) -> Path:
    write_jsonl(folder / "data.jsonl", ROWS)
    plain = {
        "id": "plain",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "{{sual}}",
        "target_template": "{{cavab}}",
    }
    coded = {**plain, "id": "coded", "preprocess": {"type": "python", "contract": "row", "source": PRE}}
    return write_manifest(folder, [plain, coded])


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any worker start is recorded (and refused): the commands must not start one."""
    started: list[str] = []

    def refuse(self: object) -> None:
        started.append("start")
        raise OSError("no worker may start in this test")

    monkeypatch.setattr("yoxla.score.worker.Worker._start", refuse)
    return started


def _cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    from yoxla.cli.main import run as cli_run

    code = cli_run([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out + err


def test_render_without_run_code_names_the_task_it_cannot_show(tmp_path, capsys, no_worker):
    path = _two_tasks(tmp_path)
    code, out = _cli(capsys, "suite", "render", path, "--task", "coded")
    assert code == 1 and no_worker == []
    assert "task coded has a Python preprocessor" in out and "--run-code" in out and "===" not in out
    code, out = _cli(capsys, "suite", "render", path, "--task", "plain", "-n", "1")
    assert code == 0 and "=== plain item s1" in out and no_worker == []


def test_check_without_run_code_checks_the_rest_and_lists_what_it_could_not(tmp_path, capsys, no_worker):
    path = _two_tasks(tmp_path)
    code, out = _cli(capsys, "suite", "check", path, "--write")
    assert code == 1 and no_worker == []
    assert "coded: not checked: it has a Python preprocessor" in out
    assert "1 task(s) not checked without --run-code: coded" in out
    assert "froze 1 new task(s)" in out and "removed" not in out  # plain was frozen, coded left alone


def test_check_and_render_with_run_code_run_the_preprocessor(tmp_path, capsys):
    path = _two_tasks(tmp_path)
    code, out = _cli(capsys, "suite", "check", path, "--write", "--run-code")
    assert code == 0 and "froze 2 new task(s)" in out
    code, out = _cli(capsys, "suite", "render", path, "--task", "coded", "-n", "1", "--run-code")
    assert code == 0 and "=== coded item s1" in out


def test_a_sandboxed_worker_outlives_the_thread_that_started_it(mode):
    # bwrap --die-with-parent follows the starting *thread*: a runner thread that ends must not
    # take the worker with it while another thread still uses it.
    _bwrap_or_skip(mode)
    from yoxla.score.worker import Worker

    with Worker("def f(x):\n    return x + 1\n", "<t>", FAST) as w:
        first: list[object] = []
        thread = threading.Thread(target=lambda: first.append(w.call(["f"], [1], 5.0).value))
        thread.start()
        thread.join()
        time.sleep(0.3)
        assert first == [2] and w.alive
        assert w.call(["f"], [2], 5.0).value == 3 and w.starts == 1


def test_start_up_announces_reduced_isolation_only_for_tasks_with_code(mode, tmp_path, capsys):
    mode.setenv(sandbox.FORCE_ENV, "reduced")
    manifest = load_manifest(_two_tasks(tmp_path))
    sandbox.announce_for([manifest.task("plain")])
    assert capsys.readouterr().err == ""
    shown: list[str] = []
    sandbox.announce_for(manifest.tasks.values(), shown.append)
    assert len(shown) == 1 and shown[0].startswith("warning: code isolation is reduced")
    sandbox.announce_for(manifest.tasks.values(), shown.append)
    assert len(shown) == 1  # once per process


def test_a_suite_run_announces_before_its_code_runs(mode, tmp_path, capsys, no_worker):
    from yoxla.run.errors import ValidationFailed
    from yoxla.run.plan import make_plan
    from yoxla.run.settings import RunSettings

    mode.setenv(sandbox.FORCE_ENV, "reduced")
    path = _two_tasks(tmp_path)
    settings = RunSettings(provider="suite-baseline", model="first", suite=str(path), tasks=["coded"])
    with WorkerPool(FAST) as pool, pytest.raises(ValidationFailed):
        make_plan(settings, pool)  # no worker can start here: the notice came first
    assert no_worker == ["start"]
    assert capsys.readouterr().err.count("code isolation is reduced") == 1
