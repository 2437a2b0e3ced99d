"""The harness registry: a harness is its adapter class plus one registration.

The toy harness below lives only in this file. It is registered here, and a whole
evaluation runs through it on the real engine (config validation, run creation, readiness,
the worker and Supervisor, real local sandboxes, the hidden verifier, the report) with no
file outside ``tests/`` knowing its name.

The toy is a literal-minded agent: it runs the arm's guidance as a shell script in the
workspace. Vanilla gets no guidance, so it changes nothing; the treatment's
guidance applies the fix, so it passes. Its agent script lives in a host tool folder it
declares ``readonly`` (bound read-only in the default-deny sandbox), and it prints a
credential it declares in ``secrets()``, which the engine must redact from the evidence.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pluginbench import harness_registry
from pluginbench.actors import create_run, run_worker
from pluginbench.config import load
from pluginbench.environments import bwrap_available
from pluginbench.errors import ConfigError
from pluginbench.events import Usage
from pluginbench.harness_registry import CliPin, SpecProblem, register_harness, unregister_harness
from pluginbench.harnesses import (
    AgentRun,
    AttemptContext,
    FrozenTreatment,
    HarnessBase,
    make_harness,
)
from tests._prereq import require
from tests.runs_helpers import QUICKSTART, events_of, write_config

TOY = "toy-literal"
SECRET = "toy-credential-5c1d9e0a7b"
AGENT_SCRIPT = """#!/bin/sh
# The toy agent: print the credential when it was given one (the engine must redact it),
# then run the guidance as a shell script in the workspace when the arm has any.
echo "toy agent${TOY_TOKEN:+ with credential $TOY_TOKEN}"
if [ -f "$1" ]; then
    sh "$1"
fi
"""


class ToyHarness(HarnessBase):
    """A harness declared entirely in this test file."""

    name = TOY
    summary = "test toy: runs the guidance as a shell script"
    #: set by the fixture: the host folder holding the agent script
    tool_dir: ClassVar[Path | None] = None
    #: hand the agent its credential (which it prints into its trace)
    leak: ClassVar[bool] = False

    def __init__(self) -> None:
        assert self.tool_dir is not None
        self.readonly = (self.tool_dir,)

    def secrets(self) -> list[str]:
        return [SECRET]

    @classmethod
    def spec_problem(cls, model: str | None, reasoning: str | None) -> SpecProblem | None:
        if reasoning is not None:
            return SpecProblem("the toy has no reasoning effort", "reasoning", "remove runner.reasoning")
        return None

    @classmethod
    def validate_config(cls, ev: Any, path: Path) -> None:
        if ev.capabilities.max_depth is not None:
            raise ConfigError("the toy starts no agents", file=str(path), field="capabilities.max_depth",
                              fix="remove it for runner.harness: toy-literal")

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        if treatment.is_vanilla:
            return {"guidance": None}
        folder = home / ".toy"
        folder.mkdir()
        (folder / "guidance.sh").write_bytes(b"\n".join(p.read_bytes() for p in treatment.guidance))
        return {"guidance": ".toy/guidance.sh", "files": len(treatment.guidance)}

    async def run(self, sandbox: Any, ctx: AttemptContext) -> AgentRun:
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        argv = ["sh", f"{self.tool_dir}/toy-agent.sh", f"{sandbox.paths.home.rstrip('/')}/.toy/guidance.sh"]
        await ctx.launched(argv)
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, timeout=ctx.timeout_seconds,
                                 env={**sandbox.paths.env(), "HOME": sandbox.paths.home, "TOY_TOKEN": SECRET if self.leak else "",
                                      "PATH": "/usr/local/bin:/usr/bin:/bin"},
                                 stdout_path=agent_dir / "toy.stdout.txt", stderr_path=agent_dir / "toy.stderr.txt")
        return AgentRun(exit_code=res.exit_code, timed_out=res.timed_out, coding_seconds=res.seconds,
                        usage=Usage(status="unknown", reason="toy harness: it keeps no trace to read"),
                        error=None if res.exit_code == 0 else f"toy agent exited with {res.exit_code}")


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> type[ToyHarness]:
    """The toy registered for one test (and unregistered after it)."""
    tools = tmp_path / "toy-tools"
    tools.mkdir()
    (tools / "toy-agent.sh").write_text(AGENT_SCRIPT)
    monkeypatch.setattr(ToyHarness, "tool_dir", tools)
    register_harness(ToyHarness)
    yield ToyHarness
    unregister_harness(TOY)


def _guidance(tmp: Path) -> Path:
    """The treatment's guidance: a shell script that applies the quickstart fix."""
    patch = (QUICKSTART / "tasks" / "roman-numerals" / "simulated" / "correct.patch").read_text()
    path = tmp / "literal-guidance.sh"
    path.write_text(f"git apply <<'PATCH'\n{patch}PATCH\n")
    return path


