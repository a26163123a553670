"""The running app in headless Chromium: committed models listed, an example opened, and a
planted ``<script>`` answer shown as text without running.

Needs Debian's ``chromium`` and ``chromium-driver`` and pip ``selenium`` (no browser download).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCRIPT = "<script>window.__pwned=1</script>"

pytestmark = pytest.mark.browser

if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
    # CI installs Chromium (.ci/run), so there a missing browser is a failure, not a skip.
    if os.environ.get("CI"):
        pytest.fail("CI: Chromium or chromedriver is missing", pytrace=False)
    pytest.skip("Chromium is absent: apt-get install chromium chromium-driver", allow_module_level=True)
selenium = pytest.importorskip("selenium", reason="pip install selenium")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from yoxla.leaderboard.synthetic import build_result, planted_answers
    from yoxla.results import write_result

    results = tmp_path_factory.mktemp("results")
    (results / "sample").mkdir()
    for p in sorted((REPO / "results" / "sample").glob("*.json")):
        shutil.copy(p, results / "sample" / p.name)
    planted = build_result(
        planted_answers,
        provider="planted",
        model="planted-model",
        display_name='<img src=x onerror="window.__pwned=4">',
    )
    write_result(planted, results / "sample" / "planted.json")
    port = _free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    env["GRADIO_SERVER_PORT"] = str(port)
    code = f"import app; app.build_app({str(results)!r}).launch(server_name='127.0.0.1', server_port={port})"
    log = open(results / "app.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("the app exited: " + (results / "app.log").read_text())
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("the app did not start within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="yoxla-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--window-size=1400,2000",
    ):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _body(d: Any) -> str:
    return str(d.find_element(By.TAG_NAME, "body").text)


def _answer(d: Any) -> str:
    return str(d.find_element(By.CSS_SELECTOR, "#example-answer textarea").get_attribute("value") or "")


def test_leaderboard_explorer_and_planted_script(app_url: str, driver: Any) -> None:
    d = driver
    wait = WebDriverWait(d, 30, poll_frequency=0.3)
    d.get(app_url)
    committed = ["overlap", "most_linked", "majority", "random", "longest", "first"]
    wait.until(lambda d: all(name in _body(d) for name in committed))
    assert 'onerror="window.__pwned=4"' in _body(d)  # the planted display name, as text

    tab = next(
        b for b in d.find_elements(By.CSS_SELECTOR, "button[role=tab]") if b.text.strip() == "Error explorer"
    )
    tab.click()
    d.find_element(By.CSS_SELECTOR, "#explorer-model-a input").click()
    option = wait.until(
        lambda d: next(
            (
                o
                for o in d.find_elements(By.CSS_SELECTOR, "[data-testid=dropdown-option]")
                if "planted" in (o.get_attribute("aria-label") or "")
            ),
            None,
        )
    )
    option.click()
    wait.until(lambda d: _answer(d) == SCRIPT)  # the first example opens with the planted answer
    wait.until(lambda d: SCRIPT in _body(d))  # and the table shows it as visible text

    # Open another example by clicking its row.
    d.find_element(By.CSS_SELECTOR, '#explorer-table [data-testid="cell-1-0"]').click()
    wait.until(lambda d: _answer(d) == '<img src=x onerror="window.__pwned=2">')
    time.sleep(0.5)
    assert d.execute_script("return typeof window.__pwned") == "undefined"
    assert not d.find_elements(By.CSS_SELECTOR, "img[src=x]")
    if os.environ.get("YOXLA_SCREENSHOT"):
        d.save_screenshot(os.environ["YOXLA_SCREENSHOT"])
