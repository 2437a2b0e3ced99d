"""Dead code: Vulture 2.16 on the fixture repositories, and the pure comparison of two scans."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pluginbench.measures._deadcode import Candidate, introduced, parse_vulture
from pluginbench.measures._deadcode_scan import (
    cargo_status,
    run_vulture,
    staticcheck_status,
    vulture_status,
)
from pluginbench.measures._js_analyzers import tool_status
from pluginbench.measures._port import ReadinessInput
from pluginbench.measures._quality import check_dead_code, collect_dead_code
from tests._prereq import require

from ._quality_helpers import QUALITY, fixture_input


def _require_vulture() -> None:
    require(vulture_status()[0] == "vulture 2.16", "Vulture 2.16 (pip install -e '.[dev]')")


def test_python_fixture_introduces_the_unused_import_and_function(tmp_path: Path) -> None:
    """The Python submission adds `import os` and `helper`, both unused: two candidates since the starting scan."""
    _require_vulture()
    got = collect_dead_code(fixture_input(tmp_path, "python"))["dead_code_candidates_added"]
    assert (got.value, got.status, got.language, got.analyzer) == (2, "measured", "python", "vulture 2.16")
    listed = (tmp_path / "attempt" / "measure" / "x" / "introduced.txt").read_text().splitlines()
    assert listed == ["pkg/extra.py:1: unused import 'os'", "pkg/extra.py:4: unused function 'helper'"]


def test_the_starting_source_scans_clean(tmp_path: Path) -> None:
    """Vulture finds nothing unused in the Python fixture's starting source (its tests use every function)."""
    _require_vulture()
    scan = run_vulture(QUALITY / "python" / "start")
    assert scan.candidates == () and scan.unreadable == ()


def test_a_patch_that_changes_no_python_file_introduces_nothing(tmp_path: Path) -> None:
    """A submission touching only a README introduces zero candidates (a complete answer, not unknown)."""
    _require_vulture()
    patch = "diff --git a/README.md b/README.md\nnew file mode 100644\n--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+x\n"
    got = collect_dead_code(fixture_input(tmp_path, "python", patch=patch))["dead_code_candidates_added"]
    assert (got.value, got.status) == (0, "measured")


def test_a_syntax_error_in_a_changed_file_is_unknown(tmp_path: Path) -> None:
    """A changed Python file Vulture cannot parse leaves dead code unknown, naming the file."""
    _require_vulture()
    patch = ("diff --git a/pkg/broken.py b/pkg/broken.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/broken.py\n"
             "@@ -0,0 +1 @@\n+def broken(:\n")
    got = collect_dead_code(fixture_input(tmp_path, "python", patch=patch))["dead_code_candidates_added"]
    assert got.value is None and got.status == "unknown" and "pkg/broken.py" in (got.reason or "")


def _require_js_tools() -> None:
    for tool in ("knip", "jscpd"):
        require(tool_status(tool)[0] is not None, f"{tool} (tools/install-analyzers.sh)")


def test_typescript_fixture_introduces_one_unused_export(tmp_path: Path) -> None:
    """The TypeScript submission adds an exported `label` nothing imports: knip finds one new candidate, jscpd none."""
    _require_js_tools()
    got = collect_dead_code(fixture_input(tmp_path, "typescript"))
    assert (got["dead_code_candidates_added"].value, got["dead_code_candidates_added"].language,
            got["dead_code_candidates_added"].analyzer) == (1, "typescript", "knip 6.44.2")
    assert (got["duplicate_groups_added"].value, got["duplicate_groups_added"].analyzer) == (0, "jscpd 5.3.2")


def test_javascript_fixture_introduces_two_unused_exports_and_one_duplicate_group(tmp_path: Path) -> None:
    """The JavaScript submission exports `total` and its copy `totalAgain`, used nowhere: 2 candidates, 1 group."""
    _require_js_tools()
    got = collect_dead_code(fixture_input(tmp_path, "javascript"))
    assert (got["dead_code_candidates_added"].value, got["duplicate_groups_added"].value) == (2, 1)
    groups = (tmp_path / "attempt" / "measure" / "x" / "duplicate-groups.txt").read_text().splitlines()
    assert len(groups) == 1 and "let sum = 0;" in groups[0]


