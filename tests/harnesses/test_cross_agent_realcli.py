"""A cross-agent evaluation with the real Claude Code and Codex CLIs, driven by the loopback probe."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from tests._prereq import require
from tests.cli._cli_helpers import assert_refused, run_cli
from tests.harnesses._claude_pkg import MARKER, write

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
GATES = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "gates.yaml"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")
HARNESSES = [{"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
             {"harness": "codex", "model": "gpt-5.5", "reasoning": "low"}]


def _config(tmp: Path, treatment: dict[str, list[str]]) -> Path:
    config = {"name": "cross-probe", "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
              "treatments": {"guided": treatment},
              "runner": {"harnesses": HARNESSES, "probe": str(SCENARIOS_DIR / "guided.yaml")},
              "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 120,
              "environment": {"isolation": "bubblewrap"}, "measurements": ["tokens", "time"]}
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _require_clis() -> None:
    for h in ("claude", "codex"):
        require(find_cli(h) is not None, f"{h} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")


def test_two_real_harnesses_give_a_package_by_harness_matrix_in_report_and_status(tmp_path: Path) -> None:
    """Claude Code and Codex each run vanilla and the guided arm as their own run; report, csv and status name each harness."""
    _require_clis()
    guidance = write(tmp_path / "pkg" / "core.md", f"# Guidance\n{MARKER}: write guided answers.\n")
    path = _config(tmp_path, {"guidance": [str(guidance)]})
    out = tmp_path / "cross"
    env = {**{k: v for k, v in os.environ.items() if k not in REFUSED}, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(out), "--foreground",
                           "--yes"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((out / "report" / "results.json").read_text())
    assert doc["harnesses"] == ["claude", "codex"] and doc["packages"] == ["guided"]
    for h in ("claude", "codex"):
        cell = doc["matrix"][0]["cells"][h]
        # each harness against its own vanilla: the guidance reached both natively, so +100 pp on each
        assert (cell["harness"], cell["against"], cell["effect_pp"], cell["tasks"]) == (h, f"{h}/vanilla", 100.0, 1), cell
        per = doc["per_harness"][h]
        assert per["probe"] is True and per["status"] == "complete"
        assert [(a["arm"], a["pass_rate"]) for a in per["arms"]] == [("vanilla", 0.0), ("guided", 1.0)]
        run = json.loads((out / h / "report" / "results.json").read_text())
        assert run["run"]["harness"] == h and len(run["attempts"]) == 2
    assert [s["sentence"].split(":", 1)[0] for s in doc["sentences"]] == ["claude (claude-sonnet-4-5)", "codex (gpt-5.5)"]
    rows = (out / "report" / "results.csv").read_text().splitlines()
    assert rows[0].startswith("harness,model,row,package")
    assert sorted(r.split(",")[0] for r in rows[1:]) == ["claude"] * 3 + ["codex"] * 3  # 1 verdict + 2 attempts each
    html = (out / "report" / "report.html").read_text()
    assert html.index('id="answer"') < html.index('id="matrix"') < html.index('id="per-harness"')
    assert "claude: PROBE RUN (scripted model server, no spend); codex: PROBE RUN" in html
    assert html.count('data-harness="claude" data-verdict=') == html.count('data-harness="codex" data-verdict=') == 1
    code, text = run_cli("status", str(out))
    assert code == 0, text
    lines = text.splitlines()
    assert lines[0].startswith("claude (probe): complete, 2 of 2 attempts complete (fail 1, pass 1)")
    assert lines[1].startswith("codex (probe): complete, 2 of 2 attempts complete (fail 1, pass 1)")
    before = {f: (out / "report" / f).read_bytes() for f in ("results.json", "results.csv", "report.html")}
    code, text = run_cli("report", str(out))
    assert code == 0 and before == {f: (out / "report" / f).read_bytes() for f in before}
    code, text = run_cli("compare", str(out), "--gates", str(GATES))
    assert_refused(code, text, "is a cross-agent evaluation", f"{out}/claude", f"{out}/codex")


def test_a_claude_plugin_is_refused_for_codex_naming_the_harness_before_anything_is_written(tmp_path: Path) -> None:
    """A treatment Codex cannot deliver (a Claude Code plugin) refuses the whole evaluation at admission, naming codex's entry."""
    _require_clis()
    plugin = tmp_path / "pkg" / "plugins" / "pb-hooks"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pb-hooks", "version": "0.1.0"}))
    write(plugin / "hooks" / "mark.sh", "#!/bin/sh\necho ran >> \"$HOME/hook.log\"\n", 0o755)
    write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\""}]}]}}))
    path = _config(tmp_path, {"plugins": [str(plugin)]})
    code, out = run_cli("run", str(path), "--output", str(tmp_path / "cross"), "--dry-run")
    assert_refused(code, out, "under the codex harness (runner.harnesses[1])", "no .codex-plugin/plugin.json", str(plugin))
    assert not (tmp_path / "cross").exists()
