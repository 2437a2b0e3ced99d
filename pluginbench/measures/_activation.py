"""Was the package exercised? Activation of each declared component, from the saved traces (pure).

The components come from the attempt's discovery receipt (``native-treatment.json``):
what the model was given, the treatment's (owner ``treatment``) and the task repository's
own (owner ``task``, the same on every arm). Each gets one :class:`Activation`:

* ``used``: the traces show it ``uses`` times, first at model turn ``first_turn`` of the
  root session (1 = the first model reply; 0 = before it, a start-up hook; ``None`` when
  it was first used inside a subagent);
* ``not_used``: every trace it could appear in was read and it is absent;
* ``unknown``: a trace it could appear in is missing or incomplete (no root transcript, a
  subagent started without a saved transcript, a torn line), or the CLI records no
  evidence of that kind at all (Codex 0.169.0 writes no hook run anywhere). Never
  ``not_used`` by default.

What counts as a use:

* Claude Code: a skill (or a command, which is the same file) is used by a ``Skill``
  tool call naming it (``plugin:skill`` or its bare alias); a plugin agent by an
  ``Agent``/``Task`` call whose ``subagent_type`` is its agent type; a hook by a
  ``system/hook_started`` event of its event whose target its matcher accepts (stdout
  stream); an MCP server by a ``mcp__<server>__*`` tool call. Root and subagent
  transcripts alike.
* Codex: a skill is used when a tool call (a shell command, a patch) names its
  ``SKILL.md`` (how Codex's rendered instructions tell the model to use a skill); root
  and child rollouts alike. Hooks are unknown.
"""

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from .._parsing import loads_json

State = Literal["used", "not_used", "unknown"]
Owner = Literal["treatment", "task"]

#: how the activation rules read traces; bump when a verdict on the same traces can change
METHOD = "activation-v1"
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
_MCP_TOOL = re.compile(r"^mcp__(.+?)__")


class Component(NamedTuple):
    """One declared component as discovery saw it."""

    key: str  # "skill:tidy-code", "agent:pb:reviewer", "hook:pb:SessionStart:startup"
    kind: str  # skill | command | agent | hook | mcp
    name: str
    owner: Owner
    #: Skill names that invoke it (skills, commands); agent type (agents); (event, matcher)
    #: as "event\0matcher" (hooks); server (mcp); the SKILL.md path suffix (Codex skills)
    match: tuple[str, ...]


class Activation(NamedTuple):
    key: str
    kind: str
    name: str
    owner: Owner
    state: State
    uses: int | None  # None: unknown
    first_turn: int | None
    reason: str | None

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


class Use(NamedTuple):
    """One use seen in a trace: what kind, which target, at which root turn (None: in a subagent)."""

    kind: str  # skill | agent | hook | mcp | file
    target: str
    turn: int | None


class TraceEvidence(NamedTuple):
    """What the traces of one attempt show, and what they cannot show."""

    uses: tuple[Use, ...]
    #: why a component absent from ``uses`` may still have been used (empty: the traces are complete)
    gaps: tuple[str, ...]
    #: kinds of evidence the harness never records (kind -> reason), e.g. Codex hooks
    blind: Mapping[str, str] = {}


# ------------------------------------------------------------------ components


def _skill_match(name: str) -> tuple[str, ...]:
    bare = name.split(":", 1)[1] if ":" in name else None
    return (name, bare) if bare else (name,)


def _hook_key(plugin: str | None, event: str, matcher: str) -> str:
    return ":".join(p for p in ("hook", (plugin or "").split("@", 1)[0], event, matcher) if p)


