"""Pure inspection of a request body: which API, coding or side, which rule, which step.

Nothing here touches the network; every function takes parsed JSON and returns values, so
the matching contract is unit-tested without a server.
"""

import fnmatch
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from ._scenario import Rule, Scenario, Step

# Responses items the model produced (echoed back by the client because store=false).
_MODEL_ITEM_TYPES = frozenset({
    "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
    "tool_search_call", "image_generation_call", "file_search_call", "computer_call",
})


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, depth first (keys excluded)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))


def _contains(value: Any, needle: str) -> bool:
    return any(needle in s for s in _strings(value))


def system_part(api: str, body: dict[str, Any]) -> Any:
    """The system prompt: Anthropic ``system``; Responses ``instructions`` plus
    developer/system messages (Codex sends its base instructions as ``input[0]``)."""
    if api == "anthropic":
        return body.get("system")
    if api == "gemini":
        return body.get("systemInstruction")
    if api == "chat":
        return [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") in ("system", "developer")]
    items = [it for it in body.get("input") or [] if isinstance(it, dict)
             and it.get("type", "message") == "message" and it.get("role") in ("developer", "system")]
    return [body.get("instructions"), items]


def messages_part(api: str, body: dict[str, Any]) -> Any:
    """The conversation: Anthropic and Chat Completions ``messages``; Responses ``input`` (all
    items); Gemini ``contents``."""
    if api == "gemini":
        return body.get("contents")
    return body.get("messages") if api in ("anthropic", "chat") else body.get("input")


def offered_tools(body: dict[str, Any]) -> tuple[str, ...]:
    """Names of offered tools (a Responses built-in without a name is named by its type; a
    Gemini tool's ``functionDeclarations`` by their names)."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("functionDeclarations"), list):
            names += [str(d["name"]) for d in tool["functionDeclarations"]
                      if isinstance(d, dict) and isinstance(d.get("name"), str)]
        elif isinstance(tool, dict):
            fn = tool.get("function")  # Chat Completions: {type: function, function: {name}}
            name = (fn.get("name") if isinstance(fn, dict) else None) or tool.get("name") or tool.get("type")
            if isinstance(name, str):
                names.append(name)
    return tuple(names)


def tool_kind(body: dict[str, Any], name: str) -> str | None:
    """The ``type`` of the offered tool ``name`` (``function``, ``custom``...), or None."""
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") == name:
            return str(tool.get("type", "function"))
    return None


def assistant_turns(api: str, body: dict[str, Any]) -> int:
    """How many model turns the conversation already holds.

    Anthropic and Chat Completions: messages with role assistant. Gemini: contents with role
    model. Responses: maximal runs of consecutive
    model-output items (reasoning, function/custom tool calls, assistant messages); a
    tool output or a user/developer message ends a run, so one turn that emitted
    reasoning plus two calls counts once.
    """
    if api in ("anthropic", "chat"):
        return sum(1 for m in body.get("messages") or []
                   if isinstance(m, dict) and m.get("role") == "assistant")
    if api == "gemini":
        return sum(1 for m in body.get("contents") or [] if isinstance(m, dict) and m.get("role") == "model")
    turns, in_run = 0, False
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        is_model = kind in _MODEL_ITEM_TYPES or (kind == "message" and item.get("role") == "assistant")
        if is_model and not in_run:
            turns += 1
        in_run = is_model
    return turns


def is_coding(body: dict[str, Any]) -> bool:
    """A coding turn offers tools; title/topic generation and quota probes offer none."""
    return bool(body.get("tools"))


def rule_matches(rule: Rule, api: str, body: dict[str, Any]) -> bool:
    w = rule.when
    if w.api is not None and w.api != api:
        return False
    if w.model is not None and not fnmatch.fnmatchcase(str(body.get("model", "")), w.model):
        return False
    if w.tools_include is not None and w.tools_include not in offered_tools(body):
        return False
    if w.system_contains is not None and not _contains(system_part(api, body), w.system_contains):
        return False
    return not (w.messages_contain is not None
                and not _contains(messages_part(api, body), w.messages_contain))


class Choice(NamedTuple):
    """What answers a coding request. ``rule`` is None when no rule matched;
    ``scripted`` is False when the answer is the scenario's ``final``."""

    rule_index: int | None
    rule_name: str | None
    step_index: int
    step: Step
    scripted: bool


def choose(scenario: Scenario, api: str, body: dict[str, Any]) -> Choice:
    """The first matching rule's step at the conversation's turn index, else ``final``."""
    turn = assistant_turns(api, body)
    for i, rule in enumerate(scenario.rules):
        if rule_matches(rule, api, body):
            if turn < len(rule.script):
                return Choice(i, rule.name or None, turn, rule.script[turn], True)
            return Choice(i, rule.name or None, turn, scenario.final, False)
    return Choice(None, None, turn, scenario.final, False)


_CWD_PATTERNS = (
    re.compile(r"Primary working directory: ([^\n\"\\]+)"),  # Claude Code
    re.compile(r"<cwd>([^<\n]+)</cwd>"),  # Codex environment_context
    re.compile(r"(?m)^CWD: ([^\n\"\\]+)"),  # Claude Code --bare
    re.compile(r"I'm currently working in the directory: ([^\n\"\\]+)"),  # Qwen Code
    re.compile(r"(?m)^\s*Working directory: ([^\n\"\\]+)"),  # opencode <env>
    re.compile(r"\*\*Workspace Directories:\*\*\n\s+- ([^\n\"\\]+)"),  # Gemini CLI
)


def request_cwd(api: str, body: dict[str, Any]) -> str | None:
    """The CLI's working directory as stated in its own prompt, or None."""
    for part in (messages_part(api, body), system_part(api, body)):
        for s in _strings(part):
            for pattern in _CWD_PATTERNS:
                m = pattern.search(s)
                if m:
                    return m.group(1).strip()
    return None


_JWT = re.compile(r"^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


def credential_of(headers: dict[str, str]) -> str | None:
    """The credential a request carries (``x-api-key`` or ``x-goog-api-key``, else
    ``Authorization: Bearer``)."""
    lower = {k.lower(): v for k, v in headers.items()}
    for key in ("x-api-key", "x-goog-api-key"):
        if lower.get(key):
            return lower[key].strip()
    auth = lower.get("authorization", "").strip()
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return auth or None


def looks_real(credential: str | None, fakes: frozenset[str]) -> bool:
    """True for anything shaped like a real provider credential that is not one of ours:
    Anthropic keys and OAuth tokens (``sk-ant-…``), OpenAI keys (``sk-…``), JWT bearer
    tokens (ChatGPT sign-in), Google API keys (``AIza…``) and OAuth tokens (``ya29.…``)."""
    if not credential or credential in fakes:
        return False
    return credential.startswith(("sk-", "AIza", "ya29.")) or bool(_JWT.match(credential))


def substitute_cwd(value: Any, cwd: str | None) -> Any:
    """``value`` with ``{{cwd}}`` in every string replaced by ``cwd`` (left as is if None)."""
    if cwd is None:
        return value
    if isinstance(value, str):
        return value.replace("{{cwd}}", cwd)
    if isinstance(value, list):
        return [substitute_cwd(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: substitute_cwd(v, cwd) for k, v in value.items()}
    return value
