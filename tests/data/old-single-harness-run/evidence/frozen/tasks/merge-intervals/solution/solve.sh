#!/usr/bin/env bash
# Reference solution: apply the known-good patch to the starting source.
set -euo pipefail
cd "${APP_DIR:-/app}"
git apply "${SOLUTION_DIR:-/solution}/solution.patch"
