#!/usr/bin/env bash
# Install the pinned coding-agent CLIs the real harnesses, the real-CLI tests and the probe drive.
#
# Which CLIs, from which npm packages, at which versions, is each harness's own declaration
# (its CliPin, read from the harness registry: `python -m pluginbench.harness_registry pins`
# prints "<command> <npm package> <version>" per line; today @anthropic-ai/claude-code and
# @openai/codex, @qwen-code/qwen-code, opencode-ai and @google/gemini-cli). Installs them from the npm registry into the project-local folder
# .tools/clis (never globally), skips packages already at the pinned version, and prints one
# line per CLI: "<command> <path>" (e.g. "claude <path>", "codex <path>").
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.tools/clis"
mkdir -p "$prefix"

python="$root/.venv/bin/python"
[ -x "$python" ] || python="$(command -v python3)"
pins="$(cd "$root" && "$python" -m pluginbench.harness_registry pins)" || {
    echo "error: cannot read the pinned CLIs from the harness registry (run tools/setup.sh first)" >&2
    exit 1
}

installed_version() {
    # Prints the version recorded in the installed package.json, or nothing.
    local manifest="$prefix/node_modules/$1/package.json"
    [ -f "$manifest" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$manifest"
}

want=()
have=()
while read -r command package version; do
    [ -n "$command" ] || continue
    if [ "$(installed_version "$package")" = "$version" ]; then
        have+=("$package $version")
    else
        want+=("$package@$version")
    fi
done <<< "$pins"

if [ "${#want[@]}" -gt 0 ]; then
    echo "installing: ${want[*]}" >&2
    # --prefix keeps everything under .tools/clis; no lockfile/audit noise in the repo.
    # Every pin is named at its exact version and saved exact: npm re-resolves the prefix's
    # package.json on each install, and a caret range left there by an older install would
    # silently move an already-installed CLI to a newer release.
    all=()
    while read -r command package version; do
        [ -n "$command" ] && all+=("$package@$version")
    done <<< "$pins"
    npm install --prefix "$prefix" --no-audit --no-fund --no-package-lock --save-exact \
        --registry "${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org/}" "${all[@]}" >&2
else
    echo "already installed: ${have[*]}" >&2
fi

while read -r command package version; do
    [ -n "$command" ] || continue
    path="$prefix/node_modules/.bin/$command"
    # Claude Code's and opencode's postinstalls copy the native binary over a placeholder; npm
    # versions that gate install scripts may skip them, so run a package's install.cjs or
    # postinstall.mjs by hand when its binary does not answer.
    pkg="$prefix/node_modules/$package"
    for script in install.cjs postinstall.mjs; do
        if ! "$path" --version >/dev/null 2>&1 && [ -f "$pkg/$script" ]; then
            echo "running $package postinstall ($script)" >&2
            (cd "$pkg" && node "$script" >&2)
        fi
    done
    if [ ! -x "$path" ] || ! "$path" --version >/dev/null 2>&1; then
        echo "error: $path is missing or does not run after install" >&2
        exit 1
    fi
    echo "$command $path"
done <<< "$pins"
