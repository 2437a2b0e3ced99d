#!/usr/bin/env bash
# Hidden verifier: reward 1 when the asked-for function is there, else 0.
cd "${APP_DIR:-/app}" || exit 1
mkdir -p "${LOGS_DIR:-/logs}/verifier"
if grep -q "pub fn double" src/lib.rs; then echo 1; else echo 0; fi > "${LOGS_DIR:-/logs}/verifier/reward.txt"
