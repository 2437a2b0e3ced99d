"""Reporting step: add per_test_numbits (coverage.py numbits per file and test context) to the
coverage.py JSON report, and write the LCOV per-test sidecar ``<lcov>.per-test.json``."""
import base64
import json
import sys

import coverage
from coverage.numbits import numbits_to_nums, nums_to_numbits

json_path, lcov_path = sys.argv[1], sys.argv[2]
data = coverage.CoverageData()
data.read()
report = json.load(open(json_path))
per_test = {}
for path in data.measured_files():
    rel = next((name for name in report["files"] if path.endswith("/" + name) or path == name), None)
    if rel is None:
        continue
    contexts = {}
    for line, names in data.contexts_by_lineno(path).items():
        for name in names:
            if name:
                contexts.setdefault(name, set()).add(line)
    per_test[rel] = {name: base64.b64encode(nums_to_numbits(sorted(lines))).decode() for name, lines in sorted(contexts.items())}
report["per_test_numbits"] = per_test
json.dump(report, open(json_path, "w"), indent=1, sort_keys=True)
# The LCOV sidecar: only lines LCOV records as executed (line 0, a module entry, cannot appear).
executed = {}
current = None
for line in open(lcov_path):
    if line.startswith("SF:"):
        current = line[3:].strip()
    elif line.startswith("DA:") and current is not None:
        number, hits = line[3:].strip().split(",")[:2]
        if int(hits) > 0:
            executed.setdefault(current, set()).add(int(number))
sidecar = {}
for rel, tests in per_test.items():
    for name, bits in tests.items():
        lines = sorted(set(numbits_to_nums(base64.b64decode(bits))) & executed.get(rel, set()))
        sidecar.setdefault(rel, {})[name] = base64.b64encode(nums_to_numbits(lines)).decode()
json.dump({"per_test_numbits": sidecar}, open(lcov_path + ".per-test.json", "w"), indent=1, sort_keys=True)
