#!/usr/bin/env bash
# Install the pinned JavaScript/TypeScript code analyzers of the dead_code measure.
#
# knip (unused files, exports, types and members) and jscpd (duplicate-code groups) from the
# npm registry into the project-local folder .tools/analyzers (never globally); skips packages
# already at the pinned version. The Python analyzers (rust-code-analysis-python, lizard,
# Vulture) are pinned in pyproject.toml and come with `pip install -e '.[dev]'`.
set -euo pipefail

KNIP_VERSION="6.44.2"
JSCPD_VERSION="5.3.2"

root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.tools/analyzers"
mkdir -p "$prefix"

installed_version() {
    local manifest="$prefix/node_modules/$1/package.json"
    [ -f "$manifest" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$manifest"
}

want=()
[ "$(installed_version knip)" = "$KNIP_VERSION" ] || want+=("knip@$KNIP_VERSION")
[ "$(installed_version jscpd)" = "$JSCPD_VERSION" ] || want+=("jscpd@$JSCPD_VERSION")
if [ "${#want[@]}" -gt 0 ]; then
    echo "installing: ${want[*]}" >&2
    npm install --prefix "$prefix" --no-audit --no-fund --no-package-lock \
        --registry "${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org/}" "${want[@]}" >&2
else
    echo "already installed: knip $KNIP_VERSION, jscpd $JSCPD_VERSION" >&2
fi
for bin in knip jscpd; do
    "$prefix/node_modules/.bin/$bin" --version >/dev/null
done
