#!/usr/bin/env bash
# Hidden verifier: the hidden unit test against the submitted source; writes the reward.
set -u
APP="${APP_DIR:-/app}"
TESTS="${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
reward=0
if cd "$APP" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$APP" \
    python3 -m unittest discover -s "$TESTS" -t "$TESTS" -p 'test_hidden*.py' -v; then
  reward=1
fi
echo "$reward" > "$LOGS/verifier/reward.txt"
