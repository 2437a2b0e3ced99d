#!/usr/bin/env bash
# Makes calc-history.bundle: a tiny Python project (stdlib unittest) whose first-parent history
# holds one candidate for each outcome of `pluginbench tasks mine` (see README.md here).
# Written for PluginBench's tests; public domain (CC0). Run: bash make_history.sh (needs git).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Calc Dev" GIT_AUTHOR_EMAIL="dev@calc.invalid"
export GIT_COMMITTER_NAME="Calc Dev" GIT_COMMITTER_EMAIL="dev@calc.invalid"
n=0
commit() {  # commit "subject" ["body"]: every file in the tree, fixed dates
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-01-0${n}T12:00:00Z" GIT_COMMITTER_DATE="2024-01-0${n}T12:00:00Z"
  git add -A
  if [ $# -gt 1 ]; then git commit -q -m "$1" -m "$2"; else git commit -q -m "$1"; fi
}
git init -q -b main .
mkdir tests
touch tests/__init__.py
cat > calc.py <<'PY'
def add(a, b):
    return a + b
PY
cat > tests/test_calc.py <<'PY'
import unittest

import calc


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)
PY
commit "Start calc with add"                                              # root_commit

cat >> calc.py <<'PY'


def subtract(a, b):
    return a - b
PY
cat > tests/test_subtract.py <<'PY'
import unittest

import calc


class SubtractTest(unittest.TestCase):
    def test_subtract(self):
        self.assertEqual(calc.subtract(5, 3), 2)

    def test_subtract_negative(self):
        self.assertEqual(calc.subtract(3, 5), -2)
PY
commit "Add subtract" "calc.subtract(a, b) returns a minus b, like add does for sums."   # admitted

printf '# calc\n\nSmall arithmetic helpers.\n' > README.md
commit "Describe calc in the README"                                      # no_test_change

sed -i 's/    return a + b/    total = a + b\n    return total/' calc.py
commit "Name the sum in add"                                              # no_test_change

cat >> tests/test_calc.py <<'PY'

    def test_add_negative(self):
        self.assertEqual(calc.add(-2, -3), -5)
PY
commit "Test add with negative numbers"                                   # no_source_change

sed -i 's/    total = a + b/    total = b + a/' calc.py
cat >> tests/test_calc.py <<'PY'

    def test_add_zero(self):
        self.assertEqual(calc.add(0, 7), 7)
PY
commit "Add in the other order and test zero"                             # tests_pass_before

git checkout -q -b feature/divide
cat >> calc.py <<'PY'


def divide(a, b):
    return a / b
PY
cat > tests/test_divide.py <<'PY'
import unittest

import calc


class DivideTest(unittest.TestCase):
    def test_divide(self):
        self.assertEqual(calc.divide(6, 3), 2)
PY
commit "Add divide"
sed -i 's|    return a / b|    if b == 0:\n        raise ValueError("cannot divide by zero")\n    return a / b|' calc.py
cat >> tests/test_divide.py <<'PY'

    def test_divide_by_zero(self):
        with self.assertRaises(ValueError):
            calc.divide(1, 0)
PY
commit "Refuse to divide by zero"
git checkout -q main
n=$((n + 1))
export GIT_AUTHOR_DATE="2024-01-0${n}T12:00:00Z" GIT_COMMITTER_DATE="2024-01-0${n}T12:00:00Z"
git merge -q --no-ff feature/divide -m "Merge pull request #2 from feature/divide" \
  -m "Add calc.divide(a, b); dividing by zero raises ValueError(\"cannot divide by zero\")."   # admitted (merge)
git branch -q -D feature/divide

cat >> calc.py <<'PY'


def power(a, b):
    return a ** b
PY
cat > tests/test_power.py <<'PY'
import unittest

import calc


class PowerTest(unittest.TestCase):
    def test_power(self):
        self.assertEqual(calc.power(2, 3), 9)
PY
commit "Add power"                                                        # tests_fail_after

cat >> calc.py <<'PY'


def coin():
    import random

    return random.choice(["heads", "tails"])
PY
{
  printf 'import unittest\n\nimport calc\n\n\nclass CoinTest(unittest.TestCase):\n'
  for i in $(seq -w 1 32); do printf '    def test_heads_%s(self):\n        self.assertEqual(calc.coin(), "heads")\n\n' "$i"; done
} > tests/test_coin.py
commit "Add coin"                                                         # flaky

git bundle create -q "$here/calc-history.bundle" HEAD main
git log --first-parent --format='%h %s' main
