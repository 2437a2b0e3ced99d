"""The real Codex CLI harness (``codex exec --json``, pinned 0.169.0).

One attempt:

1. :meth:`CodexHarness.deliver` (host side, before the sandbox exists) writes a private
   ``CODEX_HOME`` at ``<home>/.codex``: ``config.toml`` (remote plugin catalog and apps
   off, update checks and analytics off, approval never, and in probe mode the loopback
   provider), ``AGENTS.md`` from the admitted guidance (none for vanilla), standalone
   skills under ``skills/<name>/``, plugins as a private local marketplace under
   ``<home>/.pluginbench-market``, and for real runs a copy of the host's
   ``auth.json`` (never argv or environment). Probe mode copies no credential.
2. :meth:`CodexHarness.run` installs the plugins through the CLI inside the sandbox
   (``codex plugin marketplace add`` / ``plugin add``), then runs the no-model discovery
   (see :mod:`._codex_discovery`) and saves ``native-treatment.json``; a mismatch raises
   :class:`DiscoveryMismatch` before ``agent.launched``. Then it launches the pinned argv
   with stdin closed, streams stdout to ``agent/stdout.jsonl``, copies the session
   rollouts to ``agent/rollouts/`` and reads usage and provider stops from both. A real
   run's ``auth.json`` is removed in that launch once the CLI ended (``remove_after``),
   and by a separate ``rm -f`` when the backend did not confirm it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from .._parsing import loads_json
from ..config import Capabilities, capability_record
from ..environments import OUTPUT_FILE_BYTES, Sandbox, plain_files
from ..errors import CodexLoginError, CodexSetupError, DiscoveryMismatch, InputError
from ..events import Usage
from ..treatments import (
    CodexPlugin,
    admit_guidance,
    admit_skill,
    installed_command,
    read_codex_plugin,
)
from ._codex_config import (
    APP_SERVER_SCRIPT,
    CODEX_DIR,
    MARKET_DIR,
    MARKETPLACE,
    app_server_requests,
    config_toml,
    discovery_settings,
    exec_argv,
    launch_env,
    marketplace_json,
    offline_env,
    probe_settings,
)
from ._codex_discovery import (
    Expected,
    ExpectedPlugin,
    app_server_results,
    compare,
    norm_event,
)
from ._codex_host import CodexDeclaration
from ._codex_native import check_manifest, image_native, resolve_native
from ._codex_native import identity as native_identity
from ._codex_record import read_agent_run
from ._codex_reuse import Answers, keep, read_answers, refused_answers, reused_cache
from ._discovery_store import DiscoveryStore, store_note
from ._port import (
    AgentRun,
    AttemptContext,
    FrozenTreatment,
    hook_arm_usage,
    tool_roots,
)

__all__ = ["CodexHarness", "DiscoveryMismatch"]

#: The task repository's own instruction files Codex reads at the repository root.
REPO_DOC_NAMES = ("AGENTS.override.md", "AGENTS.md")
#: POSIX sh: one line per file Codex's loading can depend on (path, then sha256 of the
#: contents): the whole private HOME, the repository's instruction files and skill
#: folders, and system config. Sorted, so the same files give the same digest. The private
#: ``config.toml`` is hashed with a loopback URL's port as ``<port>``: a probe run's model
#: server gets a new port in every run and names nothing that loads (so probe runs share
#: keys across runs, as Claude Code's do, :mod:`._claude_cache`).
DIGEST_SCRIPT = r"""
home="$1"; app="$2"; cfg="$3"
{ find "$home" -type f -o -type l
  for f in AGENTS.override.md AGENTS.md; do [ -e "$app/$f" ] && echo "$app/$f"; done
  for d in "$app/.agents" "$app/.codex" /etc/codex; do [ -d "$d" ] && find "$d" -type f -o -type l; done
} 2>/dev/null | LC_ALL=C sort | while IFS= read -r f; do
  printf '%s ' "$f"
  if [ -L "$f" ]; then printf 'link:%s\n' "$(readlink "$f")"
  elif [ "$f" = "$cfg" ]; then
    sed -E 's#(https?://(127\.0\.0\.1|localhost|\[::1\])):[0-9]+#\1:<port>#g' "$f" | sha256sum
  else sha256sum < "$f"; fi
