"""Credentials never survive in saved evidence or the graded workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.actors._pipeline import code_attempt
from pluginbench.environments import LocalEnvironment
from pluginbench.harnesses import FrozenTreatment, NopHarness
from pluginbench.harnesses._port import NO_MODEL_USAGE, AgentRun
from pluginbench.tasks import load_task

TOKEN = "sk-test-credential-0123456789abcdef"
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"


class LeakyHarness(NopHarness):
    """A stand-in agent (engine logic under test, not an agent) that leaks its credential."""

    def secrets(self) -> list[str]:
        return [TOKEN]

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["leak"])
        (ctx.attempt_dir / "agent" / "stdout.jsonl").write_text(f'{{"echo": "{TOKEN}"}}\n')
        await sandbox.exec(["sh", "-c", f"echo {TOKEN} > leaked.txt"])
        return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE)


@pytest.mark.anyio
async def test_a_leaked_credential_is_redacted_and_the_attempt_not_graded(tmp_path: Path) -> None:
    """The token is redacted from evidence, the export is deleted, and no patch is made."""
    task = load_task(TASKS / "add-numbers", "add-numbers")

    async def launched(argv: object) -> None:
        return None

    attempt = tmp_path / "attempt"
    result = await code_attempt(
        environment=LocalEnvironment(isolation="none"), harness=LeakyHarness(), run_id="r", attempt_id="a",
        task=task, starting_source=task.workspace_dir, treatment=FrozenTreatment("vanilla", None, (), (), (), "0"),
        attempt_dir=attempt, model=None, reasoning=None, seed=0, timeout=30, hidden=(), launched=launched,
    )
    assert result.patch is None
    assert result.capture_error and "leaked.txt" in result.capture_error and "agent/stdout.jsonl" in result.capture_error
    assert not (attempt / "export").exists()
    for path in attempt.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert b"<redacted credential>" in (attempt / "agent" / "stdout.jsonl").read_bytes()


# -- encoded forms, every exit path, grading output, discarded evidence ---------------------

import base64  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
from urllib.parse import quote  # noqa: E402

from pluginbench.actors._pipeline import grade_patch, scrub_attempt  # noqa: E402
from pluginbench.harnesses import REDACTED, redact_secrets, scan_for_secrets  # noqa: E402

#: a token with characters that URL-encoding changes
ODD = "sk-ant-api03-Ab+/C=d_e~f.0123456789xyz"


def _encoded_copies(secret: str) -> dict[str, bytes]:
    raw = secret.encode()
    out = {}
    for k, pre in enumerate((b"", b"x", b"xy")):
        out[f"b64-{k}"] = b"prefix " + base64.b64encode(pre + raw + b"tail") + b" suffix"
        out[f"b64url-{k}"] = base64.urlsafe_b64encode(pre + raw).rstrip(b"=")
    out["hex"] = b"h=" + raw.hex().encode()
    out["HEX"] = raw.hex().upper().encode() + b"\n"
    out["url"] = b"?t=" + quote(secret, safe="").encode()
    out["url-lower"] = b"?t=" + re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")).encode()
    out["literal"] = b"x" + raw + b"y"
    return out


def test_every_encoded_form_is_found_and_redacted(tmp_path: Path) -> None:
    """base64 and base64url in each alignment, hex in both cases and URL-encoding of the token are found
    in files and redacted, and no copy decodes back to the token afterwards."""
    for name, data in _encoded_copies(ODD).items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "clean").write_bytes(b"nothing to see")
    hits = {p.name for p, _ in scan_for_secrets([tmp_path], [ODD])}
    assert hits == set(_encoded_copies(ODD))
    redact_secrets([tmp_path], [ODD])
    assert scan_for_secrets([tmp_path], [ODD]) == []
    assert REDACTED in (tmp_path / "b64-1").read_bytes()
    assert (tmp_path / "clean").read_bytes() == b"nothing to see"


class EncodingLeakyHarness(LeakyHarness):
    """A stand-in agent that hides its credential base64- and hex-encoded in its tree and transcript."""

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["leak"])
        b64 = base64.b64encode(b"k=" + TOKEN.encode()).decode()
        (ctx.attempt_dir / "agent" / "transcript.jsonl").write_text(f'{{"hex": "{TOKEN.encode().hex()}"}}\n')
        await sandbox.exec(["sh", "-c", f"echo {b64} > hidden.txt"])
        return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE)


class StoppedLeakyHarness(LeakyHarness):
    """A stand-in agent whose session ends in a provider stop after printing its credential."""

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["leak"])
        (ctx.attempt_dir / "agent" / "stdout.jsonl").write_text(f'{{"echo": "{TOKEN}"}}\n')
        return AgentRun(exit_code=1, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE,
                        provider_stop="rate limit: API error 429")


class CrashingLeakyHarness(LeakyHarness):
    """A stand-in agent whose harness crashes after its transcript saved the credential url-encoded."""

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["leak"])
        (ctx.attempt_dir / "agent" / "stderr.txt").write_text(quote(TOKEN.upper(), safe="") + "\n" + TOKEN + "\n")
        raise RuntimeError("harness fell over")


async def _code(tmp_path: Path, harness: LeakyHarness):  # type: ignore[no-untyped-def]
    task = load_task(TASKS / "add-numbers", "add-numbers")

    async def launched(argv: object) -> None:
        return None

    attempt = tmp_path / "attempt"
    result = await code_attempt(
        environment=LocalEnvironment(isolation="none"), harness=harness, run_id="r", attempt_id="a",
        task=task, starting_source=task.workspace_dir, treatment=FrozenTreatment("vanilla", None, (), (), (), "0"),
        attempt_dir=attempt, model=None, reasoning=None, seed=0, timeout=30, hidden=(), launched=launched,
    )
    return attempt, result


def _no_form_left(root: Path) -> None:
    assert scan_for_secrets([root], [TOKEN]) == [], [str(p) for p, _ in scan_for_secrets([root], [TOKEN])]


@pytest.mark.anyio
async def test_an_encoded_credential_in_the_tree_or_transcript_stops_grading(tmp_path: Path) -> None:
    """A base64 copy in the workspace deletes the export and makes no model.patch; a hex copy in a
    transcript is redacted."""
    attempt, result = await _code(tmp_path, EncodingLeakyHarness())
    assert result.patch is None and result.capture_error and "hidden.txt" in result.capture_error
    assert not (attempt / "export").exists() and not (attempt / "model.patch").exists()
    assert REDACTED in (attempt / "agent" / "transcript.jsonl").read_bytes()
    _no_form_left(attempt)


@pytest.mark.anyio
async def test_a_provider_stop_still_scrubs_the_evidence(tmp_path: Path) -> None:
    """An attempt that ends in a provider stop has its saved stdout scrubbed (it used to return first)."""
    attempt, result = await _code(tmp_path, StoppedLeakyHarness())
    assert result.run.provider_stop
    assert REDACTED in (attempt / "agent" / "stdout.jsonl").read_bytes()
    _no_form_left(attempt)


@pytest.mark.anyio
async def test_a_harness_crash_still_scrubs_the_evidence(tmp_path: Path) -> None:
    """A harness that crashes after launch leaves no form of the credential in the attempt's files."""
    attempt, result = await _code(tmp_path, CrashingLeakyHarness())
    assert result.run.error and "harness fell over" in result.run.error
    _no_form_left(attempt)


