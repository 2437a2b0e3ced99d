"""The ``simulated`` control: a deterministic, seeded stand-in for a coding agent.

It needs no model, account or network, so the quickstart (``pluginbench demo``) and
the pipeline tests run anywhere; every report that contains it must say so. It behaves
like Claude Code where that matters to the pipeline:

* :meth:`SimulatedHarness.deliver` writes the treatment where Claude Code finds it in
  a private config dir (``CLAUDE_CONFIG_DIR=<home>/.claude``): ``CLAUDE.md``,
  ``skills/<name>/`` and ``plugins/local/<name>/``. Vanilla gets nothing.
* :meth:`SimulatedHarness.run` copies the stdlib-only agent script
  (:mod:`._simulated_agent`) and the task's ``simulated/`` folder into the sandbox home
  and runs it on the prompt. The agent reads the delivered guidance itself, picks a
  scripted candidate patch (``simulated/candidates.toml``; guided weights when the
  guidance mentions a task keyword), applies it, and prints a stream-json trace.
* Token usage comes from that trace's ``result`` line, exactly as for Claude Code; a
  missing or garbled line gives usage ``unknown`` with a reason, never zeros.
"""

import hashlib
import json
import math
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from .._parsing import file_tail
from ..environments import Sandbox
from ..errors import TaskError, TreatmentError
from ..events import Usage
from ..tasks import copy_tree, scan_tree, utf8_position
from ..treatments import GUIDANCE_SEPARATOR
from ._port import AgentRun, AttemptContext, FrozenTreatment, HarnessBase
from ._simulated_agent import DEFAULT_MODEL

AGENT_SCRIPT = Path(__file__).with_name("_simulated_agent.py")
SIM_FOLDER = ".pluginbench-sim"  # inside the sandbox home
CONFIG_FOLDER = ".claude"
PLUGINS_FOLDER = "plugins/local"


# ------------------------------------------------------------------ delivery


def _plugin_name(folder: Path) -> str:
    """The name in ``.claude-plugin/plugin.json``, else the folder's name."""
    manifest = folder / ".claude-plugin" / "plugin.json"
    try:
        name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else folder.name


def deliver_claude_layout(treatment: FrozenTreatment, home: Path) -> dict[str, object]:
    """Write ``treatment`` into ``home/.claude`` as Claude Code reads a config dir.

    ``CLAUDE.md`` is every guidance file joined by a blank line (none for vanilla);
    skills are copied to ``skills/<folder name>/`` and plugins to
    ``plugins/local/<plugin name>/``. Returns the receipt: paths relative to ``home``.
    Raises :class:`TreatmentError` when two skills or two plugins share a name.
    """
    config = home / CONFIG_FOLDER
    config.mkdir(parents=True, exist_ok=True)
    memory_file: str | None = None
    if treatment.guidance:
        parts = [Path(p).read_bytes() for p in treatment.guidance]
        (config / "CLAUDE.md").write_bytes(GUIDANCE_SEPARATOR.join(parts))
        memory_file = f"{CONFIG_FOLDER}/CLAUDE.md"
    skills: list[str] = []
    for src in treatment.skills:
        name = Path(src).name
        if name in skills:
            raise TreatmentError(
                f"two skills are named '{name}'",
                file=str(src),
                field="skills",
                fix="rename one skill folder",
            )
        dest = config / "skills" / name
        copy_tree(Path(src), dest, scan_tree(Path(src), context="the skill", error=TreatmentError))
        skills.append(name)
    plugins: list[str] = []
    for src in treatment.plugins:
        name = _plugin_name(Path(src))
        if name in plugins:
            raise TreatmentError(
                f"two plugins are named '{name}'",
                file=str(src),
                field="plugins",
                fix="declare each plugin once",
            )
        dest = config / PLUGINS_FOLDER / name
        copy_tree(Path(src), dest, scan_tree(Path(src), context="the plugin", error=TreatmentError))
        plugins.append(name)
    return {
        "config_dir": CONFIG_FOLDER,
        "memory_file": memory_file,
        "skills": sorted(skills),
        "plugins": sorted(plugins),
    }


# ------------------------------------------------------------------ candidates


class Candidate(NamedTuple):
    name: str
    patch: str  # file name inside simulated/, "" for no change
    weight: float
    guided_weight: float
    expect: str | None  # "pass" | "fail" | None: what the hidden verifier should say
    summary: str


class SimPlan(NamedTuple):
    """A task's scripted behaviour (``simulated/candidates.toml``)."""

    keywords: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    test_command: str | None = None

    def to_json(self) -> bytes:
        """The plan as the agent script reads it (``candidates.json``)."""
        data: dict[str, Any] = {
            "keywords": list(self.keywords),
            "candidates": [c._asdict() for c in self.candidates],
        }
        if self.test_command:
            data["test_command"] = self.test_command
        return json.dumps(data, indent=2, sort_keys=True).encode()


