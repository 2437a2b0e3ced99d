#!/usr/bin/env python3
"""The simulated coding agent: a deterministic, model-free stand-in for Claude Code.

This file is copied into the sandbox and run there with whatever ``python3`` the
sandbox has, so it uses the standard library only and runs on Python 3.8 or newer
(no ``match``, no ``X | Y`` at runtime, no ``tomllib`` unless present).

Contract (read by :mod:`pluginbench.harnesses._simulated`):

* stdin is the task prompt; the working directory is the task workspace (a git repo).
* ``CLAUDE_CONFIG_DIR`` is the private config dir. Guidance is found exactly where
  Claude Code finds it: ``$CLAUDE_CONFIG_DIR/CLAUDE.md`` (user memory), ``CLAUDE.md``
  (or, without it, ``AGENTS.md``) in the working directory, skills in
  ``$CLAUDE_CONFIG_DIR/skills/<name>/SKILL.md`` and ``.claude/skills/<name>/SKILL.md``,
  and plugins copied under ``$CLAUDE_CONFIG_DIR/plugins/local/<name>/`` (their skills,
  commands and agents).
* ``PLUGINBENCH_SIM_SEED`` (an integer) fixes every random choice;
  ``PLUGINBENCH_SIM_TASK`` names the folder with ``candidates.json`` (or
  ``candidates.toml``) and the candidate patches, default ``task/`` beside this file;
  ``PLUGINBENCH_SIM_MODEL`` names the model in the trace (default ``simulated-1``).
* The agent is "guided" when any of the task's ``keywords`` occurs (case-insensitive)
  in the guidance it found. It picks one candidate with probability proportional to
  ``weight`` (or ``guided_weight`` when guided), applies its patch with ``git apply``
  and prints a Claude Code-shaped stream-json trace on stdout, ending with a ``result``
  line whose token usage is a deterministic function of the prompt, the guidance, the
  patch and the seed. Exit code 0, or 1 when the patch did not apply.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any, TextIO

DEFAULT_MODEL = "simulated-1"
DEFAULT_TEST_COMMAND = "python3 -m unittest discover -s tests"
SYSTEM_PROMPT_TOKENS = 3200  # built-in system prompt and tool definitions of a real CLI
CONTEXT_WINDOW = 200000
_TOOL_OUTPUT_LIMIT = 4000


# ------------------------------------------------------------------ guidance discovery


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _subdirs(path: str) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(path) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _md_files(path: str) -> list[str]:
    try:
        return sorted(
            e.name
            for e in os.scandir(path)
            if e.is_file(follow_symlinks=False) and e.name.endswith(".md")
        )
    except OSError:
        return []


def _skills_in(folder: str, prefix: str = "") -> list[tuple[str, str]]:
    """(name, text) for every ``<folder>/<name>/SKILL.md``."""
    found: list[tuple[str, str]] = []
    for name in _subdirs(folder):
        text = _read(os.path.join(folder, name, "SKILL.md"))
        if text is not None:
            found.append((prefix + name, text))
    return found


def _plugin_name(folder: str) -> str:
    text = _read(os.path.join(folder, ".claude-plugin", "plugin.json"))
    if text:
        try:
            name = json.loads(text).get("name")
            if isinstance(name, str) and name:
                return name
        except (ValueError, AttributeError):
            pass
    return os.path.basename(folder)


def discover(config_dir: str, cwd: str) -> dict[str, Any]:
    """What a Claude Code session started in ``cwd`` with ``config_dir`` would load.

    Returns a dict: ``memory`` (paths of instruction files read), ``skills`` (names),
    ``plugins`` ([{name, path}]) and ``text`` (every loaded text, joined).
    """
    texts: list[str] = []
    memory: list[str] = []
    if config_dir:
        path = os.path.join(config_dir, "CLAUDE.md")
        text = _read(path)
        if text is not None:
            memory.append(path)
            texts.append(text)
    for name in ("CLAUDE.md", "AGENTS.md"):
        # AGENTS.md counts only without a project CLAUDE.md, as in Claude Code.
        path = os.path.join(cwd, name)
        text = _read(path)
        if text is not None:
            memory.append(path)
            texts.append(text)
            break
    skills: list[tuple[str, str]] = []
    if config_dir:
        skills += _skills_in(os.path.join(config_dir, "skills"))
    skills += _skills_in(os.path.join(cwd, ".claude", "skills"))
    plugins: list[dict[str, str]] = []
    if config_dir:
        root = os.path.join(config_dir, "plugins", "local")
        for folder_name in _subdirs(root):
            folder = os.path.join(root, folder_name)
            name = _plugin_name(folder)
            plugins.append({"name": name, "path": folder})
            skills += _skills_in(os.path.join(folder, "skills"), prefix=name + ":")
            for kind in ("commands", "agents"):
                for md in _md_files(os.path.join(folder, kind)):
                    text = _read(os.path.join(folder, kind, md))
                    if text is not None:
                        texts.append(text)
    texts += [text for _, text in skills]
    return {
        "memory": memory,
        "skills": [name for name, _ in skills],
        "plugins": plugins,
        "text": "\n\n".join(texts),
    }


def is_guided(text: str, keywords: list[str]) -> bool:
    """Whether any keyword occurs in ``text``, ignoring case."""
    folded = text.casefold()
    return any(k.casefold() in folded for k in keywords if k)


# ------------------------------------------------------------------ candidates


def load_plan(task_dir: str) -> dict[str, Any]:
    """The task's candidates: ``candidates.json`` (written by the harness) or ``.toml``."""
    text = _read(os.path.join(task_dir, "candidates.json"))
    if text is not None:
        plan: dict[str, Any] = json.loads(text)
        return plan
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        raise SystemExit(
            "simulated agent: no candidates.json and no tomllib to read candidates.toml"
        ) from None
    with open(os.path.join(task_dir, "candidates.toml"), "rb") as fh:
        return tomllib.load(fh)