done
"""


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_INSTALLED_ROOT = re.compile(r"^Installed plugin root:\s*(\S.*)$", re.M)
_SETUP_TIMEOUT = 120.0


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


async def _together(*steps: Any) -> list[Any]:
    """Every step's result, run concurrently; the first failure cancels the others (no
    CLI left running in the sandbox for nobody) and is raised as itself."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class CodexHarness(CodexDeclaration):
    """Codex CLI adapter: see the module docstring for the whole attempt (its declarations,
    what the engine reads about it, are :class:`CodexDeclaration`)."""

    @classmethod
    def for_run(cls, ev: Any, *, cli_path: str | Path | None, cli_version: str | None,
                probe_base_url: str | None) -> CodexHarness:
        return cls(str(cli_path), cli_version or "", probe_base_url, capabilities=ev.capabilities,
                   store=DiscoveryStore.for_harness("codex"))

    @classmethod
    def revalidate_usage(cls, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
                         exit_code: int | None, seconds: float | None) -> Usage | None:
        """Its ``exec --json`` stdout and session rollouts (``agent/stdout.jsonl``, ``agent/rollouts/``)."""
        agent = attempt_dir / "agent"
        rollouts = [_text(p) for p in sorted((agent / "rollouts").rglob("rollout-*.jsonl"))]
        return read_agent_run(_text(agent / "stdout.jsonl"), rollouts, exit_code=exit_code, timed_out=timed_out,
                              seconds=seconds).usage

    def __init__(
        self,
        cli_path: str | Path,
        cli_version: str,
        probe_base_url: str | None = None,
        *,
        host_codex_home: Path | None = None,
        capabilities: Capabilities | None = None,
        store: DiscoveryStore | None = None,
    ) -> None:
        self.cli_path = str(cli_path)
        #: the native binary every Codex start launches (never the npm node wrapper), resolved
        #: and checked against the pin here when the host holds it; a coding image's is
        #: checked in its first sandbox (see :mod:`._codex_native`)
        self.native = (resolve_native(cli_path, cli_version) if Path(cli_path).exists()
                       else image_native(self.cli_path))
        self.capabilities = capabilities if capabilities is not None else Capabilities()
        self.cli_version = cli_version
        self.readonly = tool_roots(cli_path) if Path(cli_path).exists() else ()
        self.probe_base_url = probe_base_url
        self.host_codex_home = host_codex_home if host_codex_home is not None else Path.home() / ".codex"
        #: passing receipts by setup digest, for the life of this harness (one run)
        self._receipts: dict[str, dict[str, Any]] = {}
        #: passing discovery answers across runs (None: off, every run discovers again)
        self.store = store
        self._cli_id: str | None = self._host_identity() if Path(cli_path).exists() else None

    # ------------------------------------------------------------------ delivery

    def _config(self) -> str:
        if self.probe_base_url is None:
            return config_toml(probe=None, capabilities=self.capabilities)
        provider_id, _, _, table = probe_settings(self.probe_base_url)
        return config_toml(probe=(provider_id, table), capabilities=self.capabilities)

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        extra: dict[str, str] = {}
        if self.probe_base_url is not None:
            _, key_var, key, _ = probe_settings(self.probe_base_url)
            extra[key_var] = key
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, extra={**dict(self.native.env), **extra})

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the private CODEX_HOME and marketplace into ``home``; return the receipt."""
        codex_home = home / CODEX_DIR
        codex_home.mkdir(parents=True, exist_ok=True)
        receipt: dict[str, Any] = {
            "harness": self.name,
            "cli_version": self.cli_version,
            "probe": self.probe_base_url is not None,
            "codex_home": CODEX_DIR,
            "agents_md": None,
            "skills": [],
            "plugins": [],
        }
        config = self._config()
        (codex_home / "config.toml").write_text(config, encoding="utf-8")
        receipt["config_toml_sha256"] = hashlib.sha256(config.encode()).hexdigest()
        receipt["capabilities"] = capability_record(self.name, self.capabilities)
        if treatment.guidance:
            data = admit_guidance(list(treatment.guidance))
            (codex_home / "AGENTS.md").write_bytes(data)
            receipt["agents_md"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for skill in treatment.skills:
            info = admit_skill(skill)
            dest = codex_home / "skills" / info.name
            if dest.exists():
                raise InputError(f"two skills are named {info.name!r}", file=str(skill), fix="rename one")
            shutil.copytree(skill, dest, ignore=shutil.ignore_patterns(".git"))
            receipt["skills"].append({"name": info.name, "fingerprint": info.fingerprint})
        plugins = [read_codex_plugin(p) for p in treatment.plugins]
        if len({p.name for p in plugins}) != len(plugins):
            raise InputError("two plugins share a name", fix="rename one plugin")
        if plugins:
            market = home / MARKET_DIR
            (market / ".agents" / "plugins").mkdir(parents=True, exist_ok=True)
            (market / ".agents" / "plugins" / "marketplace.json").write_text(
                marketplace_json([p.name for p in plugins]), encoding="utf-8"
            )
            for p in plugins:
                shutil.copytree(p.root, market / "plugins" / p.name, ignore=shutil.ignore_patterns(".git"))
                receipt["plugins"].append({"name": p.name, "version": p.version, "skills": list(p.skills)})
        receipt["credential"] = self._deliver_credential(codex_home)
        return receipt

    def _deliver_credential(self, codex_home: Path) -> str:
        target = codex_home / "auth.json"
        if self.probe_base_url is not None:
            if target.exists():
                raise InputError("a real Codex credential is present in a probe-mode home", file=str(target),
                                 fix="probe runs use the probe's fake key only")
            return "probe fake key (environment of the agent process only)"
        source = self.host_codex_home / "auth.json"
        if not source.is_file():
            raise InputError("no Codex credentials on this host", file=str(source),
                             fix="run `codex login` with the pinned CLI on the host")
        # The copy goes straight into the sandbox in run() and is removed after the
        # session: the delivered home is saved as evidence and must never hold it.
        return "copy of the host auth.json, put into the sandbox for the session only"

    async def _put_credential(self, sandbox: Sandbox) -> str | None:
        """Copy the host auth.json into the sandbox's private CODEX_HOME; its sandbox path."""
        if self.probe_base_url is not None:
            return None
        target = f"{sandbox.paths.home}/{CODEX_DIR}/auth.json"
        with tempfile.TemporaryDirectory(prefix="pb-codex-auth-") as tmp:
            staged = Path(tmp) / "auth.json"
            shutil.copyfile(self.host_codex_home / "auth.json", staged)
            staged.chmod(0o600)
            await sandbox.put(staged, target)
        return target

    def secrets(self) -> list[str]:
        """Credential strings the engine scans exports for (long values of auth.json)."""
        if self.probe_base_url is not None:
            return []
        try:
            data = json.loads((self.host_codex_home / "auth.json").read_text())
        except (OSError, ValueError):
            return []
        found: list[str] = []

        def walk(v: object) -> None:
            if isinstance(v, dict):
                for x in v.values():
                    walk(x)
            elif isinstance(v, str) and len(v) >= 20:
                found.append(v)

        walk(data)
        return found

    # ------------------------------------------------------------------ run

    async def _sh(self, sandbox: Sandbox, argv: list[str], env: dict[str, str], what: str) -> bytes:
        """One no-model setup command (plugin installation, discovery): loopback only, as it
        needs no network (``egress=False``: no forwarder starts; see :func:`offline_env`)."""
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, env=env, timeout=_SETUP_TIMEOUT, egress=False)
        if res.exit_code != 0:
            tail = (res.stderr or res.stdout)[-2000:].decode("utf-8", "replace")
            raise CodexSetupError(f"{what} failed (exit {res.exit_code}, timed out {res.timed_out}): {tail}")
        return res.stdout

    async def _install(self, sandbox: Sandbox, env: dict[str, str], plugins: list[CodexPlugin]) -> dict[str, str]:
        if not plugins:
            return {}
        market = f"{sandbox.paths.home}/{MARKET_DIR}"
        await self._sh(sandbox, [self.native.exe, "plugin", "marketplace", "add", market], env, "codex plugin marketplace add")
        roots: dict[str, str] = {}
        for p in plugins:
            out = await self._sh(sandbox, [self.native.exe, "plugin", "add", f"{p.name}@{MARKETPLACE}"], env, "codex plugin add")
            m = _INSTALLED_ROOT.search(out.decode("utf-8", "replace"))
            if not m:
                raise CodexSetupError(f"codex plugin add {p.name} did not report its installed root")
            roots[p.name] = m.group(1).strip()
        return roots

    def _expected(self, sandbox: Sandbox, t: FrozenTreatment, plugins: list[CodexPlugin], roots: dict[str, str]) -> Expected:
        guidance = admit_guidance(list(t.guidance)).decode("utf-8") if t.guidance else None
        skills_root = f"{sandbox.paths.home}/{CODEX_DIR}/skills"
        skills = tuple((admit_skill(s).name, f"{skills_root}/{admit_skill(s).name}/SKILL.md") for s in t.skills)
        eplugins = tuple(
            ExpectedPlugin(
                plugin_id=f"{p.name}@{MARKETPLACE}",
                root=roots[p.name],
                skills=p.skills,
                hooks=tuple((norm_event(ev), installed_command(cmd, roots[p.name])) for ev, cmd in p.hooks),
            )
            for p in plugins
        )
        return Expected(guidance, skills, eplugins)

    def _launch_settings(self, ctx: AttemptContext) -> list[str]:
        """The ``-c`` settings discovery renders the prompt with: the coding launch's own."""
        return discovery_settings(ctx.model, ctx.reasoning)

    async def _repo_docs(self, sandbox: Sandbox) -> tuple[tuple[str, str], ...]:
        """The task repository's own instruction files at its root (task-owned)."""
        out: list[tuple[str, str]] = []
        with tempfile.TemporaryDirectory(prefix="pb-codex-docs-") as tmp:
            for name in REPO_DOC_NAMES:
                dest = Path(tmp) / name
                try:
                    await sandbox.get(f"{sandbox.paths.app}/{name}", dest)
                except Exception:  # noqa: BLE001 - the file does not exist in this task
                    continue
                if dest.is_file():
                    out.append((name, dest.read_text(encoding="utf-8", errors="replace")))
        return tuple(out)

    async def _cache_key(self, sandbox: Sandbox, env: dict[str, str], ctx: AttemptContext,
                         roots: dict[str, str], bypass: bool) -> str:
        """Digest of everything Codex's loading depends on (see docs/harnesses.md).

        The delivered HOME (private CODEX_HOME, marketplace, installed plugins), the task
        repository's instruction files and skill folders, any system config, the CLI
        binary, and the launch settings (argv without the prompt, environment, paths).
        """
        res = await sandbox.exec(["sh", "-c", DIGEST_SCRIPT, "pluginbench-digest", sandbox.paths.home,
                                  sandbox.paths.app, f"{sandbox.paths.home}/{CODEX_DIR}/config.toml"], env=env,
                                 timeout=_SETUP_TIMEOUT, egress=False)
        if res.exit_code != 0:
            raise CodexSetupError(f"digest of the delivered files failed: {res.stderr[-500:]!r}")
        argv = exec_argv(self.native.exe, workdir=sandbox.paths.app, model=ctx.model or "", reasoning=ctx.reasoning,
                         prompt="", bypass_hook_trust=bypass)
        key = {
            "files": hashlib.sha256(res.stdout).hexdigest(),
            "cli": await self._cli_identity(sandbox, env),
            "cli_version": self.cli_version,
            "argv": argv[1:-1],
            "discovery_settings": self._launch_settings(ctx),
            "env": env,
            "paths": list(sandbox.paths),
            "roots": roots,
            "arm": ctx.treatment.arm,
            "treatment": ctx.treatment.fingerprint,
        }
        return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()

    def _host_identity(self) -> str:
        """The CLI's digest part from the host: the native binary's ``codex-package.json`` and
        size (no 300 MB read), or the whole file when it is not a packaged binary."""
        exe = Path(self.native.exe)
        if self.native.manifest is None:
            return _file_digest(exe)
        return native_identity(Path(self.native.manifest).read_bytes(), exe.stat().st_size)

    async def _cli_identity(self, sandbox: Sandbox, env: dict[str, str]) -> str:
        """The CLI's digest part, once per harness. A coding image's binary (not on the host)
        is read and checked against the pin in the first sandbox: its manifest, its size."""
        if self._cli_id is None:
            if self.native.manifest is None:
                script, args = 'sha256sum < "$(readlink -f "$1")"', [self.native.exe]
            else:
                script, args = 'stat -L -c %s "$1" && cat "$2"', [self.native.exe, self.native.manifest]
            res = await sandbox.exec(["sh", "-c", script, "sh", *args], env=env, timeout=_SETUP_TIMEOUT)
            if res.exit_code != 0 or not res.stdout.split():
                raise CodexSetupError(f"cannot read the CLI {self.native.exe} in the sandbox: {res.stderr[-300:]!r}")
            if self.native.manifest is None:
                self._cli_id = res.stdout.split()[0].decode()
            else:
                size, _, manifest = res.stdout.partition(b"\n")
                try:
                    check_manifest(Path(self.native.manifest), manifest.decode("utf-8", "replace"),
                                   pinned=self.cli_version or "", triple=self.native.target or "")
                except InputError as exc:
                    raise CodexSetupError(f"{exc.message} ({self.native.manifest} in the coding image): {exc.fix}") from None
                self._cli_id = native_identity(manifest, int(size))
        return self._cli_id

    async def discover(self, sandbox: Sandbox, ctx: AttemptContext) -> tuple[dict[str, Any], list[CodexPlugin]]:
        """Install plugins and prove (no model call) exactly the declared components load.

        The receipt of an identical setup (same digest, see :meth:`_cache_key`) is reused
        instead of starting the CLI twice more: from earlier in this run, else (isolated
        sandboxes only) judged again from an earlier run's stored answers
        (:mod:`._codex_reuse`); the reuse is marked in the receipt.
        """
        env = offline_env(self._env(sandbox))  # discovery needs no network: none is tried
        t0 = time.monotonic()
        plugins = [read_codex_plugin(p) for p in ctx.treatment.plugins]
        roots = await self._install(sandbox, env, plugins)
        t1 = time.monotonic()
        key = await self._cache_key(sandbox, env, ctx, roots, any(p.hooks for p in plugins))
        cached = self._receipts.get(key)
        if cached is not None:
            cache = {"key": key, "hit": True, "origin_attempt": cached["cache"]["origin_attempt"]}
            if "origin_run" in cached["cache"]:
                cache.update(origin_run=cached["cache"]["origin_run"], store=store_note("kept"))
            receipt = {**cached, "arm": ctx.treatment.arm, "installed_plugin_roots": roots, "cache": cache,
                       "seconds": {"install": round(t1 - t0, 3), "discovery": round(time.monotonic() - t1, 3)}}
            return receipt, plugins
        store = self.store if sandbox.isolated else None  # an unisolated agent could write the cache root
        note = store_note("off", "the sandbox is not isolated")
        if store is not None:
            stored = read_answers(store, key)
            note = stored.note
            if stored.entry is not None and stored.answers is not None:
                try:
                    receipt = await self._judged(sandbox, ctx, plugins, roots, stored.answers)
                except CodexSetupError as exc:  # a damaged entry: its prompt-input is no JSON
                    receipt = {"ok": False, "mismatches": [str(exc)]}
                if receipt["ok"]:
                    receipt.update(cache=reused_cache(key, stored.entry, note, ctx.attempt_dir / "agent"),
                                   seconds={"install": round(t1 - t0, 3),
                                            "discovery": round(time.monotonic() - t1, 3)})
                    self._receipts[key] = receipt
                    return receipt, plugins
                note = refused_answers(store, key, receipt)
        # Codex 0.169.0 has no single no-model command that both renders the input and lists
        # hooks and plugins (app-server's thread/start names instruction files, not what the
        # model receives), so discovery needs both CLI starts; they read the same finished
        # setup and write nothing the other reads, so they run side by side (with the look at
        # the repository's own instruction files): the wall is the slower one, not the sum.
        requests = "".join(json.dumps(r) + "\n" for r in app_server_requests(sandbox.paths.app))
        out_file = f"{sandbox.paths.tmp}/pluginbench-app-server.jsonl"
        prompt_out, server_out, repo_docs = await _together(
            self._sh(sandbox, [self.native.exe, "debug", "prompt-input", *self._launch_settings(ctx)],
                     env, "codex debug prompt-input"),
            self._sh(sandbox, ["sh", "-c", APP_SERVER_SCRIPT, "sh", requests, out_file, self.native.exe],
                     env, "codex app-server discovery"),
            self._repo_docs(sandbox),
        )
        answers = Answers(prompt_out.decode("utf-8", "replace"), server_out.decode("utf-8", "replace"))
        receipt = await self._judged(sandbox, ctx, plugins, roots, answers, repo_docs)
        receipt.update(cache={"key": key, "hit": False, "origin_attempt": ctx.attempt_id},
                       seconds={"install": round(t1 - t0, 3), "discovery": round(time.monotonic() - t1, 3)})
        if self.store is not None:
            receipt["cache"].update(origin_run=ctx.run_id, store=note)
        if receipt["ok"]:
            self._receipts[key] = receipt
            if store is not None:
                keep(store, key, run=ctx.run_id, attempt=ctx.attempt_id, cli_version=self.cli_version,
                     answers=answers, receipt=receipt)
        return receipt, plugins

    async def _judged(self, sandbox: Sandbox, ctx: AttemptContext, plugins: list[CodexPlugin],
                      roots: dict[str, str], answers: Answers,
                      repo_docs: tuple[tuple[str, str], ...] | None = None) -> dict[str, Any]:
        """The receipt of ``answers`` against what this attempt declared and its repository
        holds (read here unless given): :func:`._codex_discovery.compare` and the launch
        facts. Raises :class:`CodexSetupError` when the prompt-input answer is no JSON."""
        if repo_docs is None:
            repo_docs = await self._repo_docs(sandbox)
        expected = self._expected(sandbox, ctx.treatment, plugins, roots)
        expected = expected._replace(repo_docs=repo_docs, workdir=sandbox.paths.app)
        try:
            prompt_input = loads_json(answers.prompt_input)
        except ValueError as exc:
            raise CodexSetupError(f"codex debug prompt-input printed no JSON: {exc}") from exc
        receipt = compare(expected, prompt_input, app_server_results(answers.app_server))
        receipt.update({
            "harness": self.name,
            "cli_version": self.cli_version,
            "arm": ctx.treatment.arm,
            "probe": self.probe_base_url is not None,
            "installed_plugin_roots": roots,
            "discovery_settings": self._launch_settings(ctx),
            "launch_argv": exec_argv(self.native.exe, workdir=sandbox.paths.app, model=ctx.model or "",
                                     reasoning=ctx.reasoning, prompt="",
                                     bypass_hook_trust=any(p.hooks for p in plugins))[1:-2],
        })
        return receipt

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Discover, launch the pinned ``codex exec --json``, read its trace and rollouts."""
        if not ctx.model:
            raise InputError("the codex harness needs an exact model id", field="runner.model",
                             fix='set runner.model, e.g. "gpt-5.5"')
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        await self._cli_identity(sandbox, self._env(sandbox))  # a coding image's binary checked before any start
        credential = await self._put_credential(sandbox)
        removed = False  # the coding command's own launch removed the credential (confirmed by the backend)
        try:
            login = await self.login_status(sandbox)
            (agent_dir / "login-status.json").write_text(json.dumps(login, indent=2, sort_keys=True) + "\n")
            run, removed = await self._run(sandbox, ctx, agent_dir, credential)
            return run
        finally:
            # A stopped sandbox is removed with its files, so a failure here is harmless.
            # Unless the coding command's launch confirmed the removal, it is done here.
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                if credential is not None and not removed:
                    await sandbox.exec(["rm", "-f", credential], timeout=30, egress=False)

    async def _run(self, sandbox: Sandbox, ctx: AttemptContext, agent_dir: Path,
                   credential: str | None) -> tuple[AgentRun, bool]:
        """Discovery, then the coding launch, which removes ``credential`` once the CLI ended
        (see :mod:`pluginbench.environments._local_after`); the run, and whether the backend
        confirmed that removal."""
        receipt, plugins = await self.discover(sandbox, ctx)
        (ctx.attempt_dir / "native-treatment.json").write_text(
            json.dumps(receipt, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        if not receipt["ok"]:
            raise DiscoveryMismatch(f"attempt {ctx.attempt_id}", receipt["mismatches"])
        if ctx.model is None:  # config validation requires runner.model for a real harness
            raise CodexSetupError("codex needs an exact runner.model; none reached the attempt")
        argv = exec_argv(
            self.native.exe,
            workdir=sandbox.paths.app,
            model=ctx.model,
            reasoning=ctx.reasoning,
            prompt=ctx.task.instruction,
            bypass_hook_trust=any(p.hooks for p in plugins),
        )
        env = self._env(sandbox)
        await ctx.launched(argv)
        res = await sandbox.exec(
            argv, cwd=sandbox.paths.app, env=env, timeout=ctx.timeout_seconds,
            stdout_path=agent_dir / "stdout.jsonl", stderr_path=agent_dir / "stderr.txt",
            remove_after=(credential,) if credential is not None else (),
        )
        ctx.ran(res.seconds)
        rollout_texts = await self._collect_rollouts(sandbox, agent_dir)
        run = read_agent_run(
            (agent_dir / "stdout.jsonl").read_text(encoding="utf-8", errors="replace"),
            rollout_texts,
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            seconds=res.seconds,
            model=ctx.model,
            effort=ctx.reasoning,
        )
        if any(p.hooks for p in plugins):
            # Hook subprocesses may spend tokens nobody meters: the total is unknown, the
            # session's usage stays, labelled as the native session's.
            run = run._replace(usage=hook_arm_usage(run.usage))
        return run, res.removed

    async def login_status(self, sandbox: Sandbox) -> dict[str, Any]:
        """``codex login status`` with the delivered credential, before any model call.

        Real runs need it to succeed (exit 0: an API key or a ChatGPT login); otherwise
        :class:`CodexLoginError` stops the attempt before coding. Probe runs skip it: the
        loopback provider's key comes from ``env_key`` and login status says "Not logged
        in" there by design. Only the kind of login is kept, never the masked key.
        """
        if self.probe_base_url is not None:
            return {"checked": False, "reason": "probe mode: the loopback provider's env key is the credential"}
        res = await sandbox.exec([self.native.exe, "login", "status"], cwd=sandbox.paths.app, env=self._env(sandbox),
                                 timeout=_SETUP_TIMEOUT)
        text = (res.stdout + res.stderr).decode("utf-8", "replace")
        if res.exit_code != 0:
            first = (text.strip().splitlines() or ["no output"])[0][:200]
            raise CodexLoginError(
                f"codex login status in the sandbox exited {res.exit_code} ({first}): the delivered "
                "auth.json does not log Codex in; run `codex login` with the pinned CLI on the host"
            )
        kind = "api key" if "API key" in text else "chatgpt" if "ChatGPT" in text else "other"
        return {"checked": True, "exit_code": 0, "login": kind}

    async def _collect_rollouts(self, sandbox: Sandbox, agent_dir: Path) -> list[str]:
        dest = agent_dir / "rollouts"
        dest.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="pb-codex-sessions-") as tmp:
            got = Path(tmp) / "sessions"
            try:
                # bounded as the CLI's stream is: the agent can write to its rollouts
                await sandbox.get(f"{sandbox.paths.home}/{CODEX_DIR}/sessions", got, limit=OUTPUT_FILE_BYTES)
            except Exception:  # noqa: BLE001 - no sessions folder: usage becomes unknown
                return []
            texts = []
            for f in plain_files(got, "rollout-*.jsonl"):  # never a symlink the agent planted
                shutil.copyfile(f, dest / f.name)
                texts.append(f.read_text(encoding="utf-8", errors="replace"))
            return texts
