#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the browser test lane (report, dashboard).
# Idempotent: does nothing when `chromium` is already on PATH; refreshes the apt index only
# when the package is not known to apt yet (a fresh container has an empty index).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium already installed: $(chromium --version 2>/dev/null || echo unknown version)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show chromium >/dev/null 2>&1; then
  $SUDO apt-get update
fi
$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core

chromium --version
