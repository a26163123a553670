"""The running app in headless Chromium, as a visitor sees it.

Three apps: the committed files (sample and suites, plus a planted hostile answer), 100
synthetic full-size models on v1 (half with answer probabilities) next to the sample files, and
the hostile folder. On each, every view of both editions (the calibration view included) opens with no error toast or "Error" box and every plot has titles and data or an
explicit empty-state message. Also: the rank explanation is visible at 1440 px without
scrolling sideways, headers never break inside a word, a deep link opens the model page it
names, a row click opens a model page, the explorer takes page 0, planted ``<script>``
answers are shown as text without running, and a suite's board is picked from the board
dropdown (or a ``?suite=`` link) and shows its table and every view.

Needs Debian's ``chromium`` and ``chromium-driver`` and pip ``selenium`` (no browser download).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from yoxla.testing.browser import browser_available
from yoxla.views.format import TASK_SHORT

pytestmark = pytest.mark.browser

if not browser_available():
    # CI installs Chromium (.ci/run), so there a missing browser is a failure, not a skip.
    if os.environ.get("CI"):
        pytest.fail("CI: Chromium or chromedriver is missing", pytrace=False)
    pytest.skip("Chromium is absent: apt-get install chromium chromium-driver", allow_module_level=True)
selenium = pytest.importorskip("selenium", reason="pip install selenium")

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from yoxla.testing.browser import (  # noqa: E402
    chrome,
    click_tab,
    errors,
    open_page,
    pick_option,
    plot_problems,
    plots,
    serve,
    wait_rendered,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "<script>window.__pwned=1</script>"
PLANTED_NAME = '<img src=x onerror="window.__pwned=4">'
TABS = (
    "Leaderboard",
    "Model",
    "Tasks",
    "Blocks",
    "Breakdowns",
    "Diagnostics",
    "Calibration",
    "Error explorer",
    "Compare",
    "Methodology",
    "Submit",
    "About",
)
MIN_PLOTS = {
    "Leaderboard": 1,
    "Model": 1,
    "Tasks": 3,
    "Blocks": 4,
    "Breakdowns": 2,
    "Diagnostics": 2,
    "Calibration": 2,
    "Compare": 1,
}
CONTENT = {  # an element each view fills when it renders
    "Error explorer": "#explorer-table th",
    "Methodology": "#excluded-table th",
    "Model": "#model-scores th",
    "Leaderboard": "#leaderboard-table th",
    "Calibration": "#calibration-table th",
}
PLANTED_CARD = "https://huggingface.co/planted/model-card"
SPACE = "yoxla-test/leaderboard"
REPORTED_KEY = "v1/vllm__model-001.json"  # yoxla.testing.boards names openai/gpt-4o-mini so


@pytest.fixture(scope="module")
def committed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from yoxla.record.signing import write_result
    from yoxla.testing.synthetic import build_result, planted_answers

    results = tmp_path_factory.mktemp("committed") / "results"
    (results / "sample").mkdir(parents=True)
    for p in sorted((REPO / "results" / "sample").glob("*.json")):
        (results / "sample" / p.name).write_bytes(p.read_bytes())
    shutil.copytree(REPO / "results" / "suites", results / "suites")  # the committed suite boards
    planted = build_result(
        planted_answers,
        provider="planted",
        model="planted-model",
        display_name=PLANTED_NAME,
        metadata={"card_url": PLANTED_CARD, "open_weights": True, "parameters": 8_000_000_000},
    )
    write_result(planted, results / "sample" / "planted.json")
    with serve(results, extra_env={"SPACE_ID": SPACE}) as url:
        yield url


@pytest.fixture(scope="module")
def synthetic_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    results = tmp_path_factory.mktemp("synthetic") / "results"
    with serve(results, synthetic=True, timeout=900) as url:
        yield url


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from yoxla.testing.hostile import write_hostile_folder

    root = tmp_path_factory.mktemp("hostile")
    # The hostile corpus edits files of the legacy format (yoxla-result v2), which stays admissible.
    genuine = sorted((REPO / "tests" / "leaderboard" / "cases" / "legacy-v2" / "sample").glob("*.json"))
    _, trusted = write_hostile_folder(root / "results", genuine, root / "keys")
    with serve(root / "results", trusted_keys=trusted) as url:
        yield url


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chrome(1440, 1000) as d:
        yield d


def _body(d: Any) -> str:
    return str(d.find_element(By.TAG_NAME, "body").text)


def _tab_titles(d: Any) -> list[str]:
    """The titles of the tabs a visitor can pick (hidden ones left out)."""
    return [b.text.strip() for b in d.find_elements(By.CSS_SELECTOR, "button[role=tab]") if b.is_displayed()]


def _selected_tab(d: Any) -> str:
    return str(d.find_element(By.CSS_SELECTOR, "button[role=tab][aria-selected=true]").text.strip())


RULE_JS = """
const el = document.getElementById('rank-rule');
if (!el) return null;
const r = el.getBoundingClientRect();
return {left: r.left, right: r.right, width: r.width, height: r.height, text: el.innerText,
        inner: window.innerWidth, scroll: document.documentElement.scrollWidth};
