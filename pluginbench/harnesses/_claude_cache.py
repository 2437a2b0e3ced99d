"""The key under which a passing Claude Code discovery receipt is reused (within one run,
and across runs through the store of :mod:`._discovery_store`).

Discovery (a hooks-disabled run of the CLI, see :mod:`._claude_discovery`) proves what a
session loads before any hook runs. Its answer depends only on files and launch settings,
so an attempt whose setup digests to the same key as an earlier passing one reuses that
receipt instead of starting the CLI a second time; its coding process's own control
answers are still compared with it before the task is sent
(:func:`._claude_discovery.compare_coding`).

The key (:func:`cache_key`) covers everything Claude Code's loading can depend on: the
private config (settings, ``CLAUDE.md``, skills, installed plugins) and marketplace, the
task repository's ``CLAUDE.md``/``CLAUDE.local.md``/``.claude/``/``.mcp.json`` and the
same files in every folder above it, the managed settings folder ``/etc/claude-code``,
the CLI binary (size, times, inode) and version, the launch argv without the session id, the environment (a
probe run's loopback base URL without its port, which is new in every run), the
sandbox paths, the model, and the attempt's judged facts (delivered trees, managed
settings, environment problems). Left out, because every CLI start rewrites them and they
name nothing that loads: the credentials file, the CLI's own state file ``.claude.json``
(and its backups) and the per-session folders the CLI writes (:data:`RUNTIME_STATE`).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

#: Entries of the private config folder the CLI itself writes on every start (session
#: state, caches); none of them declares a component. The credentials file is left out too.
RUNTIME_STATE = (".credentials.json", ".claude.json", ".claude.json.backup*", "backups", "projects",
                 "statsig", "todos", "shell-snapshots", "session-env", "debug", "telemetry", "file-history",
                 "plans", "ide", "cache")

#: POSIX sh: first ``present`` or ``absent`` (the managed settings folder), then one line
#: per file the CLI's loading can depend on (path, then sha256 of the contents, or the
#: target of a symlink). Sorted, so the same files give the same digest. The plugin
#: install records are hashed without their install/update times (the only field that
#: differs between two installs of the same frozen plugin).
#: $1 config folder, $2 marketplace folder, $3 task repository, $4 the CLI (its size,
#: times and inode: the 370 MB binary is not read); the rest: names at the top of the
#: config folder to leave out.
DIGEST_SCRIPT = r"""
cfg="$1"; mkt="$2"; app="$3"; cli="$4"; shift 4
if [ -e /etc/claude-code ]; then echo present; else echo absent; fi
stat -L -c 'cli %s %Y %Z %i' "$cli" || exit 3
{ for f in "$cfg"/* "$cfg"/.[!.]*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    b="${f##*/}"; skip=
    for x in "$@"; do case "$b" in $x) skip=1;; esac; done
    [ -n "$skip" ] || find "$f" -type f -o -type l
  done
  [ -d "$mkt" ] && find "$mkt" -type f -o -type l
  d="$app"
  while :; do
    for f in CLAUDE.md CLAUDE.local.md .mcp.json; do [ -e "$d/$f" ] && echo "$d/$f"; done
    [ -d "$d/.claude" ] && find "$d/.claude" -type f -o -type l
    [ "$d" = / ] && break
    d=$(dirname "$d")
  done
  [ -d /etc/claude-code ] && find /etc/claude-code -type f -o -type l
} 2>/dev/null | LC_ALL=C sort -u | while IFS= read -r f; do
  printf '%s ' "$f"
  if [ -L "$f" ]; then printf 'link:%s\n' "$(readlink "$f")"
  else case "$f" in
    "$cfg"/plugins/installed_plugins.json|"$cfg"/plugins/known_marketplaces.json)
      sed -E 's/"(installedAt|lastUpdated)": *"[^"]*"/"\1": ""/g' "$f" | sha256sum;;
    *) sha256sum < "$f";;
  esac; fi
done
"""


def digest_argv(config: str, marketplace: str, app: str, cli: str) -> list[str]:
    """The sandbox command printing the lines of :data:`DIGEST_SCRIPT`."""
    return ["sh", "-c", DIGEST_SCRIPT, "pluginbench-digest", config, marketplace, app, cli, *RUNTIME_STATE]


#: A probe run's loopback model server: its port is new in every run and names nothing that loads.
_LOOPBACK_PORT = re.compile(r"^(https?://(?:127\.0\.0\.1|localhost|\[::1\])):\d+/?$")


def cache_key(*, files: bytes, cli_version: str | None, argv: list[str], env: dict[str, str],
              paths: list[str], model: str, arm: str, treatment: str, facts: dict[str, Any]) -> str:
    """SHA-256 of everything the loading depends on (``argv`` without the session id; a
    loopback ``ANTHROPIC_BASE_URL``'s port as ``<port>``, so probe runs share a key)."""
    launch = list(argv)
    if "--session-id" in launch:
        i = launch.index("--session-id")
        del launch[i: i + 2]
    env = {k: _LOOPBACK_PORT.sub(r"\1:<port>", v) if k == "ANTHROPIC_BASE_URL" else v for k, v in env.items()}
    key = {
        "files": hashlib.sha256(files).hexdigest(), "cli_version": cli_version,
        "argv": launch, "env": env, "paths": paths, "model": model, "arm": arm, "treatment": treatment,
        "facts": {k: facts.get(k) for k in ("managed_settings", "trees", "frozen_trees", "environment_problems")},
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
