"""A small finished synthetic run folder, the same bytes every time (tests of the report's
streaming writers and of its golden files in ``tests/data/report_golden``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    AttemptStarted,
    CodingStarted,
    Event,
    Measure,
    MeasuresCollected,
    RunCreated,
    RunStarted,
    SlotPlan,
    SubmissionCaptured,
    Usage,
    encode,
    stamp,
)

ARMS = ("vanilla", "guided")


def _patch(aid: str) -> bytes:
    return f"diff --git a/s.py b/s.py\n--- a/s.py\n+++ b/s.py\n@@ -1 +1 @@\n-pass\n+# {aid}\n".encode()


def make_run(root: Path, *, tasks: int = 6, repeats: int = 3, running: int = 2) -> Path:
    """``tasks`` × 2 arms × ``repeats`` attempts; all complete (pass/fail/unknown by a fixed
    rule, exact usage, line measures) but the last ``running``, which started and did not
    exit. Returns ``root``."""
    root.mkdir(parents=True)
    settings = json.dumps({"name": "synthetic", "runner": {"harness": "nop", "model": "nop"},
                           "measurements": ["tokens", "time", "lines"]}, indent=2).encode()
    (root / "evaluation.json").write_bytes(settings)
    digest = hashlib.sha256(settings).hexdigest()
    (root / "evaluation-binding.json").write_text(json.dumps({"evaluation_sha256": digest}))
    slots = [SlotPlan(slot=i, task=f"task-{t}", arm=arm, repeat=r, attempt_id=f"task-{t}__{arm}__r{r}")
             for i, (t, arm, r) in enumerate((t, arm, r) for t in range(tasks) for arm in ARMS
                                             for r in range(1, repeats + 1))]
    events: list[Event] = [
        RunCreated(name="synthetic", evaluation_sha256=digest, harness="nop", model="nop", reasoning=None,
                   backend="local", isolation="none", tasks=[f"task-{t}" for t in range(tasks)], arms=list(ARMS),
                   repeats=repeats, jobs=2, seed=0, timeout_seconds=60, slots=slots),
        RunStarted(pid=1, pgid=1, resumed=False),
        CodingStarted(),
    ]
    for s in slots:
        aid = s.attempt_id
        events += [AttemptStarted(attempt_id=aid, slot=s.slot, task=s.task, arm=s.arm, repeat=s.repeat),
                   AgentLaunched(attempt_id=aid, argv=["nop"])]
        if s.slot >= len(slots) - running:
            continue
        k = s.slot * 7919 % 101
        outcome = "pass" if k % 3 == 0 or (s.arm == "guided" and k % 5 == 0) else ("unknown" if k % 11 == 0 else "fail")
        usage = Usage(status="exact", input_tokens=1000 + 37 * k, cached_input_tokens=100 + k, output_tokens=50 + k,
                      total_tokens=None if k % 4 == 0 else 1050 + 38 * k)
        (root / "evidence" / "attempts" / aid).mkdir(parents=True)
        (root / "evidence" / "attempts" / aid / "model.patch").write_bytes(_patch(aid))
        events += [
            AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=10.0 + k / 4, usage=usage),
            SubmissionCaptured(attempt_id=aid, patch_sha256=hashlib.sha256(_patch(aid)).hexdigest(), empty=False,
                               files_changed=1),
            AttemptGraded(attempt_id=aid, outcome=outcome, reward=None if outcome == "unknown" else float(outcome == "pass"),
                          reason="verifier wrote no reward" if outcome == "unknown" else None),
            MeasuresCollected(attempt_id=aid, measures={"source_lines_added": Measure(value=k % 40, unit="lines"),
                                                        "test_lines_added": Measure(value=k % 9, unit="lines")}),
            AttemptCompleted(attempt_id=aid),
        ]
    with open(root / "events.jsonl", "wb") as fh:
        for seq, e in enumerate(events, start=1):
            fh.write(encode(stamp(e, seq=seq, at="2026-01-01T00:00:00.000Z")) + b"\n")
    return root