"""

BROKEN_WORDS_JS = """
const out = [];
for (const th of document.querySelectorAll(arguments[0] + ' th')) {
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const re = /\\S+/g; let m;
    while ((m = re.exec(node.textContent))) {
      const range = document.createRange();
      range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) out.push(m[0]);
    }
  }
}
return out;
"""


TRACES_JS = """
return [...document.querySelectorAll('.js-plotly-plot')].filter(el => el.getClientRects().length).map(el => ({
  title: String((el.layout.title && el.layout.title.text) || ''),
  traces: (el.data || []).map(t => ({
    type: t.type || 'scatter', xaxis: t.xaxis || 'x',
    cells: t.z ? t.z.flat().length : 0,
    coloured: t.z ? t.z.flat().filter(z => z !== null && isFinite(z)).length : 0,
    scale: JSON.stringify(t.colorscale || null),
  })),
}));
"""


def _check_block_and_breakdown_plots(d: Any, title: str, where: str) -> None:
    """Blocks: each task in its own panel (never every task on one row); heatmaps coloured."""
    shown = d.execute_script(TRACES_JS)
    if title == "Blocks":
        drawn = [p for p in shown if p["traces"]]
        assert drawn, where
        for p in drawn:
            axes = [t["xaxis"] for t in p["traces"]]
            assert len(axes) == len(set(axes)) > 1, (where, p["title"], axes)
    if title == "Breakdowns":
        maps = [t for p in shown for t in p["traces"] if t["type"] == "heatmap"]
        assert maps, where
        for t in maps:
            assert t["cells"] > 0 and t["coloured"] == t["cells"], (where, "a heatmap has grey cells", t)
            assert "d0d0d0" not in t["scale"], where


def _check_view(d: Any, where: str) -> None:
    assert errors(d) == [], where
    assert plot_problems(d) == [], where


def _check_leaderboard(d: Any, where: str) -> None:
    rule = d.execute_script(RULE_JS)
    assert rule is not None and "How to read this" in rule["text"] and "Rank" in rule["text"], where
    assert rule["width"] > 0 and rule["height"] > 0, where
    assert 0 <= rule["left"] and rule["right"] <= 1440, (where, rule)
    assert rule["scroll"] <= rule["inner"], (where, "the page scrolls sideways", rule)
    assert d.execute_script(BROKEN_WORDS_JS, "#leaderboard-table") == [], where


def _every_view(d: Any, url: str, app: str) -> None:
    for edition in ("v1", "sample"):
        open_page(d, url, edition=edition)
        assert d.find_element(By.CSS_SELECTOR, "#edition input").get_attribute("value") == edition
        for title in TABS:
            click_tab(d, title)
            where = f"{app}: {edition} / {title}"
            _check_view(d, where)
            assert len(plots(d)) >= MIN_PLOTS.get(title, 0), (where, "a plot was not drawn")
            if title in CONTENT:
                assert d.find_elements(By.CSS_SELECTOR, CONTENT[title]), (where, "the view did not render")
            if title == "Submit":
                assert "Add a model" in _body(d)
            if edition == "sample" or app == "synthetic":
                _check_block_and_breakdown_plots(d, title, where)
            if title == "Leaderboard":
                _check_leaderboard(d, where)


def test_committed_files_every_view(committed_url: str, driver: Any) -> None:
    _every_view(driver, committed_url, "committed")


def test_synthetic_100_every_view(synthetic_url: str, driver: Any) -> None:
    _every_view(driver, synthetic_url, "synthetic")


def test_hostile_folder_every_view(hostile_url: str, driver: Any) -> None:
    _every_view(driver, hostile_url, "hostile")
    assert "Error" not in driver.find_element(By.CSS_SELECTOR, "#status").text


def test_deep_link_opens_the_model_page_and_reported_results_sit_beside(
    synthetic_url: str, driver: Any
) -> None:
    d = driver
    open_page(d, synthetic_url, model=REPORTED_KEY)
    assert _selected_tab(d) == "Model"
    # The page's texts are filled by the same event as its tables, but a busy browser may paint
    # a table before a Markdown: wait for each text, not for a quiet spell.
    _wait_text(d, "#model-picker input", "openai/gpt-4o-mini", value=True)
    _wait_text(d, "#model-summary", "Rank")
    _wait_text(d, "#model-facts", REPORTED_KEY)
    _check_view(d, "deep link")
    # The reported results on v1, and this admitted file next to its reported numbers.
    click_tab(d, "Leaderboard")
    # filled by the tab's render event: waited for, not read once (a busy browser paints it late)
    _wait_text(d, "#reported-vs-admitted", "openai/gpt-4o-mini")
    _wait_text(d, "#reported-vs-admitted", REPORTED_KEY)
    assert "yoxla 0.1.0 release notes" in _body(d)
    # A task page deep link shows the real prompt of the sample edition.
    open_page(d, synthetic_url, task="nli_v1")
    assert _selected_tab(d) == "Tasks"
    assert "Müddəa:" in d.find_element(By.CSS_SELECTOR, "#task-user textarea").get_attribute("value")
    _check_view(d, "task deep link")


def test_v1_without_files_row_click_and_page_zero(committed_url: str, driver: Any) -> None:
    d = driver
    wait = WebDriverWait(d, 60, poll_frequency=0.3)
    open_page(d, committed_url, edition="sample")
    # The main dropdown: switch to v1, which has no admitted file.
    pick_option(d, "#edition", lambda label: label == "v1")
    wait.until(lambda d: "No re-checked result file on" in d.find_element(By.CSS_SELECTOR, "#lb-count").text)
    wait_rendered(d)
    _check_view(d, "v1 with no admitted file")
    assert "Reported results" in _body(d)
    assert "edition=v1" in d.current_url
    # A row click opens that model's page, and the URL names it.
    open_page(d, committed_url, edition="sample")
    cell = d.find_element(By.CSS_SELECTOR, '#leaderboard-table [data-testid="cell-1-1"]')
    name = cell.text.strip()
    cell.click()
    wait.until(lambda d: _selected_tab(d) == "Model")
    wait_rendered(d)
    assert d.find_element(By.CSS_SELECTOR, "#model-picker input").get_attribute("value").startswith(name)
    wait.until(lambda d: "model=" in d.current_url)
    _check_view(d, "row click")
    # Its weakest task opens the error explorer on that task, wrong answers only.
    task = d.find_element(By.CSS_SELECTOR, '#model-weakest [data-testid="cell-0-0"]')
    task_name = task.text.strip()  # the task's name, as the leaderboard's columns name it
    assert task_name in TASK_SHORT.values(), task_name
    task.click()
    wait.until(lambda d: _selected_tab(d) == "Error explorer")
    wait_rendered(d)
    picked = d.find_element(By.CSS_SELECTOR, "#explorer-task input").get_attribute("value")
    assert picked.startswith(f"{task_name} · "), picked  # the same name, and its id
    checked = d.find_element(By.CSS_SELECTOR, "#explorer-verdict input:checked").get_attribute("value")
    assert checked == "wrong"
    _check_view(d, "weakest task link")
    # Page 0 in the explorer: no error, page 1 shown.
    click_tab(d, "Error explorer")
    page = d.find_element(By.CSS_SELECTOR, "#explorer-page input")
    page.send_keys(Keys.CONTROL, "a")
    page.send_keys("0", Keys.ENTER)
    _wait_text(d, "#explorer-page input", "1", value=True, exact=True)  # page 0 is read as page 1
    _wait_text(d, "#explorer-info textarea", "page 1 of", value=True)
    wait_rendered(d)
    assert errors(d) == []


def _wait_text(d: Any, css: str, needle: str, *, value: bool = False, exact: bool = False) -> None:
    """Until the element's text content (``value``: its value) holds ``needle`` (``exact``: is
    it); the last text seen is in the failure."""
    seen: list[str] = [""]

    def ready(d: Any) -> bool:
        found = d.find_elements(By.CSS_SELECTOR, css)
        # textContent, not .text: a table past its max height clips its last rows, and .text
        # leaves out what is clipped (the file row of a model's facts, where a long row wraps).
        got = found[0].get_attribute("value" if value else "textContent") if found else None
        seen[0] = str(got or "")
        return seen[0].strip() == needle if exact else needle in seen[0]

    try:
        WebDriverWait(d, 60, poll_frequency=0.2, ignored_exceptions=(StaleElementReferenceException,)).until(
            ready
        )
    except Exception as exc:
        raise AssertionError(f"{css}: {needle!r} never showed; last seen {seen[0][:300]!r}") from exc


def _answer(d: Any) -> str:
    return str(d.find_element(By.CSS_SELECTOR, "#example-answer textarea").get_attribute("value") or "")


def test_planted_script_is_shown_as_text(committed_url: str, driver: Any) -> None:
    d = driver
    wait = WebDriverWait(d, 60, poll_frequency=0.3)
    open_page(d, committed_url, edition="sample")
    assert PLANTED_NAME in _body(d)  # the planted display name, as text
    click_tab(d, "Error explorer")
    pick_option(d, "#explorer-model-a", lambda label: "planted" in label)
    wait.until(lambda d: _answer(d) == SCRIPT)  # the first example opens with the planted answer
    wait.until(lambda d: SCRIPT in _body(d))  # and the table shows it as visible text
    d.find_element(By.CSS_SELECTOR, '#explorer-table [data-testid="cell-1-0"]').click()
    wait.until(lambda d: _answer(d) == '<img src=x onerror="window.__pwned=2">')
    time.sleep(0.5)
    assert d.execute_script("return typeof window.__pwned") == "undefined"
    assert not d.find_elements(By.CSS_SELECTOR, "img[src=x]")
    _check_view(d, "planted")
    if os.environ.get("YOXLA_SCREENSHOT"):
        d.save_screenshot(os.environ["YOXLA_SCREENSHOT"])


def _pick_board(d: Any, label: str) -> None:
    pick_option(d, "#edition", lambda text: text == label)


def test_a_suite_board_is_picked_and_shows_its_table(committed_url: str, driver: Any) -> None:
    d = driver
    wait = WebDriverWait(d, 60, poll_frequency=0.3)
    open_page(d, committed_url, edition="sample")
    _pick_board(d, "suite · oxu")
    wait.until(
        lambda d: "board of suite oxu" in " ".join(d.find_element(By.CSS_SELECTOR, "#lb-count").text.split())
    )
    wait_rendered(d)
    _check_view(d, "suite oxu / Leaderboard")
    head = d.find_element(By.CSS_SELECTOR, "#leaderboard-table thead").text
    assert "Suite score" in head and "oxu_v1" in head
    assert "suite=oxu" in d.current_url and "edition=" not in d.current_url
    # The full rule is one click away.
    d.find_element(By.CSS_SELECTOR, "#rank-rule-more button, #rank-rule-more .label-wrap").click()
    WebDriverWait(d, 30).until(
        lambda d: "Ranked by the suite score" in d.find_element(By.CSS_SELECTOR, "#rank-rule-full").text
    )
    # A link to the board opens it, and every view of it renders.
    open_page(d, committed_url, suite="oxu")
    assert d.find_element(By.CSS_SELECTOR, "#edition input").get_attribute("value") == "suite · oxu"
    # A suite has no blocks and no answer probabilities: those tabs are not offered there.
    shown = _tab_titles(d)
    assert "Blocks" not in shown and "Calibration" not in shown, shown
    for title in TABS:
        if title in ("Blocks", "Calibration"):
            continue
        click_tab(d, title)
        _check_view(d, f"suite oxu / {title}")
        if title in CONTENT:
            assert d.find_elements(By.CSS_SELECTOR, CONTENT[title]), (title, "the view did not render")
    click_tab(d, "Error explorer")
    inputs = d.find_element(By.CSS_SELECTOR, "#example-inputs textarea").get_attribute("value")
    assert "[system]" in inputs and "Mətn:" in inputs  # the rendered prompt, as sent


TOP_REPORTED = "google/gemini-3.1-flash-lite"  # the first of the benchmark's reported results
ROW_JS = """
const t = document.querySelector('#leaderboard-table');
const cells = [...t.querySelectorAll('[role=gridcell][data-row][data-col]')];
const name = cells.find(c => c.dataset.col === '1' && c.innerText.trim() === arguments[0]);
if (!name) return null;
const heads = [...t.querySelectorAll('thead th')].map(th => th.innerText.trim());
const col = heads.findIndex(h => h.startsWith('YOXLA'));
const at = (c) => cells.find(x => x.dataset.row === name.dataset.row && x.dataset.col === String(c));
const score = at(col), rank = at(0);
const box = (el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top + window.scrollY, bottom: r.bottom + window.scrollY,
          vtop: r.top, vbottom: r.bottom}; };
