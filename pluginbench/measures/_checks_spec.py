"""The ``checks`` measure: the deterministic graders of :mod:`._checks`, run on every attempt.

Settings (``measurement_settings.checks``, a list; validated with the config, exit 2
naming the field)::

    measurements: [tokens, time, lines, checks]
    measurement_settings:
      checks:
        - {name: says-done, kind: regex, target: answer, pattern: "(?i)done"}
        - {name: used-skill, kind: tool_used, skill: tidy-code}
        - {name: read-first, kind: tool_order, tools: [Read, Write]}
        - {name: has-solution, kind: file_exists, path: solution.py, content_regex: "def add"}
        - {name: explains, kind: llm, rubric: "The final message says why the bug happened.", votes: 3}

A task folder may declare its own checks in ``checks.toml`` (``[[checks]]`` tables of the
same fields); they apply to that task's attempts beside the evaluation's (:func:`task_checks`).

Values: ``check:<name>`` (1 passed, 0 failed, unknown with the reason) and
``checks_score`` (the weighted share of the checks that passed; unknown when any is
unknown). Neither changes the attempt's outcome. The evidence (each check's result and
reason) is kept in ``measure/checks/checks.json``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import msgspec

from ..errors import PatchDoesNotApply, TaskError
from ..events import Measure
from ._checks import Call, Check, Evidence, FileExistsCheck, LlmCheck, decide, field_named
from ._checks_llm import grade
from ._port import CollectorInput, Column, MeasureSpec
from ._registry import register
from ._tree import changed_paths, submission_tree

PREFIX = "check:"
_SKILL_MD = re.compile(r"([A-Za-z0-9_.-]+)/SKILL\.md")


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""


def _lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def final_answer(stdout: str) -> str | None:
    """The agent's last message: Claude Code's ``result`` text, or Codex's last ``agent_message``."""
    answer = None
    for o in _lines(stdout):
        if o.get("type") == "result" and isinstance(o.get("result"), str):
            answer = o["result"]
        item = o.get("item")
        if o.get("type") == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message":
            answer = str(item.get("text") or "")
    return answer


def _claude_calls(text: str, root: bool) -> list[Call]:
    calls, seen = [], set()
    for o in _lines(text):
        msg = o.get("message")
        if o.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        for b in msg.get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") not in seen:
                seen.add(b.get("id"))
                raw_inp = b.get("input")
                inp: dict[str, Any] = raw_inp if isinstance(raw_inp, dict) else {}
                tool = str(b.get("name"))
                calls.append(Call(tool, str(inp.get("skill")) if tool == "Skill" else None,
                                  str(inp.get("subagent_type") or "general-purpose") if tool in ("Task", "Agent") else None,
                                  root))
    return calls


def _codex_calls(text: str, root: bool) -> list[Call]:
    calls = []
    for o in _lines(text):
        p = o.get("payload")
        if o.get("type") != "response_item" or not isinstance(p, dict) or p.get("type") not in ("function_call", "custom_tool_call"):
            continue
        raw = p.get("arguments") if p.get("type") == "function_call" else p.get("input")
        raw_text = raw if isinstance(raw, str) else json.dumps(raw)
        skill = _SKILL_MD.search(raw_text)
        tool = str(p.get("name"))
        sub = None
        if tool in ("spawn_agent", "spawn_agents"):
            try:
                args = json.loads(raw_text)
            except ValueError:
                args = {}
            sub = str(args.get("agent_type") or "default") if isinstance(args, dict) else "default"
        calls.append(Call(tool, skill.group(1) if skill else None, sub, root))
    return calls


def _traces(agent: Path) -> tuple[str | None, list[Call] | None, str]:
    """(every trace as text, the tool calls, why they are missing)."""
    transcripts, rollouts = agent / "transcripts", agent / "rollouts"
    if transcripts.is_dir() and (roots := sorted(transcripts.glob("*.jsonl"))):
        texts, calls = [], []
        for r in roots:
            texts.append(_read(r))
            calls += _claude_calls(texts[-1], True)
            for sub in sorted((transcripts / r.stem).rglob("*.jsonl")) if (transcripts / r.stem).is_dir() else []:
                texts.append(_read(sub))
                calls += _claude_calls(texts[-1], False)
        return "\n".join(texts), calls, ""
    files = sorted(rollouts.rglob("rollout-*.jsonl")) if rollouts.is_dir() else []
    if files:
        texts = [_read(f) for f in files]
        calls = [c for t in texts for c in _codex_calls(t, '"parent_thread_id"' not in t.split("\n", 1)[0])]
        return "\n".join(texts), calls, ""
    return None, None, "no saved agent trace (agent/transcripts or agent/rollouts)"


