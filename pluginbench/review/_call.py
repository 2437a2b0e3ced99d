"""One review call: the reviewer CLI in a read-only bubblewrap sandbox holding only the packet.

The packet is staged in a neutral temporary folder (its path names no arm) and bound
read-only (``--ro-bind``) into a fresh sandbox whose own workspace is empty; the CLI is
the host's (reviews run the host CLI), launched through the same harness adapter as
coding, with the same credential handling, a vanilla (empty) private home, and the
review budget. The sandbox boundary is mandatory: without bubblewrap the review fails.
After the call the staged packet must still match its binding.
"""

import hashlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import anyio

from ..environments import Environment, SandboxSpec
from ..errors import MalformedResponse
from ..events import Finding, ReviewerSpec, Usage
from ..harnesses import AgentRun, AttemptContext, FrozenTreatment
from ..tasks import HarborTask, fingerprint, scan_tree
from ._packet import Packet
from ._prompt import review_prompt
from ._response import final_message, parse_response
from ._simulated import simulated_findings

REVIEWER_ARM = "reviewer"
EMPTY_TREATMENT = FrozenTreatment(REVIEWER_ARM, None, (), (), (), "")


class ReviewOutcome(NamedTuple):
    """Findings (a list, possibly empty) or ``None`` with the reason the review failed."""

    findings: list[Finding] | None
    reason: str | None
    usage: Usage
    seconds: float | None
    provider_stop: bool = False


class Reviewer(NamedTuple):
    """The frozen reviewer bound to its adapter (``harness`` is ``None`` for simulated)."""

    spec: ReviewerSpec
    harness: Any
    environment: Environment | None
    hidden: tuple[Path, ...]


SIMULATED_USAGE = Usage(
    status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0, output_tokens=0,
    total_tokens=0, reason="simulated reviewer: deterministic findings, no model call",
)


def _review_task(prompt: str, stage: Path) -> HarborTask:
    return HarborTask(
        id="review", root=stage, instruction=prompt, workdir="/app", agent_timeout_sec=None,
        verifier_timeout_sec=0.0, build_timeout_sec=0.0, environment_mode="workspace", docker_image=None,
        verifier_docker_image=None, cpus=None, memory_mb=None, collect=(), metadata={},
    )


def _read_only(root: Path) -> None:
    for dirpath, _dirs, filenames in os.walk(root):
        for name in filenames:
            p = Path(dirpath) / name
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    for dirpath, _dirs, _ in os.walk(root, topdown=False):
        Path(dirpath).chmod(0o555)


def _remove(root: Path) -> None:
    for dirpath, _dirs, _ in os.walk(root):
        Path(dirpath).chmod(0o755)
    shutil.rmtree(root, ignore_errors=True)


async def review_once(
    reviewer: Reviewer, packet: Packet, out_dir: Path, *, run_id: str,
    started: Callable[[Sequence[str]], Awaitable[None]],
) -> ReviewOutcome:
    """Review one packet; ``started`` is awaited (durably recorded) before any model call."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if reviewer.harness is None:  # the labelled deterministic stand-in
        await started(["simulated-reviewer"])
        t0 = time.monotonic()
        findings = simulated_findings((packet.root / "submission.patch").read_text(errors="replace"))
        return ReviewOutcome(findings, None, SIMULATED_USAGE, round(time.monotonic() - t0, 3))
    answer = await ask_in_packet(reviewer, packet.root, out_dir, run_id=run_id, prompt=review_prompt,
                                 started=started, what="review")
    if answer.text is None:
        return ReviewOutcome(None, answer.reason, answer.usage, answer.seconds, provider_stop=answer.provider_stop)
    try:
        findings = parse_response(answer.text)
    except MalformedResponse as exc:
        return ReviewOutcome(None, f"malformed review: {exc}", answer.usage, answer.seconds)
    return ReviewOutcome(findings, None, answer.usage, answer.seconds)


class Answer(NamedTuple):
    """The reviewer CLI's final message on a packet, or ``None`` with the reason it has none."""

    text: str | None
    reason: str | None
    usage: Usage
    seconds: float | None
    provider_stop: bool = False