def _config(tmp: Path, **extra: Any) -> Path:
    runner = {"harness": TOY, **extra.pop("runner", {})}
    return write_config(tmp, tasks=["roman-numerals"], repeats=1, jobs=1, runner=runner,
                        treatments={"literal": {"guidance": [str(_guidance(tmp))]}}, **extra)


def test_a_registered_toy_runs_a_whole_evaluation(toy: type[ToyHarness], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A harness registered from tests runs a whole evaluation on the real engine: vanilla
    changes nothing, its guidance makes the treatment pass, and its read-only tool folder
    (under the host's temp folder, which the default-deny sandbox does not show) reaches
    the sandbox."""
    require(bwrap_available(), "bubblewrap (the default-deny local sandbox)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load(_config(tmp_path, environment={"isolation": "bubblewrap"})), tmp_path / "run")
    state = run_worker(rd.root, handle_signals=False)
    assert state.finished
    by_arm = {a.arm: a.outcome for a in state.live_attempts()}
    assert by_arm == {"vanilla": "empty", "literal": "pass"}
    events = events_of(rd.root)
    created = next(e for e in events if e["type"] == "run.created")
    assert created["harness"] == TOY and created["simulated"] is False and created["harness_version"] is None
    launches = [e for e in events if e["type"] == "agent.launched"]
    assert len(launches) == 2 and all("toy-agent.sh" in " ".join(e["argv"]) for e in launches)
    attempts = sorted((rd.root / "evidence" / "attempts").iterdir())
    receipts = [json.loads((a / "delivery.json").read_text()) for a in attempts]
    assert sorted(str(r["guidance"]) for r in receipts) == [".toy/guidance.sh", "None"]
    results = json.loads((rd.report_dir / "results.json").read_text())
    assert TOY in json.dumps(results)


def test_the_toy_declared_credential_is_redacted_and_its_attempt_not_graded(
        toy: type[ToyHarness], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The credential the toy declares in ``secrets()`` and prints is redacted from the
    evidence, and the attempt is not graded, as for the real CLIs."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(ToyHarness, "leak", True)
    config = write_config(tmp_path, tasks=["roman-numerals"], repeats=1, jobs=1, runner={"harness": TOY},
                          treatments={}, environment={"isolation": "none", "allow_unisolated": True})
    rd = create_run(load(config), tmp_path / "run")
    state = run_worker(rd.root, handle_signals=False)
    assert state.finished and [a.outcome for a in state.live_attempts()] == ["unknown"]
    missing = [e for e in events_of(rd.root) if e["type"] == "submission.missing"]
    assert len(missing) == 1 and "credential was found" in missing[0]["reason"]
    (attempt,) = (rd.root / "evidence" / "attempts").iterdir()
    trace = (attempt / "agent" / "toy.stdout.txt").read_text()
    assert "<redacted credential>" in trace and SECRET not in trace


def test_config_validation_reads_the_toy_rules(toy: type[ToyHarness], tmp_path: Path) -> None:
    """Config validation applies the registered harness's own rules (its model/effort rule
    and its other cross-field rules), naming the field."""
    with pytest.raises(ConfigError) as effort:
        load(_config(tmp_path, runner={"reasoning": "high"}))
    assert effort.value.field == "runner.reasoning" and "toy has no reasoning" in str(effort.value)
    with pytest.raises(ConfigError) as depth:
        load(_config(tmp_path, capabilities={"max_depth": 2}))
    assert depth.value.field == "capabilities.max_depth"
    assert load(_config(tmp_path)).evaluation.runner.harness == TOY


def test_an_unregistered_harness_is_a_config_error_listing_the_registered_ones(tmp_path: Path) -> None:
    """Without its registration the toy's name is refused (exit 2) with every registered name."""
    with pytest.raises(ConfigError) as info:
        load(_config(tmp_path))
    assert info.value.field == "runner.harness" and info.value.exit_code == 2
    assert all(name in str(info.value) for name in ("claude", "codex", "simulated", "nop", "oracle"))
    assert TOY not in harness_registry.harness_names()


def test_registration_refuses_a_taken_name_and_a_misnamed_lazy_adapter() -> None:
    """A taken name is refused unless replaced; a lazy 'module:Class' must be named as registered."""
    with pytest.raises(ValueError, match="already registered"):
        register_harness(ToyHarness, name="nop")
    register_harness("pluginbench.harnesses._controls:NopHarness", name="toy-misnamed")
    try:
        with pytest.raises(ValueError, match="named 'nop'"):
            harness_registry.harness_class("toy-misnamed")
    finally:
        unregister_harness("toy-misnamed")


def test_make_harness_builds_a_registered_toy(toy: type[ToyHarness]) -> None:
    """make_harness builds any registered adapter by name, with its declared members."""
    built = make_harness(TOY)
    assert isinstance(built, ToyHarness) and built.readonly == (toy.tool_dir,) and built.secrets() == [SECRET]
    assert built.cli_version is None and built.real is False


def test_every_builtin_declares_the_port_members() -> None:
    """Each built-in adapter declares what the engine reads, with no getattr fallback:
    real CLIs pin an npm package and version (Claude Code and Codex also review), controls
    have no CLI and no credentials."""
    classes = harness_registry.harness_classes()
    assert set(classes) >= {"claude", "codex", "simulated", "nop", "oracle"}
    for name, cls in classes.items():
        assert issubclass(cls, HarnessBase) and cls.name == name
        assert (cls.cli is not None) == cls.real
        if cls.cli is not None:
            assert isinstance(cls.cli, CliPin) and cls.cli.version.count(".") == 2 and cls.cli.launch_flags
            assert cls.native_receipts and cls.doctor_model
            assert cls.reviewer == (name in ("claude", "codex"))  # qwen codes but does not review
    assert [n for n, c in classes.items() if c.simulated] == ["simulated"]
    assert [n for n, c in classes.items() if c.needs_solution] == ["oracle"]


def test_install_clis_reads_the_pins_from_the_registry() -> None:
    """``tools/install-clis.sh`` installs what ``python -m pluginbench.harness_registry pins``
    prints: every registered CLI pin, one line each."""
    out = subprocess.run([sys.executable, "-m", "pluginbench.harness_registry", "pins"], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).resolve().parents[2]).stdout
    lines = [line.split() for line in out.splitlines()]
    assert lines == [[p.command, p.package, p.version] for p in harness_registry.cli_pins().values()]
    script = (Path(__file__).resolve().parents[2] / "tools" / "install-clis.sh").read_text()
    assert "pluginbench.harness_registry pins" in script
    assert all(p.version not in script for p in harness_registry.cli_pins().values())