def _files(inp: CollectorInput, paths: set[str]) -> tuple[dict[str, str | None] | None, str]:
    """Final text of each path (starting source + patch), or None and why."""
    if not paths:
        return {}, ""
    before, after = changed_paths(inp.patch)
    work = inp.work_dir / "tree"
    try:
        tree = submission_tree(inp.starting_source, inp.patch, work, only=before & paths)
    except PatchDoesNotApply as exc:
        return None, str(exc)
    out: dict[str, str | None] = {}
    for p in sorted(paths):
        f = tree / p if p in after or p in before else inp.starting_source / p
        out[p] = f.read_text(errors="replace") if f.is_file() and not f.is_symlink() else None
    shutil.rmtree(work, ignore_errors=True)
    return out, ""


TASK_CHECKS = "checks.toml"


def task_checks(task_dir: Path) -> list[Check]:
    """The checks a task folder declares in ``checks.toml`` (``[[checks]]`` tables); none when
    the file is absent. A malformed file raises :class:`TaskError` naming the file and field."""
    path = task_dir / TASK_CHECKS
    if path.is_dir():
        raise TaskError(f"{TASK_CHECKS} is a folder, so the task's checks would be silently missing", file=str(path),
                        field="checks", fix="make checks.toml a file of [[checks]] tables, or remove the folder")
    if not path.is_file():
        return []
    import tomllib

    file = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{TASK_CHECKS} does not parse: {exc}", file=file, field="checks",
                        fix="write [[checks]] tables (see docs/tasks.md#checks)") from None
    extra = sorted(set(data) - {"checks"})
    if extra:
        raise TaskError(f"unknown key '{extra[0]}' in {TASK_CHECKS}", file=file, field=extra[0],
                        fix="declare each check as a [[checks]] table")
    raw = data.get("checks")
    if not isinstance(raw, list) or not raw:
        raise TaskError(f"{TASK_CHECKS} declares no [[checks]] table", file=file, field="checks",
                        fix="add [[checks]] tables, or remove the file")
    out: list[Check] = []
    for i, item in enumerate(raw):
        try:
            out.append(msgspec.convert(item, Check, strict=True))
        except msgspec.ValidationError as exc:
            where = str(exc).rpartition(" - at `$")[2].rstrip("`") if " - at `$" in str(exc) else ""
            message = str(exc).partition(" - at ")[0]
            raise TaskError(f"{TASK_CHECKS}: {message}", file=file,
                            field=f"checks[{i}]{field_named(message, where)}", fix="see docs/tasks.md#checks") from None
        if out[-1].name in {c.name for c in out[:-1]}:
            raise TaskError(f"check name '{out[-1].name}' is declared twice", file=file, field=f"checks[{i}].name",
                            fix="give each check its own name")
    return out


def _evidence(inp: CollectorInput, checks: list[Check]) -> Evidence:
    stdout = _read(inp.traces_dir / "stdout.jsonl")
    transcript, calls, why_traces = _traces(inp.traces_dir)
    inp.work_dir.mkdir(parents=True, exist_ok=True)
    files, why_files = _files(inp, {c.path for c in checks if isinstance(c, FileExistsCheck)})
    answer = final_answer(stdout) if stdout else None
    why = {"answer": "no final agent message was saved", "transcript": why_traces, "calls": why_traces,
           "files": why_files}
    return Evidence(answer=answer, transcript=transcript, patch=inp.patch, calls=calls, files=files,
                    why={k: v for k, v in why.items() if v})


