"""Reading opencode's own output (pure): the no-model discovery receipt, a session's usage
validated against its stored transcript, and provider stops.

**Discovery** (``pluginbench.opencode.native-treatment/1``). opencode 1.18.33 lists its
skills without a model call (``opencode debug skill``: name and location of every skill the
session offers) but has no command that lists the instruction files it will put in the
system prompt. The receipt therefore says, per part, how it was obtained:

* ``skills``: ``listed by the CLI`` (``debug skill``);
* ``instructions``: ``resolved by the CLI's lookup rule`` — the config folder the CLI
  itself resolves (``debug paths``), its resolved ``instructions`` setting
  (``debug config``) and which of the global candidates exist (``<config>/AGENTS.md``,
  ``AGENTS.local.md``, ``~/.claude/CLAUDE.md``, ``CLAUDE.local.md``: opencode loads the
  first group that has one). The probe tests check this against what the CLI sent.

**Usage** has three records: the ``step_finish`` events on stdout (one per model answer),
and from ``opencode export`` the assistant messages' tokens (one per answer) and the
session's totals. opencode splits a prompt into ``input`` (uncached), ``cache.read`` and
``cache.write``, and an answer into ``output`` and ``reasoning``; PluginBench's
``input_tokens`` is their prompt sum and ``output_tokens`` includes reasoning. ``exact``
only when every answer carries a positive prompt count, the three agree answer by answer
and in total; otherwise ``unknown`` with the reason (never zero). An answer without usage
is stored by the CLI as zeros, which a real answer never is: that is how it is seen.
Sub-agent sessions (the ``task`` tool) are exported and added the same way.
"""

import json
from typing import Any, NamedTuple

from .._parsing import json_lines, loads_json
from ..events import Usage
from ._opencode_config import SEPARATOR

SCHEMA = "pluginbench.opencode.native-treatment/1"
HOW_SKILLS = "listed by the CLI (opencode debug skill; no model call)"
HOW_INSTRUCTIONS = ("resolved by the CLI's lookup rule (opencode debug paths and debug config, and which global "
                    "instruction candidates exist; opencode 1.18.33 has no command that lists them without a "
                    "model call)")


class Discovery(NamedTuple):
    """What the three no-model discovery commands said."""

    paths: dict[str, str]
    skills: tuple[tuple[str, str], ...]  # (name, location)
    config: dict[str, Any] | None
    global_files: tuple[str, ...]
    ok: bool
    problem: str | None


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _json(text: str) -> Any:
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        return loads_json(text[start:])
    except ValueError:
        return None


def read_discovery(stdout: str) -> Discovery:
    """Parse the discovery script's stdout (four sections split by :data:`SEPARATOR`)."""
    parts = stdout.split(SEPARATOR)
    if len(parts) != 4:
        return Discovery({}, (), None, (), False, f"expected 4 discovery sections, got {len(parts)}")
    paths = {}
    for line in parts[0].splitlines():
        bits = line.split(None, 1)
        if len(bits) == 2:
            paths[bits[0]] = bits[1].strip()
    raw_skills, config = _json(parts[1]), _json(parts[2])
    if not isinstance(raw_skills, list):
        return Discovery(paths, (), None, (), False, "opencode debug skill printed no JSON list")
    skills = tuple(sorted((str(s.get("name")), str(s.get("location"))) for s in raw_skills if isinstance(s, dict)))
    files = tuple(line.strip() for line in parts[3].splitlines() if line.strip())
    cfg = config if isinstance(config, dict) else None
    return Discovery(paths, skills, cfg, files, "config" in paths and cfg is not None,
                     None if cfg is not None else "opencode debug config printed no JSON object")