return {rank: rank ? rank.innerText.trim() : null, score: score ? score.innerText.trim() : null,
        score_box: score ? box(score) : null, name_box: box(name), inner: window.innerWidth,
        height: window.innerHeight, scroll: document.documentElement.scrollWidth};
"""


@pytest.mark.parametrize(("width", "height"), [(1440, 1000), (390, 844)])
def test_the_first_screen_shows_the_reported_models_with_their_scores(
    committed_url: str, width: int, height: int
) -> None:
    with chrome(width, height) as d:
        open_page(d, committed_url)  # no query string: the published benchmark
        assert d.find_element(By.CSS_SELECTOR, "#edition input").get_attribute("value") == "v1"
        WebDriverWait(d, 60).until(lambda d: d.execute_script(ROW_JS, TOP_REPORTED) is not None)
        row = d.execute_script(ROW_JS, TOP_REPORTED)
        assert row["rank"] == "reported" and row["score"] == "84.9", row
        assert row["score_box"]["bottom"] <= 1000, ("the top model's score is below the first 1000 px", row)
        assert "reported by the benchmark's authors" in _body(d) or "reported" in row["rank"]
        if width == 390:  # name and score without sideways scrolling
            for box in (row["name_box"], row["score_box"]):
                assert 0 <= box["left"] and box["right"] <= row["inner"], row
            # and the score lies inside the viewport as the page opens, with no scrolling at all
            assert 0 <= row["score_box"]["vtop"] and row["score_box"]["vbottom"] <= row["height"], row
        assert row["scroll"] <= row["inner"], ("the page scrolls sideways", row)
        _check_view(d, f"first screen at {width}px")


def test_about_links_the_repository_and_the_dataset_and_submit_names_the_place(
    committed_url: str, driver: Any
) -> None:
    d = driver
    open_page(d, committed_url)
    click_tab(d, "About")
    hrefs = [a.get_attribute("href") for a in d.find_elements(By.CSS_SELECTOR, "#about a")]
    assert "https://huggingface.co/datasets/LocalDoc/YOXLA-Benchmark" in hrefs, hrefs
    assert f"https://huggingface.co/spaces/{SPACE}" in hrefs, hrefs
    assert "@misc{" in d.find_element(By.CSS_SELECTOR, "#about").text  # the BibTeX citation
    assert "What YOXLA does not measure" in d.find_element(By.CSS_SELECTOR, "#about").text
    click_tab(d, "Submit")
    links = [a.get_attribute("href") for a in d.find_elements(By.CSS_SELECTOR, "#submit a")]
    assert f"https://huggingface.co/spaces/{SPACE}/discussions" in links, links
    assert "--display-name" in d.find_element(By.CSS_SELECTOR, "#submit").text


def test_a_model_row_links_to_its_card(committed_url: str, driver: Any) -> None:
    d = driver
    open_page(d, committed_url, edition="sample")
    links = d.find_elements(By.CSS_SELECTOR, f'#leaderboard-table a[href="{PLANTED_CARD}"]')
    assert links and links[0].get_attribute("textContent").strip() == PLANTED_NAME  # as text, linked
    assert d.execute_script("return typeof window.__pwned") == "undefined"


OVERLAP_JS = """
const out = [];
const box = (el) => el.getBoundingClientRect();
const meet = (a, b) => a.width > 0 && b.width > 0 && a.left < b.right - 1 && b.left < a.right - 1
  && a.top < b.bottom - 1 && b.top < a.bottom - 1;
