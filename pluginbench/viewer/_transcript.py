"""An attempt's agent trace as a timeline: model turns, tool calls with their inputs and
outputs, subagents and Codex children nested, tokens per turn, provider retries.

Pure readers (text in, :class:`Timeline` out) for the two real harnesses, built on the
same shell unwrapping and subagent tool names as the measures' trace reader
(:mod:`pluginbench.measures`):

* Claude Code: a session transcript (``agent/transcripts/<session>.jsonl``) or, when no
  transcript was saved (the simulated agent writes only its stream), the stream-json
  ``agent/stdout.jsonl``. Assistant entries repeat once per content block with the same
  ``message.id``: one id is one model turn, its ``usage`` the turn's tokens. A stream
  message with a ``parent_tool_use_id`` belongs to the subagent that tool call started and
  is nested under it; a saved subagent transcript is nested under the session's
  ``Task``/``Agent`` calls in order (the n-th file under the n-th call, by file name).
  ``system/api_retry`` lines of the stream are the provider retries.
* Codex: each rollout is a thread. ``function_call``/``custom_tool_call`` items are tool
  calls, their ``*_output`` items the outputs, ``message`` items of the assistant the
  text; each ``token_count`` closes a model turn, with its ``last_token_usage``. A child
  rollout (its ``session_meta`` names a parent thread) is nested under the parent's
  ``spawn_agent`` calls in order. ``Reconnecting... n/m`` notices of ``codex exec --json``
  are the provider retries.

Nothing here reads a file; :func:`load_timeline` in :mod:`._facts` is the I/O edge.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from .._parsing import json_lines, loads_json
from ..measures import SUBAGENT_TOOLS, unwrap_shell

#: Characters of a tool input or output kept in a step (the rest is cut, and says so).
KEEP_CHARS = 20_000


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """One thing in a thread: a model's text, a tool call, a retry, a note."""

    kind: str  # "text", "tool", "retry"
    turn: int | None  # the model turn (1-based, per thread) it belongs to
    name: str | None = None  # the tool's name
    summary: str = ""  # one line: the text, the command, the file
    input: str | None = None  # the tool input (JSON or patch text)
    output: str | None = None  # the tool result
    is_error: bool | None = None  # the result said error (None: no result or not said)
    tokens: dict[str, int] | None = None  # the turn's usage, on the turn's first step
    children: "tuple[Thread, ...]" = ()  # subagents this call started


