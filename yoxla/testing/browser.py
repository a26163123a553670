"""Driving the running app in headless Chromium (Debian ``chromium`` and ``chromedriver``).

Shared by ``tests/browser`` and ``bench/screenshots.py``: start the app on a results folder
in its own process, open a page, wait until every event has answered, and read what a
visitor would see: error toasts and boxes, the plots' titles and data, the tables.
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
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1440, 1000


def browser_available() -> bool:
    return Path(CHROMIUM).exists() and Path(DRIVER).exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(
    results: Path, *, synthetic: bool = False, trusted_keys: Path | None = None, timeout: float = 600
) -> Iterator[str]:
    """The app on ``results`` in its own process; yields its URL, stops it afterwards."""
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "yoxla.testing.boards", str(results), "--port", str(port)]
    if synthetic:
        cmd.append("--synthetic")
    if trusted_keys is not None:
        cmd += ["--trusted-keys", str(trusted_keys)]
    log_path = Path(tempfile.mkdtemp(prefix="yoxla-app-")) / "app.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise RuntimeError("the app exited: " + log_path.read_text())
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    time.sleep(0.5)
            else:
                raise RuntimeError(
                    f"the app did not start within {timeout} s: " + log_path.read_text()[-2000:]
                )
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def chrome(width: int = WIDTH, height: int = HEIGHT) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

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
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        d.set_window_size(width, height)
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


BUSY_JS = """
const busy = document.querySelectorAll('.wrap.pending, .wrap.generating, .eta-bar, .progress-text');
return busy.length;
"""


def wait_idle(d: Any, timeout: float = 60, settle: float = 0.6) -> None:
    """Until no component shows progress for ``settle`` seconds (every event has answered)."""
    deadline = time.monotonic() + timeout
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        ready = d.execute_script("return document.readyState") == "complete"
        busy = int(d.execute_script(BUSY_JS) or 0)
        app = d.execute_script(
            "return !!document.querySelector('gradio-app .gradio-container, .gradio-container')"
        )
        if ready and app and busy == 0:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= settle:
                return
        else:
            quiet_since = None
        time.sleep(0.15)
    raise TimeoutError("the page kept loading")


def open_page(d: Any, url: str, **query: str) -> None:
    from urllib.parse import urlencode

    d.get(url + ("?" + urlencode(query) if query else ""))
    wait_idle(d)


def click_tab(d: Any, title: str) -> None:
    from selenium.webdriver.common.by import By

    for b in d.find_elements(By.CSS_SELECTOR, "button[role=tab]"):
        if b.text.strip() == title:
            b.click()
            wait_idle(d)
            return
    raise LookupError(f"no tab {title!r}")


ERRORS_JS = """
const out = [];
for (const el of document.querySelectorAll('.toast-body.error, .toast-body.warning')) out.push('toast: ' + el.innerText.slice(0, 300));
for (const el of document.querySelectorAll('span.error, .error-box, .error-message')) {
  if (el.offsetParent !== null || el.getClientRects().length) out.push('box: ' + (el.innerText || el.textContent).slice(0, 300));
}
return out;
"""


def errors(d: Any) -> list[str]:
    """Error toasts and "Error" boxes on the page (empty when there are none)."""
    return list(d.execute_script(ERRORS_JS) or [])


PLOTS_JS = """
const out = [];
for (const el of document.querySelectorAll('.js-plotly-plot')) {
  if (!el.getClientRects().length) continue;
  const lay = el.layout || {}, data = el.data || [];
  const title = (lay.title && (lay.title.text || lay.title)) || '';
  const notes = (lay.annotations || []).map(a => a.text || '').filter(t => t.length > 0);
  const points = data.reduce((n, t) => n + ((t.x && t.x.length) || (t.z && t.z.length) || 0), 0);
  const axes = Object.keys(lay).filter(k => /^[xy]axis[0-9]*$/.test(k) && lay[k].visible !== false)
    .map(k => [k, (lay[k].title && (lay[k].title.text || lay[k].title)) || '']);
  out.push({title: String(title), notes: notes, traces: data.length, points: points, axes: axes});
}
return out;
"""


def plots(d: Any) -> list[dict[str, Any]]:
    """The visible plots: title, annotations, traces, points and axis titles of each."""
    return list(d.execute_script(PLOTS_JS) or [])


def plot_problems(d: Any) -> list[str]:
    """A plot with no title, or with no data and no message, or a drawn axis with no title."""
    out = []
    for p in plots(d):
        if not p["title"].strip():
            out.append(f"a plot has no title: {p}")
        if p["points"] == 0 and not p["notes"]:
            out.append(f"an empty plot says nothing: {p['title']}")
        if p["points"] > 0:
            missing = [k for k, t in p["axes"] if not str(t).strip()]
            if missing:
                out.append(f"{p['title']}: axes without a title: {missing}")
    return out
