#!/usr/bin/env bash
# Makes calc-js.bundle: a tiny JavaScript package (node's built-in `node:test`) whose
# first-parent history holds a root commit, a commit without tests and one commit
# `pluginbench tasks mine` admits (see README.md here). Written for PluginBench's tests;
# public domain (CC0). Run: bash make_history.sh (needs git).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Calc Dev" GIT_AUTHOR_EMAIL="dev@calc.invalid"
export GIT_COMMITTER_NAME="Calc Dev" GIT_COMMITTER_EMAIL="dev@calc.invalid"
n=0
commit() {  # commit "subject": every file in the tree, fixed dates
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-03-0${n}T12:00:00Z" GIT_COMMITTER_DATE="2024-03-0${n}T12:00:00Z"
  git add -A
  git commit -q -m "$1"
}
git init -q -b main .
mkdir test
printf '{\n  "name": "calc",\n  "version": "1.0.0",\n  "private": true,\n  "scripts": {"test": "node --test"}\n}\n' > package.json
cat > calc.js <<'JS'
'use strict';

function add(a, b) {
  return a + b;
}

module.exports = { add };
JS
cat > test/add.test.js <<'JS'
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const calc = require('../calc');

test('add', () => {
  assert.strictEqual(calc.add(2, 3), 5);
});
JS
commit "Start calc with add"                                   # root_commit

printf '# calc\n\nSmall arithmetic in JavaScript.\n' > README.md
commit "Describe calc in the README"                           # no_test_change

cat > calc.js <<'JS'
'use strict';

function add(a, b) {
  return a + b;
}

function subtract(a, b) {
  return a - b;
}

module.exports = { add, subtract };
JS
cat > test/subtract.test.js <<'JS'
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const calc = require('../calc');

test('subtract', async (t) => {
  await t.test('positive', () => {
    assert.strictEqual(calc.subtract(5, 3), 2);
  });
  await t.test('negative', () => {
    assert.strictEqual(calc.subtract(3, 5), -2);
  });
});
JS
commit "Add subtract"                                          # admitted

git bundle create -q "$here/calc-js.bundle" HEAD main
echo "wrote $here/calc-js.bundle"