def compare(found: Discovery, *, home: str, workdir: str, guidance: bool, skills: tuple[str, ...]) -> dict[str, Any]:
    """The receipt: what the session will load against what the arm declares. A mismatch: the
    CLI resolves a config folder other than the private one; the declared global
    ``AGENTS.md`` missing (or present for vanilla); any other global instruction file or
    configured ``instructions``/``plugin``; a declared skill missing; a skill that is neither
    built in, declared, nor the task repository's own."""
    config_dir = f"{home}/.config/opencode"
    mismatches: list[str] = []
    if not found.ok:
        mismatches.append(f"the discovery gave no listing: {found.problem}")
    if found.paths.get("config") not in (None, config_dir):
        mismatches.append(f"the CLI resolves its config folder to {found.paths.get('config')!r}, not the private one")
    agents = f"{config_dir}/AGENTS.md"
    has_global = agents in found.global_files
    if guidance and not has_global:
        mismatches.append(f"the declared guidance {agents} is not there to load")
    if not guidance and has_global:
        mismatches.append(f"{agents} would load but the arm declares no guidance")
    mismatches += [f"instruction file {f!r} would load from outside the treatment"
                   for f in found.global_files if f != agents]
    cfg = found.config or {}
    for key in ("instructions", "plugin", "mcp"):
        if cfg.get(key):
            mismatches.append(f"the resolved config sets {key} ({json.dumps(cfg[key])[:200]}), outside the treatment")
    loaded, cli_owned, task_owned = [], [], []
    for name, location in found.skills:
        if location.startswith("<"):
            cli_owned.append(name)
        elif name in skills and location == f"{config_dir}/skills/{name}/SKILL.md":
            loaded.append(name)
        elif location.startswith(workdir.rstrip("/") + "/"):
            task_owned.append(name)
        else:
            mismatches.append(f"skill {name!r} loads from outside the treatment ({location})")
    mismatches += [f"the declared skill {s!r} did not load" for s in skills if s not in loaded]
    return {
        "schema": SCHEMA,
        "ok": not mismatches,
        "passed": not mismatches,
        "mismatches": mismatches,
        "how": {"skills": HOW_SKILLS, "instructions": HOW_INSTRUCTIONS},
        "config_dir": found.paths.get("config"),
        "instruction_files": list(found.global_files),
        "guidance_loaded": has_global,
        "skills_loaded": sorted(loaded),
        "cli_skills": sorted(cli_owned),
        "task_owned": {"skills": sorted(task_owned)},
        "model_calls": 0,
    }


class Trace(NamedTuple):
    """The facts of one session's stdout."""

    session_id: str | None
    steps: tuple[dict[str, Any], ...]  # the step_finish tokens, in order
    error: dict[str, Any] | None
    children: tuple[str, ...]  # sub-agent session ids (task tool calls)


def read_stream(stdout: str) -> Trace:
    session: str | None = None
    steps: list[dict[str, Any]] = []
    error: dict[str, Any] | None = None
    children: list[str] = []
    for ev in json_lines(stdout)[0]:
        sid = ev.get("sessionID")
        session = session or (sid if isinstance(sid, str) else None)
        part = _obj(ev.get("part"))
        if ev.get("type") == "step_finish":
            steps.append(_obj(part.get("tokens")))
        elif ev.get("type") == "error":
            error = _obj(ev.get("error")) or {"name": str(ev.get("error"))}
        elif ev.get("type") == "tool_use" and part.get("tool") == "task":
            meta = _obj(_obj(part.get("state")).get("metadata"))
            child = meta.get("sessionId") or meta.get("sessionID")
            if isinstance(child, str):
                children.append(child)
    return Trace(session, tuple(steps), error, tuple(children))


def error_text(error: dict[str, Any] | None) -> str | None:
    """One line for an ``error`` event."""
    if error is None:
        return None
    data = _obj(error.get("data"))
    message = str(data.get("message") or error.get("message") or error.get("name") or "error")
    return f"{error.get('name', 'Error')}: {message.splitlines()[0][:300] if message else ''}"


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


_KEYS = ("input", "output", "reasoning", "cache_read", "cache_write")


def _flat(tokens: Any) -> dict[str, int | None]:
    t = _obj(tokens)
    cache = _obj(t.get("cache"))
    return {"input": _int(t.get("input")), "output": _int(t.get("output")), "reasoning": _int(t.get("reasoning")),
            "cache_read": _int(cache.get("read")), "cache_write": _int(cache.get("write"))}


