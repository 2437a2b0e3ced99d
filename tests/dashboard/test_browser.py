"""The dashboard in Debian's Chromium (Selenium + Debian's chromium-driver), against real runs:
the bundled demo, a run in progress that the test then stops, and a corrupt run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pluginbench.dashboard._discovery import run_key
from tests._prereq import require
from tests.dashboard.server import dashboard
from tests.runs_helpers import write_config

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1800")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"pluginbench {' '.join(args)}: {out.stdout}\n{out.stderr}"
    return out


def snapshot(run_dir: Path) -> dict[str, Any]:
    return json.loads(cli("status", str(run_dir), "--json").stdout)


class Runs:
    def __init__(self, root: Path, port: int, screens: Path) -> None:
        self.root, self.port, self.screens = root, port, screens

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def key(self, name: str) -> str:
        return run_key(self.root / name)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    require(Path(CHROMIUM).exists() and Path(DRIVER).exists(), "chromium and chromium-driver (tools/install-chromium.sh)")
    base = tmp_path_factory.mktemp("dashboard")
    root = base / "runs"
    root.mkdir()
    cli("demo", "--output", str(root / "demo"))
    shutil.copytree(root / "demo", root / "corrupt", ignore=shutil.ignore_patterns("ledger.sqlite*", "report"))
    log = root / "corrupt" / "events.jsonl"
    lines = log.read_bytes().split(b"\n")
    lines[5] = b'{"type": "attempt.started", "seq": 6, "att'
    log.write_bytes(b"\n".join(lines))
    config = write_config(base, harness="simulated", repeats=10, jobs=1, name="live-run",
                          tasks=["roman-numerals", "word-wrap", "merge-intervals"])
    cli("run", str(config), "--output", str(root / "live"))
    # Under the pytest tmp dir by default (pytest keeps the last three); CI can keep them
    # elsewhere with PLUGINBENCH_SCREENSHOTS.
    screens = Path(os.environ.get("PLUGINBENCH_SCREENSHOTS") or base / "screenshots")
    screens.mkdir(parents=True, exist_ok=True)
    print(f"\ndashboard screenshots: {screens}")
    try:
        with dashboard(root) as port:
            yield Runs(root, port, screens)
    finally:
        if snapshot(root / "live")["active"]:
            cli("stop", str(root / "live"), "--wait")


@pytest.fixture(scope="module")
def browser(runs: Runs) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={runs.screens.parent / 'profile'}")
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: Any, runs: Runs, name: str) -> None:
    path = runs.screens / f"{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 1000
    print(f"screenshot: {path}")


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    """Poll until truthy; an element the live page replaced mid-read counts as "not yet"."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except (StaleElementReferenceException, NoSuchElementException):
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def element_text(driver: Any, element_id: str) -> str:
    """One atomic read in the page, so a live update cannot replace the element between find and read."""
    return str(driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.textContent.trim() : '';", element_id))


def attribute_rows(driver: Any, css: str, attribute: str) -> list[tuple[str, str]]:
    """Each matching element's ``attribute`` and text, read in one in-page script (atomic against live updates)."""
    found = driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(e => [e.getAttribute(arguments[1]) || '', e.innerText]);", css, attribute)
    return [(str(key), str(text)) for key, text in found]


def texts(driver: Any, css: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, css)]


def test_runs_view_lists_every_run_running_first(runs: Runs, browser: Any) -> None:
    """The Runs view shows each run with phase and completed attempts; the running run comes first; the corrupt one says why."""
    browser.get(runs.url("/"))
    everyone = {runs.key("demo"), runs.key("corrupt"), runs.key("live")}

    def settled() -> list[tuple[str, str]] | None:
        # The view refreshes live (the running run changes), so each look reads all rows at once.
        rows = attribute_rows(browser, "#runs tr[data-run]", "data-run")
        if {key for key, _ in rows} != everyone:
            return None
        first = rows[0]
        return rows if first[0] == runs.key("live") and ("coding" in first[1] or "starting" in first[1]) else None

    rows = dict(wait_for(settled, 60, "all three runs listed, the running one first and coding or starting"))
    demo, corrupt = rows[runs.key("demo")], rows[runs.key("corrupt")]
    assert "complete" in demo and "36 of 36" in demo and "simulated" in demo
    assert "unreadable" in corrupt and "stale" in corrupt
    shot(browser, runs, "runs")


def test_run_view_shows_settings_attempts_totals_plots_and_report_link(runs: Runs, browser: Any) -> None:
    """The demo's Run view has its settings, attempts by task and arm, totals, the plots and a working report link."""
    from selenium.webdriver.common.by import By

    browser.get(runs.url(f"/run/{runs.key('demo')}"))
    assert element_text(browser, "phase") == "complete"
    settings = browser.find_element(By.ID, "settings").text
    assert "simulated" in settings and "repeats 3" in settings
    task_rows = browser.find_elements(By.CSS_SELECTOR, "#attempts tr[data-task]")
    assert len(task_rows) == 6
    reps = browser.find_elements(By.CSS_SELECTOR, "#attempts .rep")
    assert len(reps) == 36 and all("tok" in r.text for r in reps)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#totals tr")) == 3
    assert browser.find_elements(By.CSS_SELECTOR, "svg.heat rect[data-task]")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.tokens rect.bar")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#report-plots figure svg")) >= 3  # the report's own figures
    shot(browser, runs, "run-demo")
    browser.find_element(By.ID, "left-running").click()
    assert wait_for(lambda: texts(browser, "#left-result"), 30, "the left-running check")[0] == "nothing left running"
    browser.get(runs.url(f"/run/{runs.key('demo')}"))
    browser.find_element(By.ID, "report-link").click()
    wait_for(lambda: "/report.html" in browser.current_url, 10, "report.html")
    assert "quickstart" in browser.page_source


