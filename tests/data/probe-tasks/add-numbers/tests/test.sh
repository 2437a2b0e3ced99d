#!/usr/bin/env bash
# Hidden verifier: reward 1 when add() sums, else 0. Harbor ignores this script's exit code.
cd "${APP_DIR:-/app}" || exit 1
mkdir -p "${LOGS_DIR:-/logs}/verifier"
# what the grade rests on, for whoever reads the verifier's output
python3 -c 'import solution; print("add(2, 3) =", solution.add(2, 3)); print("add(-1, 1) =", solution.add(-1, 1))' 2>&1 | tail -5
if python3 -c 'import solution, sys; sys.exit(0 if solution.add(2, 3) == 5 and solution.add(-1, 1) == 0 else 1)'; then
  echo 1 > "${LOGS_DIR:-/logs}/verifier/reward.txt"
else
  echo 0 > "${LOGS_DIR:-/logs}/verifier/reward.txt"
fi