def test_an_unresolved_new_import_names_the_file_and_the_import(tmp_path: Path) -> None:
    """A new relative import knip cannot resolve leaves JS dead code unknown, naming the importing file and import."""
    _require_js_tools()
    patch = ('diff --git a/src/index.js b/src/index.js\n--- a/src/index.js\n+++ b/src/index.js\n'
             '@@ -1,3 +1,4 @@\n const { pick } = require("./util");\n+const gone = require("./missing-module");\n \n'
             '-console.log(pick([{ a: 1 }], "a"));\n+console.log(pick([{ a: 1 }], "a"), gone);\n')
    got = collect_dead_code(fixture_input(tmp_path, "javascript", patch=patch))["dead_code_candidates_added"]
    assert got.value is None and "src/index.js" in (got.reason or "") and "./missing-module" in (got.reason or "")


def test_python_tasks_have_no_duplicate_groups_measure(tmp_path: Path) -> None:
    """Duplicate-code groups are JS/TS only: a Python task's value is unknown with that reason, never zero."""
    _require_vulture()
    got = collect_dead_code(fixture_input(tmp_path, "python"))["duplicate_groups_added"]
    assert got.value is None and "JavaScript/TypeScript" in (got.reason or "")


def _require_cargo() -> None:
    require(cargo_status()[0] is not None, "cargo on PATH (the machine's Rust toolchain)")


def test_rust_fixture_adds_a_public_function_and_no_candidate(tmp_path: Path) -> None:
    """The Rust submission adds `pub fn count_even`: rustc's lints report nothing new (public items are used)."""
    _require_cargo()
    got = collect_dead_code(fixture_input(tmp_path, "rust"))["dead_code_candidates_added"]
    assert (got.value, got.status, got.language) == (0, "measured", "rust")
    assert (got.analyzer or "").startswith("cargo ")


def test_rust_private_unused_function_and_variable_are_two_candidates(tmp_path: Path) -> None:
    """A private never-called function holding an unused variable: rustc's dead_code and unused_variables, 2."""
    _require_cargo()
    patch = ("diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -7,3 +7,8 @@ pub fn sign(x: i32) -> i32 {\n"
             "         0\n     }\n }\n+\n+fn helper() -> i32 {\n+    let unused_var = 3;\n+    4\n+}\n")
    got = collect_dead_code(fixture_input(tmp_path, "rust", patch=patch))["dead_code_candidates_added"]
    assert got.value == 2, got.reason
    listed = (tmp_path / "attempt" / "measure" / "x" / "introduced.txt").read_text().splitlines()
    assert listed == ["src/lib.rs:11: function `helper` is never used", "src/lib.rs:12: unused variable: `unused_var`"]


def test_rust_that_does_not_compile_is_unknown(tmp_path: Path) -> None:
    """A submission cargo cannot check leaves Rust dead code unknown with the compiler's message."""
    _require_cargo()
    patch = ("diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -7,3 +7,4 @@ pub fn sign(x: i32) -> i32 {\n"
             "         0\n     }\n }\n+fn broken() -> i32 { \"text\" }\n")
    got = collect_dead_code(fixture_input(tmp_path, "rust", patch=patch))["dead_code_candidates_added"]
    assert got.value is None and "cargo check --offline failed" in (got.reason or "")


def _require_staticcheck() -> None:
    require(staticcheck_status()[0] is not None, "go-staticcheck and golang-go (tools/setup.sh --dev)")


def test_go_fixture_adds_exported_functions_and_no_candidate(tmp_path: Path) -> None:
    """The Go submission adds exported `Grade` and `Double`: staticcheck's U1000 reports nothing new."""
    _require_staticcheck()
    got = collect_dead_code(fixture_input(tmp_path, "go"))["dead_code_candidates_added"]
    assert (got.value, got.status, got.language) == (0, "measured", "go")
    assert (got.analyzer or "").startswith("staticcheck ")


