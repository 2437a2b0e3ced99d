#!/usr/bin/env bash
# Grades stats.median against $TASK_DIR/checker_data/cases.json; prints SCORE: passed/total.
set -u
python3 - "$TASK_DIR/checker_data/cases.json" <<'PY'
import json, sys
sys.path.insert(0, ".")
from stats import median
cases = json.load(open(sys.argv[1]))
passed = 0
for values, want in cases:
    try:
        got = median(values)
        ok = want != "ValueError" and got == want
    except ValueError:
        ok = want == "ValueError"
    except Exception:
        ok = False
    passed += ok
print(f"SCORE: {passed / len(cases)}")
sys.exit(0 if passed == len(cases) else 1)
PY