def choose(candidates: list[dict[str, Any]], guided: bool, seed: int) -> int:
    """Index of the candidate drawn with ``random.Random(seed)``.

    Weights are ``guided_weight`` when ``guided`` else ``weight``. The draw is one
    ``random()`` call against cumulative weights, which is stable across Python
    versions for integer seeds.
    """
    key = "guided_weight" if guided else "weight"
    weights = [float(c.get(key, 0)) for c in candidates]
    total = sum(weights)
    if not candidates or total <= 0:
        raise ValueError("no candidate has a positive " + key)
    point = random.Random(seed).random() * total
    running = 0.0
    for i, w in enumerate(weights):
        running += w
        if point < running:
            return i
    return max(i for i, w in enumerate(weights) if w > 0)


def _ceil_tokens(text: str) -> int:
    return int(math.ceil(len(text.encode("utf-8")) / 4.0))


def token_usage(prompt: str, guidance: str, patch: str, seed: int, requests: int) -> dict[str, int]:
    """Deterministic usage for one session of ``requests`` model calls.

    The built-in prompt and the guidance are cached once and read back on every later
    call; the prompt is uncached input; output grows with the patch.
    """
    noise = random.Random(f"tokens:{seed}")
    context = SYSTEM_PROMPT_TOKENS + _ceil_tokens(guidance)
    cache_creation = context + noise.randint(0, 200)
    cache_read = (requests - 1) * context + requests * noise.randint(0, 400)
    uncached = _ceil_tokens(prompt) + 120 * requests + noise.randint(0, 100)
    output = 90 * requests + 2 * _ceil_tokens(patch) + noise.randint(0, 80)
    return {
        "input_tokens": uncached,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
        "output_tokens": output,
    }


# ------------------------------------------------------------------ patches