def claude_components(receipt: Mapping[str, Any]) -> list[Component]:
    """Components of a Claude Code receipt (``pluginbench.claude.native-treatment/2``)."""
    out: list[Component] = []

    def add(part: Mapping[str, Any], owner: Owner) -> None:
        skills = [str(s.get("name")) for s in part.get("skills") or []]
        skills += [str(s.get("name")) for s in part.get("skills_user_invocable_only") or []]
        for name in sorted(set(skills)):
            out.append(Component(f"skill:{name}", "skill", name, owner, _skill_match(name)))
        for name in sorted(set(str(c) for c in part.get("commands") or []) - set(skills)):
            out.append(Component(f"command:{name}", "command", name, owner, _skill_match(name)))
        for a in part.get("agents") or []:
            t = str(a.get("agentType"))
            out.append(Component(f"agent:{t}", "agent", t, owner, (t,)))
        for h in part.get("hooks") or []:
            event, matcher = str(h.get("event")), str(h.get("matcher") or "")
            key = _hook_key(h.get("pluginName"), event, matcher)
            out.append(Component(key, "hook", key[len("hook:"):], owner, (f"{event}\0{matcher}",)))
        for s in part.get("mcp_servers") or []:
            name = str(s.get("name"))
            out.append(Component(f"mcp:{name}", "mcp", name, owner, (name,)))

    add(receipt, "treatment")
    add(receipt.get("task_owned") or {}, "task")
    return _unique(out)


def _skill_md_suffix(path: str | None, name: str) -> str:
    """The ``<folder>/SKILL.md`` tail a tool call must name to read the skill."""
    if path and path.endswith("/SKILL.md"):
        parts = path.split("/")
        return "/".join(parts[-2:])
    return f"{name.split(':', 1)[-1]}/SKILL.md"


def codex_components(receipt: Mapping[str, Any]) -> list[Component]:
    """Components of a Codex receipt (``pluginbench.codex.native-treatment/2``)."""
    out: list[Component] = []
    for s in receipt.get("skills") or []:
        name = str(s.get("name"))
        out.append(Component(f"skill:{name}", "skill", name, "treatment",
                             (_skill_md_suffix(s.get("path"), name), str(s.get("path") or ""))))
    for s in receipt.get("plugin_skills") or []:
        name = str(s.get("name"))
        out.append(Component(f"skill:{name}", "skill", name, "treatment", (_skill_md_suffix(None, name),)))
    for h in receipt.get("hooks") or []:
        key = _hook_key(str(h.get("plugin")), str(h.get("event")), "")
        out.append(Component(key, "hook", key[len("hook:"):], "treatment", (str(h.get("event")),)))
    for s in (receipt.get("task_owned") or {}).get("skills") or []:
        name = str(s.get("name"))
        out.append(Component(f"skill:{name}", "skill", name, "task", (_skill_md_suffix(s.get("path"), name),)))
    return _unique(out)