class Thread(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    steps: tuple[Step, ...]
    turns: int  # model turns in this thread (not its children)


class Retry(msgspec.Struct, frozen=True, kw_only=True):
    attempt: int | None
    status: int | None  # HTTP status, None for a cut connection
    error: str | None


class Timeline(msgspec.Struct, frozen=True, kw_only=True):
    harness: str | None  # "claude", "codex", None: no trace
    source: str | None  # which file(s) it was read from
    root: Thread | None
    retries: tuple[Retry, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be read or linked


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= KEEP_CHARS:
        return text
    return text[:KEEP_CHARS] + f"\n… ({len(text) - KEEP_CHARS:,} more characters cut)"


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _usage(raw: object) -> dict[str, int] | None:
    if not isinstance(raw, Mapping):
        return None
    out = {k: v for k, v in raw.items() if isinstance(v, int) and not isinstance(v, bool)}
    return out or None


def _tool_summary(name: str, inp: Mapping[str, Any]) -> str:
    for key in ("command", "cmd", "file_path", "notebook_path", "path", "pattern", "description", "prompt", "url"):
        v = inp.get(key)
        if isinstance(v, (str, list)) and v:
            return _one_line(_unwrap(v) if key in ("command", "cmd") else str(v))
    return _one_line(json.dumps(inp, sort_keys=True)) if inp else ""


def _unwrap(command: str | list[str]) -> str:
    """The script of ``bash -lc '<script>'`` (lexed only when it starts with a shell)."""
    if isinstance(command, str) and not command.lstrip().startswith(_SHELLS):
        return command
    return unwrap_shell(command)


_SHELLS = ("/bin/", "/usr/bin/", "bash ", "sh ", "zsh ", "dash ")


def totals(thread: Thread | None) -> dict[str, int]:
    """Model turns, tool calls and subagents of a thread and everything nested in it."""
    out = {"turns": 0, "tool_calls": 0, "subagents": 0, "steps": 0}
    if thread is None:
        return out
    stack = [thread]
    while stack:
        t = stack.pop()
        out["turns"] += t.turns
        out["steps"] += len(t.steps)
        for s in t.steps:
            out["tool_calls"] += s.kind == "tool"
            out["subagents"] += len(s.children)
            stack.extend(s.children)
    return out


def tool_sequence(thread: Thread | None) -> list[str]:
    """``name: summary`` of the root thread's tool calls, in order (for side-by-side)."""
    return [f"{s.name}: {s.summary}" for s in (thread.steps if thread else ()) if s.kind == "tool"]


# ------------------------------------------------------------------ Claude Code


class _ClaudeThread:
    """Builds one Claude thread from assistant/user entries in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.turn_of: dict[str, int] = {}
        self.steps: list[dict[str, Any]] = []
        self.tools: dict[str, dict[str, Any]] = {}
        self.children: dict[str, list[Thread]] = {}
        self.counted: set[int] = set()

    def assistant(self, msg: Mapping[str, Any]) -> None:
        mid = str(msg.get("id") or f"anon-{len(self.turn_of)}")
        first = mid not in self.turn_of
        if first:
            self.turn_of[mid] = len(self.turn_of) + 1
        turn = self.turn_of[mid]
        tokens = _usage(msg.get("usage"))
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            step: dict[str, Any]
            if kind == "text" and str(block.get("text") or "").strip():
                text = str(block["text"])
                step = {"kind": "text", "turn": turn, "summary": _one_line(text), "output": _cut(text)}
            elif kind == "tool_use":
                uid = str(block.get("id"))
                if uid in self.tools:  # the same block written again
                    continue
                raw_inp = block.get("input")
                inp: Mapping[str, Any] = raw_inp if isinstance(raw_inp, Mapping) else {}
                name = str(block.get("name"))
                step = {"kind": "tool", "turn": turn, "name": name, "summary": _tool_summary(name, inp),
                        "input": _cut(json.dumps(inp, indent=1, sort_keys=True)), "id": uid}
                self.tools[uid] = step
            else:
                continue
            if turn not in self.counted:  # the turn's tokens go on its first step
                self.counted.add(turn)
                step["tokens"] = tokens
            self.steps.append(step)

    def user(self, msg: Mapping[str, Any]) -> None:
        content = msg.get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                step = self.tools.get(str(block.get("tool_use_id")))
                if step is not None:
                    step["output"] = _cut(_result_text(block.get("content")))
                    step["is_error"] = bool(block.get("is_error"))

    def retry(self, obj: Mapping[str, Any]) -> None:
        status = obj.get("error_status")
        self.steps.append({"kind": "retry", "turn": None,
                           "summary": f"provider retry {obj.get('attempt')}/{obj.get('max_retries')}: "
                                      f"{status if status is not None else 'connection cut'} {obj.get('error') or ''}".strip()})

    def build(self, attach: Sequence[Thread] = ()) -> Thread:
        pending = list(attach)
        steps = []
        for s in self.steps:
            kids = list(self.children.get(s.get("id", ""), []))
            if s.get("kind") == "tool" and s.get("name") in SUBAGENT_TOOLS and not kids and pending:
                kids.append(pending.pop(0))
            steps.append(Step(kind=s["kind"], turn=s["turn"], name=s.get("name"), summary=s.get("summary", ""),
                              input=s.get("input"), output=s.get("output"), is_error=s.get("is_error"),
                              tokens=s.get("tokens"), children=tuple(kids)))
        steps += [Step(kind="text", turn=None, summary=f"subagent transcript {t.name} (its call was not found)",
                       children=(t,)) for t in pending]
        return Thread(name=self.name, steps=tuple(steps), turns=len(self.turn_of))


def claude_timeline(text: str, name: str, subagents: Sequence[tuple[str, str]] = (),
                    stream: str | None = None) -> Timeline:
    """A Claude Code session from its transcript or stream-json ``text``; ``subagents`` are
    (name, text) of saved subagent transcripts; ``stream`` is stdout.jsonl when ``text``
    is a transcript (for the retries)."""
    objs, bad = json_lines(text)
    threads: dict[str | None, _ClaudeThread] = {None: _ClaudeThread(name)}
    retries: list[Retry] = []
    for o in objs:
        parent = o.get("parent_tool_use_id")
        key = parent if isinstance(parent, str) else None
        if key is not None and key not in threads:
            threads[key] = _ClaudeThread(f"subagent of {key}")
        t = threads[key]
        msg = o.get("message")
        if o.get("type") == "assistant" and isinstance(msg, Mapping):
            t.assistant(msg)
        elif o.get("type") == "user" and isinstance(msg, Mapping):
            t.user(msg)
        elif o.get("type") == "system" and o.get("subtype") == "api_retry":
            t.retry(o)
    if stream is not None:
        for o in json_lines(stream)[0]:
            if o.get("type") == "system" and o.get("subtype") == "api_retry":
                threads[None].retry(o)
    for o in [*objs, *(json_lines(stream)[0] if stream else [])]:
        if o.get("type") == "system" and o.get("subtype") == "api_retry":
            st = o.get("error_status")
            retries.append(Retry(attempt=o.get("attempt") if isinstance(o.get("attempt"), int) else None,
                                 status=st if isinstance(st, int) else None,
                                 error=str(o["error"]) if o.get("error") is not None else None))
    # stream subagents (parent_tool_use_id) hang under the call that started them
    root = threads.pop(None)
    for key, t in threads.items():
        owner = next((th for th in (root, *threads.values()) if key in th.tools), root)
        owner.children.setdefault(str(key), []).append(t.build())
    saved = [claude_timeline(sub, sub_name).root for sub_name, sub in subagents]
    notes = [f"{name}: {len(bad)} line(s) could not be read"] if bad else []
    return Timeline(harness="claude", source=name, root=root.build([s for s in saved if s is not None]),
                    retries=tuple(retries), notes=tuple(notes))


# ------------------------------------------------------------------ Codex


def _codex_thread(text: str, name: str) -> tuple[Thread, str | None, str | None, int]:
    """(thread, its session id, its parent thread id, unreadable lines) of one rollout."""
    objs, bad = json_lines(text)
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    first_of: dict[int, dict[str, Any]] = {}  # turn -> its first step
    turn = 1
    turns = 0
    session = parent = None
    for o in objs:
        p = o.get("payload") if isinstance(o.get("payload"), Mapping) else {}
        assert isinstance(p, Mapping)
        kind = o.get("type")
        if kind == "session_meta" and session is None:
            session = p.get("id") if isinstance(p.get("id"), str) else None
            src = p.get("source")
            found = _find(src, "parent_thread_id")
            parent = found if isinstance(found, str) else None
        elif kind == "response_item":
            item = p.get("type")
            if item in ("function_call", "custom_tool_call", "local_shell_call"):
                raw = p.get("arguments") if item == "function_call" else p.get("input", p.get("action"))
                args: Mapping[str, Any] = {}
                if isinstance(raw, str):
                    try:
                        parsed = loads_json(raw)
                        args = parsed if isinstance(parsed, Mapping) else {}
                    except ValueError:
                        args = {}
                elif isinstance(raw, Mapping):
                    args = raw
                tool = str(p.get("name") or item)
                summary = _tool_summary(tool, args) if args else _one_line(str(raw or ""))
                if tool == "apply_patch" and isinstance(raw, str):
                    files = [ln.split(": ", 1)[1] for ln in raw.splitlines()
                             if ln.startswith(("*** Update File: ", "*** Add File: ", "*** Delete File: "))]
                    summary = _one_line(", ".join(files)) or summary
                step = {"kind": "tool", "turn": turn, "name": tool, "summary": summary,
                        "input": _cut(raw if isinstance(raw, str) else json.dumps(raw, indent=1, sort_keys=True))}
                steps.append(step)
                first_of.setdefault(turn, step)
                by_call[str(p.get("call_id"))] = step
            elif item in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                out = p.get("output")
                text_out = out if isinstance(out, str) else json.dumps(out)
                called = by_call.get(str(p.get("call_id")))
                if called is not None:
                    called["output"] = _cut(text_out)
                    code = _exit_code(text_out)
                    called["is_error"] = None if code is None else code != 0
            elif item == "message" and p.get("role") == "assistant":
                text = _result_text(p.get("content")) or "".join(
                    str(c.get("text", "")) for c in p.get("content") or [] if isinstance(c, Mapping))
                if text.strip():
                    steps.append({"kind": "text", "turn": turn, "summary": _one_line(text), "output": _cut(text)})
                    first_of.setdefault(turn, steps[-1])
        elif kind == "event_msg" and p.get("type") == "token_count":
            info = p.get("info")
            if isinstance(info, Mapping) and info.get("last_token_usage") is not None:
                first = first_of.get(turn)
                if first is not None:
                    first["tokens"] = _usage(info.get("last_token_usage"))
                else:
                    steps.append({"kind": "text", "turn": turn, "summary": "(a model answer with no item)",
                                  "tokens": _usage(info.get("last_token_usage"))})
                turns = turn
                turn += 1
    built = Thread(name=name, turns=max(turns, max((s["turn"] for s in steps), default=0)), steps=tuple(
        Step(kind=s["kind"], turn=s["turn"], name=s.get("name"), summary=s.get("summary", ""), input=s.get("input"),
             output=s.get("output"), is_error=s.get("is_error"), tokens=s.get("tokens")) for s in steps))
    return built, session, parent, len(bad)


def _exit_code(output: str) -> int | None:
    for marker in ("Process exited with code ", "Exit code: "):
        at = output.find(marker)
        if at >= 0:
            digits = output[at + len(marker):].split(None, 1)
            try:
                return int(digits[0]) if digits else None
            except ValueError:
                return None
    return None


def _find(obj: object, key: str) -> object:
    if isinstance(obj, Mapping):
        if key in obj:
            return obj[key]
        for v in obj.values():
            got = _find(v, key)
            if got is not None:
                return got
    elif isinstance(obj, list):
        for v in obj:
            got = _find(v, key)
            if got is not None:
                return got
    return None


def _nest(thread: Thread, kids: list[Thread]) -> Thread:
    steps = []
    for s in thread.steps:
        if s.kind == "tool" and s.name in ("spawn_agent", "spawn_agents") and kids:
            s = msgspec.structs.replace(s, children=(kids.pop(0),))
        steps.append(s)
    return msgspec.structs.replace(thread, steps=tuple(steps))


def codex_timeline(rollouts: Sequence[tuple[str, str]], stdout: str | None = None) -> Timeline:
    """Codex threads from (name, text) rollouts, children nested under their parent's
    ``spawn_agent`` calls; retries from the ``exec --json`` ``stdout``. With no rollout,
    the root comes from ``stdout``'s items."""
    retries = _codex_retries(stdout or "")
    if not rollouts:
        if stdout is None:
            return Timeline(harness="codex", source=None, root=None, notes=("no Codex rollout or stream saved",))
        return Timeline(harness="codex", source="stdout.jsonl", root=_codex_exec_thread(stdout), retries=retries,
                        notes=("no Codex rollout was saved: tokens per turn are not known",))
    parsed = [(name, *_codex_thread(text, name)) for name, text in rollouts]
    notes = [f"{name}: {bad} line(s) could not be read" for name, _t, _s, _p, bad in parsed if bad]
    ids = {sid for _n, _t, sid, _p, _b in parsed if sid}
    by_parent: dict[str | None, list[tuple[str | None, Thread]]] = {}
    for _name, thread, sid, parent, _bad in parsed:
        by_parent.setdefault(parent if parent in ids else None, []).append((sid, thread))

    def build(sid: str | None, thread: Thread, depth: int) -> Thread:
        kids = [build(k, t, depth + 1) for k, t in by_parent.get(sid, [])] if sid and depth < 20 else []
        nested = _nest(thread, kids)
        if kids:
            nested = msgspec.structs.replace(nested, steps=nested.steps + tuple(
                Step(kind="text", turn=None, summary=f"child thread {k.name} (its spawn call was not found)",
                     children=(k,)) for k in kids))
        return nested

    roots = by_parent.get(None, [])
    root = build(*roots[0], 0)
    for sid, extra in roots[1:]:
        other = build(sid, extra, 0)
        root = msgspec.structs.replace(root, steps=root.steps + (
            Step(kind="text", turn=None, summary=f"another root thread {other.name}", children=(other,)),))
    return Timeline(harness="codex", source=", ".join(n for n, _ in rollouts), root=root, retries=retries,
                    notes=tuple(notes))


def _codex_retries(stdout: str) -> tuple[Retry, ...]:
    out = []
    for o in json_lines(stdout)[0]:
        if o.get("type") == "error" and str(o.get("message", "")).startswith("Reconnecting"):
            msg = str(o["message"])
            n = None
            try:
                n = int(msg.split("...", 1)[1].strip().split("/", 1)[0])
            except (IndexError, ValueError):
                n = None
            out.append(Retry(attempt=n, status=None, error=_one_line(msg)))
    return tuple(out)


def _codex_exec_thread(stdout: str) -> Thread:
    objs, _bad = json_lines(stdout)
    items: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for o in objs:
        item = o.get("item")
        if isinstance(item, Mapping) and o.get("type") in ("item.started", "item.completed"):
            iid = str(item.get("id"))
            if iid not in items:
                order.append(iid)
            items[iid] = dict(item)
    steps = []
    for iid in order:
        it = items[iid]
        kind = it.get("type")
        if kind == "command_execution":
            code = it.get("exit_code")
            steps.append(Step(kind="tool", turn=None, name="command_execution",
                              summary=_one_line(_unwrap(str(it.get("command", "")))),
                              input=str(it.get("command", "")), output=_cut(str(it.get("aggregated_output") or "")),
                              is_error=None if not isinstance(code, int) else code != 0))
        elif kind == "file_change":
            paths = ", ".join(str(c.get("path")) for c in it.get("changes") or [] if isinstance(c, Mapping))
            steps.append(Step(kind="tool", turn=None, name="file_change", summary=_one_line(paths),
                              is_error=None if it.get("status") is None else it.get("status") != "completed"))
        elif kind == "agent_message":
            text = str(it.get("text") or "")
            steps.append(Step(kind="text", turn=None, summary=_one_line(text), output=_cut(text)))
    return Thread(name="stdout.jsonl", steps=tuple(steps), turns=0)