async def collect_checks(inp: CollectorInput) -> dict[str, Measure]:
    """Every check of the evaluation and of the attempt's task folder on one attempt."""
    checks: list[Check] = [*(inp.settings.get("checks") or []), *task_checks(inp.task_dir)]
    if not checks:
        return CHECKS.unknown("no check is declared (measurement_settings.checks or the task's checks.toml)")
    ev = await anyio.to_thread.run_sync(_evidence, inp, checks)
    out: dict[str, Measure] = {}
    results = []
    for c in checks:
        extra: dict[str, Any] = {}
        if isinstance(c, LlmCheck):
            instruction = _read(inp.task_dir / "instruction.md")
            passed, reason, extra = await grade(c, inp.work_dir / "llm" / c.name, instruction=instruction,
                                                patch=inp.patch, answer=ev.answer, vote=inp.llm_vote)
        else:
            passed, reason = decide(c, ev)
        results.append({"name": c.name, "kind": type(c).__struct_config__.tag, "weight": c.weight,
                        "passed": passed, "reason": reason, **extra})
        out[PREFIX + c.name] = (Measure(value=int(passed), unit="pass") if passed is not None
                                else Measure(value=None, unit="pass", status="unknown", reason=reason))
    total = math.fsum(c.weight for c in checks)
    if any(r["passed"] is None for r in results):
        out["checks_score"] = Measure(value=None, unit="share", status="unknown",
                                      reason="a check could not run: " + next(str(r["reason"]) for r in results if r["passed"] is None))
    elif total == 0:
        out["checks_score"] = Measure(value=None, unit="share", status="unknown", reason="every check has weight 0")
    else:
        out["checks_score"] = Measure(value=round(math.fsum(c.weight for c, r in zip(checks, results, strict=True)
                                                            if r["passed"]) / total, 6), unit="share")
    if any(isinstance(c, LlmCheck) for c in checks):
        out[GRADER_TOKENS] = grader_tokens([{**v, "check": r["name"]} for r in results for v in r.get("votes") or []])
    (inp.work_dir / "checks.json").write_text(json.dumps({"checks": results}, indent=2, sort_keys=True) + "\n")
    return out


#: the value that counts the llm checks' grader calls on one attempt (apart from coding usage)
GRADER_TOKENS = "checks_grader_tokens"


def grader_tokens(votes: list[dict[str, Any]]) -> Measure:
    """The total tokens of an attempt's llm-check votes: a sum only when every vote's usage is
    exact with a total, else unknown with the first reason (a floor or a partial sum is never
    passed off as the total)."""
    total = 0
    for v in votes:
        usage = v.get("usage") or {}
        tokens = usage.get("total_tokens")
        if not isinstance(tokens, int) or usage.get("status") != "exact":
            why = usage.get("reason") or f"its usage is {usage.get('status') or 'not recorded'}"
            floor = f", at least {tokens:,} tokens" if isinstance(tokens, int) else ""
            return Measure(value=None, unit="tokens", status="unknown",
                           reason=f"vote {v.get('vote')} of llm check {v.get('check')!r} has no exact token total ({why}{floor})")
        total += tokens
    return Measure(value=total, unit="tokens")


def _settings_type() -> Mapping[str, Any]:
    return {"checks": list[Check]}


CHECKS = register(MeasureSpec(
    name="checks",
    description=("Graders beside the hidden verifier (regex, tool_used, tool_order, file_exists, llm), declared in "
                 "measurement_settings.checks or a task's checks.toml; they never change correctness."),
    columns=(
        Column("checks_score", "share", "checks", "Weighted share of the declared checks that passed.",
               "checks_score", summary=False),
        Column(GRADER_TOKENS, "tokens", "checks",
               "Tokens the llm checks' grader calls used on this attempt (all votes; the reviewer's CLI, counted "
               "apart from coding usage); only when an llm check is declared.",
               None, summary=False, table=False),
    ),
    families=(
        Column(PREFIX, "pass", "check",
               "One declared check (check:<name>): 1 passed, 0 failed, unknown when it cannot run.",
               summary=False, table=False),
    ),
    observer_version="3",
    collect=collect_checks,
    settings=_settings_type(),
    observer_modules=("pluginbench.measures._checks", "pluginbench.measures._checks_spec",
                      "pluginbench.measures._checks_llm"),
))
