#!/usr/bin/env bash
# Hidden verifier. Runs the hidden unit tests shipped beside this script against the
# submitted source and writes the reward (1 pass, 0 fail); the exit code is ignored.
set -u
APP="${APP_DIR:-/app}"
TESTS="${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
reward=0
# -t makes the hidden folder the import root for the tests themselves, so a file the
# agent adds to the workspace cannot stand in for them; the code under test comes from
# the workspace through PYTHONPATH.
if cd "$APP" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$APP" \
    python3 -m unittest discover -s "$TESTS" -t "$TESTS" -p 'test_hidden*.py' -v; then
  reward=1
fi
echo "$reward" > "$LOGS/verifier/reward.txt"
echo "reward: $reward"
