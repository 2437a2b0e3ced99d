"""The ``llm`` rubric grader: its packet, its prompt, the vote parser and the majority (pure
but for writing the packet and awaiting the port's ``llm_vote``).

Each vote is one call of the run's reviewer CLI (the host Claude Code or Codex, the
reviewer's model, effort and budget) in the reviewer's read-only sandbox, holding only a
packet bound by SHA-256: ``instruction.md`` (the task), ``submission.patch`` (the canonical
patch), ``answer.md`` (the agent's final message), ``rubric.md`` and
``response-schema.json``. The grader ends with ``{"verdict": "pass" | "fail", "reason":
"…"}``; anything else makes that vote unknown with the reason, and so does a provider stop,
a timeout or a failed call. The check passes when more than half of its votes say pass,
fails when more than half say fail, and is unknown otherwise (no majority). Every vote is
kept in ``measure/checks/checks.json`` and its traces under ``measure/checks/llm/<name>/``.
"""

import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

import anyio
import msgspec

from ._checks import LlmCheck

#: marks a grading request (the probe's scenarios match on it, with ``check=<name> vote=<i>/<n>``)
MARKER = "PLUGINBENCH-GRADE"
NO_ANSWER = "(the agent left no final message)\n"

RESPONSE_SCHEMA: dict[str, object] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "PluginBench rubric vote",
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "reason"],
    "properties": {"verdict": {"enum": ["pass", "fail"]}, "reason": {"type": "string"}},
}


class _Vote(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    verdict: Literal["pass", "fail"]
    reason: str


class VoteAnswer(NamedTuple):
    """What one grader call gave: its final message, or ``None`` with the reason it has none."""

    text: str | None
    reason: str | None
    seconds: float | None
    provider_stop: bool = False
    #: the call's usage receipt (tokens), as plain data
    usage: dict[str, Any] = {}


class LlmVote(Protocol):
    """The port's grader call: (the packet folder, the prompt given the staged packet's path,
    the vote's evidence folder; keywords ``check``, ``vote`` and ``votes`` name the call) -> its
    answer. Bound to the run's reviewer by the actors, which record each call's start and end."""

    def __call__(self, packet: Path, prompt: Callable[[str], str], out_dir: Path, *,
                 check: str, vote: int, votes: int) -> Awaitable[VoteAnswer]: ...

_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_vote(text: str | None) -> tuple[bool, str]:
    """(passed, the grader's reason) from a vote's final message; ValueError when malformed."""
    if text is None or not text.strip():
        raise ValueError("the grader gave no final message")
    fenced = _FENCE.findall(text)
    body = fenced[-1] if fenced else text.strip()
    if not fenced and not body.startswith("{"):
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise ValueError(f"the final message holds no JSON object: {text.strip()[:120]!r}")
        body = body[start : end + 1]
    try:
        vote = msgspec.json.decode(body.encode(), type=_Vote)
    except msgspec.DecodeError as exc:
        raise ValueError(f"the final message is not a valid vote: {exc}") from None
    return vote.verdict == "pass", vote.reason


def majority(votes: list[dict[str, Any]], n: int) -> tuple[bool | None, str | None]:
    """(passed, reason): more than half of the ``n`` votes decide; otherwise unknown, naming each
    unknown vote's reason."""
    passes = sum(v["verdict"] == "pass" for v in votes)
    fails = sum(v["verdict"] == "fail" for v in votes)
    if passes * 2 > n:
        return True, None
    if fails * 2 > n:
        return False, None
    unknown = [v for v in votes if v["verdict"] is None]
    why = "; ".join(f"vote {v['vote']}: {v['reason']}" for v in unknown)
    return None, (f"no majority of {n} votes: {passes} pass, {fails} fail, {len(unknown)} unknown"
                  + (f" ({why})" if why else ""))


def prompt_for(check: LlmCheck, vote: int) -> Callable[[str], str]:
    """The grading prompt of one vote (it names the check and the vote, never the arm)."""

    def prompt(packet: str) -> str:
        return (
            f"{MARKER} check={check.name} vote={vote}/{check.votes}: you grade one coding attempt against a rubric.\n\n"
            f"The read-only packet is the folder {packet}:\n"
            f"- {packet}/instruction.md: the task the agent was given\n"
            f"- {packet}/submission.patch: the agent's change, a unified diff\n"
            f"- {packet}/answer.md: the agent's final message\n"
            f"- {packet}/rubric.md: the rubric; grade exactly it\n"
            f"- {packet}/response-schema.json: the JSON Schema of your answer\n\n"
            "Read them; do not modify any file and do not run code. End with one message that is only a "
            'JSON object valid against the schema: {"verdict": "pass", "reason": "..."} or '
            '{"verdict": "fail", "reason": "..."}.\n'
        )

    return prompt


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_packet(folder: Path, *, instruction: str, patch: str, answer: str | None, rubric: str) -> dict[str, str]:
    """Write the grader's packet under ``folder/packet`` and its ``binding.json``; return the binding."""
    root = folder / "packet"
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "instruction.md": instruction.encode(),
        "submission.patch": patch.encode(),
        "answer.md": (answer if answer is not None else NO_ANSWER).encode(),
        "rubric.md": rubric.encode(),
        "response-schema.json": (json.dumps(RESPONSE_SCHEMA, indent=2, sort_keys=True) + "\n").encode(),
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    binding = {name: _sha(data) for name, data in sorted(files.items())}
    (folder / "binding.json").write_text(json.dumps(binding, indent=2, sort_keys=True) + "\n")
    return binding


async def grade(check: LlmCheck, folder: Path, *, instruction: str, patch: str, answer: str | None,
                vote: LlmVote | None) -> tuple[bool | None, str | None, dict[str, Any]]:
    """(passed, reason, evidence) of one ``llm`` check on one attempt; its votes run at once."""
    if vote is None:
        return None, ("no reviewer CLI is bound here: llm checks are graded when a run collects its measures "
                      "(readiness, reference measurement and `pluginbench measure` make no grader call)"), {}
    binding = await anyio.to_thread.run_sync(
        lambda: write_packet(folder, instruction=instruction, patch=patch, answer=answer, rubric=check.rubric))
    votes: list[dict[str, Any]] = [{} for _ in range(check.votes)]

    async def one(i: int) -> None:
        got = await vote(folder / "packet", prompt_for(check, i + 1), folder / f"vote-{i + 1}",
                         check=check.name, vote=i + 1, votes=check.votes)
        row: dict[str, Any] = {"vote": i + 1, "seconds": got.seconds, "provider_stop": got.provider_stop,
                               "usage": got.usage}
        if got.text is None:
            row.update(verdict=None, reason=got.reason or "the grader call failed")
        else:
            try:
                passed, why = parse_vote(got.text)
            except ValueError as exc:
                row.update(verdict=None, reason=f"malformed vote: {exc}")
            else:
                row.update(verdict="pass" if passed else "fail", reason=why)
        votes[i] = row

    async with anyio.create_task_group() as tg:
        for i in range(check.votes):
            tg.start_soon(one, i)
    passed, reason = majority(votes, check.votes)
    return passed, reason, {"packet_binding": binding, "votes": votes}