def test_go_unexported_unused_function_and_variable_are_two_candidates(tmp_path: Path) -> None:
    """A new file with an unexported unused func and var: staticcheck U1000 finds 2 new candidates."""
    _require_staticcheck()
    patch = ("diff --git a/extra.go b/extra.go\nnew file mode 100644\n--- /dev/null\n+++ b/extra.go\n@@ -0,0 +1,7 @@\n"
             "+package calc\n+\n+func helper() int {\n+\treturn 1\n+}\n+\n+var unusedVar = 3\n")
    got = collect_dead_code(fixture_input(tmp_path, "go", patch=patch))["dead_code_candidates_added"]
    assert got.value == 2, got.reason
    listed = (tmp_path / "attempt" / "measure" / "x" / "introduced.txt").read_text().splitlines()
    assert listed == ["extra.go:3: func helper is unused", "extra.go:7: var unusedVar is unused"]


def test_go_that_does_not_compile_is_unknown(tmp_path: Path) -> None:
    """A Go submission that does not type-check leaves dead code unknown with the loader's message."""
    _require_staticcheck()
    patch = ("diff --git a/extra.go b/extra.go\nnew file mode 100644\n--- /dev/null\n+++ b/extra.go\n@@ -0,0 +1,3 @@\n"
             "+package calc\n+\n+func Broken() int { return \"text\" }\n")
    got = collect_dead_code(fixture_input(tmp_path, "go", patch=patch))["dead_code_candidates_added"]
    assert got.value is None and "staticcheck could not load" in (got.reason or "")


def test_two_analyzer_groups_in_one_submission_are_not_pooled(tmp_path: Path) -> None:
    """A submission changing Python and Go source leaves unused candidates unknown with the reason."""
    patch = (QUALITY / "python" / "submission.patch").read_text() + (
        "diff --git a/x.go b/x.go\nnew file mode 100644\n--- /dev/null\n+++ b/x.go\n@@ -0,0 +1,2 @@\n"
        "+package x\n+func A() {}\n")
    got = collect_dead_code(fixture_input(tmp_path, "python", patch=patch))["dead_code_candidates_added"]
    assert got.value is None and "not pooled" in (got.reason or "")


def test_moved_code_is_not_new_and_repeats_count_beyond_the_start() -> None:
    """Candidates match by file and message, not line: a moved one is old; a second copy of an old one is new."""
    before = [Candidate("a.py", "unused function 'f'", 3)]
    after = [Candidate("a.py", "unused function 'f'", 10), Candidate("a.py", "unused function 'f'", 20),
             Candidate("tests/test_a.py", "unused function 'g'", 1)]
    assert introduced(before, after) == [Candidate("a.py", "unused function 'f'", 20)]


def test_vulture_report_lines_parse_and_errors_name_the_file() -> None:
    """Report lines become candidates without the ./ prefix; an invalid-syntax line names an unreadable file."""
    scan = parse_vulture("./pkg/a.py:4: unused function 'helper' (60% confidence)\n"
                         "pkg/b.py:9: unreachable code after 'return' (100% confidence, 2 lines)\n",
                         "pkg/c.py:1: invalid syntax at \"def broken(:\"\n")
    assert scan.candidates == (Candidate("pkg/a.py", "unused function 'helper'", 4),
                               Candidate("pkg/b.py", "unreachable code after 'return'", 9))
    assert scan.unreadable == ("pkg/c.py",)


def test_readiness_per_language(tmp_path: Path) -> None:
    """Dead-code readiness: ready on the Python and TypeScript fixtures with the tool versions, not_configured
    on a folder without analyzed source."""
    _require_vulture()
    _require_js_tools()

    def check(name: str):
        return check_dead_code(ReadinessInput("t", tmp_path, QUALITY / name / "start", None, None, {}, tmp_path))
    assert (check("python").state, check("python").tool_version) == ("ready", "vulture 2.16")
    assert (check("typescript").state, check("typescript").tool_version) == ("ready", "knip 6.44.2, jscpd 5.3.2")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("x\n")
    none = check_dead_code(ReadinessInput("t", tmp_path, docs, None, None, {}, tmp_path))
    assert none.state == "not_configured"