def patch_edits(patch: str) -> list[tuple[str, str, str, str]]:
    """Edits a patch makes, as Claude Code tool calls: ("Edit"|"Write"|"Delete", path, old, new)."""
    edits: list[tuple[str, str, str, str]] = []
    path: str | None = None
    new_file = deleted = False
    old: list[str] = []
    new: list[str] = []
    in_hunk = False

    def flush() -> None:
        if path is not None and in_hunk and (old or new):
            if new_file:
                edits.append(("Write", path, "", "".join(new)))
            elif deleted:
                edits.append(("Delete", path, "".join(old), ""))
            else:
                edits.append(("Edit", path, "".join(old), "".join(new)))

    for line in patch.splitlines(True):
        if line.startswith("diff --git "):
            flush()
            path, new_file, deleted, old, new, in_hunk = None, False, False, [], [], False
            parts = line.split()
            if len(parts) >= 4 and parts[3].startswith("b/"):
                path = parts[3][2:]
        elif not in_hunk and line.startswith("new file mode"):
            new_file = True
        elif not in_hunk and line.startswith("deleted file mode"):
            deleted = True
        elif line.startswith("@@"):
            if in_hunk and not new_file and not deleted:
                flush()
                old, new = [], []
            in_hunk = True
        elif in_hunk and line[:1] in (" ", "-", "+"):
            if line[0] in (" ", "-"):
                old.append(line[1:])
            if line[0] in (" ", "+"):
                new.append(line[1:])
    flush()
    return edits


# ------------------------------------------------------------------ the trace


class Trace:
    """Writes Claude Code stream-json events to stdout, one JSON object a line."""

    def __init__(self, model: str, session_id: str, rng: random.Random, out: TextIO | None = None) -> None:
        self.model = model
        self.session_id = session_id
        self.rng = rng
        self.out = out or sys.stdout
        self.requests = 0
        self.turns = 1  # the prompt is the first user message

    def emit(self, event: dict[str, Any]) -> None:
        event.setdefault("session_id", self.session_id)
        event.setdefault("uuid", str(uuid.UUID(int=self.rng.getrandbits(128), version=4)))
        self.out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.out.flush()

    def assistant(self, blocks: list[dict[str, Any]]) -> None:
        """One model call answering with ``blocks``, one line per content block."""
        self.requests += 1
        time.sleep(0.01 + 0.03 * self.rng.random())  # a model call takes time
        msg_id = f"msg_sim_{self.rng.getrandbits(96):024x}"
        for block in blocks:
            self.emit(
                {
                    "type": "assistant",
                    "message": {
                        "id": msg_id,
                        "type": "message",
                        "role": "assistant",
                        "model": self.model,
                        "content": [block],
                        "stop_reason": None,
                        "stop_sequence": None,
                    },
                    "parent_tool_use_id": None,
                }
            )

    def tool(self, name: str, tool_input: dict[str, Any], run: Callable[[], tuple[str, bool]]) -> bool:
        """A tool call, its execution (``run`` returns (text, is_error)) and its result."""
        tool_id = f"toolu_sim_{self.rng.getrandbits(80):020x}"
        self.assistant([{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}])
        text, is_error = run()
        self.turns += 1
        self.emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_id,
                            "type": "tool_result",
                            "content": text,
                            "is_error": is_error,
                        }
                    ],
                },
                "parent_tool_use_id": None,
            }
        )
        return not is_error


def _done(text: str) -> tuple[str, bool]:
    """A tool run that succeeded with ``text``."""
    return text, False


