#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the browser test lane (report, dashboard),
# and Debian's chromium-driver (same source package, so always the matching version) that
# the dashboard's Selenium tests drive it through.
# Idempotent: does nothing when both are already on PATH; refreshes the apt index only
# when the package is not known to apt yet (a fresh container has an empty index).
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
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
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver fonts-dejavu-core

chromium --version
