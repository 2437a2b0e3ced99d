"""Scenario value types and loading (pure: no sockets, no threads).

A scenario is an ordered list of rules. The probe answers a coding request with the first
rule whose ``when`` matches the request, and within that rule with the step whose index
equals the number of assistant turns already in the conversation (so the probe keeps no
per-session state). After the script runs out it answers ``final`` (a plain text,
``end_turn``). YAML shape::

    name: edit-file
    final: {text: "Done."}              # optional
    side: {text: "ok"}                  # optional: answer to side requests (usage 0 by default)
    rules:
      - name: claude
        when: {tools_include: Bash}     # all given conditions must hold
        script:
          - tool: {name: Bash, input: {command: "ls -la"}}
            usage: {input_tokens: 1200, output_tokens: 30}
          - text: "Finished."
            omit_usage: true            # faulty usage: none at all (or raw_usage: {...})

A bare list at the top level is read as ``rules``.
"""

import json
from pathlib import Path
from typing import Any

import msgspec
import yaml

from .._parsing import load_yaml
from ..errors import ScenarioError

ERROR_STATUSES = (400, 401, 403, 404, 429, 500, 502, 503, 529)


class StepUsage(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Token usage the probe reports for one answer, exactly as given.

    Anthropic: the four fields go verbatim into ``message_delta.usage`` (``input_tokens``
    excludes cache reads/writes there). Responses: ``input_tokens`` is sent as
    ``input_tokens`` and ``cache_read_input_tokens`` as ``input_tokens_details.cached_tokens``
    (OpenAI counts cached tokens inside input); ``reasoning_tokens`` only exists there.
    """

    input_tokens: int = 1000
    output_tokens: int = 50
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: "StepUsage") -> "StepUsage":
        return StepUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


ZERO_USAGE = StepUsage(input_tokens=0, output_tokens=0)


class ToolCall(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One tool call. ``shell`` and ``apply_patch`` are portable names (see ``_render``);
    any other name is sent as is. ``input`` is an object, or the raw patch text for
    ``apply_patch``. ``{{cwd}}`` in any string is replaced by the CLI's working directory."""

    name: str
    input: dict[str, Any] | str = {}


class ErrorSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An HTTP error answer instead of a model turn."""

    status: int
    message: str = "probe: scripted error"
    retry_after: float | None = None


class Step(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One model turn: text and/or tool calls, or an HTTP error, or a cut stream."""

    text: str | None = None
    tool: ToolCall | None = None
    tools: tuple[ToolCall, ...] = ()
    error: ErrorSpec | None = None
    drop_stream: bool = False
    usage: StepUsage = StepUsage()
    #: Faulty usage (to test how harnesses account for it): ``omit_usage`` sends the answer
    #: with no usage object at all; ``raw_usage`` sends this object verbatim in place of
    #: the step's usage (any JSON values: ``{input_tokens: "many", output_tokens: -7}``).
    #: Either way the probe records no served usage for the answer (``usage_fault`` says why).
    omit_usage: bool = False
    raw_usage: dict[str, Any] | None = None
    #: seconds the probe waits before it answers (a slow model: lets a test act mid-call)
    delay_seconds: float = 0.0

    @property
    def usage_fault(self) -> str | None:
        """``omitted``, ``malformed`` or None (the answer carries the step's valid usage)."""
        if self.omit_usage:
            return "omitted"
        return "malformed" if self.raw_usage is not None else None

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return ((self.tool,) if self.tool is not None else ()) + self.tools

    @property
    def kind(self) -> str:
        if self.error is not None:
            return "error"
        if self.drop_stream:
            return "drop_stream"
        return "tool" if self.calls else "text"


class When(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Conditions on a request; every condition given must hold (an empty ``when`` matches).

    ``model`` is a glob (``claude-*``); ``api`` is ``anthropic``, ``responses``, ``chat``
    (OpenAI Chat Completions) or ``gemini`` (the Gemini API; the model is the one in the path).
    """

    system_contains: str | None = None
    messages_contain: str | None = None
    tools_include: str | None = None
    model: str | None = None
    api: str | None = None


class Rule(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: str = ""
    when: When = When()
    script: tuple[Step, ...] = ()


class Scenario(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A whole scenario. ``rules`` are tried in order; no match answers ``final``."""

    name: str = "scenario"
    description: str = ""
    rules: tuple[Rule, ...] = ()
    final: Step = Step(text="Done.")
    side: Step = Step(text="PluginBench probe side answer.", usage=ZERO_USAGE)


def _check(scenario: Scenario, file: str | None) -> Scenario:
    def fail(msg: str, field: str, fix: str) -> ScenarioError:
        return ScenarioError(msg, file=file, field=field, fix=fix)

    steps = [(f"rules[{i}].script[{j}]", s) for i, r in enumerate(scenario.rules)
             for j, s in enumerate(r.script)]
    steps += [("final", scenario.final), ("side", scenario.side)]
    for where, step in steps:
        kinds = [k for k, on in (("error", step.error is not None),
                                 ("drop_stream", step.drop_stream),
                                 ("content", step.text is not None or bool(step.calls))) if on]
        if len(kinds) != 1:
            raise fail("a step needs exactly one of: text/tool, error, drop_stream",
                       where, "give text and/or tool, or error, or drop_stream: true")
        if step.error is not None and step.error.status not in ERROR_STATUSES:
            raise fail(f"unsupported error status {step.error.status}", where + ".error.status",
                       "use one of " + ", ".join(map(str, ERROR_STATUSES)))
        if step.omit_usage and step.raw_usage is not None:
            raise fail("a step cannot both omit and replace its usage", where + ".raw_usage",
                       "give omit_usage: true or raw_usage: {...}, not both")
        if not 0 <= step.delay_seconds <= 600:
            raise fail("delay_seconds must be between 0 and 600", where + ".delay_seconds",
                       "give the seconds the probe waits before it answers, e.g. 5")
        for name, value in msgspec.structs.asdict(step.usage).items():
            if value < 0:
                raise fail("token counts cannot be negative", f"{where}.usage.{name}",
                           "use 0 or a positive integer")
        for call in step.calls:
            if isinstance(call.input, str) and call.name != "apply_patch":
                raise fail("only apply_patch takes a text input", f"{where}.tool.input",
                           "give the tool input as a mapping")
    if scenario.final.kind != "text" or scenario.side.kind != "text":
        raise fail("final and side answers must be plain text", "final",
                   "give final/side as {text: ...}")
    for i, rule in enumerate(scenario.rules):
        if rule.when.api not in (None, "anthropic", "responses", "chat", "gemini"):
            raise fail(f"unknown api {rule.when.api!r}", f"rules[{i}].when.api",
                       "use anthropic, responses, chat or gemini")
    return scenario


def _yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, parsed by libyaml when PyYAML has it (a run parses its
    scenario twice: ~20 ms of CPU each in pure Python, ~3 ms in C; :func:`load_yaml`)."""
    return load_yaml(text, yaml.SafeLoader, getattr(yaml, "CSafeLoader", None))


def load_scenario(source: str | Path | dict[str, Any] | list[Any]) -> Scenario:
    """Load and validate a scenario from a YAML/JSON file path or an already parsed value.

    Raises :class:`ScenarioError` (an :class:`InputError`) naming file and field.
    """
    file: str | None = None
    raw: Any = source
    if isinstance(source, str | Path):
        path = Path(source)
        file = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(f"cannot read the scenario: {exc}", file=file,
                                fix="pass an existing YAML or JSON file") from None
        try:
            raw = json.loads(text) if path.suffix == ".json" else _yaml(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            raise ScenarioError(f"the scenario is not valid YAML/JSON: {exc}", file=file,
                                fix="fix the syntax") from None
    if isinstance(raw, list):
        raw = {"rules": raw}
    if not isinstance(raw, dict):
        raise ScenarioError("a scenario must be a mapping with 'rules' (or a list of rules)",
                            file=file, fix="see pluginbench/probe/scenarios/*.yaml")
    try:
        scenario = msgspec.convert(raw, Scenario)
    except msgspec.ValidationError as exc:
        msg = str(exc)
        field = msg.rsplit("at `$", 1)[1].rstrip("`") if "at `$" in msg else None
        raise ScenarioError(f"invalid scenario: {msg}", file=file,
                            field=field.lstrip(".") if field else None,
                            fix="see pluginbench/probe/scenarios/*.yaml for the shape") from None
    return _check(scenario, file)
