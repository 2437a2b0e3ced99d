"""Commands and file edits, in order, from the saved agent traces of both harnesses.

Pure readers (text in, :class:`Trace` out) and one I/O edge, :func:`load_attempt_traces`,
which reads an attempt folder:

* Claude Code: ``agent/transcripts/<session>.jsonl`` (the root session) and every
  ``agent/transcripts/<session>/**/*.jsonl`` (one per subagent). A ``Bash`` tool use is a
  command; ``Write``/``Edit``/``MultiEdit``/``NotebookEdit`` are edits. Its exit code is 0
  for a result that is not an error, N for an error result that starts ``Exit code N``,
  unknown otherwise; ``toolUseResult.interrupted`` means it started and was interrupted; a
  ``<tool_use_error>`` or permission-denial result means it was refused before starting.
* Codex: every ``agent/rollouts/rollout-*.jsonl`` (the root thread and its children);
  ``exec_command``/``shell`` calls are commands (``Process exited with code N`` in the
  output gives the exit code) and ``apply_patch`` calls are edits. When no rollout was
  saved, the root trace comes from ``agent/stdout.jsonl`` (``command_execution`` and
  ``file_change`` items).

Only edits inside the workspace (the session's working folder) are kept: edits elsewhere
do not count. Edits made by shell commands are not seen.
"""

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from .._parsing import json_lines, loads_json
from ._shell import lex, verification_tool

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
_EXIT_CODE = re.compile(r"^\s*Exit code (-?\d+)")
_PROCESS_EXIT = re.compile(r"Process exited with code (-?\d+)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.M)
_MOVE_TO = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.M)


class Command(NamedTuple):
    text: str
    started: bool | None  # False: refused before starting; None: not known
    exit_code: int | None
    interrupted: bool


class Edit(NamedTuple):
    path: str  # relative to the workspace
    applied: bool | None  # None: the trace does not say


class Trace(NamedTuple):
    name: str
    actions: tuple[Command | Edit, ...]
    #: why a count from this trace could be wrong (a torn line that may hide a command...)
    problems: tuple[str, ...] = ()


def workspace_relative(path: str, workspace: str | None) -> str | None:
    """``path`` relative to the workspace, or None when it lies outside it."""
    p = PurePosixPath(path)
    if not p.is_absolute():
        parts = [x for x in p.parts if x not in (".",)]
        return None if ".." in parts else "/".join(parts)
    if workspace is None:
        return None
    try:
        rel = p.relative_to(PurePosixPath(workspace))
    except ValueError:
        return None
    return None if ".." in rel.parts else rel.as_posix()


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


# ------------------------------------------------------------------ Claude Code


def claude_trace(text: str, name: str, denied: frozenset[str] = frozenset()) -> tuple[Trace, int]:
    """One Claude Code session transcript (root or subagent) and how many subagents it
    started. ``denied`` holds the tool use ids the stream's ``permission_denials`` list."""
    objs, bad = json_lines(text)
    workspace = next((o["cwd"] for o in objs if isinstance(o.get("cwd"), str)), None)
    uses: list[tuple[str, str, dict[str, Any]]] = []  # (id, tool, input) in order
    results: dict[str, tuple[dict[str, Any], object]] = {}  # id -> (block, toolUseResult)
    seen: set[str] = set()
    for o in objs:
        msg = o.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if o.get("type") == "assistant" and block.get("type") == "tool_use":
                uid = str(block.get("id"))
                if uid not in seen:  # a message can be written more than once
                    seen.add(uid)
                    inp = block.get("input")
                    uses.append((uid, str(block.get("name")), inp if isinstance(inp, dict) else {}))
            elif o.get("type") == "user" and block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = (block, o.get("toolUseResult"))
    actions: list[Command | Edit] = []
    subagent_calls = 0
    for uid, tool, inp in uses:
        got = results.get(uid)
        block, extra = got if got else ({}, None)
        refused = uid in denied or _result_text(block.get("content")).lstrip().startswith("<tool_use_error>")
        if tool == "Bash":
            cmd = str(inp.get("command", ""))
            if got is None:
                actions.append(Command(cmd, None, None, False))
                continue
            if refused:
                actions.append(Command(cmd, False, None, False))
                continue
            interrupted = isinstance(extra, dict) and bool(extra.get("interrupted"))
            background = bool(inp.get("run_in_background")) or (
                isinstance(extra, dict) and bool(extra.get("backgroundTaskId")))
            exit_code: int | None = None
            if not interrupted and not background:
                if block.get("is_error"):
                    m = _EXIT_CODE.match(_result_text(block.get("content")))
                    exit_code = int(m.group(1)) if m else None
                else:
                    exit_code = 0
            actions.append(Command(cmd, True, exit_code, interrupted))
        elif tool in EDIT_TOOLS:
            path = str(inp.get("file_path") or inp.get("notebook_path") or "")
            rel = workspace_relative(path, workspace)
            if rel is None:
                continue
            applied = None if got is None else (not refused and not block.get("is_error"))
            actions.append(Edit(rel, applied))
        elif tool in SUBAGENT_TOOLS:
            subagent_calls += 1
    problems = [f"{name}: an unreadable line mentions a verification tool" for b in bad if _maybe_verification(b)]
    return Trace(name, tuple(actions), tuple(problems[:1])), subagent_calls


