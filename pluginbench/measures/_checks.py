"""Graders beside the hidden verifier (issue 23 item 3): the deterministic kinds (pure).

Each check is declared once per evaluation under ``measurement_settings.checks`` and
applied to every attempt. A check never changes correctness or pass/fail: it is its own
value ``check:<name>`` (1 passed, 0 failed, unknown with the reason when it cannot run).

Kinds (as Claude Code's plugin eval defines them):

* ``regex``: ``pattern`` (Python ``re`` syntax, run by the ``regex`` library so a search is
  cut off after :data:`SEARCH_SECONDS`: the text searched is the agent's, and an agent can
  write text on which a pattern with nested repetition backtracks for hours) searched in ``target``: ``answer`` (the agent's
  final message), ``transcript`` (every saved trace, root and subagent, as text) or
  ``patch`` (the canonical ``model.patch``);
* ``tool_used``: exactly one of ``tool`` (a tool name the agent called), ``skill`` (a
  skill it invoked) or ``subagent`` (a subagent type it started), in any session;
* ``tool_order``: ``tools`` were called in this order in the root session (other calls
  may come between);
* ``file_exists``: ``path`` (relative to the workspace) exists in the final workspace
  (starting source + patch), and when ``content_regex`` is given its text matches it;
* ``llm``: a ``rubric`` graded by the run's reviewer CLI (host Claude Code or Codex) in the
  reviewer's read-only sandbox, ``votes`` times (3), by majority (:mod:`._checks_llm`).
"""

import math
import re
from typing import Literal

import msgspec

Target = Literal["answer", "transcript", "patch"]
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
#: how long one check's pattern may search one attempt's text before the check is unknown
SEARCH_SECONDS = 2.0


class _Check(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"):
    #: the value is ``check:<name>``: lowercase letters, digits, ``_ . -``
    name: str
    #: how much the check counts in the weighted score of the checks (never in correctness)
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"check name {self.name!r} must be lowercase letters, digits, '_', '.', '-'")
        if not (self.weight >= 0 and math.isfinite(self.weight)):
            raise ValueError("weight must be a finite number >= 0")


def _compiles(pattern: str, field: str) -> None:
    import regex  # imported on first use: a run without regex checks never loads it

    try:
        re.compile(pattern)
        regex.compile(pattern)
    except (re.error, regex.error) as exc:
        raise ValueError(f"{field} is not a valid regular expression: {exc}") from None


class RegexCheck(_Check, frozen=True, tag="regex"):
    target: Target
    pattern: str

    def __post_init__(self) -> None:
        super().__post_init__()
        _compiles(self.pattern, "pattern")


class ToolUsedCheck(_Check, frozen=True, tag="tool_used"):
    tool: str | None = None
    skill: str | None = None
    subagent: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if sum(v is not None for v in (self.tool, self.skill, self.subagent)) != 1:
            raise ValueError("a tool_used check names exactly one of tool, skill, subagent")


class ToolOrderCheck(_Check, frozen=True, tag="tool_order"):
    tools: list[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.tools) < 2:
            raise ValueError("tools must list at least two tool names, in the order they must be called")


class FileExistsCheck(_Check, frozen=True, tag="file_exists"):
    path: str
    content_regex: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        parts = self.path.split("/")
        if not self.path or self.path.startswith("/") or ".." in parts:
            raise ValueError("path must be relative to the workspace, without '..'")
        if any(ord(c) < 32 or ord(c) == 127 for c in self.path):
            raise ValueError("path must be plain text (a control character such as NUL names no file)")
        if self.content_regex is not None:
            _compiles(self.content_regex, "content_regex")


class LlmCheck(_Check, frozen=True, tag="llm"):
    #: what a passing attempt does, in plain words; the grader answers pass or fail
    rubric: str
    #: independent votes (odd, 1 to 9); the majority of all votes decides, else unknown
    votes: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.rubric.strip():
            raise ValueError("rubric must say what a passing attempt does")
        if not (1 <= self.votes <= 9 and self.votes % 2 == 1):
            raise ValueError("votes must be an odd number from 1 to 9")


Check = RegexCheck | ToolUsedCheck | ToolOrderCheck | FileExistsCheck | LlmCheck

_FIELDS = frozenset({"weight", "path", "content_regex", "pattern", "votes", "tools", "rubric"})


def field_named(message: str, where: str) -> str:
    """``where`` (msgspec's ``[0]`` or ``[0].weight``) ending in the field a check's own
    validation message is about (``weight must be ...`` → ``[0].weight``)."""
    if not where.endswith("]") and where:
        return where
    if message.startswith("check name"):
        return f"{where}.name"
    first = message.split(" ", 1)[0]
    return f"{where}.{first}" if first in _FIELDS else where


class Call(msgspec.Struct, frozen=True):
    """One tool call seen in a trace: its tool, the skill or subagent it names, whether in the root session."""

    tool: str
    skill: str | None
    subagent: str | None
    root: bool


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    """What an attempt offers the checks; ``None`` fields are unavailable, with ``why``."""

    answer: str | None
    transcript: str | None
    patch: str
    calls: list[Call] | None
    #: path -> final text (None: the file is absent) for each path a file_exists check names
    files: dict[str, str | None] | None
    why: dict[str, str] = {}


def decide(check: Check, ev: Evidence) -> tuple[bool | None, str | None]:
    """(passed, reason): None with the reason when the check cannot run on this attempt."""
    if isinstance(check, RegexCheck):
        text = {"answer": ev.answer, "transcript": ev.transcript, "patch": ev.patch}[check.target]
        if text is None:
            return None, ev.why.get(check.target, f"no {check.target} to search")
        return _search(check.pattern, text, f"the {check.target}")
    if isinstance(check, (ToolUsedCheck, ToolOrderCheck)):
        if ev.calls is None:
            return None, ev.why.get("calls", "no saved agent trace to read tool calls from")
        if isinstance(check, ToolUsedCheck):
            if check.tool is not None:
                return any(c.tool == check.tool for c in ev.calls), None
            if check.skill is not None:
                want = check.skill
                return any(c.skill in (want, want.split(":", 1)[-1]) or (c.skill or "").split(":", 1)[-1] == want
                           for c in ev.calls), None
            return any(c.subagent == check.subagent for c in ev.calls), None
        order = [c.tool for c in ev.calls if c.root]
        it = iter(order)
        return all(any(t == want for t in it) for want in check.tools), None
    if isinstance(check, LlmCheck):
        return None, "an llm check is graded by the reviewer CLI, not decided from the evidence alone"
    if ev.files is None:
        return None, ev.why.get("files", "the final workspace could not be built")
    text = ev.files.get(check.path)
    if text is None:
        return False, None
    if check.content_regex is None:
        return True, None
    return _search(check.content_regex, text, check.path)


def _search(pattern: str, text: str, what: str) -> tuple[bool | None, str | None]:
    """Whether ``pattern`` occurs in ``text`` (multi-line); unknown with the reason when the
    search runs past :data:`SEARCH_SECONDS` (catastrophic backtracking on the agent's text)."""
    import regex

    try:
        return regex.search(pattern, text, regex.M, timeout=SEARCH_SECONDS) is not None, None
    except TimeoutError:
        return None, (f"the pattern searched {what} for more than {SEARCH_SECONDS:g} s and was stopped: "
                      "nested repetition such as (a+)+ can take exponential time; simplify the pattern")
