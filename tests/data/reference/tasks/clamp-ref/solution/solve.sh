#!/usr/bin/env bash
set -euo pipefail
cd "${APP_DIR:-/app}"
git apply "${SOLUTION_DIR:-/solution}/solution.patch"