def test_results_filters_narrow_the_rows(runs: Runs, browser: Any) -> None:
    """Choosing an arm, then a task, in the Results view narrows the rows to matching attempts."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(runs.url("/results"))
    all_rows = browser.find_elements(By.CSS_SELECTOR, "#results tr[data-arm]")
    assert len(all_rows) == 36  # only the demo has a report
    Select(browser.find_element(By.NAME, "arm")).select_by_value("vanilla")
    wait_for(lambda: "arm=vanilla" in browser.current_url, 10, "the arm filter to apply")
    rows = browser.find_elements(By.CSS_SELECTOR, "#results tr[data-arm]")
    assert len(rows) == 18 and {r.get_attribute("data-arm") for r in rows} == {"vanilla"}
    Select(browser.find_element(By.NAME, "task")).select_by_value("roman-numerals")
    wait_for(lambda: "task=roman-numerals" in browser.current_url, 10, "the task filter to apply")
    rows = browser.find_elements(By.CSS_SELECTOR, "#results tr[data-arm]")
    assert len(rows) == 3 and {r.get_attribute("data-task") for r in rows} == {"roman-numerals"}
    assert browser.find_element(By.ID, "shown").text == "3"
    assert not browser.find_elements(By.ID, "mixed")
    shot(browser, runs, "results-filtered")


def test_attempt_page_from_a_cell_shows_patch_calls_tail_receipt_folds_and_side_by_side(runs: Runs, browser: Any) -> None:
    """An attempt cell opens the attempt page: its patch, tool calls in order, verifier tail and receipt; a fold opens; side by side works."""
    from selenium.webdriver.common.by import By

    browser.get(runs.url(f"/run/{runs.key('demo')}"))
    browser.find_element(By.CSS_SELECTOR, '#attempts tr[data-task="csv-quoting"] a.rep').click()
    wait_for(lambda: "/attempt/" in browser.current_url, 10, "the attempt page")
    assert browser.find_element(By.ID, "attempt-id").text == "csv-quoting__vanilla__r1"
    assert [e.get_attribute("data-path") for e in browser.find_elements(By.CSS_SELECTOR, ".patch-file")] == [
        "csvlite/writer.py"]
    assert texts(browser, ".tool-name")[:2] == ["Bash", "Edit"]
    assert "Ran 4 tests" in element_text(browser, "verifier-tail") and element_text(browser, "delivery")
    assert browser.find_element(By.ID, "receipt").text
    fold = browser.find_element(By.CSS_SELECTOR, ".step.tool details.out")
    assert not fold.find_element(By.TAG_NAME, "pre").is_displayed()
    fold.find_element(By.TAG_NAME, "summary").click()
    assert fold.find_element(By.TAG_NAME, "pre").is_displayed()
    shot(browser, runs, "attempt-demo")
    browser.find_element(By.CSS_SELECTOR, "#compare a").click()
    wait_for(lambda: "/side/" in browser.current_url, 10, "side by side")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".side-col")) == 2
    assert browser.find_element(By.ID, "divergence").text


def test_corrupt_run_view_says_it_cannot_be_read(runs: Runs, browser: Any) -> None:
    """A run whose log has a broken line renders, saying the read failed and naming the line."""
    browser.get(runs.url(f"/run/{runs.key('corrupt')}"))
    body = browser.page_source
    assert "stale" in body and "line 6" in body
    shot(browser, runs, "run-corrupt")


def test_running_run_updates_without_reload_then_shows_stopped(runs: Runs, browser: Any) -> None:
    """A running run's completed count rises in the open page with no reload; after stop the page shows stopped and the resume command."""
    from selenium.webdriver.common.by import By

    live = runs.root / "live"
    browser.get(runs.url(f"/run/{runs.key('live')}"))
    browser.execute_script("window.__not_reloaded = true;")
    wait_for(lambda: element_text(browser, "live-state").startswith("live"), 15,
             "the page's live stream to connect")
    first = int(element_text(browser, "complete-count"))
    wait_for(lambda: int(element_text(browser, "complete-count")) > first, 60,
             "the completed count to rise without a reload")
    assert browser.execute_script("return window.__not_reloaded === true;")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.timeline")
    shot(browser, runs, "run-live")
    cli("stop", str(live), "--wait")
    wait_for(lambda: element_text(browser, "phase") == "stopped", 30, "the phase to show stopped")
    assert browser.execute_script("return window.__not_reloaded === true;")
    # the resume command and the owner arrive in the page's next fragments (the phase may come first)
    wait_for(lambda: element_text(browser, "resume") == f"pluginbench run {live}", 30, "the resume command")
    wait_for(lambda: element_text(browser, "owner") == "no live owner", 30, "the owner to show none")
    shot(browser, runs, "run-stopped")
