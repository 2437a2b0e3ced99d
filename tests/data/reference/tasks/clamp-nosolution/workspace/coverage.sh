#!/bin/sh
# The task's coverage command: the suite under coverage.py with per-test contexts, then the
# JSON report (with per_test_numbits and statement_lines) and an LCOV report of the same data.
set -u
python -m coverage run -m pytest -q -p no:cacheprovider tests
status=$?
python -m coverage json -q -o coverage.json
python -m coverage lcov -q -o lcov.info
python report_per_test.py coverage.json lcov.info
exit $status
