#!/bin/bash
# Verifier entrypoint in the DeepSWE v1.1 frame: tests/grader.py applies model.patch (the
# artifact) and test.patch, the suite writes JUnit XML, tests/grader.py scores the node ids.
set -uo pipefail
trap 'if [ ! -f /logs/verifier/reward.json ] && [ ! -f /logs/verifier/reward.txt ]; then mkdir -p /logs/verifier; echo -1 > /logs/verifier/reward.txt; fi' EXIT
cd /app || { mkdir -p /logs/verifier; exit 6; }

python3 /tests/grader.py prepare || exit $?
[ -f /logs/verifier/reward.json ] && exit 0   # model.patch didn't apply -> graded 0

python3 /app/run_tests.py /logs/verifier/new.xml 2>&1 | tee /logs/verifier/run.log
echo "===== grade ====="
python3 /tests/grader.py grade
