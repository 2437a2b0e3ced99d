"""The base commit: the starting source as a deterministic single-commit git repo.

The commit has a fixed author, committer, dates and message, is made without hooks or
templates and without reading the host's system or global git configuration, so equal
content (paths, bytes, executable bits) gives the same SHA on every machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import anyio

from ..errors import EnvironmentFailure

BASE_IDENTITY = ("PluginBench", "base@pluginbench.invalid")
BASE_DATE = "2000-01-01T00:00:00Z"
BASE_MESSAGE = "PluginBench starting source"  # actors._patch builds host-side patches with this recipe too
GIT_EXCLUDE = ".pytest_cache/\n__pycache__/\n"
#: Every host-side git call of an attempt runs without automatic maintenance or gc: a
#: ``git commit`` otherwise starts ``git maintenance run --auto``, a process per commit.
NO_MAINTENANCE = ("-c", "maintenance.auto=false", "-c", "gc.auto=0")


def _host_git_env(home: Path) -> dict[str, str]:
    """A git environment that ignores the host's system and global configuration."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


async def _git(app: Path, home: Path, *args: str, extra_env: Mapping[str, str] = {}) -> str:
    env = _host_git_env(home) | dict(extra_env)
    try:
        # Own session: `pluginbench stop` signals the worker's process group, and a sandbox
        # being made for grading must finish (a killed `git add -A` graded attempts unknown).
        done = await anyio.run_process(["git", *NO_MAINTENANCE, *args], cwd=app, env=env, check=False,
                                       start_new_session=True)
    except OSError as exc:
        raise EnvironmentFailure(f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        raise EnvironmentFailure(
            f"git {' '.join(args)} failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}"
        )
    return done.stdout.decode().strip()


async def init_base_repo(app: Path, home: Path, identity: tuple[str, str]) -> str:
    """Make ``app`` a fresh repo whose only commit is its content; return that SHA."""
    await _git(app, home, "-c", "init.defaultBranch=main", "init", "-q", "--template=")
    info = app / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "exclude").write_text(GIT_EXCLUDE)
    await _git(app, home, "add", "-A")
    name, email = BASE_IDENTITY
    stamp = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": BASE_DATE,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": BASE_DATE,
    }
    await _git(
        app, home, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify",
        "-m", BASE_MESSAGE, extra_env=stamp,
    )  # fmt: skip
    _set_identity(app / ".git" / "config", identity)
    head = app / ".git" / "refs" / "heads" / "main"  # a fresh repository's one branch, a loose ref
    sha = head.read_text().strip() if head.is_file() else ""
    if len(sha) != 40:
        sha = await _git(app, home, "rev-parse", "HEAD")
    return sha


def _set_identity(config: Path, identity: tuple[str, str]) -> None:
    """Append ``[user] name, email`` to a repository's config, as two ``git config`` calls
    would write them (values quoted and escaped; no process)."""
    def quoted(value: str) -> str:
        if any(c in value for c in "\n\r\0"):
            raise EnvironmentFailure(f"a git identity cannot hold a line break: {value!r}")
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    with config.open("a", encoding="utf-8") as fh:
        fh.write(f"[user]\n\tname = {quoted(identity[0])}\n\temail = {quoted(identity[1])}\n")
