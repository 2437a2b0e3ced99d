"""The ``llm`` rubric grader through the real pinned Claude Code and Codex CLIs against the loopback probe:
three votes each in the reviewer's read-only sandbox, a malformed vote and a provider stop kept as unknown votes."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from pluginbench.actors._collector import llm_voter
from pluginbench.actors._reviewer_setup import make_reviewer
from pluginbench.events import ReviewerSpec
from pluginbench.measures import CollectorInput, LlmCheck
from pluginbench.measures._checks_spec import collect_checks
from pluginbench.probe import PINNED, ProbeServer, cli_version, find_cli, load_scenario
from tests._prereq import require
from tests.harnesses._claude_pkg import write

pytestmark = [pytest.mark.realcli]
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5"}
PASS = '{"verdict": "pass", "reason": "the answer explains the fix"}'
FAIL = '{"verdict": "fail", "reason": "no explanation"}'
SCENARIO = textwrap.dedent(f"""\
    name: grade-votes
    final: {{text: "Done.", usage: {{input_tokens: 900, output_tokens: 5}}}}
    rules:
      - name: majority-1
        when: {{messages_contain: "PLUGINBENCH-GRADE check=majority vote=1/3"}}
        script: [{{text: '{PASS}', usage: {{input_tokens: 800, output_tokens: 20}}}}]
      - name: majority-2
        when: {{messages_contain: "PLUGINBENCH-GRADE check=majority vote=2/3"}}
        script: [{{text: "Looks good to me.", usage: {{input_tokens: 800, output_tokens: 5}}}}]
      - name: majority-3
        when: {{messages_contain: "PLUGINBENCH-GRADE check=majority vote=3/3"}}
        script: [{{text: '```json\\n{PASS}\\n```', usage: {{input_tokens: 800, output_tokens: 20}}}}]
      - name: split-1
        when: {{messages_contain: "PLUGINBENCH-GRADE check=split vote=1/3"}}
        script: [{{text: '{FAIL}', usage: {{input_tokens: 800, output_tokens: 20}}}}]
      - name: split-2
        when: {{messages_contain: "PLUGINBENCH-GRADE check=split vote=2/3"}}
        script: [{{error: {{status: 429, message: "rate limited (probe grader)", retry_after: 0}}}}]
      - name: split-3
        when: {{messages_contain: "PLUGINBENCH-GRADE check=split vote=3/3"}}
        script: [{{text: '{{"verdict": "maybe", "reason": "?"}}', usage: {{input_tokens: 800, output_tokens: 9}}}}]
    """)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _attempt(tmp: Path, names: tuple[str, ...]) -> CollectorInput:
    task = tmp / "task"
    write(task / "instruction.md", "Make add() return the sum and say why it was wrong.\n")
    start = task / "workspace"
    write(start / "solution.py", "def add(a, b):\n    return a - b\n")
    attempt = tmp / "attempt"
    write(attempt / "agent" / "stdout.jsonl", json.dumps({"type": "result", "result": "Fixed: it subtracted."}) + "\n")
    patch = ("--- a/solution.py\n+++ b/solution.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
             "+    return a + b\n")
    checks = [LlmCheck(name=n, rubric="The final message explains the bug.", weight=2.0 if n == "split" else 1.0)
              for n in names]
    return CollectorInput(
        attempt_id="t__arm__r1", task="t", arm="arm", patch=patch, attempt_dir=attempt,
        traces_dir=attempt / "agent", harness="claude", task_dir=task, starting_source=start, reference_patch=None,
        task_image=None, open_task_sandbox=None, settings={"checks": checks}, work_dir=attempt / "measure" / "checks",
        agent_traces=True)


@pytest.mark.anyio
@pytest.mark.parametrize("harness", ["claude", "codex"])
async def test_llm_check_takes_the_majority_of_three_real_cli_votes(tmp_path: Path, harness: str) -> None:
    """A fail, a provider stop and a malformed vote have no majority: unknown with each vote's reason; on Codex
    two passes and a malformed vote pass; every vote, its packet binding and its traces are kept."""
    cli = find_cli(harness)
    require(cli is not None and cli_version(cli) == PINNED[harness], f"{harness} {PINNED[harness]}")
    spec = ReviewerSpec(harness=harness, model=MODELS[harness], reasoning="low", cli_version=PINNED[harness],
                        timeout_seconds=120, criteria_sha256="0" * 64)
    # Claude Code's calls are the slower (a discovery process each): its test grades the split check only.
    inp = _attempt(tmp_path, ("split",) if harness == "claude" else ("majority", "split"))
    with ProbeServer(load_scenario(write(tmp_path / "s.yaml", SCENARIO))) as probe:
        vote = llm_voter(make_reviewer(spec, probe_base_url=probe.base_url, hidden=()), "run")
        t0 = time.perf_counter()
        values = await collect_checks(inp._replace(llm_vote=vote))
        seconds = time.perf_counter() - t0
        probe.wait_idle(timeout=60)
    print(f"llm grader ({harness}): {len(inp.settings['checks'])} check(s) x 3 votes in {seconds:.1f} s")
    assert values["check:split"].status == "unknown" and values["check:split"].value is None
    reason = values["check:split"].reason or ""
    assert reason.startswith("no majority of 3 votes: 0 pass, 1 fail, 2 unknown"), reason
    assert "vote 2: provider stop" in reason and "vote 3: malformed vote" in reason
    assert values["checks_score"].status == "unknown"
    grader = values["checks_grader_tokens"]
    if harness == "claude":  # Claude Code reports the refused call as exactly 0: the sum is what the probe served
        assert (grader.status, grader.value) == ("measured", 800 + 20 + 0 + 800 + 9)
    else:  # Codex reports no usage for the failed turn: unknown naming it, never a partial sum
        assert grader.status == "unknown" and grader.value is None
        assert "vote 2 of llm check 'split'" in (grader.reason or "")
    saved = json.loads((inp.work_dir / "checks.json").read_text())["checks"]
    by = {c["name"]: c for c in saved}
    assert [v["verdict"] for v in by["split"]["votes"]] == ["fail", None, None]
    assert by["split"]["votes"][1]["provider_stop"] is True
    assert by["split"]["weight"] == 2.0 and set(by["split"]["packet_binding"]) == {
        "answer.md", "instruction.md", "response-schema.json", "rubric.md", "submission.patch"}
    assert (inp.work_dir / "llm" / "split" / "packet" / "answer.md").read_text() == "Fixed: it subtracted."
    for i in (1, 2, 3):
        assert (inp.work_dir / "llm" / "split" / f"vote-{i}" / "agent" / "stdout.jsonl").is_file()
    if harness == "codex":
        assert values["check:majority"].value == 1
        assert [v["verdict"] for v in by["majority"]["votes"]] == ["pass", None, "pass"]
        assert by["majority"]["votes"][1]["reason"].startswith("malformed vote: the final message holds no JSON")