async def ask_in_packet(
    reviewer: Reviewer, packet_root: Path, out_dir: Path, *, run_id: str, prompt: Callable[[str], str],
    started: Callable[[Sequence[str]], Awaitable[None]], what: str = "review",
) -> Answer:
    """One call of the reviewer's host CLI on a copy of ``packet_root``, staged read-only in a
    neutral folder and bound into a fresh read-only sandbox; ``prompt`` gets the staged path.
    The copy must be unchanged afterwards. Reviews and the ``llm`` rubric grader share it."""
    assert reviewer.environment is not None and reviewer.harness is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix="pb-review-"))
    try:
        staged = stage / "packet"
        await anyio.to_thread.run_sync(shutil.copytree, packet_root, staged)
        await anyio.to_thread.run_sync(_read_only, staged)
        before = fingerprint(scan_tree(staged))
        return await _call(reviewer, reviewer.environment, reviewer.spec, staged, before, out_dir, run_id, started,
                           prompt, what)
    finally:
        await anyio.to_thread.run_sync(_remove, stage)


async def _call(reviewer: Reviewer, environment: Environment, spec: ReviewerSpec, staged: Path, before: str, out_dir: Path, run_id: str,
                started: Callable[[Sequence[str]], Awaitable[None]], prompt_of: Callable[[str], str], what: str) -> Answer:
    harness = reviewer.harness
    home = out_dir / "delivery"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir()
    await anyio.to_thread.run_sync(harness.deliver, EMPTY_TREATMENT, home)
    review_id = "review-" + hashlib.sha256(str(out_dir).encode()).hexdigest()[:12]
    sandbox_spec = SandboxSpec(
        run_id=run_id, attempt_id=review_id, role="review", task="review", workspace=None, workdir="/app",
        home=home, hidden=reviewer.hidden, readonly=(*tuple(harness.readonly), staged),
        egress=harness.egress("review", "no-network"),
    )
    launched = False

    async def on_launch(argv: Sequence[str]) -> None:
        nonlocal launched
        await started(argv)
        launched = True

    prompt = prompt_of(str(staged))
    (out_dir / "prompt.md").write_text(prompt)
    ctx = AttemptContext(
        run_id=run_id, attempt_id=review_id, task=_review_task(prompt, staged.parent), treatment=EMPTY_TREATMENT,
        model=spec.model, reasoning=spec.reasoning, seed=0, timeout_seconds=float(spec.timeout_seconds),
        attempt_dir=out_dir, launched=on_launch,
    )
    t0 = time.monotonic()
    try:
        async with environment.sandbox(sandbox_spec) as sandbox:
            if not sandbox.isolated:
                return Answer(None, f"the {what} sandbox is not isolated (bubblewrap is required)",
                              Usage(status="unknown", reason=f"no {what} call was made"), None)
            run: AgentRun = await harness.run(sandbox, ctx)
    except Exception as exc:  # noqa: BLE001 - a failed call is recorded with its reason
        usage = Usage(status="unknown", reason=f"the {what} call failed: {exc}")
        return Answer(None, f"the {what} call failed: {exc}", usage, round(time.monotonic() - t0, 3))
    seconds = None if run.coding_seconds is None else round(run.coding_seconds, 3)
    if run.provider_stop:
        return Answer(None, f"provider stop: {run.provider_stop}", run.usage, seconds, provider_stop=True)
    if run.timed_out:
        return Answer(None, f"the {what} timed out after {spec.timeout_seconds} s", run.usage, seconds)
    after = fingerprint(scan_tree(staged))
    if after != before:
        return Answer(None, f"the {what} packet changed during the {what}", run.usage, seconds)
    stdout = out_dir / "agent" / "stdout.jsonl"
    text = final_message(spec.harness, stdout.read_text(errors="replace") if stdout.is_file() else "")
    return Answer(text if text is not None else "", None, run.usage, seconds)