def test_a_submission_cannot_run_code_or_configure_vulture(tmp_path: Path) -> None:
    """A tree carrying its own `vulture.py`, a shadowed standard module and a pyproject.toml that ignores every
    name runs none of them: the real Vulture scans it and still finds the unused function."""
    _require_vulture()
    tree = tmp_path / "tree"
    tree.mkdir()
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'a').write(__name__)\n"
    (tree / "vulture.py").write_text(payload)
    (tree / "argparse.py").write_text(payload)
    (tree / "tokenize.py").write_text(payload)
    (tree / "pyproject.toml").write_text('[tool.vulture]\nignore_names = ["*"]\nexclude = ["*.py"]\n')
    (tree / "unused.py").write_text("def never_called():\n    return 1\n")
    scan = run_vulture(tree)
    assert not marker.exists()
    assert any(c.path == "unused.py" and "never_called" in c.message for c in scan.candidates), scan


_CONFIG_PATCH = (
    'diff --git a/knip.json b/knip.json\nnew file mode 100644\n--- /dev/null\n+++ b/knip.json\n@@ -0,0 +1 @@\n'
    '+{"ignore": ["src/util.js"], "ignoreExportsUsedInFile": true}\n'
    'diff --git a/.jscpd.json b/.jscpd.json\nnew file mode 100644\n--- /dev/null\n+++ b/.jscpd.json\n@@ -0,0 +1 @@\n'
    '+{"minTokens": 100000, "minLines": 10000}\n'
    'diff --git a/.gitignore b/.gitignore\nnew file mode 100644\n--- /dev/null\n+++ b/.gitignore\n@@ -0,0 +1 @@\n'
    '+src/util.js\n'
    'diff --git a/src/.ignore b/src/.ignore\nnew file mode 100644\n--- /dev/null\n+++ b/src/.ignore\n@@ -0,0 +1 @@\n'
    '+util.js\n'
    'diff --git a/.config/jscpd.json b/.config/jscpd.json\nnew file mode 100644\n--- /dev/null\n'
    '+++ b/.config/jscpd.json\n@@ -0,0 +1 @@\n+{"minTokens": 100000}\n'
    'diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -2,5 +2,7 @@\n'
    '   "name": "util",\n   "version": "1.0.0",\n   "private": true,\n-  "main": "src/index.js"\n'
    '+  "main": "src/index.js",\n+  "knip": {"ignore": ["src/util.js"]},\n+  "jscpd": {"minTokens": 100000}\n }\n'
)


def test_the_analysis_leaves_out_what_a_submission_changes_of_the_analyzers_configuration() -> None:
    """A patch's sections that change a root knip or jscpd configuration file or any .gitignore or .ignore
    (either side of a rename) are left out of what the analyzers see; every other section is kept byte for byte."""
    from pluginbench.measures._js_analyzers import analysis_patch

    keep = (QUALITY / "javascript" / "submission.patch").read_text()
    renamed = ("diff --git a/notes.json b/knip.jsonc\nsimilarity index 100%\nrename from notes.json\n"
               "rename to knip.jsonc\n")
    nested = "diff --git a/lib/knip.json b/lib/knip.json\nnew file mode 100644\n--- /dev/null\n+++ b/lib/knip.json\n"
    got = analysis_patch(keep + _CONFIG_PATCH + renamed + nested)
    assert got == keep + _CONFIG_PATCH[_CONFIG_PATCH.index("diff --git a/package.json"):] + nested


_PLUGIN_CONFIG_PATCH = (
    'diff --git a/jest.config.js b/jest.config.js\nnew file mode 100644\n--- /dev/null\n+++ b/jest.config.js\n'
    '@@ -0,0 +1,2 @@\n+process.stdout.write(JSON.stringify({files: [], issues: []}));\n+process.exit(0);\n'
    'diff --git a/.eslintrc.cjs b/.eslintrc.cjs\nnew file mode 100644\n--- /dev/null\n+++ b/.eslintrc.cjs\n'
    '@@ -0,0 +1 @@\n+process.exit(0);\n'
)


