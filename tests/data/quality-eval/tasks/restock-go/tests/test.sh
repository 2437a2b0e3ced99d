#!/usr/bin/env bash
# Hidden verifier: the hidden Go test beside the submitted source, offline; writes the reward.
set -u
APP="${APP_DIR:-/app}"
TESTS="${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
export GOCACHE="${GOCACHE:-$(mktemp -d)}"
reward=0
if cd "$APP" && cp "$TESTS/reorder_hidden_test.go" . && go test -count=1 -run 'TestHidden' ./...; then
  reward=1
fi
echo "$reward" > "$LOGS/verifier/reward.txt"
