#!/usr/bin/env bash
# Makes calc-go.bundle: a tiny Go module (standard library `testing`) whose first-parent
# history holds a root commit, a commit without tests and one commit `pluginbench tasks mine`
# admits (see README.md here). Written for PluginBench's tests; public domain (CC0).
# Run: bash make_history.sh (needs git).
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
  export GIT_AUTHOR_DATE="2024-02-0${n}T12:00:00Z" GIT_COMMITTER_DATE="2024-02-0${n}T12:00:00Z"
  git add -A
  git commit -q -m "$1"
}
git init -q -b main .
mkdir calc words
printf 'module example.invalid/calc\n\ngo 1.19\n' > go.mod
cat > calc/calc.go <<'GO'
package calc

// Add returns a + b.
func Add(a, b int) int {
	return a + b
}
GO
cat > calc/calc_test.go <<'GO'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2 + 3 != 5")
	}
}
GO
cat > words/words.go <<'GO'
package words

import "strings"

// Shout upper-cases s.
func Shout(s string) string {
	return strings.ToUpper(s)
}
GO
cat > words/words_test.go <<'GO'
package words

import "testing"

func TestShout(t *testing.T) {
	if Shout("hi") != "HI" {
		t.Fatal("not shouted")
	}
}
GO
commit "Start calc with add"                                   # root_commit

printf '# calc\n\nSmall arithmetic in Go.\n' > README.md
commit "Describe calc in the README"                           # no_test_change

cat >> calc/calc.go <<'GO'

// Subtract returns a - b.
func Subtract(a, b int) int {
	return a - b
}
GO
cat >> calc/calc_test.go <<'GO'

func TestSubtract(t *testing.T) {
	t.Run("positive", func(t *testing.T) {
		if Subtract(5, 3) != 2 {
			t.Fatal("5 - 3 != 2")
		}
	})
	t.Run("negative", func(t *testing.T) {
		if Subtract(3, 5) != -2 {
			t.Fatal("3 - 5 != -2")
		}
	})
}
GO
commit "Add subtract"                                          # admitted

git bundle create -q "$here/calc-go.bundle" HEAD main
echo "wrote $here/calc-go.bundle"
