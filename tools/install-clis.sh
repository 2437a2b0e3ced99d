#!/usr/bin/env bash
# Install the pinned coding-agent CLIs the real-CLI tests and the probe drive.
#
# Installs @anthropic-ai/claude-code and @openai/codex from the npm registry into the
# project-local folder .tools/clis (never globally), skips packages already at the pinned
# version, and prints the two binary paths, one per line: "claude <path>", "codex <path>".
set -euo pipefail

CLAUDE_VERSION="2.1.328"
CODEX_VERSION="0.169.0"

root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.tools/clis"
mkdir -p "$prefix"

installed_version() {
    # Prints the version recorded in the installed package.json, or nothing.
    local pkg="$1" manifest="$prefix/node_modules/$1/package.json"
    [ -f "$manifest" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$manifest"
}

want=()
[ "$(installed_version @anthropic-ai/claude-code)" = "$CLAUDE_VERSION" ] \
    || want+=("@anthropic-ai/claude-code@$CLAUDE_VERSION")
[ "$(installed_version @openai/codex)" = "$CODEX_VERSION" ] \
    || want+=("@openai/codex@$CODEX_VERSION")

if [ "${#want[@]}" -gt 0 ]; then
    echo "installing: ${want[*]}" >&2
    # --prefix keeps everything under .tools/clis; no lockfile/audit noise in the repo.
    npm install --prefix "$prefix" --no-audit --no-fund --no-package-lock \
        --registry "${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org/}" "${want[@]}" >&2
else
    echo "already installed: claude-code $CLAUDE_VERSION, codex $CODEX_VERSION" >&2
fi

# Claude Code's postinstall copies the native binary over a placeholder; npm versions that
# gate install scripts may skip it, so run it by hand when the binary does not answer.
claude_pkg="$prefix/node_modules/@anthropic-ai/claude-code"
if ! "$prefix/node_modules/.bin/claude" --version >/dev/null 2>&1 && [ -f "$claude_pkg/install.cjs" ]; then
    echo "running claude-code postinstall" >&2
    (cd "$claude_pkg" && node install.cjs >&2)
fi

for bin in claude codex; do
    path="$prefix/node_modules/.bin/$bin"
    if [ ! -x "$path" ] || ! "$path" --version >/dev/null 2>&1; then
        echo "error: $path is missing or does not run after install" >&2
        exit 1
    fi
    echo "$bin $path"
done
