"""The Qwen Code, Gemini CLI and opencode output parsers never raise on what an agent can write
into the CLI's stdout, transcript, usage log or session export: every field of every recorded
line replaced by a value of the wrong type, a huge or non-finite number, empty or multi-line
text or a 150-level nesting is read as undecodable or unknown (a raise would make the attempt
a harness error). The mutations are ``tests/harnesses/_mutations.py``; the seeds are real
recorded sessions (Gemini, opencode) and the shapes of Qwen Code 0.24.4 the trace tests use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.harnesses._gemini_trace import classify_provider_stop as gemini_stop
from pluginbench.harnesses._gemini_trace import read_stream as gemini_stream
from pluginbench.harnesses._gemini_trace import validate_usage as gemini_usage
from pluginbench.harnesses._opencode_config import SEPARATOR
from pluginbench.harnesses._opencode_trace import classify_provider_stop as opencode_stop
from pluginbench.harnesses._opencode_trace import compare as opencode_compare
from pluginbench.harnesses._opencode_trace import error_text, read_discovery
from pluginbench.harnesses._opencode_trace import read_stream as opencode_stream
from pluginbench.harnesses._opencode_trace import validate_usage as opencode_usage
from pluginbench.harnesses._qwen_trace import classify_provider_stop as qwen_stop
from pluginbench.harnesses._qwen_trace import compare as qwen_compare
from pluginbench.harnesses._qwen_trace import read_context
from pluginbench.harnesses._qwen_trace import read_stream as qwen_stream
from pluginbench.harnesses._qwen_trace import validate_usage as qwen_usage
from tests.harnesses._mutations import crash_sites

DATA = Path(__file__).parent / "data"


def _line(obj: object) -> str:
    return json.dumps(obj) + "\n"


def _qwen_files() -> dict[str, str]:
    sid = "s-1"
    answers = [(100, 20, 10), (50, 5, 0)]
    stdout = (_line({"type": "system", "subtype": "init", "session_id": sid, "qwen_code_version": "0.24.4"})
              + _line({"type": "result", "is_error": True, "num_turns": 2, "subtype": "error_during_execution",
                       "error": {"message": "[API Error: 429] quota"}, "result": "**Skills**\n  └ review   9 tokens",
                       "usage": {"input_tokens": 150, "output_tokens": 25, "cache_read_input_tokens": 10}}))
    log = "".join(_line({"sessionId": sid, "inputTokens": i, "outputTokens": o, "cachedTokens": c})
                  for i, o, c in answers)
    transcript = "".join(_line({"type": "system", "systemPayload": {"uiEvent": {
        "event.name": "qwen-code.api_response", "status_code": 429, "input_token_count": i,
        "output_token_count": o, "cached_content_token_count": c, "thoughts_token_count": 1}}}) for i, o, c in answers)
    return {"stdout": stdout, "log": log, "transcript": transcript}


def _qwen(files: dict[str, str]) -> None:
    qwen_usage(files["stdout"], files["log"], files["transcript"], timed_out=False)
    qwen_stop(files["stdout"], files["transcript"], timed_out=False)
    qwen_stream(files["stdout"])
    qwen_compare(read_context(files["stdout"]), guidance=True, skills=("review",), vanilla_skills=())


def _gemini_files() -> dict[str, str]:
    g = DATA / "gemini-0.61.0"
    return {"stdout": (g / "stdout.jsonl").read_text(), "transcript": (g / "transcript.jsonl").read_text(),
            "failed": (g / "stdout-ratelimit.jsonl").read_text(), "stderr": "status 429\n"}


def _gemini(files: dict[str, str]) -> None:
    gemini_usage(files["stdout"], files["transcript"], timed_out=False)
    for stdout in (files["stdout"], files["failed"]):
        gemini_stop(stdout, files["stderr"], timed_out=False)
        gemini_stream(stdout)


def _opencode_files() -> dict[str, str]:
    o = DATA / "opencode-1.18.33"
    skills = [{"name": "customize-opencode", "location": "<built-in>"},
              {"name": "review", "location": "/home/agent/.config/opencode/skills/review/SKILL.md"}]
    return {"stdout": (o / "edit-file.stdout.jsonl").read_text(), "export": (o / "edit-file.export.json").read_text(),
            "failed": (o / "quota-exhausted.stdout.jsonl").read_text(),
            "skills": json.dumps(skills), "config": json.dumps({"plugin": [], "instructions": []})}


def _opencode(files: dict[str, str]) -> None:
    sid = opencode_stream(files["stdout"]).session_id
    opencode_usage(files["stdout"], {sid or "": files["export"]}, timed_out=False)
    for stdout in (files["stdout"], files["failed"]):
        opencode_stop(stdout, timed_out=False)
        error_text(opencode_stream(stdout).error)
    found = read_discovery(f"\n{SEPARATOR}\n".join(["config /home/agent/.config/opencode\n", files["skills"],
                                                    files["config"], "/home/agent/.config/opencode/AGENTS.md"]))
    opencode_compare(found, home="/home/agent", workdir="/app", guidance=True, skills=("review",))


CASES = {
    "qwen": (_qwen_files, {"stdout": "lines", "log": "lines", "transcript": "lines"}, _qwen),
    "gemini": (_gemini_files, {"stdout": "lines", "transcript": "lines", "failed": "lines"}, _gemini),
    "opencode": (_opencode_files, {"stdout": "lines", "export": "document", "failed": "lines", "skills": "document",
                                   "config": "document"}, _opencode),
}


@pytest.mark.parametrize("harness", sorted(CASES))
def test_every_mutated_field_of_the_recorded_output_parses_without_raising(harness: str) -> None:
    """No mutation of any field of the seed files makes a parser raise (the seeds themselves parse)."""
    make, kinds, parse = CASES[harness]
    files = make()
    parse(files)
    count, sites = crash_sites(files, kinds, parse)
    assert count > 500
    assert not sites, f"{len(sites)} crash site(s) in {count} mutations:\n" + "\n".join(
        f"{where}: {example}" for where, example in sorted(sites.items()))


def test_what_a_crash_site_now_reads_is_unknown_or_refused_never_a_pass() -> None:
    """A Qwen /context result with a non-integer num_turns gives no listing (the receipt fails), an empty
    Qwen error message still ends in a named error and provider stop, and an opencode export whose messages
    is not a list makes usage unknown (never exact zero)."""
    files = _qwen_files()
    bad_turns = files["stdout"].replace('"num_turns": 2', '"num_turns": "x"')
    assert not read_context(bad_turns).ok
    assert not qwen_compare(read_context(bad_turns), guidance=False, skills=(), vanilla_skills=None)["ok"]
    empty = files["stdout"].replace('"[API Error: 429] quota"', '""')
    assert qwen_stream(empty).error == "error_during_execution"
    assert (qwen_stop(empty, files["transcript"], timed_out=False) or "").startswith("rate limited (HTTP 429)")
    o = _opencode_files()
    sid = opencode_stream(o["stdout"]).session_id or ""
    export = json.loads(o["export"])
    export["messages"] = 7
    usage = opencode_usage("".join(line + "\n" for line in o["stdout"].splitlines() if "step_finish" not in line),
                           {sid: json.dumps(export)}, timed_out=False)
    assert usage.status == "unknown" and "no readable export" in (usage.reason or "")