def _weight(value: object, file: Path, field: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise TaskError(
            f"{field} must be a number >= 0", file=str(file), field=field, fix="use e.g. weight = 1"
        )
    return float(value)


def load_plan(folder: Path) -> SimPlan:
    """Read and check ``folder/candidates.toml``. Raises :class:`TaskError`."""
    path = folder / "candidates.toml"
    try:
        content = path.read_bytes()
        data = tomllib.loads(content.decode("utf-8"))
    except UnicodeDecodeError as exc:
        where = utf8_position(content, exc)
        raise TaskError(f"candidates.toml is not UTF-8 text at {where}", file=str(path), field=where,
                        fix="save it as UTF-8") from None
    except FileNotFoundError:
        raise TaskError(
            "the task has no simulated/candidates.toml",
            file=str(path),
            fix="the simulated harness needs scripted candidates; use a task that has them",
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(
            f"candidates.toml does not parse: {exc}", file=str(path), field="candidates.toml", fix="fix the TOML"
        ) from None
    keywords = data.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) and k for k in keywords):
        raise TaskError(
            "keywords must be a list of strings",
            file=str(path),
            field="keywords",
            fix='keywords = ["test"]',
        )
    raw = data.get("candidates")
    if not isinstance(raw, list) or not raw:
        raise TaskError(
            "no [[candidates]]", file=str(path), field="candidates", fix="add [[candidates]] tables"
        )
    candidates: list[Candidate] = []
    for i, item in enumerate(raw):
        where = f"candidates[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise TaskError(
                "a candidate needs a name", file=str(path), field=where, fix='name = "correct"'
            )
        patch = item.get("patch", "")
        if not isinstance(patch, str) or "/" in patch or "\\" in patch or patch in (".", ".."):
            raise TaskError("patch must be a file name in simulated/", file=str(path), field=f"{where}.patch",
                            fix='patch = "correct.patch", or "" for no change')  # fmt: skip
        if patch and not (folder / patch).is_file():
            raise TaskError(f"patch file '{patch}' is missing", file=str(folder / patch), field=f"{where}.patch",
                            fix="add the patch file or fix its name")  # fmt: skip
        expect = item.get("expect")
        if expect not in (None, "pass", "fail"):
            raise TaskError(
                "expect must be pass or fail",
                file=str(path),
                field=f"{where}.expect",
                fix='expect = "pass"',
            )
        candidates.append(
            Candidate(
                name=item["name"],
                patch=patch,
                weight=_weight(item.get("weight", 0), path, f"{where}.weight"),
                guided_weight=_weight(
                    item.get("guided_weight", item.get("weight", 0)), path, f"{where}.guided_weight"
                ),
                expect=expect,
                summary=str(item.get("summary", "")),
            )
        )
    for key in ("weight", "guided_weight"):
        if not any(getattr(c, key) > 0 for c in candidates):
            raise TaskError(f"no candidate has a positive {key}", file=str(path), field="candidates",
                            fix=f"give at least one candidate {key} > 0")  # fmt: skip
    command = data.get("test_command")
    return SimPlan(
        tuple(keywords), tuple(candidates), command if isinstance(command, str) else None
    )