def claude_denials(stdout_text: str) -> frozenset[str]:
    """Tool use ids the stream-json ``result`` lists under ``permission_denials``."""
    objs, _ = json_lines(stdout_text)
    out: set[str] = set()
    for o in objs:
        if o.get("type") == "result":
            for d in o.get("permission_denials") or []:
                if isinstance(d, dict) and d.get("tool_use_id"):
                    out.add(str(d["tool_use_id"]))
    return frozenset(out)


# ------------------------------------------------------------------ Codex


def unwrap_shell(command: str | list[str]) -> str:
    """The script of ``bash -lc '<script>'`` (as Codex shows commands), else the command."""
    if isinstance(command, list):
        words = list(command)
    else:
        lexed = lex(command)
        if lexed.malformed is not None or len(lexed.segments) != 1:
            return command
        words = list(lexed.segments[0].words)
    if len(words) == 3 and PurePosixPath(words[0]).name in ("bash", "sh", "zsh", "dash") \
            and words[1] in ("-c", "-lc", "-ic"):
        return words[2]
    return " ".join(words) if isinstance(command, list) else command


def _patch_paths(patch: str) -> list[str]:
    return _PATCH_FILE.findall(patch) + _MOVE_TO.findall(patch)


def codex_rollout_trace(text: str, name: str) -> tuple[Trace, int]:
    """One Codex session rollout; also how many subagents it spawned."""
    objs, bad = json_lines(text)
    workspace = None
    calls: list[tuple[str, str, Any]] = []  # (call_id, name, arguments or input)
    outputs: dict[str, str] = {}
    spawned = 0
    for o in objs:
        p = _p if isinstance(_p := o.get("payload"), dict) else {}
        if o.get("type") == "session_meta" and isinstance(p.get("cwd"), str):
            workspace = workspace or p["cwd"]
        if o.get("type") != "response_item":
            continue
        kind = p.get("type")
        if kind in ("function_call", "custom_tool_call"):
            raw = p.get("arguments") if kind == "function_call" else p.get("input")
            calls.append((str(p.get("call_id")), str(p.get("name")), raw))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out = p.get("output")
            outputs[str(p.get("call_id"))] = out if isinstance(out, str) else json.dumps(out)
    actions: list[Command | Edit] = []
    for call_id, tool, raw in calls:
        out = outputs.get(call_id)
        if tool in ("exec_command", "shell", "local_shell"):
            args = _args(raw)
            cmd = args.get("cmd") if tool == "exec_command" else args.get("command")
            if cmd is None:
                continue
            script = unwrap_shell(cmd if isinstance(cmd, (str, list)) else str(cmd))
            if out is None:
                actions.append(Command(script, None, None, False))
                continue
            m = _PROCESS_EXIT.search(out)
            refused = out.lstrip().lower().startswith(("exec command rejected", "command rejected",
                                                       "rejected by user"))
            actions.append(Command(script, not refused, int(m.group(1)) if m else None, False))
        elif tool == "apply_patch":
            patch = raw if isinstance(raw, str) else str(_args(raw).get("input", ""))
            applied = None if out is None else _patch_applied(out)
            for path in _patch_paths(patch):
                rel = workspace_relative(path, workspace)
                if rel is not None:
                    actions.append(Edit(rel, applied))
        elif tool in ("spawn_agent", "spawn_agents"):
            spawned += 1
    problems = [f"{name}: an unreadable line mentions a verification tool" for b in bad if _maybe_verification(b)]
    return Trace(name, tuple(actions), tuple(problems[:1])), spawned


