"""The vanilla cache key and admission, as pure functions: every bound field changes the
key, unbound settings do not, and admission refuses each broken piece of evidence."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from pluginbench.actors._vanilla import key_inputs
from pluginbench.cache import (
    AttemptRecord,
    EntryManifest,
    KeyInputs,
    admit,
    argv_matches,
    vanilla_key,
)
from pluginbench.config import parse_evaluation
from pluginbench.events import Usage

BASE: dict[str, Any] = {
    "tasks": {"source": "/tasks", "ids": ["t"]},
    "runner": {"harness": "codex", "model": "gpt-5.5", "reasoning": "high"},
    "repeats": 3, "jobs": 2, "seed": 7, "timeout_seconds": 600,
}


def _ev(**changes: Any) -> Any:
    data = msgspec.json.decode(msgspec.json.encode(BASE))
    for dotted, value in changes.items():
        *path, last = dotted.split(".")
        node = data
        for p in path:
            node = node.setdefault(p, {})
        node[last] = value
    return parse_evaluation(data, "evaluation.yaml")  # type: ignore[arg-type]


def _key(ev: Any = None, **kw: Any) -> str:
    args = {"task_id": "t", "task_fingerprint": "f" * 64, "workdir": "/app", "cli_version": "0.167.2",
            "isolation": "bubblewrap", "transport": "provider"}
    args.update(kw)
    return vanilla_key(key_inputs(ev or _ev(), **args))


BOUND_SETTINGS = [
    ("runner.harness", "claude"),
    ("runner.model", "gpt-5.5-mini"),
    ("runner.reasoning", "low"),
    ("capabilities.subagents", False),
    ("capabilities.max_threads", 2),
    ("repeats", 4),
    ("jobs", 1),
    ("seed", 8),
    ("timeout_seconds", 601),
    ("environment.backend", "docker"),
    ("environment.container_cpus", 2.0),
    ("environment.container_memory_mb", 4096),
]


@pytest.mark.parametrize("field, value", BOUND_SETTINGS)
def test_each_bound_setting_changes_the_key(field: str, value: Any) -> None:
    """Changing any setting the comparison binds gives another key, so the lookup misses."""
    assert _key(_ev(**{field: value})) != _key()


@pytest.mark.parametrize("field, value", [
    ("task_id", "u"), ("task_fingerprint", "e" * 64), ("workdir", "/work"), ("cli_version", "0.168.0"),
    ("isolation", "none"), ("transport", "probe:abc"),
])
def test_each_bound_identity_changes_the_key(field: str, value: Any) -> None:
    """The task's frozen identity, the CLI version, the isolation and the transport are bound too."""
    assert _key(**{field: value}) != _key()


@pytest.mark.parametrize("field, value", [
    ("treatments", {"x": {"guidance": ["/g.md"]}}),
    ("measurements", ["lines"]),
    ("name", "another"),
    ("runner.vanilla_cache", False),
])
def test_unbound_settings_keep_the_key(field: str, value: Any) -> None:
    """Guidance, selected measurements, the name and the opt-out switch do not change the key."""
    assert _key(_ev(**{field: value})) == _key()


def test_a_claude_entry_never_satisfies_a_codex_lookup() -> None:
    """Same everything else, the two harnesses get keys that differ even in their readable prefix."""
    claude = _key(_ev(**{"runner.harness": "claude", "runner.model": "claude-sonnet-4-5"}))
    codex = _key(_ev(**{"runner.model": "claude-sonnet-4-5"}))
    assert claude.startswith("claude-") and codex.startswith("codex-") and claude != codex


def test_the_claude_key_binds_its_pinned_launch() -> None:
    """The Claude inputs carry the one-process argv shape, discovery's control requests, refused variables and built-ins."""
    ev = _ev(**{"runner.harness": "claude", "runner.model": "claude-sonnet-4-5"})
    launch = key_inputs(ev, task_id="t", task_fingerprint="f", workdir="/app", cli_version="2.1.328",
                        isolation="bubblewrap", transport="provider").launch
    assert "--disallowedTools" in launch["argv"] and "<session>" in launch["argv"] and "<prompt>" not in launch["argv"]
    assert launch["argv"][launch["argv"].index("--setting-sources") + 1] == "user,project"
    assert launch["discovery"]["control_requests"] and "ANTHROPIC_API_KEY" in launch["refused_variables"]
    assert "Explore" in launch["builtin_agents"]


# ------------------------------------------------------------------ admission

INPUTS = key_inputs(_ev(), task_id="t", task_fingerprint="f" * 64, workdir="/app", cli_version="0.167.2",
                    isolation="bubblewrap", transport="provider")
KEY = vanilla_key(INPUTS)
USAGE = Usage(status="exact", input_tokens=10, output_tokens=5, total_tokens=15)
PATCH = "a" * 64
FILES = {"model.patch": f"644:{PATCH}", "invocation.json": "644:b", "execution.json": "644:c"}
INVOCATION = {"arm": "vanilla", "harness": "codex", "model": "gpt-5.5", "reasoning": "high", "call_started": True,
              "argv": ["/x/codex", "exec", "--json", "--strict-config", "--skip-git-repo-check", "-C", "/w", "-m",
                       "gpt-5.5", "-c", 'model_reasoning_effort="high"', "--", "Fix it."]}
EXECUTION = {"exit_code": 0, "timed_out": False, "usage": msgspec.to_builtins(USAGE), "provider_stop": None}