def _run_shell(command: str, cwd: str) -> tuple[str, bool]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run(
            ["sh", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, start_new_session=True,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc), True
    text = done.stdout.decode("utf-8", "replace")[-_TOOL_OUTPUT_LIMIT:]
    return text, done.returncode != 0


def _apply(patch_path: str, cwd: str) -> tuple[str, bool]:
    try:
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", patch_path], cwd=cwd,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        return str(exc), False
    return done.stdout.decode("utf-8", "replace"), done.returncode == 0


GENERATE_SECONDS = 1.0  # a generating session reads the repository for a while
WRITE_NOTHING = "[simulated: write nothing]"


def generate(writes: str, prompt: str, seed: int, model: str) -> int:
    """A guidance-generating session (``PLUGINBENCH_SIM_WRITES``): list the repository, read its
    README, write ``writes`` at the repository root (its files, and the README's first lines),
    and print the trace with a ``result`` line whose usage is a deterministic function of the
    prompt and what it wrote. A prompt holding ``WRITE_NOTHING`` makes it write nothing and exit 1
    (how pipeline tests get a failed generation)."""
    cwd = os.getcwd()
    rng = random.Random(f"generate:{seed}")
    session_id = str(uuid.UUID(hashlib.sha256(f"generate:{seed}".encode()).hexdigest()[:32], version=4))
    trace = Trace(model, session_id, rng)
    trace.emit({"type": "system", "subtype": "init", "cwd": cwd, "tools": ["Bash", "Read", "Write"],
                "mcp_servers": [], "model": model, "permissionMode": "bypassPermissions", "slash_commands": [],
                "apiKeySource": "none", "claude_code_version": "simulated", "output_style": "default",
                "agents": [], "skills": [], "plugins": []})
    names = sorted(n for n in os.listdir(cwd) if n != ".git")
    trace.tool("Bash", {"command": "ls", "description": "List the repository"}, lambda: ("\n".join(names), False))
    readme = _read(os.path.join(cwd, "README.md")) or ""
    time.sleep(GENERATE_SECONDS)
    failing = WRITE_NOTHING in prompt
    content = ""
    if not failing:
        lines = [ln for ln in readme.splitlines() if ln.strip()][:5]
        content = ("# Guide to this repository\n\n(written by the simulated agent)\n\nFiles at the root: "
                   + ", ".join(names) + "\n" + ("\nFrom the README:\n\n" + "\n".join(lines) + "\n" if lines else ""))
        path = os.path.join(cwd, writes)
        trace.tool("Write", {"file_path": path, "content": content},
                   functools.partial(_done, "File created successfully at: " + path))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
    summary = f"Wrote {writes}." if not failing else f"I could not write {writes}."
    trace.assistant([{"type": "text", "text": summary}])
    usage = token_usage(prompt, "", content, seed, trace.requests)
    trace.emit({
        "type": "result", "subtype": "success" if not failing else "error_during_execution", "is_error": failing,
        "duration_ms": int(GENERATE_SECONDS * 1000), "duration_api_ms": 0, "num_turns": trace.turns,
        "result": summary, "stop_reason": "end_turn", "terminal_reason": "completed", "total_cost_usd": 0,
        "usage": dict(usage, output_tokens_details={"thinking_tokens": 0}, service_tier="simulated"),
        "modelUsage": {model: {"inputTokens": usage["input_tokens"], "outputTokens": usage["output_tokens"],
                               "cacheReadInputTokens": usage["cache_read_input_tokens"],
                               "cacheCreationInputTokens": usage["cache_creation_input_tokens"],
                               "webSearchRequests": 0, "costUSD": 0, "contextWindow": CONTEXT_WINDOW,
                               "maxOutputTokens": 32000, "thinkingTokens": 0}},
        "permission_denials": [], "api_error_status": None,
    })
    return 1 if failing else 0


def main() -> int:
    seed = int(os.environ.get("PLUGINBENCH_SIM_SEED", "0"))
    model = os.environ.get("PLUGINBENCH_SIM_MODEL") or DEFAULT_MODEL
    here = os.path.dirname(os.path.abspath(__file__))
    task_dir = os.environ.get("PLUGINBENCH_SIM_TASK") or os.path.join(here, "task")
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR", "")
    cwd = os.getcwd()
    prompt = sys.stdin.read()
    started = time.monotonic()
    writes = os.environ.get("PLUGINBENCH_SIM_WRITES")
    if writes:
        return generate(writes, prompt, seed, model)

    plan = load_plan(task_dir)
    candidates = list(plan.get("candidates") or [])
    keywords = [str(k) for k in plan.get("keywords") or []]
    test_command = str(plan.get("test_command") or DEFAULT_TEST_COMMAND)
    found = discover(config_dir, cwd)
    guided = is_guided(found["text"], keywords)
    picked = candidates[choose(candidates, guided, seed)]
    patch_name = str(picked.get("patch") or "")
    patch = _read(os.path.join(task_dir, patch_name)) if patch_name else ""
    if patch is None:
        raise SystemExit(f"simulated agent: candidate patch {patch_name!r} is missing")

    rng = random.Random(f"trace:{seed}")
    session_id = str(
        uuid.UUID(hashlib.sha256(f"session:{seed}".encode()).hexdigest()[:32], version=4)
    )
    trace = Trace(model, session_id, rng)
    trace.emit(
        {
            "type": "system",
            "subtype": "init",
            "cwd": cwd,
            "tools": ["Bash", "Edit", "Read", "Write"],
            "mcp_servers": [],
            "model": model,
            "permissionMode": "bypassPermissions",
            "slash_commands": list(found["skills"]),
            "apiKeySource": "none",
            "claude_code_version": "simulated",
            "output_style": "default",
            "agents": [],
            "skills": list(found["skills"]),
            "plugins": [
                {"name": p["name"], "path": p["path"], "source": p["name"] + "@pluginbench-local"}
                for p in found["plugins"]
            ],
            "memory_paths": {"auto": os.path.join(config_dir or cwd, "memory") + os.sep},
        }
    )
    trace.assistant(
        [{"type": "text", "text": "I'll run the existing tests first to see where things stand."}]
    )
    trace.tool("Bash", {"command": test_command, "description": "Run the test suite"},
               lambda: _run_shell(test_command, cwd))  # fmt: skip

    ok = True
    if patch:
        for kind, path, old, new in patch_edits(patch):
            file_path = os.path.join(cwd, path)
            tool_input: dict[str, Any]
            if kind == "Write":
                tool_input = {"file_path": file_path, "content": new}
                done_text = "File created successfully at: " + file_path
            elif kind == "Delete":
                tool_input = {"command": "rm " + path, "description": "Delete " + path}
                done_text = ""
                kind = "Bash"
            else:
                tool_input = {
                    "file_path": file_path,
                    "old_string": old,
                    "new_string": new,
                    "replace_all": False,
                }
                done_text = f"The file {file_path} has been updated successfully."
            trace.tool(kind, tool_input, functools.partial(_done, done_text))
        output, ok = _apply(os.path.join(task_dir, patch_name), cwd)
        if not ok:
            trace.tool("Bash", {"command": "git status --short", "description": "Check the edits"},
                       lambda: ("error: the edits did not apply\n" + output, True))  # fmt: skip
        # Guided agents always re-run the suite; unguided ones do about half the time.
        elif guided or rng.random() < 0.5:
            trace.tool("Bash", {"command": test_command, "description": "Run the test suite again"},
                       lambda: _run_shell(test_command, cwd))  # fmt: skip
        summary = "Done: " + str(picked.get("summary") or "applied a fix") + "."
    else:
        summary = "I could not find a change I am confident in, so I left the code as it is."
    if not ok:
        summary = "I could not apply my change."
    trace.assistant([{"type": "text", "text": summary}])

    usage = token_usage(prompt, found["text"], patch, seed, trace.requests)
    model_usage = {
        model: {
            "inputTokens": usage["input_tokens"],
            "outputTokens": usage["output_tokens"],
            "cacheReadInputTokens": usage["cache_read_input_tokens"],
            "cacheCreationInputTokens": usage["cache_creation_input_tokens"],
            "webSearchRequests": 0,
            "costUSD": 0,
            "contextWindow": CONTEXT_WINDOW,
            "maxOutputTokens": 32000,
            "thinkingTokens": 0,
        }
    }
    trace.emit(
        {
            "type": "result",
            "subtype": "success" if ok else "error_during_execution",
            "is_error": not ok,
            "duration_ms": int((time.monotonic() - started) * 1000),
            "duration_api_ms": 0,
            "num_turns": trace.turns,
            "result": summary,
            "stop_reason": "end_turn",
            "terminal_reason": "completed",
            "total_cost_usd": 0,
            "usage": dict(
                usage, output_tokens_details={"thinking_tokens": 0}, service_tier="simulated"
            ),
            "modelUsage": model_usage,
            "permission_denials": [],
            "api_error_status": None,
            # Not a Claude Code field: what the stand-in decided, for the evidence.
            "pluginbench_simulated": {
                "seed": seed,
                "guided": guided,
                "candidate": picked.get("name"),
                "memory_files": found["memory"],
                "skills": found["skills"],
                "plugins": [p["name"] for p in found["plugins"]],
                "requests": trace.requests,
            },
        }
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
