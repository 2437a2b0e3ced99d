"""Whole evaluations with the real Claude Code and Codex CLIs, driven by the loopback probe.

The scripted model writes the correct fix only when the treatment's delivered guidance
is in the request, so the report must show a real delta; the usage in results.json must
equal, exactly, the usage the probe served.
"""

from __future__ import annotations

import getpass
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from tests._prereq import require
from tests.dashboard.server import dashboard
from tests.harnesses._claude_pkg import MARKER, write

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")


def _treatment(tmp: Path, harness: str) -> dict[str, list[str]]:
    guidance = write(tmp / "pkg" / "core.md", f"# Guidance\n{MARKER}: write guided answers.\n")
    skill = tmp / "pkg" / "skills" / "tidy-code"
    write(skill / "SKILL.md", "---\nname: tidy-code\ndescription: Keep code tidy.\n---\nBe tidy.\n")
    treatment = {"guidance": [str(guidance)], "skills": [str(skill)]}
    if harness == "codex":
        plugin = tmp / "pkg" / "plugins" / "starter"
        write(plugin / ".codex-plugin" / "plugin.json", json.dumps({"name": "starter", "version": "0.2.0", "description": "d"}))
        write(plugin / "skills" / "plug-skill" / "SKILL.md", "---\nname: plug-skill\ndescription: from a plugin\n---\nx\n")
        write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "sh ${PLUGIN_ROOT}/hooks/start.sh", "timeout": 10}]}]}}))
        write(plugin / "hooks" / "start.sh", 'echo "$PWD" > "$HOME/hook-ran.txt"\n')
        treatment["plugins"] = [str(plugin)]
    if harness == "claude":
        plugin = tmp / "pkg" / "plugins" / "pb-hooks"
        write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pb-hooks", "version": "0.1.0"}))
        write(plugin / "hooks" / "mark.sh", "#!/bin/sh\necho session-start-ran >> \"$HOME/hook.log\"\n", 0o755)
        write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\""}]}]}}))
        treatment["plugins"] = [str(plugin)]
    return treatment


