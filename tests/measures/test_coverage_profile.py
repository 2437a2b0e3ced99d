"""Coverage profiles in the config: validation names the field, resolution prefers the repository entry."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pluginbench.config import load
from pluginbench.errors import ConfigError
from pluginbench.measures._coverage_profile import (
    CoverageProfile,
    MeasurementSettings,
    resolve_profile,
)

REPO = Path(__file__).resolve().parents[2]
GOOD = {"command": ["sh", "coverage.sh"], "report_path": "coverage.json", "format": "coverage-py-json",
        "tool_version": "7.17.3"}


def _config(tmp: Path, settings: dict) -> Path:
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "tasks": {"source": str(REPO / "tests" / "data" / "coverage" / "tasks"), "ids": ["clamp"]},
        "measurements": ["tokens", "time", "lines", "coverage"],
        "measurement_settings": settings,
    }))
    return path


@pytest.mark.parametrize("profile, field, message", [
    ({**GOOD, "report_path": "../out.json"}, "report_path", "must be relative to the repository root"),
    ({**GOOD, "format": "cobertura"}, "format", "unknown coverage format"),
    ({**GOOD, "tool_version": ">=7"}, "tool_version", "is not an exact version"),
    ({**GOOD, "command": []}, "command", "non-empty list"),
])
def test_a_bad_profile_names_its_field(tmp_path: Path, profile: dict, field: str, message: str) -> None:
    """A bad coverage profile in the config is refused naming the entry and field, with the rule."""
    with pytest.raises(ConfigError) as err:
        load(_config(tmp_path, {"coverage_profiles": {"python": profile}}))
    assert message in str(err.value)
    assert err.value.field == f"measurement_settings.coverage_profiles['python'].{field}"


def test_shared_settings_and_a_good_profile_load(tmp_path: Path) -> None:
    """require_ready and scopes are accepted beside a valid profile."""
    loaded = load(_config(tmp_path, {"require_ready": True, "source_scope": ["calc/"], "coverage": GOOD}))
    assert loaded.evaluation.measurement_settings["require_ready"] is True


def test_repository_entry_overrides_language_which_overrides_default() -> None:
    """A repository_url entry wins over a language entry, which wins over the shared default."""
    a, b, c = (CoverageProfile(**{**GOOD, "tool_version": v}) for v in ("1.0.0", "2.0.0", "3.0.0"))
    ms = MeasurementSettings(coverage=a, coverage_profiles={"python": b, "https://example.org/r": c})
    assert resolve_profile(ms, "python", "https://example.org/r")[0] == c
    assert resolve_profile(ms, "python", None)[0] == b
    assert resolve_profile(ms, "go", None)[0] == a
    profile, why = resolve_profile(MeasurementSettings(), "go", None)
    assert profile is None and "no coverage profile applies" in why


def test_a_killed_revisions_saved_profiles_resolve_again_for_its_tasks() -> None:
    """The profiles a killed revision saved (task -> profile) are added under each task's repository
    URL, else its language, so each task resolves to its saved profile; one the settings already
    give is left as it was."""
    from pluginbench.actors._measure_again import with_task_profiles

    a, b, c = (CoverageProfile(**{**GOOD, "tool_version": v}) for v in ("1.0.0", "2.0.0", "3.0.0"))
    ms = MeasurementSettings(coverage_profiles={"go": a})
    meta = {"t1": {"language": "Python"}, "t2": {"language": "python", "repository_url": "https://example.org/r"},
            "t3": {"language": "go"}}
    got = with_task_profiles(ms, meta, {"t1": b, "t2": c, "t3": a})
    assert got.coverage_profiles == {"go": a, "python": b, "https://example.org/r": c}
    for task, want in (("t1", b), ("t2", c), ("t3", a)):
        url = meta[task].get("repository_url")
        assert resolve_profile(got, meta[task]["language"].lower(), url)[0] == want


def test_the_coverage_command_runs_as_the_task_wrote_it_with_the_submissions_tests(tmp_path: Path) -> None:
    """A patch's changes to the coverage command's own script (an argument naming a file of the starting source)
    and to .coveragerc are left out of the coverage sandbox; its source and test changes are kept."""
    from pluginbench.measures._coverage_run import coverage_patch

    start = tmp_path / "start"
    (start / "scripts").mkdir(parents=True)
    (start / "scripts" / "cover.sh").write_text("#!/bin/sh\n")
    (start / "tests").mkdir()

    def section(path: str, body: str = "+x\n") -> str:
        return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-y\n{body}"

    kept = section("b.go") + section("tests/test_b.py") + section("pyproject.toml")
    dropped = section("scripts/cover.sh", '+printf "mode: set\\nexample.com/m/b.go:3.20,4.11 1 1\\n" > cover.out\n')
    dropped += section(".coveragerc", "+[report]\n+omit = *\n")
    got = coverage_patch(dropped[: dropped.index("diff --git a/.coveragerc")] + kept + dropped[dropped.index(
        "diff --git a/.coveragerc"):], ["sh", "./scripts/cover.sh", "-v", "tests"], start)
    assert got == kept


def test_a_root_package_named_like_the_commands_module_is_left_out_of_the_coverage_sandbox(tmp_path: Path) -> None:
    """``python -m coverage`` puts the repository root first on the import path: a submission's root ``coverage/``
    package or ``coverage.py`` would run instead of coverage.py and write any report, so those sections are left out;
    a ``coverage`` folder deeper in the tree, a package the starting source already has, and everything else, is
    kept."""
    from pluginbench.measures._coverage_run import coverage_patch

    def section(path: str) -> str:
        return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"

    kept = section("calc.py") + section("src/coverage/report.py") + section("tests/test_calc.py")
    planted = section("coverage/__main__.py") + section("coverage.py") + section("pytest/__init__.py")
    command = ["sh", "-c", "python3 -m coverage run -m pytest; python3 -m coverage json -o cov.json"]
    assert coverage_patch(planted + kept, command, tmp_path) == kept
    assert coverage_patch(planted + kept, ["python3", "-m", "coverage", "run", "-m", "unittest"], tmp_path) == (
        section("pytest/__init__.py") + kept)
    # The project's own package, run with -m, is the code under test: its changes stay.
    (tmp_path / "mypkg").mkdir()
    own = section("mypkg/tests.py") + section("mypkg/core.py")
    assert coverage_patch(own + planted, ["python3", "-m", "coverage", "run", "-m", "mypkg.tests"], tmp_path) == (
        own + section("pytest/__init__.py"))
