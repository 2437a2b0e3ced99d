"""What each grader kind adds per attempt, in seconds: the deterministic kinds on a recorded
real Claude Code attempt (median of repeats), and one ``llm`` check (3 votes at once) through
the real Claude Code and Codex CLIs against the loopback probe, in the reviewer's read-only
bubblewrap sandbox.

    .venv/bin/python bench/bench_checks.py [--repeats 20] [--llm-runs 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pluginbench.actors._collector import llm_voter  # noqa: E402
from pluginbench.actors._reviewer_setup import make_reviewer  # noqa: E402
from pluginbench.events import ReviewerSpec  # noqa: E402
from pluginbench.measures import CollectorInput  # noqa: E402
from pluginbench.measures._checks import Check  # noqa: E402
from pluginbench.measures._checks_spec import collect_checks  # noqa: E402
from pluginbench.probe import PINNED, ProbeServer, find_cli, load_scenario  # noqa: E402

REAL = ROOT / "tests" / "harnesses" / "data" / "claude-2.1.328"
PATCH = ("diff --git a/answer.txt b/answer.txt\nnew file mode 100644\nindex 0000000..1111111\n"
         "--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n+guided\n")
KINDS = {
    "regex (answer)": {"name": "a", "kind": "regex", "target": "answer", "pattern": "^Done"},
    "regex (transcript)": {"name": "a", "kind": "regex", "target": "transcript", "pattern": "ls -la"},
    "regex (patch)": {"name": "a", "kind": "regex", "target": "patch", "pattern": "guided"},
    "tool_used": {"name": "a", "kind": "tool_used", "tool": "Bash"},
    "tool_order": {"name": "a", "kind": "tool_order", "tools": ["Bash", "Write"]},
    "file_exists (+content)": {"name": "a", "kind": "file_exists", "path": "answer.txt", "content_regex": "guided"},
}
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5"}
SCENARIO = """\
name: bench-grade
final: {text: "Done.", usage: {input_tokens: 900, output_tokens: 5}}
rules:
  - name: grade
    when: {messages_contain: PLUGINBENCH-GRADE}
    script: [{text: '{"verdict": "pass", "reason": "ok"}', usage: {input_tokens: 800, output_tokens: 20}}]
"""


def _input(tmp: Path, checks: list[dict[str, object]]) -> CollectorInput:
    attempt = tmp / "attempt"
    agent = attempt / "agent"
    (agent / "transcripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(REAL / "treatment.transcript.jsonl", agent / "transcripts" / "s.jsonl")
    shutil.copy(REAL / "treatment.stream.jsonl", agent / "stdout.jsonl")
    start = tmp / "start"
    start.mkdir(exist_ok=True)
    (start / "README.md").write_text("hello\n")
    (tmp / "instruction.md").write_text("Write answer.txt.\n")
    return CollectorInput(attempt_id="t__g__r1", task="t", arm="g", patch=PATCH, attempt_dir=attempt,
                          traces_dir=agent, harness="claude", task_dir=tmp, starting_source=start,
                          reference_patch=None, task_image=None, open_task_sandbox=None,
                          settings={"checks": msgspec.convert(checks, list[Check])},
                          work_dir=attempt / "measure" / "checks", agent_traces=True)


def _time(inp: CollectorInput) -> float:
    t0 = time.perf_counter()
    anyio.run(collect_checks, inp)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--llm-runs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print("deterministic kinds, seconds per attempt (median of", args.repeats, "runs; one check each):")
        base = statistics.median(_time(_input(tmp / "none", [{"name": "b", "kind": "regex", "target": "patch",
                                                               "pattern": "x"}])) for _ in range(args.repeats))
        for label, check in KINDS.items():
            s = statistics.median(_time(_input(tmp / label.split()[0], [check])) for _ in range(args.repeats))
            print(f"  {label:<24} {s:.4f}")
        every = statistics.median(_time(_input(tmp / "all", [{**c, "name": f"c{i}"} for i, c in enumerate(KINDS.values())]))
                                  for _ in range(args.repeats))
        print(f"  {'all six together':<24} {every:.4f}   (a patch-only regex alone: {base:.4f})")
        for harness in ("claude", "codex"):
            if find_cli(harness) is None:
                print(f"  llm ({harness}): CLI not installed")
                continue
            spec = ReviewerSpec(harness=harness, model=MODELS[harness], reasoning="low", cli_version=PINNED[harness],
                                timeout_seconds=120, criteria_sha256="0" * 64)
            scen = tmp / "s.yaml"
            scen.write_text(SCENARIO)
            times, votes = [], []
            with ProbeServer(load_scenario(scen)) as probe:
                vote = llm_voter(make_reviewer(spec, probe_base_url=probe.base_url, hidden=()), "bench")
                for i in range(args.llm_runs):
                    inp = _input(tmp / f"llm-{harness}-{i}", [{"name": "r", "kind": "llm", "rubric": "ok?"}])
                    times.append(_time(inp._replace(llm_vote=vote)))
                    saved = json.loads((inp.work_dir / "checks.json").read_text())["checks"][0]
                    votes += [v["seconds"] for v in saved["votes"] if v["seconds"] is not None]
            print(f"  llm ({harness}, 3 votes at once): {statistics.median(times):.1f} s per attempt "
                  f"(median of {len(times)}; CLI session per vote {statistics.median(votes):.1f} s)")


if __name__ == "__main__":
    main()
