"""The Breakdowns tab picks a task and the field to break it down by; Blocks shows the suite's groups."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from yoxla.testing.browser import browser_available

pytestmark = pytest.mark.browser
if not (browser_available() or os.environ.get("CI")):  # CI installs Chromium: there a missing one fails
    pytest.skip("Chromium is absent: apt-get install chromium chromium-driver", allow_module_level=True)
selenium = pytest.importorskip("selenium", reason="pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from yoxla.testing.browser import chrome, click_tab, errors, open_page, plot_problems, plots, serve  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on a copy of the committed sample files."""
    results = tmp_path_factory.mktemp("bd") / "results"
    shutil.copytree(REPO / "results" / "sample", results / "sample")
    with serve(results) as found:
        yield found


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chrome(1440, 1000) as d:
        yield d


def _titles(d: Any) -> list[str]:
    return [" ".join(p["title"].split()) for p in plots(d)]


def test_a_task_is_broken_down_by_the_field_picked(url: str, driver: Any) -> None:
    d = driver
    open_page(d, url, edition="sample", tab="breakdowns", task="minimal_pairs_v1", by="domain")
    assert errors(d) == [] and plot_problems(d) == []
    assert any("minimal_pairs_v1: score by domain" in t for t in _titles(d)), _titles(d)
    assert d.find_element(By.CSS_SELECTOR, "#breakdown-field input").get_attribute("value") == "domain"
    # Picking another field in the By control redraws the heatmap by that field.
    d.find_element(By.CSS_SELECTOR, "#breakdown-field input").click()
    WebDriverWait(d, 60, poll_frequency=0.3).until(
        lambda d: next(
            (
                o
                for o in d.find_elements(By.CSS_SELECTOR, "[data-testid=dropdown-option]")
                if o.text.strip() == "difficulty"
            ),
            None,
        )
    ).click()
    WebDriverWait(d, 60, poll_frequency=0.3).until(
        lambda d: any("minimal_pairs_v1: score by difficulty" in t for t in _titles(d))
    )
    head = d.find_element(By.CSS_SELECTOR, "#breakdown-table thead").text
    assert "easy" in head or "hard" in head or "medium" in head, head


def test_blocks_show_the_suites_groups(url: str, driver: Any) -> None:
    d = driver
    open_page(d, url, edition="sample")
    click_tab(d, "Blocks")
    assert errors(d) == [] and plot_problems(d) == []
    body = d.find_element(By.TAG_NAME, "body").text
    from yoxla.contract.benchmark import benchmark_manifest

    for name in (g.name for g in benchmark_manifest().groups):  # the names the package suite gives them
        assert name in body, name
    assert sum(1 for t in _titles(d) if "group and task scores" in t) == 4, _titles(d)