@pytest.mark.anyio
async def test_grading_output_is_scrubbed(tmp_path: Path) -> None:
    """A verifier whose test code prints the credential (literal and base64) leaves it nowhere in grading/."""
    task_root = tmp_path / "task"
    shutil.copytree(TASKS / "add-numbers", task_root)
    b64 = base64.b64encode(TOKEN.encode()).decode()
    test_sh = task_root / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text() + f"echo {TOKEN}\necho {b64} >&2\n")
    task = load_task(task_root, "add-numbers")
    patch = tmp_path / "model.patch"
    patch.write_text("")
    out = tmp_path / "grading"
    grade = await grade_patch(
        environment=LocalEnvironment(isolation="none"), run_id="r", attempt_id="a", task=task,
        starting_source=task.workspace_dir, patch_path=patch, empty=True, out_dir=out, hidden=(), secrets=[TOKEN],
    )
    assert grade.outcome == "empty"
    assert REDACTED in (out / "test-stdout.txt").read_bytes() and REDACTED in (out / "test-stderr.txt").read_bytes()
    _no_form_left(out)


def test_discarded_evidence_is_scrubbed_and_a_leaking_export_deleted(tmp_path: Path) -> None:
    """What a killed worker left (moved to evidence/discarded/) is scrubbed: evidence redacted, export deleted."""
    folder = tmp_path / "evidence" / "discarded" / "a"
    (folder / "agent").mkdir(parents=True)
    (folder / "export").mkdir()
    (folder / "agent" / "stdout.jsonl").write_text(TOKEN.encode().hex())
    (folder / "export" / "x.txt").write_text(base64.b64encode(TOKEN.encode()).decode())
    found = scrub_attempt([TOKEN], folder)
    assert found == ["evidence: agent/stdout.jsonl", "workspace export"]
    assert not (folder / "export").exists()
    _no_form_left(folder)