def _manifest(**attempt: Any) -> EntryManifest:
    rec = {"exit_code": 0, "timed_out": False, "coding_seconds": 3.0, "usage": USAGE, "patch_sha256": PATCH,
           "empty": False, "files_changed": 1}
    rec.update(attempt)
    return EntryManifest(key=KEY, repeat=1, inputs=INPUTS, origin_run="r", origin_attempt="t__vanilla__r1",
                         attempt=AttemptRecord(**rec), files=FILES)


RECEIPT = {"schema": "pluginbench.codex.native-treatment/2", "ok": True, "arm": "vanilla", "cli_version": "0.167.2",
           "plugins": [], "skills": [], "hooks": [], "task_owned": {"AGENTS.md": "x"}}


def _admit(manifest: EntryManifest | None = None, **kw: Any) -> str | None:
    args: dict[str, Any] = {"key": KEY, "repeat": 1, "inputs": INPUTS, "images": None, "files": FILES,
                            "invocation": INVOCATION, "execution": EXECUTION, "reconstructed_sha256": PATCH,
                            "receipt": RECEIPT}
    args.update(kw)
    return admit(manifest or _manifest(), **args)


def test_sound_evidence_is_admitted() -> None:
    """A whole entry whose receipts, files and reconstructed patch agree is admitted."""
    assert _admit() is None


@pytest.mark.parametrize("change, words", [
    ({"files": {**FILES, "model.patch": "644:" + "b" * 64}}, "files changed"),
    ({"files": {**FILES, "model.patch": f"755:{PATCH}"}}, "files changed"),
    ({"reconstructed_sha256": "c" * 64}, "reconstructed"),
    ({"reconstructed_sha256": None}, "could not be reconstructed"),
    ({"invocation": None}, "no invocation"),
    ({"invocation": {**INVOCATION, "arm": "treated"}}, "not a vanilla attempt"),
    ({"invocation": {**INVOCATION, "argv": ["/x/codex", "exec", "--", "Fix it."]}}, "pinned launch"),
    ({"invocation": {**INVOCATION, "model": "gpt-5"}}, "another model"),
    ({"execution": {**EXECUTION, "provider_stop": "rate limit"}}, "provider stopped"),
    ({"execution": {**EXECUTION, "exit_code": 1}}, "disagrees"),
    ({"execution": {**EXECUTION, "usage": {"status": "unknown"}}}, "usage disagrees"),
    ({"images": ["sha256:x", "sha256:y"]}, "image"),
    ({"receipt": None}, "no discovery receipt"),
    ({"receipt": {**RECEIPT, "ok": False}}, "did not pass"),
    ({"receipt": {**RECEIPT, "arm": "guided"}}, "not a vanilla"),
    ({"receipt": {**RECEIPT, "cli_version": "0.168.0"}}, "reports CLI 0.168.0"),
    ({"receipt": {**RECEIPT, "skills": ["tidy-code"]}}, "not empty: it lists skills"),
    ({"repeat": 2}, "repeat"),
    ({"inputs": msgspec.structs.replace(INPUTS, seed=9)}, "seed"),
])
def test_broken_evidence_is_refused_with_a_reason(change: dict[str, Any], words: str) -> None:
    """Each broken piece of saved evidence refuses the entry, and the reason names it."""
    reason = _admit(**change)
    assert reason is not None and words in reason


def test_a_missing_submission_is_admitted_with_its_reason() -> None:
    """Failures are cached too: an attempt without a patch is admitted when it says why."""
    files = {k: v for k, v in FILES.items() if k != "model.patch"}
    m = msgspec.structs.replace(
        _manifest(patch_sha256=None, empty=None, files_changed=None, missing_reason="could not export"), files=files)
    assert _admit(m, files=files, reconstructed_sha256=None) is None
    m2 = _manifest(patch_sha256=None, empty=None, files_changed=None, missing_reason=None)
    assert _admit(m2, reconstructed_sha256=None) is not None


def test_argv_placeholders_match_any_value_but_fixed_tokens_must_appear_in_order() -> None:
    """``<prompt>``-style placeholders match anything; every fixed token must appear, in order."""
    assert argv_matches(["<cli>", "-p", "<prompt>", "--model", "m"], ["/bin/claude", "-p", "do it", "--model", "m"])
    assert not argv_matches(["<cli>", "--model", "m"], ["/bin/claude", "--model", "n"])
    assert not argv_matches(["--a", "--b"], ["--b", "--a"])


def test_inputs_round_trip_through_the_saved_event() -> None:
    """The inputs recorded in vanilla_cache.checked convert back to equal inputs (publication uses them)."""
    again = msgspec.convert(msgspec.to_builtins(INPUTS), KeyInputs)
    assert again == INPUTS and vanilla_key(again) == KEY


def test_only_the_pinned_claude_version_uses_the_cache() -> None:
    """Claude Code at another version than the pinned one is refused with a reason; Codex and controls are not."""
    from pluginbench.harnesses._claude_launch import PINNED_VERSION
    from pluginbench.harnesses._launch_identity import uncacheable_cli

    assert uncacheable_cli("claude", PINNED_VERSION) is None
    reason = uncacheable_cli("claude", "2.1.300")
    assert reason is not None and PINNED_VERSION in reason and "2.1.300" in reason
    assert uncacheable_cli("codex", "0.169.0") is None and uncacheable_cli("simulated", None) is None
