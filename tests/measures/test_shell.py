"""Which shell commands are verification commands, and when their status is masked."""

from __future__ import annotations

import pytest

from pluginbench.measures._shell import analyze, lex

# command -> [(tool, masked)] of its verification segments
CASES = {
    "pytest -x": [("pytest", False)],
    ".venv/bin/pytest tests/": [("pytest", False)],
    "node_modules/.bin/jest --ci": [("jest", False)],
    "cd /app && python -m pytest tests/ 2>&1 | tail -20": [("python -m pytest", True)],
    "set -o pipefail; pytest | tail": [("pytest", False)],
    "set -euo pipefail\npytest | tail\n": [("pytest", False)],
    "set -o pipefail; set +o pipefail; pytest | tail": [("pytest", True)],
    "pytest || true": [("pytest", True)],
    "pytest || echo failed": [("pytest", False)],
    "pytest && echo ok": [("pytest", False)],
    "pytest; echo done": [("pytest", True)],
    "pytest &": [("pytest", True)],
    "pytest\nfi\ndone": [("pytest", False)],
    "pytest\nX=1": [("pytest", True)],
    "echo start; pytest": [("pytest", False)],
    "FOO=1 env -i -u BAR timeout -s KILL 30 uv run --with hypothesis python3 -m pytest": [("python -m pytest", False)],
    "time poetry run mypy src": [("mypy", False)],
    "npx --yes tsc --noEmit": [("tsc", False)],
    "npm exec --yes -- jest --watch=false": [("jest", False)],
    "pnpm exec vitest run": [("vitest", False)],
    "yarn exec eslint .": [("eslint", False)],
    "yarn jest": [("jest", False)],
    "yarn test": [("yarn test", False)],
    "npm test": [("npm test", False)],
    "npm run test:unit": [("npm run test", False)],
    "python3.11 -m unittest -q": [("python -m unittest", False)],
    "python -W ignore -m ruff check .": [("python -m ruff check", False)],
    "ruff check src": [("ruff check", False)],
    "go test ./... &> out.txt": [("go test", False)],
    "cargo test 2>&1": [("cargo test", False)],
    "if pytest; then\n  echo ok\nfi": [("pytest", True)],
    # not verification
    "python script.py": [],
    "python -m pip install pytest": [],
    "python -c 'import pytest'": [],
    "ruff format": [],
    "go build ./...": [],
    "echo 'pytest | tail'": [],
    "echo pytest": [],
    "cat <<'EOF'\npytest && go test\nEOF\necho": [],
    "cat > t.sh <<-EOF\n\tpytest\n\tEOF\nls": [],
    "grep -r pytest .": [],
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_recognition_and_masking(command: str) -> None:
    """Each command's verification segments and masks are as the product description's rules give."""
    got = analyze(command)
    assert got.ambiguous is None
    assert [(v.tool, v.masked) for v in got.verifications] == CASES[command]


def test_heredoc_bodies_are_data_and_the_command_after_them_counts() -> None:
    """A here-document holding `pytest` is data; the `pytest` after the delimiter is a command."""
    got = analyze("cat > t.py <<EOF\npytest -x\nEOF\npytest t.py")
    assert [(v.tool, v.masked) for v in got.verifications] == [("pytest", False)]


def test_quoted_operators_are_data() -> None:
    """`;` and `|` inside quotes neither split segments nor mask."""
    lexed = lex("pytest -k 'a or b; c | d' \"x && y\"")
    assert len(lexed.segments) == 1 and lexed.malformed is None
    assert not analyze("pytest -k 'a; b | c'").masked


def test_malformed_command_that_could_hold_a_verification_is_ambiguous() -> None:
    """An unterminated quote whose words could start `pytest` is ambiguous (the attempt becomes incomplete)."""
    got = analyze("echo 'unterminated; pytest -x")
    assert got.ambiguous is not None and "pytest" in got.ambiguous


@pytest.mark.parametrize("command", ["echo 'unterminated ls", "cat <<EOF\nno end", "echo $(ls"])
def test_malformed_command_with_no_possible_verification_is_ignored(command: str) -> None:
    """A malformed command none of whose words could start a verification command cannot change a count."""
    got = analyze(command)
    assert got.ambiguous is None and not got.is_verification


def test_unterminated_heredoc_with_a_tool_inside_is_ambiguous() -> None:
    """A here-document with no end line may or may not be data: ambiguous when it holds `go test`."""
    assert analyze("cat <<EOF\ngo test ./...").ambiguous is not None