def _answers(export: dict[str, Any]) -> list[dict[str, int | None]]:
    out = []
    messages = export.get("messages")
    for m in messages if isinstance(messages, list) else []:
        info = m.get("info") if isinstance(m, dict) else None
        if isinstance(info, dict) and info.get("role") == "assistant":
            out.append(_flat(info.get("tokens")))
    return out


def _total(export: dict[str, Any]) -> dict[str, int | None]:
    return _flat(_obj(export.get("info")).get("tokens"))


def validate_usage(stdout: str, exports: dict[str, str], *, timed_out: bool) -> Usage:
    """The session's usage from its three records (see the module docstring); ``exports``
    maps a session id to its ``opencode export`` JSON text (the main session and children)."""
    trace = read_stream(stdout)

    def unknown(reason: str) -> Usage:
        return Usage(status="unknown", reason=reason)

    if timed_out:
        return unknown("the session timed out before its last step")
    if trace.session_id is None:
        return unknown("stdout has no session event")
    sums = dict.fromkeys(_KEYS, 0)
    n_answers = 0
    for sid in (trace.session_id, *trace.children):
        text = exports.get(sid)
        try:
            export = loads_json(text[text.find("{"):]) if text else None
        except ValueError:
            export = None
        if not isinstance(export, dict) or not isinstance(export.get("messages", []), list | None):
            return unknown(f"no readable export of session {sid}")
        answers, total = _answers(export), _total(export)
        if sid == trace.session_id:
            steps = [_flat(s) for s in trace.steps]
            if len(steps) != len(answers):
                return unknown(f"stdout has {len(steps)} step(s), the stored session {len(answers)} answer(s)")
            if steps != answers:
                return unknown("stdout's step tokens and the stored answers' tokens disagree")
        for i, a in enumerate(answers):
            if any(a[k] is None for k in _KEYS):
                return unknown(f"session {sid}: answer {i + 1} has no token record")
            if (a["input"] or 0) + (a["cache_read"] or 0) + (a["cache_write"] or 0) == 0:
                return unknown(f"session {sid}: model answer {i + 1} carried no usage (the CLI stored zeros)")
        for k in _KEYS:
            s = sum(a[k] or 0 for a in answers)
            if total[k] != s:
                return unknown(f"session {sid}: {k}: answers sum to {s}, the session total is {total[k]!r}")
            sums[k] += s
        n_answers += len(answers)
    if n_answers == 0:
        if trace.error is not None:
            return unknown("the session ended in an error before any model answer")
        return Usage(status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0,
                     output_tokens=0, reasoning_output_tokens=0, total_tokens=0,
                     reason="the session made no model call")
    inp = sums["input"] + sums["cache_read"] + sums["cache_write"]
    out = sums["output"] + sums["reasoning"]
    return Usage(status="exact", input_tokens=inp, cached_input_tokens=sums["cache_read"],
                 uncached_input_tokens=inp - sums["cache_read"], output_tokens=out,
                 reasoning_output_tokens=sums["reasoning"], total_tokens=inp + out,
                 reason=f"{n_answers} model answer(s) in {1 + len(trace.children)} session(s): stdout steps, "
                        "stored answers and session totals agree")


def classify_provider_stop(stdout: str, *, timed_out: bool) -> str | None:
    """The provider's refusal that ended the session (rate limit, quota, auth, 5xx), or None."""
    if timed_out:
        return None
    error = read_stream(stdout).error
    if error is None:
        return None
    data = _obj(error.get("data"))
    status = _int(data.get("statusCode"))
    line = error_text(error) or ""
    if status == 429 or "quota" in line.lower():
        return f"rate limited (HTTP 429): {line[:200]}"
    if status in (401, 403):
        return f"authentication refused (HTTP {status}): {line[:200]}"
    if status is not None and status >= 500:
        return f"provider error (HTTP {status}): {line[:200]}"
    return None