for (const el of document.querySelectorAll('.js-plotly-plot')) {
  if (!el.getClientRects().length) continue;
  const title = el.querySelector('.gtitle'), legend = el.querySelector('g.legend');
  const name = title ? title.textContent.slice(0, 60) : '(untitled)';
  if (title && legend && meet(box(title), box(legend))) out.push(name + ': title over legend');
  const notes = [...el.querySelectorAll('g.annotation')].map(box);
  for (let i = 0; i < notes.length; i++) for (let j = i + 1; j < notes.length; j++)
    if (meet(notes[i], notes[j])) out.push(name + ': panel titles overlap');
  if (title) for (const n of notes) if (meet(box(title), n)) out.push(name + ': title over a panel title');
}
return out;
"""


@pytest.mark.parametrize(("width", "height"), [(1440, 1000), (390, 844)])
def test_no_figure_has_its_title_over_its_legend(committed_url: str, width: int, height: int) -> None:
    with chrome(width, height) as d:
        for tab in ("leaderboard", "model", "tasks", "blocks", "breakdowns", "diagnostics", "calibration"):
            open_page(d, committed_url, edition="sample", tab=tab)  # narrow tabs fold into a menu
            assert d.execute_script(OVERLAP_JS) == [], (width, tab)


ORDER_JS = """
const t = document.querySelector(arguments[0]);
const heads = [...t.querySelectorAll('thead th')].map(th => th.title || th.innerText.trim());
const rows = {};
for (const c of t.querySelectorAll('[role=gridcell][data-row][data-col]')) {
  const top = Math.round(c.getBoundingClientRect().top);
  (rows[top] = rows[top] || {})[heads[+c.dataset.col]] = c.innerText.trim();
}
return Object.keys(rows).map(Number).sort((a, b) => a - b).map(k => rows[k]);
"""


def _click_header(d: Any, table: str, title: str) -> None:
    head = d.find_element(By.CSS_SELECTOR, f'{table} thead th[title="{title}"]')
    head.click()


def _number(text: str) -> float:
    return float(text.split()[0]) if text and text[0].isdigit() else float("nan")


def test_a_click_on_a_header_sorts_the_leaderboard(committed_url: str, driver: Any) -> None:
    d = driver
    table = "#leaderboard-table"
    open_page(d, committed_url, edition="sample")
    before = d.execute_script(ORDER_JS, table)
    pairs = {(r["Model"], r["Language"], r["YOXLA"]) for r in before}  # each row's own cells
    assert [r["Language"] for r in before] != sorted(
        (r["Language"] for r in before), key=_number, reverse=True
    )

    def column(name: str) -> list[float]:
        return [_number(r[name]) for r in d.execute_script(ORDER_JS, table)]

    _click_header(d, table, "Language")  # numbers: highest first
    WebDriverWait(d, 30).until(lambda d: column("Language") == sorted(column("Language"), reverse=True))
    after = d.execute_script(ORDER_JS, table)
    assert after != before
    assert {(r["Model"], r["Language"], r["YOXLA"]) for r in after} == pairs  # rows moved whole
    _click_header(d, table, "Language")  # a second click: lowest first
    WebDriverWait(d, 30).until(lambda d: column("Language") == sorted(column("Language")))
    _click_header(d, table, "YOXLA")  # by the score, not by the text "31.8 ±8.3"
    WebDriverWait(d, 30).until(lambda d: column("YOXLA") == sorted(column("YOXLA"), reverse=True))
    # A row click after sorting opens the model on that row, not the one first shown there.
    _click_header(d, table, "YOXLA")
    WebDriverWait(d, 30).until(lambda d: column("YOXLA") == sorted(column("YOXLA")))
    lowest = d.execute_script(ORDER_JS, table)[0]["Model"]
    assert lowest != before[0]["Model"]
    first_row = (
        "return [...document.querySelectorAll(arguments[0] + ' [role=gridcell][data-row][data-col=\"1\"]')]"
        ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0]"
    )
    # A click that lands while the sorted grid is still being laid out can be lost (seen once in
    # CI, never alone): click the top row again, found afresh, until the Model tab opens.
    for _ in range(3):
        d.execute_script(first_row, table).click()
        try:
            WebDriverWait(d, 20).until(lambda d: _selected_tab(d) == "Model")
            break
        except TimeoutException:
            continue
    assert _selected_tab(d) == "Model"
    wait_rendered(d)
    assert d.find_element(By.CSS_SELECTOR, "#model-picker input").get_attribute("value").startswith(lowest)
    _check_view(d, "sorted leaderboard")