def test_reviewer_rules_and_answer_come_from_the_registered_harness(toy: type[ToyHarness],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A harness that declares ``reviewer`` is accepted as reviewer.harness, and the review's
    answer is read from its stdout by its own ``read_final``."""
    from pluginbench.config import reviewer_spec_problem
    from pluginbench.review import final_message

    refused = reviewer_spec_problem(TOY, None, None)
    assert refused is not None and refused.field == "harness" and "simulated" in refused.fix
    monkeypatch.setattr(ToyHarness, "reviewer", True)
    monkeypatch.setattr(ToyHarness, "read_final",
                        classmethod(lambda cls, stdout: (stdout.strip().splitlines()[-1], [])))
    assert reviewer_spec_problem(TOY, None, None) is None
    assert final_message(TOY, "thinking\n{\"findings\": []}\n") == '{"findings": []}'


def test_the_capability_record_is_the_registered_harness_policy(toy: type[ToyHarness],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's and report's capability record comes from the harness's own
    ``capability_policy``: not applicable by default, whatever the toy declares otherwise."""
    from pluginbench.config import (
        ENFORCED,
        NOT_ENFORCED,
        Capabilities,
        capability_entry,
        capability_record,
    )

    caps = Capabilities(subagents=False, max_threads=2)
    assert {v["enforcement"] for k, v in capability_record(TOY, caps).items() if k != "not_enforced"} == {
        "not_applicable"}
    monkeypatch.setattr(ToyHarness, "capability_policy", classmethod(lambda cls, c: {
        "subagents": capability_entry(c.subagents, ENFORCED, "toy agents off"),
        "max_threads": capability_entry(c.max_threads, NOT_ENFORCED, "the toy cannot count")}))
    record = capability_record(TOY, caps)
    assert record["subagents"] == {"value": False, "enforcement": ENFORCED, "how": "toy agents off"}
    assert record["not_enforced"] == ["max_threads"]
