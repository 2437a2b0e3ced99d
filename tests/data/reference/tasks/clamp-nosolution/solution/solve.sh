#!/usr/bin/env bash
# This task ships no solution.patch: the oracle writes its solution directly.
set -euo pipefail
cd "${APP_DIR:-/app}"
cat >> calc/core.py <<'PY'


def clamp(x, lo, hi):
    return min(max(x, lo), hi)
PY
