#!/usr/bin/env bash
# Set up PluginBench on a fresh machine (Python >= 3.11 and git).
#
#   tools/setup.sh          the project venv (.venv) with PluginBench installed: enough for
#                           `pluginbench demo`, which needs no sandbox tool, no credentials
#                           and no network
#   tools/setup.sh --dev    also the test dependencies and everything the tests drive for
#                           real: bubblewrap, the pinned Claude Code and Codex CLIs (npm),
#                           Debian's Chromium, a Docker engine and the local base image
#
# Idempotent; every step skips what is already there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
dev=0
[ "${1:-}" = "--dev" ] && dev=1

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if [ "$dev" = 1 ]; then
    .venv/bin/python -m pip install -q -e '.[dev]'
else
    .venv/bin/python -m pip install -q -e .
fi
echo "setup: PluginBench installed in $root/.venv"
[ "$dev" = 1 ] || exit 0

apt_install() {
    # Debian packages by name, refreshing the index once when one is unknown.
    export DEBIAN_FRONTEND=noninteractive
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    timeout 300 apt-get -o DPkg::Lock::Timeout=240 update -q
    timeout 900 apt-get -o DPkg::Lock::Timeout=240 install -y -q --no-install-recommends "${missing[@]}"
}

apt_install bubblewrap git debootstrap fzf tmux  # fzf: `tasks pick`; tmux drives it in tests
apt_install golang-go go-staticcheck  # Go unused-code analysis (dead_code measure)
# Rust unused-code analysis runs `cargo check --offline`: the machine's toolchain when it has one,
# else Debian's (an older rustc still checks the fixtures' small crates offline).
command -v cargo >/dev/null 2>&1 || apt_install cargo
bash tools/install-clis.sh
bash tools/install-analyzers.sh  # knip and jscpd for the dead_code measure
bash tools/install-chromium.sh
bash tools/start-docker.sh
bash tools/build-base-image.sh
echo "setup: development environment ready"