def _unique(components: list[Component]) -> list[Component]:
    """Keys made unique per owner (``#2`` on a repeat: two hooks of one plugin on one event and matcher)."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for c in components:
        n = seen[(c.owner, c.key)] = seen.get((c.owner, c.key), 0) + 1
        out.append(c if n == 1 else c._replace(key=f"{c.key}#{n}"))
    return out


# ------------------------------------------------------------------ trace readers


def _lines(text: str) -> tuple[list[dict[str, Any]], int]:
    objs, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = loads_json(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(obj, dict):
            objs.append(obj)
        else:
            bad += 1
    return objs, bad


def claude_transcript_uses(text: str, *, root: bool) -> tuple[list[Use], int, int]:
    """Uses in one Claude Code transcript, the subagent calls it made, and its unreadable lines.
    Turns count distinct assistant message ids (a message is written once per content block)."""
    objs, bad = _lines(text)
    turns: dict[str, int] = {}
    seen: set[str] = set()
    uses: list[Use] = []
    calls = 0
    for o in objs:
        msg = o.get("message")
        if o.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        mid = str(msg.get("id"))
        if msg.get("model") == "<synthetic>":
            continue
        turns.setdefault(mid, len(turns) + 1)
        for block in msg.get("content") or []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            uid = str(block.get("id"))
            if uid in seen:
                continue
            seen.add(uid)
            tool = str(block.get("name"))
            raw_inp = block.get("input")
            inp: dict[str, Any] = raw_inp if isinstance(raw_inp, dict) else {}
            turn = turns[mid] if root else None
            if tool == "Skill":
                uses.append(Use("skill", str(inp.get("skill") or inp.get("command") or "").lstrip("/"), turn))
            elif tool in SUBAGENT_TOOLS:
                calls += 1
                uses.append(Use("agent", str(inp.get("subagent_type") or "general-purpose"), turn))
            elif m := _MCP_TOOL.match(tool):
                uses.append(Use("mcp", m.group(1), turn))
    return uses, calls, bad


def claude_stream_hooks(text: str) -> list[Use]:
    """Hook runs in a Claude Code stream-json stdout, each at the root turn it ran before
    (0: before the first model reply)."""
    objs, _ = _lines(text)
    turns: set[str] = set()
    uses: list[Use] = []
    for o in objs:
        if o.get("type") == "assistant" and o.get("parent_tool_use_id") is None:
            msg = o.get("message")
            if isinstance(msg, dict) and msg.get("model") != "<synthetic>":
                turns.add(str(msg.get("id")))
        elif o.get("type") == "system" and o.get("subtype") == "hook_started":
            name = str(o.get("hook_name") or "")
            event = str(o.get("hook_event") or name.split(":", 1)[0])
            target = name.split(":", 1)[1] if ":" in name else ""
            uses.append(Use("hook", f"{event}\0{target}", len(turns)))
    return uses


def claude_evidence(root: str | None, subagents: Iterable[tuple[str, str]], stdout: str | None) -> TraceEvidence:
    """Evidence from the root transcript, the (name, text) subagent transcripts and the stdout stream."""
    blind = {} if stdout is not None else {"hook": "no stdout stream was saved, so hook runs cannot be read"}
    hooks = claude_stream_hooks(stdout) if stdout is not None else []
    if root is None:
        return TraceEvidence(tuple(hooks), ("no root session transcript was saved",), blind)
    uses, calls, bad = claude_transcript_uses(root, root=True)
    gaps = [f"the root transcript has {bad} unreadable line(s)"] if bad else []
    subs = list(subagents)
    for name, text in subs:
        got, n, bad_sub = claude_transcript_uses(text, root=False)
        uses += got
        calls += n
        if bad_sub:
            gaps.append(f"subagent transcript {name} has {bad_sub} unreadable line(s)")
    if calls > len(subs):
        gaps.append(f"the session started {calls} subagent(s) but {len(subs)} subagent transcript(s) were saved")
    return TraceEvidence(tuple(uses + hooks), tuple(gaps), blind)


def codex_rollout_uses(text: str, *, root: bool) -> tuple[list[Use], int, int]:
    """Uses in one Codex rollout (every tool call's arguments, as text, for SKILL.md paths),
    the subagents it spawned and its unreadable lines. A turn is one model response (they
    end with a ``token_usage_record``)."""
    objs, bad = _lines(text)
    uses: list[Use] = []
    responses = spawned = 0
    for o in objs:
        raw_p = o.get("payload")
        p: dict[str, Any] = raw_p if isinstance(raw_p, dict) else {}
        if o.get("type") == "token_usage_record":
            responses += 1
            continue
        if o.get("type") != "response_item" or p.get("type") not in ("function_call", "custom_tool_call"):
            continue
        name = str(p.get("name"))
        if name in ("spawn_agent", "spawn_agents"):
            spawned += 1
        raw = p.get("arguments") if p.get("type") == "function_call" else p.get("input")
        uses.append(Use("file", raw if isinstance(raw, str) else json.dumps(raw), responses + 1 if root else None))
    return uses, spawned, bad


def codex_evidence(rollouts: list[tuple[str, str]]) -> TraceEvidence:
    """Evidence from the (name, text) rollouts, the root (its ``session_meta`` has no parent) first."""
    blind = {"hook": "Codex records no hook run in its rollouts or its --json stream"}
    if not rollouts:
        return TraceEvidence((), ("no Codex rollout was saved",), blind)
    uses: list[Use] = []
    gaps: list[str] = []
    spawned = 0
    for index, (name, text) in enumerate(rollouts):
        got, n, bad = codex_rollout_uses(text, root=index == 0)
        uses += got
        spawned += n
        if bad:
            gaps.append(f"rollout {name} has {bad} unreadable line(s)")
    if spawned > len(rollouts) - 1:
        gaps.append(f"the session spawned {spawned} subagent(s) but {len(rollouts) - 1} child rollout(s) were saved")
    return TraceEvidence(tuple(uses), tuple(gaps), blind)


# ------------------------------------------------------------------ the verdict


def _matcher_accepts(matcher: str, target: str) -> bool:
    return matcher in ("", "*") or target in matcher.split("|")


def _hits(c: Component, use: Use) -> bool:
    if c.kind in ("skill", "command"):
        if use.kind == "skill":
            return use.target in c.match
        return use.kind == "file" and any(m and m in use.target for m in c.match)
    if c.kind == "agent":
        return use.kind == "agent" and use.target == c.match[0]
    if c.kind == "mcp":
        return use.kind == "mcp" and use.target == c.match[0]
    if c.kind == "hook" and use.kind == "hook":
        event, _, matcher = c.match[0].partition("\0")
        u_event, _, target = use.target.partition("\0")
        return event == u_event and _matcher_accepts(matcher, target)
    return False


def activation(components: Iterable[Component], evidence: TraceEvidence) -> list[Activation]:
    """One verdict per component (see the module docstring)."""
    comps = list(components)
    out: list[Activation] = []
    for c in comps:
        if c.kind in evidence.blind:
            out.append(Activation(c.key, c.kind, c.name, c.owner, "unknown", None, None, evidence.blind[c.kind]))
            continue
        if c.kind == "hook":
            # A hook run is named by its event and target only: two hooks that accept the
            # same runs cannot be told apart.
            twins = [o for o in comps if o is not c and o.kind == "hook" and o.match[0].split("\0")[0]
                     == c.match[0].split("\0")[0]]
            if twins and any(_hits(c, u) and any(_hits(t, u) for t in twins) for u in evidence.uses):
                out.append(Activation(c.key, c.kind, c.name, c.owner, "unknown", None, None,
                                      "another hook on the same event accepts the same runs, and the CLI "
                                      "names a run by its event and target only"))
                continue
        hits = [u for u in evidence.uses if _hits(c, u)]
        # Hooks are read from the stream, which holds every session's runs; the gaps are transcripts'.
        gaps = () if c.kind == "hook" else evidence.gaps
        if hits:
            root_turns = [u.turn for u in hits if u.turn is not None]
            first = min(root_turns) if root_turns else None
            reason = None if first is not None else "first used inside a subagent"
            if gaps:
                reason = "; ".join(filter(None, [reason, f"the count may be low: {'; '.join(gaps)}"]))
            out.append(Activation(c.key, c.kind, c.name, c.owner, "used", len(hits), first, reason))
        elif gaps:
            out.append(Activation(c.key, c.kind, c.name, c.owner, "unknown", None, None, "; ".join(gaps)))
        else:
            out.append(Activation(c.key, c.kind, c.name, c.owner, "not_used", 0, None, None))
    return out


def any_exercised(verdicts: Iterable[Activation]) -> tuple[int | None, str | None]:
    """1 when a treatment component was used, 0 when none was and every one is known,
    else None with the reason (an arm without treatment components is None too)."""
    mine = [v for v in verdicts if v.owner == "treatment"]
    if not mine:
        return None, "the arm declares no treatment component"
    if any(v.state == "used" for v in mine):
        return 1, None
    unknown = [v for v in mine if v.state == "unknown"]
    if unknown:
        return None, f"{len(unknown)} component(s) unknown: {unknown[0].key}: {unknown[0].reason}"
    return 0, None
