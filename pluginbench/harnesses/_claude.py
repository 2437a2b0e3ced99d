"""The real Claude Code harness (CLI 2.1.328 qualified): deliver, discover, launch, read.

One attempt, in order (all inside the attempt's sandbox, nothing on the host's config):

1. :meth:`ClaudeHarness.deliver` (sync, before the sandbox exists) writes the private
   config ``<home>/.claude-config`` (settings.json with the pinned settings, CLAUDE.md from
   the guidance, ``skills/<name>/`` as complete folders) and the private local marketplace
   ``<home>/.pluginbench-marketplace`` (``pluginbench-frozen``) holding each plugin tree.
   No credential is written there: the host copy of HOME must never hold the token.
2. :meth:`ClaudeHarness.run` puts ``.credentials.json`` into the sandbox's config, then
   (plugins only) runs ``claude plugin marketplace add`` / ``plugin install --json`` in
   user scope against the private config. deliver() is sync and cannot start processes,
   so the install lives here, before discovery, and makes no model call.
3. A discovery run (``--input-format stream-json``, hooks disabled, nothing persisted):
   control requests only (no model call), answered from local state, then
   ``end_session``; the receipt is built, checked and saved as ``native-treatment.json``
   (its stdout as ``agent/discovery.stdout.jsonl``). A mismatch raises
   :class:`DiscoveryMismatch` before any model call. A passing receipt is kept for the
   run under the digest of everything that can change what loads
   (:mod:`._claude_cache`); a later attempt of the same setup reuses it and starts no
   discovery run (``cli_processes: 1``, ``cache.hit: true``, no discovery stdout). A
   run's first attempt of a setup reads the cross-run store first (:mod:`._claude_reuse`,
   :mod:`._discovery_store`): stored answers are judged again with its own facts.
   Then the coding process starts (hooks on, transcripts on): the same control requests
   (no model call), whose answers must equal the receipt field by field
   (:func:`._claude_discovery.compare_coding`; its hooks must be enabled) — any
   difference ends it before ``agent.launched`` and the task, as a
   :class:`DiscoveryMismatch`, and drops the kept receipt. Then ``await
   ctx.launched(argv)``, then the task as the first user message;
   stdout → ``agent/stdout.jsonl``, session transcripts → ``agent/transcripts/``; the
   credentials file is removed. The task repository's own ``CLAUDE.md`` and
   ``.claude/`` load (``--setting-sources user,project``) and are listed as task-owned.
   (Discovery is not folded into the coding process: that process runs its
   ``SessionStart`` hooks before it reads stdin, so an undeclared hook would run before
   the receipt could refuse it.)
4. Usage validation, provider-stop classification, after-run checks and the secret scan
   go to ``execution.json``.

The class side (launch identity, config and credential rules, capability policy, usage
re-read from saved evidence) is :mod:`._claude_rules`; this module is the attempt itself.

Probe mode (``probe_base_url``): the probe's fake key travels the same way as a real
token (credentials file), only the base URL (and retry cap) come from
:func:`pluginbench.probe.launch_env`; a real token in the environment is refused and
every receipt says ``probe: true``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import msgspec

from .._parsing import file_tail, loads_json
from ..environments import OUTPUT_FILE_BYTES, Sandbox, plain_files
from ..errors import DiscoveryMismatch
from ..tasks import copy_tree, fingerprint, scan_tree
from ..treatments import MARKETPLACE, ClaudeTreatment, admit_claude_treatment
from ._claude_cache import cache_key, digest_argv
from ._claude_checks import after_run_checks, effective_effort, execution_outcome
from ._claude_discovery import (
    Expected,
    Paths,
    build_receipt,
    compare_coding,
    compare_receipt,
    discovery_argv,
)
from ._claude_launch import (
    CONFIG_DIR_NAME,
    MARKETPLACE_DIR_NAME,
    PINNED_SETTINGS,
    PINNED_VERSION,
    TOKEN_VARIABLE,
    check_command_env,
    check_model,
    check_operator_env,
    credentials_json,
    pinned_env,
    session_argv,
)
from ._claude_reuse import from_store, keep
from ._claude_rules import ClaudeHarnessRules
from ._claude_session import ClaudeSession
from ._claude_stream import (
    decode_stream,
    parse_decoded,
    provider_stop,
    uncorroborated,
)
from ._claude_usage import read_transcripts, stream_answers, unrecovered_cut, validate_usage
from ._discovery_store import DiscoveryStore, store_note
from ._port import (
    AgentRun,
    AttemptContext,
    FrozenTreatment,
    hook_arm_usage,
    tool_roots,
)

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
SETUP_TIMEOUT = 120.0


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")


def _slug(cwd: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in cwd)


class ClaudeHarness(ClaudeHarnessRules):
    """Claude Code behind the harness port (see the module docstring)."""

    @classmethod
    def for_run(cls, ev: Any, *, cli_path: str | Path | None, cli_version: str | None,
                probe_base_url: str | None) -> ClaudeHarness:
        return cls(str(cli_path), cli_version or "", probe_base_url, subagents=ev.capabilities.subagents,
                   store=DiscoveryStore.for_harness("claude"))

    def __init__(self, cli_path: str | Path, cli_version: str, probe_base_url: str | None = None,
                 *, subagents: bool = True, environ: Mapping[str, str] | None = None,
                 store: DiscoveryStore | None = None) -> None:
        self.cli_path = str(cli_path)
        self.cli_version = cli_version
        self.readonly = tool_roots(cli_path) if Path(cli_path).exists() else ()
        self.probe_base_url = probe_base_url
        self.subagents = subagents
        self._environ = dict(os.environ if environ is None else environ)
        check_operator_env(self._environ, probe=self.probe)
        #: passing discovery receipts by setup digest, for the life of this harness (one run)
        self._receipts: dict[str, dict[str, Any]] = {}
        #: passing discovery answers across runs (None: off, every run discovers again)
        self.store = store

    @property
    def probe(self) -> bool:
        return self.probe_base_url is not None

    def secrets(self) -> list[str]:
        """Credentials this harness delivers; the engine scans exports for them. A probe
        run's fake key counts too, so probe runs go through the same redaction path."""
        return [self._token()]

    def _token(self) -> str:
        if self.probe:
            from ..probe import PROBE_ANTHROPIC_KEY

            return PROBE_ANTHROPIC_KEY
        return self._environ[TOKEN_VARIABLE]

    def _probe_env(self) -> dict[str, str]:
        if not self.probe:
            return {}
        from ..probe import launch_env

        env = dict(launch_env("anthropic", str(self.probe_base_url)).env)
        env.pop("ANTHROPIC_API_KEY", None)  # the fake key travels as the credentials file
        return env

    @staticmethod
    def admit(treatment: FrozenTreatment) -> ClaudeTreatment:
        return admit_claude_treatment(treatment.guidance, treatment.skills, treatment.plugins)

    # ------------------------------------------------------------------ deliver

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the private config and marketplace under ``home``; return the receipt."""
        t = self.admit(treatment)
        cfg, mkt = home / CONFIG_DIR_NAME, home / MARKETPLACE_DIR_NAME
        cfg.mkdir(parents=True, exist_ok=True)
        (cfg / "settings.json").write_text(json.dumps(PINNED_SETTINGS, indent=1) + "\n")
        if t.guidance:
            (cfg / "CLAUDE.md").write_bytes(t.guidance)
        for info in t.loose_skills:
            copy_tree(info.root, cfg / "skills" / info.name, list(info.entries))
        if t.plugins:
            manifest = {"name": MARKETPLACE, "owner": {"name": "PluginBench"},
                        "plugins": [{"name": p.name, "source": f"./plugins/{p.name}",
                                     **({"version": p.version} if p.version else {})} for p in t.plugins]}
            _write_json(mkt / ".claude-plugin" / "marketplace.json", manifest)
            for p in t.plugins:
                copy_tree(p.root, mkt / "plugins" / p.name, list(p.entries))
        return {
            "delivery_policy": "claude-native-v1", "probe": self.probe, "arm": treatment.arm,
            "config_dir": CONFIG_DIR_NAME, "marketplace_dir": MARKETPLACE_DIR_NAME if t.plugins else None,
            "guidance_bytes": len(t.guidance),
            "skills": {i.name: i.fingerprint for i in t.loose_skills},
            "plugins": {p.name: {"fingerprint": p.fingerprint, "version": p.version,
                                 "recorded_dirs": list(p.recorded_dirs)} for p in t.plugins},
            "hooks": [list(h) for h in t.hooks],
        }

    # ------------------------------------------------------------------ run

    async def _setup(self, sandbox: Sandbox, t: ClaudeTreatment, env: dict[str, str], agent_dir: Path,
                     arm: str) -> None:
        cfg = env["CLAUDE_CONFIG_DIR"]
        with tempfile.TemporaryDirectory(prefix="pb-cred-") as tmp:
            cred = Path(tmp) / ".credentials.json"
            fd = os.open(cred, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(credentials_json(self._token()))
            await sandbox.put(cred, f"{cfg}/.credentials.json")
        if not t.plugins:
            return
        mkt = f"{sandbox.paths.home}/{MARKETPLACE_DIR_NAME}"
        steps = [[self.cli_path, "plugin", "marketplace", "add", mkt, "--json"]]
        steps += [[self.cli_path, "plugin", "install", f"{p.name}@{MARKETPLACE}", "--json"] for p in t.plugins]
        log = []
        for argv in steps:
            res = await sandbox.exec(argv, cwd=sandbox.paths.home, env=env, timeout=SETUP_TIMEOUT)
            out = res.stdout.decode(errors="replace")
            log.append({"argv": argv[1:], "exit_code": res.exit_code, "stdout": out})
            first = out.strip().splitlines()[0] if out.strip() else "{}"
            try:
                outcome = loads_json(first).get("outcome")
            except (json.JSONDecodeError, AttributeError):
                outcome = None
            if res.exit_code != 0 or outcome != "ok":
                _write_json(agent_dir / "plugin-install.json", log)
                raise DiscoveryMismatch(f"arm {arm}", [f"plugin setup step {' '.join(argv[1:])} failed: {out.strip()[:300]}"])
        _write_json(agent_dir / "plugin-install.json", log)

    async def _trees(self, sandbox: Sandbox, t: ClaudeTreatment, env: dict[str, str]) -> dict[str, str]:
        """Fingerprints of the delivered skill and plugin trees as the sandbox holds them."""
        out: dict[str, str] = {}
        if not t.loose_skills and not t.plugins:
            return out  # nothing delivered to fetch (no folder to make and remove)
        with tempfile.TemporaryDirectory(prefix="pb-trees-") as tmp:
            for info in t.loose_skills:
                dest = Path(tmp) / "s" / info.name
                await sandbox.get(f"{env['CLAUDE_CONFIG_DIR']}/skills/{info.name}", dest)
                out[f"skill:{info.name}"] = fingerprint(scan_tree(dest))
            for p in t.plugins:
                dest = Path(tmp) / "p" / p.name
                await sandbox.get(f"{sandbox.paths.home}/{MARKETPLACE_DIR_NAME}/plugins/{p.name}", dest)
                out[f"plugin:{p.name}"] = fingerprint(scan_tree(dest))
        return out

    @staticmethod
    def _frozen_trees(t: ClaudeTreatment) -> dict[str, str]:
        return {**{f"skill:{i.name}": i.fingerprint for i in t.loose_skills},
                **{f"plugin:{p.name}": p.fingerprint for p in t.plugins}}

    def _judge(self, control_stdout: str, t: ClaudeTreatment, env: dict[str, str],
               sandbox: Sandbox, facts: dict[str, Any], model: str) -> dict[str, Any]:
        """The receipt of the control phase with every problem found (saved before coding)."""
        paths = Paths(env["CLAUDE_CONFIG_DIR"], f"{sandbox.paths.home}/{MARKETPLACE_DIR_NAME}", sandbox.paths.app)
        receipt = build_receipt(control_stdout, paths, probe=self.probe)
        receipt.update(facts)
        problems = compare_receipt(receipt, Expected(t, self.cli_version, model, self.probe))
        problems += receipt["environment_problems"]
        if receipt["managed_settings"] != "absent":
            problems.append("/etc/claude-code managed settings are present")
        if receipt["trees"] != receipt["frozen_trees"]:
            problems.append("delivered trees do not match the frozen inventory")
        receipt["problems"] = problems
        receipt["passed"] = not problems
        return receipt

    async def _discover(self, sandbox: Sandbox, ctx: AttemptContext, t: ClaudeTreatment, env: dict[str, str],
                        facts: dict[str, Any], model: str, disc_argv: list[str], agent_dir: Path,
                        t1: float) -> tuple[dict[str, Any], str]:
        """The discovery run (hooks disabled, nothing persisted): its passing receipt and the
        control answers it was judged from, or :class:`DiscoveryMismatch` with the failing
        one saved as ``native-treatment.json``."""
        receipts: list[dict[str, Any]] = []

        async def judge(control_stdout: str) -> bool:
            """Judge the discovery run's control phase; it never sends the task."""
            receipt = self._judge(control_stdout, t, env, sandbox, facts, model)
            receipt["seconds"] = round(time.monotonic() - t1, 3)
            _write_json(ctx.attempt_dir / "native-treatment.json", receipt)
            receipts.append(receipt)
            return False

        discovery = ClaudeSession(ctx.task.instruction, judge, setup_timeout=SETUP_TIMEOUT, coding_timeout=0)
        try:
            disc = await sandbox.exec(disc_argv, cwd=sandbox.paths.app, env=env, timeout=SETUP_TIMEOUT + 60,
                                      stdout_path=agent_dir / "discovery.stdout.jsonl",
                                      stderr_path=agent_dir / "discovery.stderr.txt", dialogue=discovery)
        except TimeoutError:
            raise DiscoveryMismatch(f"arm {ctx.treatment.arm}", [
                f"the CLI did not answer the control requests within {SETUP_TIMEOUT:.0f} s"]) from None
        if not receipts:
            stderr_tail = file_tail(agent_dir / "discovery.stderr.txt")[-300:]
            raise DiscoveryMismatch(f"arm {ctx.treatment.arm}", [
                f"the CLI ended (exit {disc.exit_code}) before answering every control request: {stderr_tail}"])
        if not receipts[0]["passed"]:
            raise DiscoveryMismatch(f"arm {ctx.treatment.arm}", receipts[0]["problems"])
        return receipts[0], "\n".join(discovery.control_lines) + "\n"

    async def _copy_transcripts(self, sandbox: Sandbox, env: dict[str, str], session: str,
                                dest: Path) -> tuple[list[str], list[list[str]]] | None:
        slug = _slug(sandbox.paths.app)
        with tempfile.TemporaryDirectory(prefix="pb-tx-") as tmp:
            got = Path(tmp) / "projects"
            try:
                # bounded as the CLI's stream is: the agent can write to its transcripts
                await sandbox.get(f"{env['CLAUDE_CONFIG_DIR']}/projects/{slug}", got, limit=OUTPUT_FILE_BYTES)
            except Exception:  # noqa: BLE001 - no projects folder means no transcript
                return None
            root = got / f"{session}.jsonl"
            # The copy keeps the agent's symlinks: none is ever followed to a host file.
            if root.is_symlink() or not root.is_file():
                return None
            subs = plain_files(got / session, "*.jsonl")
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root, dest / root.name)
            for s in subs:
                target = dest / s.relative_to(got)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(s, target)
            return (root.read_text(errors="replace").splitlines(),
                    [s.read_text(errors="replace").splitlines() for s in subs])

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        model, effort = check_model(ctx.model, ctx.reasoning)
        check_operator_env(self._environ, probe=self.probe)
        t = self.admit(ctx.treatment)
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        env = pinned_env(sandbox.paths.home, path=SANDBOX_PATH, model=model, probe_env=self._probe_env())
        timings: dict[str, float] = {}
        t0 = time.monotonic()
        session_id = str(uuid.uuid4())
        argv = session_argv(self.cli_path, model, effort, session_id, subagents=self.subagents)
        disc_argv = discovery_argv(argv, str(uuid.uuid4()))
        refusals: list[str] = []
        credentials = f"{env['CLAUDE_CONFIG_DIR']}/.credentials.json"
        removed = False  # the coding command's own launch removed the credentials (confirmed by the backend)
        try:
            await self._setup(sandbox, t, env, agent_dir, ctx.treatment.arm)
            digest = await sandbox.exec(digest_argv(env["CLAUDE_CONFIG_DIR"], f"{sandbox.paths.home}/{MARKETPLACE_DIR_NAME}",
                                                    sandbox.paths.app, self.cli_path), env=env, timeout=SETUP_TIMEOUT,
                                        egress=False)
            if digest.exit_code != 0:
                raise DiscoveryMismatch(f"arm {ctx.treatment.arm}", [
                    f"the digest of the delivered files failed: {digest.stderr.decode(errors='replace')[-300:]}"])
            facts = {
                "arm": ctx.treatment.arm, "attempt_id": ctx.attempt_id, "argv": argv[1:],
                "discovery_argv": disc_argv[1:],
                "cli_processes": 2, "environment_problems": check_command_env(env, probe=self.probe),
                "managed_settings": digest.stdout.decode().split("\n", 1)[0].strip(),
                "trees": await self._trees(sandbox, t, env), "frozen_trees": self._frozen_trees(t),
            }
            key = cache_key(files=digest.stdout, cli_version=self.cli_version, argv=argv, env=env,
                            paths=list(sandbox.paths), model=model, arm=ctx.treatment.arm,
                            treatment=ctx.treatment.fingerprint, facts=facts)
            timings["setup_s"] = round(time.monotonic() - t0, 3)
            t1 = time.monotonic()
            cached = self._receipts.get(key)
            answers: str | None = None  # the discovery answers judged in this attempt (None: reused)
            store = self.store if sandbox.isolated else None  # an unisolated agent could write the cache root
            stored, note = None, store_note("off", None if store else "the sandbox is not isolated")
            if cached is None and store is not None:
                # An earlier run's discovery of the same setup: its answers judged again here.
                stored, note = from_store(store, key, lambda out: self._judge(out, t, env, sandbox, facts, model),
                                          agent_dir)
            if stored is not None:
                stored["seconds"] = round(time.monotonic() - t1, 3)
                self._receipts[key] = receipt = stored
            elif cached is None:
                receipt, answers = await self._discover(sandbox, ctx, t, env, facts, model, disc_argv, agent_dir, t1)
                receipt["cache"] = {"key": key, "hit": False, "origin_attempt": ctx.attempt_id}
                if self.store is not None:
                    receipt["cache"].update(origin_run=ctx.run_id, store=note)
                self._receipts[key] = receipt
            else:
                # The same setup passed discovery earlier in this run: its receipt stands for
                # this attempt once the coding process's own control answers equal it.
                receipt = {**cached, **{k: v for k, v in facts.items() if k != "discovery_argv"},
                           "cli_processes": 1, "seconds": round(time.monotonic() - t1, 3),
                           "cache": {"key": key, "hit": True, "origin_attempt": cached["cache"]["origin_attempt"]}}
                if "origin_run" in cached["cache"]:
                    receipt["cache"].update(origin_run=cached["cache"]["origin_run"], store=store_note("kept"))
            _write_json(ctx.attempt_dir / "native-treatment.json", receipt)
            timings["discovery_s"] = receipt["seconds"]
            paths = Paths(env["CLAUDE_CONFIG_DIR"], f"{sandbox.paths.home}/{MARKETPLACE_DIR_NAME}", sandbox.paths.app)

            async def check(control_stdout: str) -> bool:
                """The coding process loads exactly what the receipt says (hooks on); then the task is sent."""
                problems = compare_coding(build_receipt(control_stdout, paths, probe=self.probe), receipt)
                if problems:
                    refusals.extend(problems)
                    receipt.update(problems=[*receipt["problems"], *problems], passed=False)
                    _write_json(ctx.attempt_dir / "native-treatment.json", receipt)
                    self._receipts.pop(key, None)
                    if self.store is not None:
                        self.store.drop(key)
                    return False
                if store is not None and answers is not None:  # two processes agreed: keep the answers
                    keep(store, key, run=ctx.run_id, attempt=ctx.attempt_id, cli_version=self.cli_version,
                         answers=answers, receipt=receipt)
                    _write_json(ctx.attempt_dir / "native-treatment.json", receipt)
                await ctx.launched(argv)
                return True

            session = ClaudeSession(ctx.task.instruction, check, setup_timeout=SETUP_TIMEOUT,
                                    coding_timeout=ctx.timeout_seconds)
            timed_out, exit_code, stderr_tail = False, None, ""
            try:
                res = await sandbox.exec(argv, cwd=sandbox.paths.app, env=env,
                                         timeout=SETUP_TIMEOUT + ctx.timeout_seconds + 60,
                                         stdout_path=agent_dir / "stdout.jsonl",
                                         stderr_path=agent_dir / "stderr.txt", dialogue=session,
                                         remove_after=(credentials,))
                timed_out, exit_code, removed = res.timed_out, res.exit_code, res.removed
            except TimeoutError:
                if session.task_sent_at is None:
                    raise DiscoveryMismatch(f"arm {ctx.treatment.arm}", [
                        f"the CLI did not answer the control requests within {SETUP_TIMEOUT:.0f} s"]) from None
                timed_out = True
            if session.task_sent_at is None:
                stderr_tail = file_tail(agent_dir / "stderr.txt")[-300:]
                raise DiscoveryMismatch(f"arm {ctx.treatment.arm}", refusals or [
                    f"the coding CLI ended (exit {exit_code}) before answering every control request: {stderr_tail}"])
            coding_seconds = ctx.ran(time.monotonic() - session.task_sent_at)
            timings["coding_s"] = round(coding_seconds, 3)
            t2 = time.monotonic()
            transcripts = await self._copy_transcripts(sandbox, env, session_id, agent_dir / "transcripts")
            trees = await self._trees(sandbox, t, env)
        finally:
            # A stopped sandbox is removed with its files, so a failure here is harmless.
            # Unless the coding command's launch confirmed the removal, it is done here.
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                if not removed:
                    await sandbox.exec(["rm", "-f", credentials], env=env, timeout=30, egress=False)
        events, bad = decode_stream((agent_dir / "stdout.jsonl").read_text(errors="replace"))  # decoded once
        summary = parse_decoded(events, bad)
        totals = read_transcripts(*transcripts) if transcripts else None
        usage, accounting = validate_usage(summary, totals, runner_model=model, cli_version=self.cli_version,
                                           timed_out=timed_out, answers=stream_answers(events))
        if t.hooks:
            # Hook subprocesses may spend tokens nobody meters: the total is unknown, the
            # validated figures stay, labelled as the native session's.
            usage = hook_arm_usage(usage)
        stop = provider_stop(summary, timed_out=timed_out) or unrecovered_cut(summary)
        integrity = [*summary.integrity, *uncorroborated(summary)]
        if summary.bad_lines and not timed_out:
            integrity.append(f"stdout has {summary.bad_lines} undecodable line(s): something else wrote into it")
        checks = after_run_checks(summary, receipt, t, model=model, cli_version=self.cli_version,
                                  subagents=self.subagents, trees_unchanged=trees == self._frozen_trees(t))
        timings["collect_s"] = round(time.monotonic() - t2, 3)
        res_ev = summary.result or {}
        effective, effort_evidence = effective_effort(transcripts, effort)
        outcome, outcome_reasons = execution_outcome(checks, timed_out=timed_out, provider_stop=stop,
                                                     result=summary.result)
        execution = {
            "execution_outcome": outcome, "execution_outcome_reasons": outcome_reasons,
            "harness": "claude", "probe": self.probe, "cli_version": self.cli_version,
            "qualified": self.cli_version == PINNED_VERSION, "model": model, "effort": effort,
            "requested_effort": effort, "effective_effort": effective, "effective_effort_evidence": effort_evidence,
            "argv": argv[1:], "discovery_argv": receipt["discovery_argv"], "cli_processes": receipt["cli_processes"],
            "discovery_cache": receipt["cache"], "task_sent_as": "first stream-json user message",
            "exit_code": exit_code, "timed_out": timed_out, "coding_seconds": coding_seconds,
            "terminal_reason": res_ev.get("terminal_reason"), "is_error": res_ev.get("is_error"),
            "api_retries": summary.api_retries, "announced_wait_ms": summary.announced_wait_ms,
            "provider_stop": stop, "integrity": integrity, "usage": msgspec.to_builtins(usage),
            "usage_accounting": accounting, "total_usage_known": not t.hooks and usage.status == "exact",
            "checks": {"passed": not checks, "reasons": checks}, "session_id": session_id,
            "transcripts": totals is not None, "timings": timings,
        }
        _write_json(ctx.attempt_dir / "execution.json", execution)
        error = "; ".join(checks) if checks else None
        return AgentRun(exit_code=exit_code, timed_out=timed_out, coding_seconds=coding_seconds,
                        usage=usage, error=error, provider_stop=stop, integrity=tuple(integrity))