def _run(tmp: Path, harness: str, model: str, scenario: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    config = {
        "name": f"probe-{harness}",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"guided": _treatment(tmp, harness)},
        "runner": {"harness": harness, "model": model, "reasoning": "low", "probe": str(scenario)},
        "repeats": 2,
        "jobs": 2,
        "seed": 1,
        "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    run_dir = tmp / "run"
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    return run_dir, done


def _served(run_dir: Path, harness: str) -> tuple[int, int]:
    """(input, output) tokens the probe served over completed coding turns."""
    inp = out = 0
    for line in (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] != "coding" or not r["completed"] or r["status"] != 200 or not r["usage"]:
            continue
        u = r["usage"]
        if harness == "claude":  # Anthropic's input_tokens exclude cache reads and writes
            inp += u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        else:  # OpenAI's input_tokens include cached ones
            inp += u["input_tokens"]
        out += u["output_tokens"]
    return inp, out


MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5"}


@pytest.fixture(scope="module")
def guided_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The guided probe evaluation of a harness, made once per module (the browser test reuses it)."""
    made: dict[str, Path] = {}

    def get(harness: str) -> Path:
        if harness not in made:
            require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
            require(shutil.which("bwrap") is not None, "bubblewrap")
            run_dir, done = _run(tmp_path_factory.mktemp(f"guided-{harness}"), harness, MODELS[harness],
                                 SCENARIOS_DIR / "guided.yaml")
            assert done.returncode == 0, done.stdout + done.stderr
            made[harness] = run_dir
        return made[harness]

    return get


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_whole_evaluation_shows_the_guidance_delta_and_exact_usage(guided_runs: Callable[[str], Path], harness: str) -> None:
    """Vanilla fails and the guided arm passes; results.json tokens equal what the probe served."""
    run_dir = guided_runs(harness)
    results = json.loads((run_dir / "report" / "results.json").read_text())
    assert results["run"]["probe"] is True
    per = results["per_task"]["add-numbers"]
    assert per["vanilla"]["pass_rate"] == 0.0
    assert per["guided"]["pass_rate"] == 1.0
    attempts = results["attempts"]
    assert len(attempts) == 4
    sessions = []
    for a in attempts:
        # A command hook (both treatments carry a plugin with one) may spend unmetered
        # tokens: its arm's total is unknown and the native session's usage is kept apart.
        hooked = a["arm"] == "guided"
        if hooked:
            assert a["tokens"]["status"] == "unknown" and a["tokens"]["total"] is None, a["tokens"]
            assert a["tokens"]["native_session"]["status"] == "exact", a["tokens"]
            sessions.append(a["tokens"]["native_session"])
        else:
            assert a["tokens"]["status"] == "exact" and a["tokens"]["native_session"] is None, a["tokens"]
            sessions.append(a["tokens"])
    got_in = sum(s["input"] for s in sessions)
    got_out = sum(s["output"] for s in sessions)
    assert (got_in, got_out) == _served(run_dir, harness)
    assert any("native CLI session usage is kept separately" in n for n in results["notes"])
    for a in attempts:
        receipt = json.loads((run_dir / a["evidence"] / "native-treatment.json").read_text())
        assert receipt, "discovery receipt missing"
    assert "PROBE" in (run_dir / "report" / "report.html").read_text()


#: every kind on Claude Code; Codex once, since its reading of each kind is checked one attempt at a time
#: (test_codex_realcli.py::test_provider_errors_are_provider_stops) and the stop and resume are the engine's
@pytest.mark.parametrize(("harness", "model", "stop"), [
    ("claude", "claude-sonnet-4-5", "rate-limit"), ("claude", "claude-sonnet-4-5", "auth"),
    ("claude", "claude-sonnet-4-5", "server-error"), ("codex", "gpt-5.5", "auth")])
def test_provider_stop_stops_the_run_and_resume_finishes(tmp_path: Path, harness: str, model: str, stop: str) -> None:
    """A limit, auth failure or 5xx stops the run naming the attempt; once the provider answers, resume codes the slot again."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    scenario = tmp_path / "scenario.yaml"
    shutil.copyfile(SCENARIOS_DIR / f"{stop}.yaml", scenario)
    run_dir, done = _run(tmp_path, harness, model, scenario)
    assert done.returncode == 1, done.stdout + done.stderr
    status = json.loads(subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    assert status["phase"] == "failed"
    assert "provider stop" in status["error"] and "__r" in status["error"]
    assert status["states"]["interrupted"] >= 1
    assert status["outcomes"] == {"pass": 0, "overlap_pass": 0, "fail": 0, "empty": 0, "unknown": 0}
    shutil.copyfile(SCENARIOS_DIR / "guided.yaml", scenario)  # the provider recovers
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    again = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(run_dir), "--foreground"],
                           capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    status = json.loads(subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    assert status["phase"] == "complete"
    assert status["discarded"] and all(d["replaced_by"] for d in status["discarded"])


def test_refused_operator_variable_stops_before_anything_starts(tmp_path: Path) -> None:
    """ANTHROPIC_API_KEY in the operator environment refuses a Claude run with exit 2 and no run directory."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    config = {
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {},
        "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
        "environment": {"isolation": "bubblewrap", "allow_unisolated": True},
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**{k: v for k, v in os.environ.items() if k not in REFUSED}, "ANTHROPIC_API_KEY": "sk-ant-not-used",
           "CLAUDE_CODE_OAUTH_TOKEN": "x"}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(tmp_path / "run"), "--yes"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert not (tmp_path / "run").exists()


def _bundle_text(bundle: Path) -> str:
    with tarfile.open(bundle) as tar:
        return "\n".join((tar.extractfile(m) or io.BytesIO()).read().decode("utf-8", "replace")
                         for m in tar.getmembers() if m.isfile())


@pytest.mark.browser
def test_real_cli_attempt_pages_side_by_side_and_bundle_in_chromium(guided_runs: Callable[[str], Path],
                                                                   tmp_path: Path) -> None:
    """In Chromium, from the served report: each real CLI's guided attempt shows its patch, the scenario's tool calls in order, the verifier tail and the receipt, a fold opens, side by side shows the two patches' difference; the plain report file has no live link; a bundle of the Claude Code run holds no delivered key, host path or user name and shows the same numbers."""
    from selenium.webdriver.common.by import By

    from pluginbench.dashboard._discovery import run_key
    from pluginbench.probe import PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY, load_scenario
    from tests.dashboard.test_browser import CHROMIUM, DRIVER, texts, wait_for
    from tests.dashboard.test_browser import FLAGS as BROWSER_FLAGS

    require(Path(CHROMIUM).exists() and Path(DRIVER).exists(), "chromium and chromium-driver (tools/install-chromium.sh)")
    runs = {h: guided_runs(h) for h in ("claude", "codex")}
    bundle = tmp_path / "claude.tar.gz"
    done = subprocess.run([sys.executable, "-m", "pluginbench", "bundle", str(runs["claude"]), "-o", str(bundle)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    text = _bundle_text(bundle)
    assert str(runs["claude"].parent) in (runs["claude"] / "evaluation.json").read_text()  # there was a host path to scrub
    user = getpass.getuser()
    for leak in (PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY, str(runs["claude"].parent), str(tmp_path.parent.parent),
                 str(Path.home()) + "/", *([f"/home/{user}", user] if len(user) >= 4 and user not in ("root", "runner") else [])):
        assert leak not in text, leak
    script = {r.name: [s.tool.name for s in r.script if s.tool] for r in load_scenario(SCENARIOS_DIR / "guided.yaml").rules}

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in BROWSER_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    with dashboard(runs["claude"], runs["codex"], bundle) as port:
        driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
        driver.set_page_load_timeout(60)
        try:
            def url(path: str) -> str:
                return f"http://127.0.0.1:{port}{path}"

            def facts(key: str, attempt: str) -> tuple[str, str]:
                driver.get(url(f"/run/{key}/attempt/{attempt}"))
                report = driver.find_element(By.ID, "facts").text
                driver.get(url(f"/run/{key}/report.html"))
                return report, driver.find_element(By.ID, "per-task-table").text

            for harness, prefix in (("claude", "claude-code"), ("codex", "codex")):
                run_dir, key = runs[harness], run_key(runs[harness])
                results = json.loads((run_dir / "report" / "results.json").read_text())
                guided = min((a for a in results["attempts"] if a["arm"] == "guided"), key=lambda a: a["repeat"])
                driver.get(url(f"/run/{key}/report.html"))
                driver.find_element(By.CSS_SELECTOR, "#attempts details > summary").click()
                driver.find_element(By.CSS_SELECTOR, f'#attempts-table a.pb-link[href="attempt/{guided["attempt_id"]}"]').click()
                wait_for(lambda: "/attempt/" in driver.current_url, 10, "the attempt page")
                assert driver.find_element(By.ID, "attempt-id").text == guided["attempt_id"]
                assert [e.get_attribute("data-path") for e in driver.find_elements(By.CSS_SELECTOR, ".patch-file")] == [
                    "solution.py"]
                assert "return a + b" in driver.find_element(By.ID, "patch").text
                assert texts(driver, ".tool-name") == script[f"{prefix}-guided"], harness
                folder = run_dir / guided["evidence"]
                assert "add(2, 3) = 5" in (folder / "grading" / "test-stdout.txt").read_text()
                assert "add(2, 3) = 5" in driver.find_element(By.ID, "verifier-tail").text
                receipt = json.loads((folder / "native-treatment.json").read_text())
                assert all(k in driver.find_element(By.ID, "receipt").text for k in receipt)
                fold = driver.find_element(By.CSS_SELECTOR, ".step.tool details.in")
                assert not fold.find_element(By.TAG_NAME, "pre").is_displayed()
                fold.find_element(By.TAG_NAME, "summary").click()
                assert "return a + b" in fold.find_element(By.TAG_NAME, "pre").text
                driver.get(url(f"/run/{key}/report.html"))
                driver.find_element(By.CSS_SELECTOR, '#paired .pb-side a[href^="side/"]').click()
                wait_for(lambda: "/side/" in driver.current_url, 10, "side by side")
                assert len(driver.find_elements(By.CSS_SELECTOR, ".side-col")) == 2
                delta = driver.find_element(By.ID, "patch-delta").text
                assert "return a - b" in delta and "return a + b" in delta, delta
            driver.get((runs["claude"] / "report" / "report.html").as_uri())
            assert driver.find_elements(By.CSS_SELECTOR, "a.pb-link") and not driver.find_elements(By.CSS_SELECTOR, "a.pb-link[href]")
            assert not driver.find_element(By.CSS_SELECTOR, ".pb-side").is_displayed()
            driver.get(url("/"))
            keys = {e.get_attribute("data-run") for e in driver.find_elements(By.CSS_SELECTOR, "[data-run]")}
            bundled = (keys - {run_key(runs["claude"]), run_key(runs["codex"])}).pop()
            first = json.loads((runs["claude"] / "report" / "results.json").read_text())["attempts"][0]["attempt_id"]
            assert facts(bundled, first) == facts(run_key(runs["claude"]), first)
        finally:
            driver.quit()