def test_the_analysis_leaves_out_configuration_scripts_knips_plugins_would_run(tmp_path: Path) -> None:
    """Configuration scripts knip's plugins import (jest.config.js, .eslintrc.cjs, vite.config.ts, Gruntfile.js, a
    .storybook file) in a package's root folder (the repository's, one with a package.json in the starting source
    or in the patch) are left out of what the analyzers see; the same names elsewhere are source, and kept."""
    from pluginbench.measures._js_analyzers import _configures, analysis_patch

    keep = (QUALITY / "javascript" / "submission.patch").read_text()
    web = ("diff --git a/web/vite.config.ts b/web/vite.config.ts\nnew file mode 100644\n--- /dev/null\n"
           "+++ b/web/vite.config.ts\n@@ -0,0 +1 @@\n+process.exit(0);\n")
    assert analysis_patch(keep + _PLUGIN_CONFIG_PATCH + web) == keep + web  # web/ holds no package.json
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "package.json").write_text("{}")
    assert analysis_patch(keep + _PLUGIN_CONFIG_PATCH + web, tmp_path) == keep
    manifest = "diff --git a/web/package.json b/web/package.json\nnew file mode 100644\n--- /dev/null\n"
    assert analysis_patch(keep + _PLUGIN_CONFIG_PATCH + web + manifest) == keep + manifest
    for path in ("vite.config.ts", "karma.conf.js", "webpack.config.babel.js", "Gruntfile.js", "gatsby-node.js",
                 ".storybook/main.ts", ".mocharc.js", "vitest.workspace.ts", "eslint.config.mjs"):
        assert _configures(path), path
    for path in ("src/config.js", "src/my-config.js", "config/index.ts", "src/app.config.json", "src/rc.js",
                 "src/app/app.config.ts", "src/.mocharc.js"):
        assert not _configures(path), path


def test_a_submission_cannot_configure_knip_or_jscpd_to_see_nothing(tmp_path: Path) -> None:
    """The JavaScript submission plus a knip.json, .jscpd.json, .gitignore, .ignore, package.json keys and a
    jest.config.js that prints an empty report, any of which would hide its unused exports and its duplicate: the
    analyzers, configured as the starting source is, still find 2 and 1."""
    _require_js_tools()
    patch = (QUALITY / "javascript" / "submission.patch").read_text() + _CONFIG_PATCH + _PLUGIN_CONFIG_PATCH
    got = collect_dead_code(fixture_input(tmp_path, "javascript", patch=patch))
    assert (got["dead_code_candidates_added"].value, got["duplicate_groups_added"].value) == (2, 1), got


_JEST_PATCH = (
    'diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -2,5 +2,6 @@\n'
    '   "name": "util",\n   "version": "1.0.0",\n   "private": true,\n-  "main": "src/index.js"\n'
    '+  "main": "src/index.js",\n+  "devDependencies": {"jest": "29.0.0"}\n }\n'
) + _PLUGIN_CONFIG_PATCH


def test_a_plugin_configuration_script_of_the_submission_never_runs_inside_knip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With jest among its devDependencies, knip's jest plugin imports jest.config.js: the submission's version,
    which prints an empty report and exits, is left out, so knip still reports the 2 unused exports and the
    duplicate (kept in, it would have made them 0)."""
    _require_js_tools()
    from pluginbench.measures import _js_analyzers

    patch = (QUALITY / "javascript" / "submission.patch").read_text() + _JEST_PATCH
    got = collect_dead_code(fixture_input(tmp_path / "a", "javascript", patch=patch))
    assert (got["dead_code_candidates_added"].value, got["duplicate_groups_added"].value) == (2, 1), got
    monkeypatch.setattr(_js_analyzers, "_PLUGIN_CONFIG", re.compile("(?!)"))  # kept in: the script runs in knip
    lied = collect_dead_code(fixture_input(tmp_path / "b", "javascript", patch=patch))
    assert lied["dead_code_candidates_added"].value == 0, lied
    assert (got["dead_code_candidates_added"].value, got["duplicate_groups_added"].value) == (2, 1), got


def test_vulture_past_its_memory_bound_is_unknown_never_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Vulture runs with its memory bounded; a file that takes it past the bound (a MemoryError, exit 1) is a
    failed analysis naming the bound, never an empty scan that would read as nothing unused."""
    _require_vulture()
    from pluginbench.errors import AnalyzerFailed
    from pluginbench.measures import _deadcode_scan

    monkeypatch.setattr(_deadcode_scan, "VULTURE_MEMORY_BYTES", 300 * 1024 * 1024)
    (tmp_path / "big.py").write_text("x = [" + ",".join("a" for _ in range(1_500_000)) + "]\n")
    (tmp_path / "ok.py").write_text("def unused():\n    return 1\n")
    with pytest.raises(AnalyzerFailed, match="memory bound is 300 MiB"):
        run_vulture(tmp_path)
