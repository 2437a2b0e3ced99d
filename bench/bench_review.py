"""Seconds a review adds per attempt, through the loopback probe (issue 11). Prints; asserts nothing.

    .venv/bin/python bench/bench_review.py [--rounds 10] [--harness claude codex]

For each harness it first makes a one-attempt probe run with that CLI as coder and reviewer
(``review-findings.yaml``), then times ``review_once`` on that attempt's packet ``--rounds``
times: staging the read-only packet, the bubblewrap sandbox, the real CLI's review call
against the probe, parsing its findings. Also prints the simulated reviewer for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.events import read_run_log  # noqa: E402
from pluginbench.probe import SCENARIOS_DIR, ProbeServer, load_scenario  # noqa: E402
from pluginbench.projections._state import fold  # noqa: E402
from pluginbench.review import verify_packet  # noqa: E402

MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5", "simulated": "simulated"}
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")


def make_run(tmp: Path, harness: str) -> Path:
    coder = "claude" if harness == "simulated" else harness
    cfg = {"name": f"bench-review-{harness}",
           "tasks": {"source": str(ROOT / "tests" / "data" / "probe-tasks"), "ids": ["add-numbers"]},
           "runner": {"harness": coder, "model": MODELS[coder], "reasoning": "low",
                      "probe": str(SCENARIOS_DIR / "review-findings.yaml"), "vanilla_cache": False},
           "reviewer": {"harness": harness, **({} if harness == "simulated" else {"model": MODELS[harness],
                                                                                   "reasoning": "low"})},
           "repeats": 1, "jobs": 1, "timeout_seconds": 120, "environment": {"isolation": "bubblewrap"}}
    (tmp / "evaluation.yaml").write_text(yaml.safe_dump(cfg))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    subprocess.run([sys.executable, "-m", "pluginbench", "run", str(tmp / "evaluation.yaml"), "--output",
                    str(tmp / "run"), "--foreground", "--yes"], check=True, capture_output=True, env=env)
    return tmp / "run"


def time_reviews(run: Path, rounds: int) -> list[float]:
    from pluginbench.actors._reviewer_setup import make_reviewer
    from pluginbench.review import review_once

    state = fold(read_run_log(run / "events.jsonl").events)
    [attempt] = [a for a in state.live_attempts() if a.captured]
    packet = verify_packet(run / "evidence", attempt.attempt_id, patch_sha256=attempt.patch_sha256 or "")
    spec = state.reviewer
    assert spec is not None
    times: list[float] = []
    with ProbeServer(load_scenario(SCENARIOS_DIR / "review-findings.yaml")) as server:
        reviewer = make_reviewer(spec, probe_base_url=server.base_url, hidden=(run,))

        async def started(argv: object) -> None:
            return None

        for i in range(rounds):
            out = run / "bench-reviews" / str(i)
            t0 = time.monotonic()
            outcome = anyio.run(lambda out=out: review_once(reviewer, packet, out, run_id="bench", started=started))
            times.append(time.monotonic() - t0)
            assert outcome.findings is not None, outcome
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--harness", nargs="+", default=["claude", "codex", "simulated"])
    args = ap.parse_args()
    os.environ.pop("CLAUDE_CODE_OAUTH_TOKEN", None)
    print("| reviewer | rounds | median s | min s | max s |\n| --- | ---: | ---: | ---: | ---: |")
    for harness in args.harness:
        with tempfile.TemporaryDirectory(prefix="pb-bench-review-") as tmp:
            run = make_run(Path(tmp), harness)
            times = time_reviews(run, args.rounds)
            print(f"| {harness} | {len(times)} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} |",
                  flush=True)


if __name__ == "__main__":
    main()