def sim_seed(seed: int, attempt_id: str) -> int:
    """The agent's seed: a 63-bit integer from SHA-256 of the run seed and attempt id."""
    digest = hashlib.sha256(f"pluginbench-sim:{seed}:{attempt_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# ------------------------------------------------------------------ the trace


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_from_stream(text: str) -> Usage:
    """Token usage from the last ``result`` line of a Claude Code-shaped stream.

    ``input_tokens`` is uncached + cache read + cache creation; cached is the cache
    read. A missing, garbled or incomplete result line gives ``unknown`` with a reason.
    """
    result: dict[str, Any] | None = None
    garbled = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            garbled += 1
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            result = event
    if result is None:
        why = "the trace has no result line"
        return Usage(
            status="unknown", reason=why + (f" ({garbled} unreadable lines)" if garbled else "")
        )
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return Usage(status="unknown", reason="the result line has no usage object")
    keys = (
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    )
    counts = {k: _count(usage.get(k)) for k in keys}
    missing = [k for k, v in counts.items() if v is None]
    if missing:
        return Usage(
            status="unknown", reason="the result usage lacks a valid " + ", ".join(missing)
        )
    uncached, cache_read, cache_creation, output = (counts[k] or 0 for k in keys)
    total_input = uncached + cache_read + cache_creation
    details = usage.get("output_tokens_details")
    reasoning = _count(details.get("thinking_tokens")) if isinstance(details, dict) else None
    return Usage(
        status="exact",
        input_tokens=total_input,
        cached_input_tokens=cache_read,
        uncached_input_tokens=total_input - cache_read,
        output_tokens=output,
        reasoning_output_tokens=reasoning,
        total_tokens=total_input + output,
    )


def _result_error(text: str) -> str | None:
    """The ``result`` text of an error result line, if any."""
    for line in reversed(text.splitlines()):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            return (
                str(event.get("result") or event.get("subtype")) if event.get("is_error") else None
            )
    return None


def _tail(path: Path, limit: int = 500) -> str | None:
    """The last ``limit`` characters of a text file, or None when empty or absent."""
    return file_tail(path).strip()[-limit:] or None


# ------------------------------------------------------------------ the harness


class SimulatedHarness(HarnessBase):
    """The deterministic stand-in agent (see the module docstring)."""

    name = "simulated"
    instruction_file = "CLAUDE.md"
    summary = "deterministic stand-in agent for demos and pipeline tests (labelled SIMULATED)"
    simulated = True
    reviewer = True
    delivery_policy = "simulated-claude-layout-v1"

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        return {"argv": ["<python>", "<agent>"]}

    @classmethod
    def check_task(cls, task_id: str, folder: Path) -> None:
        """Each task carries the candidate patches the stand-in chooses from."""
        if not (folder / "simulated" / "candidates.toml").is_file():
            raise TaskError(
                f"task '{task_id}' has no simulated/candidates.toml for the simulated harness",
                file=str(folder / "simulated" / "candidates.toml"), field="runner.harness",
                fix="add candidate patches (see docs/tasks.md) or use another harness",
            )
        load_plan(folder / "simulated")  # its errors are the task's, found by check, not mid-run

    def __init__(self, python: str = "python3") -> None:
        self.python = python

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the treatment into ``home/.claude``; return the receipt."""
        return deliver_claude_layout(treatment, home)

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Run the agent script on ``ctx.task.instruction`` in the sandbox workspace.

        Evidence goes to ``ctx.attempt_dir/agent/``: ``stdout.jsonl`` (the trace),
        ``stderr.txt`` and ``candidates.json`` (the plan the agent chose from).
        """
        plan = load_plan(ctx.task.root / "simulated")
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "candidates.json").write_bytes(plan.to_json())
        home = sandbox.paths.home.rstrip("/")
        sim = f"{home}/{SIM_FOLDER}"
        with tempfile.TemporaryDirectory(prefix="pluginbench-sim-") as tmp:
            staging = Path(tmp) / "sim"
            task_dir = staging / "task"
            task_dir.mkdir(parents=True)
            shutil.copyfile(AGENT_SCRIPT, staging / "agent.py")
            for candidate in plan.candidates:
                if candidate.patch:
                    shutil.copyfile(
                        ctx.task.root / "simulated" / candidate.patch, task_dir / candidate.patch
                    )
            (task_dir / "candidates.json").write_bytes(plan.to_json())
            await sandbox.put(staging, sim)
        argv = [self.python, f"{sim}/agent.py"]
        env = {
            "CLAUDE_CONFIG_DIR": f"{home}/{CONFIG_FOLDER}",
            "PLUGINBENCH_SIM_SEED": str(sim_seed(ctx.seed, ctx.attempt_id)),
            "PLUGINBENCH_SIM_MODEL": ctx.model or DEFAULT_MODEL,
            "PLUGINBENCH_SIM_TASK": f"{sim}/task",
            **({"PLUGINBENCH_SIM_WRITES": ctx.writes} if ctx.writes else {}),
        }
        stdout_path = agent_dir / "stdout.jsonl"
        await ctx.launched(argv)
        res = await sandbox.exec(
            argv,
            cwd=sandbox.paths.app,
            env=env,
            timeout=ctx.timeout_seconds,
            stdout_path=stdout_path,
            stderr_path=agent_dir / "stderr.txt",
            stdin=ctx.task.instruction.encode(),
        )
        ctx.ran(res.seconds)
        text = (
            stdout_path.read_text(encoding="utf-8", errors="replace")
            if stdout_path.exists()
            else ""
        )
        usage = usage_from_stream(text)
        if res.timed_out and usage.status == "unknown":
            usage = Usage(
                status="unknown",
                reason=f"the agent timed out after {ctx.timeout_seconds:g}s; {usage.reason}",
            )
        error: str | None = None
        if res.timed_out:
            error = f"timed out after {ctx.timeout_seconds:g}s"
        elif res.exit_code != 0:
            error = (
                _result_error(text)
                or _tail(agent_dir / "stderr.txt")
                or f"the simulated agent exited with {res.exit_code}"
            )
        return AgentRun(
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            coding_seconds=res.seconds,
            usage=usage,
            error=error,
        )
