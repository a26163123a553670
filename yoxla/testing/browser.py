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
    results: Path,
    *,
    synthetic: bool = False,
    trusted_keys: Path | None = None,
    timeout: float = 600,
    extra_env: dict[str, str] | None = None,
) -> Iterator[str]:
    """The app on ``results`` in its own process; yields its URL, stops it afterwards."""
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        **(extra_env or {}),
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


RENDERED_JS = """
const shown = (el) => el.getClientRects().length > 0;
if (document.readyState !== 'complete') return 'loading';
if (!document.querySelector('gradio-app .gradio-container, .gradio-container')) return 'no app';
if (!(document.querySelector('#status') || {}).innerText) return 'the page-load event has not answered';
const busy = [...document.querySelectorAll('.wrap.pending, .wrap.generating, .eta-bar, .progress-text')];
if (busy.some(shown)) return 'an event is running';
const panel = document;  // the hidden tabs' elements have no client rects
for (const el of panel.querySelectorAll('.yoxla-plot')) {
  if (!shown(el)) continue;
  const drawn = el.querySelector('.js-plotly-plot');
  if (!drawn || !drawn._fullLayout) return 'a plot is not drawn: ' + (el.id || el.className);
}
for (const el of panel.querySelectorAll('.yoxla-table')) {
  if (!shown(el)) continue;
  const heads = [...el.querySelectorAll('thead th')].map(th => th.innerText.trim()).filter(t => t);
  if (!heads.length || heads.every(t => /^[0-9]+$/.test(t))) return 'a table has no value yet: ' + (el.id || '');
}
return '';
"""


def wait_rendered(d: Any, timeout: float = 90) -> None:
    """Until the page has answered its load event and every visible plot of the open tab is drawn and
    every visible table holds a value (its own headers, not the placeholder's), with no event running.

    A condition that means "rendered", never a quiet spell: a tab whose render has not started yet
    has undrawn plots and placeholder tables, so it is waited for however busy the machine is."""
    deadline = time.monotonic() + timeout
    why = "not checked"
    while time.monotonic() < deadline:
        why = str(d.execute_script(RENDERED_JS) or "")
        if not why:
            return
        time.sleep(0.15)
    raise TimeoutError(f"the page did not render within {timeout:.0f} s: {why}")


def open_page(d: Any, url: str, **query: str) -> None:
    from urllib.parse import urlencode

    d.get(url + ("?" + urlencode(query) if query else ""))
    wait_rendered(d)


def wait_selected(d: Any, title: str, timeout: float = 30) -> None:
    """Until the tab of this title is the selected one."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = d.find_elements(By.CSS_SELECTOR, "button[role=tab][aria-selected=true]")
        if found and found[0].text.strip() == title:
            return
        time.sleep(0.1)
    raise TimeoutError(f"the tab {title!r} was not selected")


def click_tab(d: Any, title: str) -> None:
    from selenium.webdriver.common.by import By

    for b in d.find_elements(By.CSS_SELECTOR, "button[role=tab]"):
        if b.text.strip() == title:
            b.click()
            wait_selected(d, title)
            wait_rendered(d)
            return
    raise LookupError(f"no tab {title!r}")


def pick_option(d: Any, css: str, match: Any, timeout: float = 60) -> None:
    """Open the dropdown whose wrapper is ``css`` and click the first option for which
    ``match(label)`` is true.

    A click that lands while the page is still wiring its handlers, or on an input that already
    has focus, opens no list; so the list is waited for briefly and the dropdown clicked again
    (after Escape closes whatever half-opened) until the option shows, up to ``timeout``."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            box = d.find_element(By.CSS_SELECTOR, f"{css} input")
            box.click()
        except WebDriverException:
            time.sleep(0.3)
            continue
        until = min(deadline, time.monotonic() + 4)
        while time.monotonic() < until:
            try:
                options = d.find_elements(By.CSS_SELECTOR, "[data-testid=dropdown-option]")
                seen = [(o.get_attribute("aria-label") or o.text or "").strip() for o in options]
                for o, label in zip(options, seen, strict=True):
                    if match(label) or match(o.text.strip()):
                        o.click()
                        return
            except StaleElementReferenceException:
                pass
            time.sleep(0.2)
        try:
            box.send_keys(Keys.ESCAPE)
        except WebDriverException:
            pass
    raise TimeoutError(f"no option of {css} matched within {timeout:.0f} s; options seen: {seen[:20]}")


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