def _args(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            got = loads_json(raw)
        except ValueError:
            return {}
        return got if isinstance(got, dict) else {}
    return {}


def _patch_applied(output: str) -> bool | None:
    """Whether an ``apply_patch`` output says it applied: its JSON metadata exit code, or
    the ``Success.`` / ``error`` text Codex writes."""
    try:
        meta = loads_json(output)
    except ValueError:
        meta = None
    if isinstance(meta, dict):
        code = (meta.get("metadata") or {}).get("exit_code") if isinstance(meta.get("metadata"), dict) else None
        if isinstance(code, int):
            return code == 0
        output = str(meta.get("output", ""))
    low = output.lower()
    if "success" in low:
        return True
    if "error" in low or "failed" in low:
        return False
    return None


def codex_exec_trace(text: str, name: str = "stdout", workspace: str | None = None) -> Trace:
    """The root trace from ``codex exec --json`` stdout (when no rollout was saved).
    ``workspace`` is the ``-C`` folder of the launch; without it an absolute edit path may
    or may not be in the workspace, so its edit has no known outcome."""
    objs, bad = json_lines(text)
    started: dict[str, dict[str, Any]] = {}
    done: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for o in objs:
        item = o.get("item")
        if not isinstance(item, dict) or o.get("type") not in ("item.started", "item.completed"):
            continue
        iid = str(item.get("id"))
        if iid not in started and iid not in done:
            order.append(iid)
        (started if o["type"] == "item.started" else done)[iid] = item
    actions: list[Command | Edit] = []
    for iid in order:
        item = done.get(iid) or started[iid]
        finished = iid in done
        if item.get("type") == "command_execution":
            script = unwrap_shell(str(item.get("command", "")))
            status = item.get("status")
            if status == "declined":
                actions.append(Command(script, False, None, False))
            elif not finished:
                actions.append(Command(script, True, None, True))
            else:
                code = item.get("exit_code")
                actions.append(Command(script, True, code if isinstance(code, int) else None, False))
        elif item.get("type") == "file_change":
            ok = None if not finished else item.get("status") == "completed"
            for ch in item.get("changes") or []:
                if isinstance(ch, dict) and isinstance(ch.get("path"), str):
                    rel = workspace_relative(ch["path"], workspace)
                    if rel is not None:
                        actions.append(Edit(rel, ok))
                    elif workspace is None:
                        actions.append(Edit(ch["path"], None))
    problems = [f"{name}: an unreadable line mentions a verification tool" for b in bad if _maybe_verification(b)]
    return Trace(name, tuple(actions), tuple(problems[:1]))


def _maybe_verification(raw: str) -> bool:
    words = tuple(w for w in re.split(r"[\s\"'\\;&|()<>,:\[\]{}]+", raw) if w)
    return any(verification_tool(words[k:]) is not None for k in range(len(words)))


# ------------------------------------------------------------------ the I/O edge


def _launch_workdir(attempt_dir: Path) -> str | None:
    """The ``-C`` folder of the recorded Codex launch (``invocation.json``), or None."""
    try:
        argv = loads_json((attempt_dir / "invocation.json").read_text()).get("argv") or []
    except (OSError, ValueError, AttributeError):
        return None
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag in ("-C", "--cd") and isinstance(value, str):
            return value
    return None


class AttemptTraces(NamedTuple):
    harness: str | None  # "claude", "codex" or None when no trace was found
    traces: tuple[Trace, ...]
    missing: tuple[str, ...]  # why traces are missing (a subagent's transcript...)


def load_attempt_traces(attempt_dir: Path) -> AttemptTraces:
    """Read the saved traces of one attempt (see the module docstring)."""
    agent = attempt_dir / "agent"
    transcripts = agent / "transcripts"
    rollouts = sorted((agent / "rollouts").rglob("rollout-*.jsonl")) if (agent / "rollouts").is_dir() else []
    stdout = agent / "stdout.jsonl"
    if transcripts.is_dir():
        roots = sorted(p for p in transcripts.glob("*.jsonl"))
        denied = claude_denials(stdout.read_text(errors="replace")) if stdout.is_file() else frozenset()
        traces: list[Trace] = []
        missing: list[str] = []
        calls = 0
        subs: list[Path] = []
        for root in roots:
            trace, n = claude_trace(root.read_text(errors="replace"), root.name, denied)
            traces.append(trace)
            calls += n
            folder = transcripts / root.stem
            subs += sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []
        for sub in subs:
            trace, n = claude_trace(sub.read_text(errors="replace"), str(sub.relative_to(transcripts)), denied)
            traces.append(trace)
            calls += n
        if not roots:
            missing.append("agent/transcripts holds no session transcript")
        elif calls > len(subs):
            missing.append(f"the session started {calls} subagent(s) but {len(subs)} subagent "
                           "transcript(s) were saved")
        return AttemptTraces("claude", tuple(traces), tuple(missing))
    if rollouts:
        traces = []
        spawned = 0
        for r in rollouts:
            trace, n = codex_rollout_trace(r.read_text(errors="replace"), r.name)
            traces.append(trace)
            spawned += n
        missing = []
        if spawned > len(rollouts) - 1:
            missing.append(f"the session spawned {spawned} subagent(s) but {len(rollouts) - 1} child "
                           "rollout(s) were saved")
        return AttemptTraces("codex", tuple(traces), tuple(missing))
    if stdout.is_file():
        text = stdout.read_text(errors="replace")
        if '"thread.started"' in text:
            return AttemptTraces("codex", (codex_exec_trace(text, workspace=_launch_workdir(attempt_dir)),),
                                 ("no Codex rollout was saved, so subagent traces cannot be read",)
                                 if '"collab_tool_call"' in text else ())
    return AttemptTraces(None, (), ("no saved agent trace (agent/transcripts or agent/rollouts)",))
