"""The coverage measure's settings (``measurement_settings.coverage`` and
``coverage_profiles``) and the shared ones this module reads (``require_ready``,
``source_scope``, ``test_scope``), as frozen values, their validation and coverage-profile
resolution.

A coverage profile says how one task's tests produce a coverage report inside a fresh copy
of the frozen task image: ``command`` (argv, run from the repository root, without model
credentials), ``report_path`` (relative to the repository root), ``format`` (``lcov``,
``coverage-py-json`` or ``go-coverprofile``) and ``tool_version`` (the exact installed
coverage tool version; coverage.py's is checked against the report's own metadata, LCOV and
Go versions are the operator's declaration). PluginBench installs no coverage framework.

``coverage`` is the shared default; ``coverage_profiles`` maps a language (``python``,
``go``, ``javascript``, ``typescript``, ``rust``...) or a task's exact metadata
``repository_url`` to a profile. A repository entry overrides a language entry, which
overrides the default.
"""

from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Any

import msgspec

COVERAGE_FORMATS = ("lcov", "coverage-py-json", "go-coverprofile")


class CoverageProfile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How one task's tests write a coverage report."""

    command: list[str]
    report_path: str
    format: str = "lcov"
    tool_version: str
    #: the measured package, independent of repository-wide lines and analysis (globs)
    source_scope: list[str] | None = None
    test_scope: list[str] | None = None
    #: seconds the command may take (coverage runs the whole suite)
    timeout_seconds: int = 900


class MeasurementSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Settings shared by every code measure; frozen with the run."""

    #: stop the check when any selected measure is not ready on some task
    require_ready: bool = False
    source_scope: list[str] | None = None
    test_scope: list[str] | None = None
    coverage: CoverageProfile | None = None
    coverage_profiles: dict[str, CoverageProfile] = {}


Bad = Callable[[str, str, str], Exception]

#: the ``measurement_settings`` keys this module reads
SETTINGS_KEYS = ("require_ready", "source_scope", "test_scope", "coverage", "coverage_profiles")


def settings_of(raw: Mapping[str, Any]) -> MeasurementSettings:
    """The keys of a ``measurement_settings`` mapping this module reads, decoded (other
    measures' keys are theirs)."""
    return msgspec.convert({k: v for k, v in raw.items() if k in SETTINGS_KEYS}, MeasurementSettings, strict=False)


def validate_profile(p: CoverageProfile, where: str, bad: Bad) -> None:
    """A profile's own rules: a non-empty argv, a relative report path inside the
    repository, a known format, an exact tool version, a positive timeout."""
    if not p.command or not all(isinstance(a, str) and a for a in p.command):
        raise bad("the coverage command must be a non-empty list of arguments", f"{where}.command",
                  "write it as an argv list, e.g. [sh, coverage.sh] or [npm, run, coverage]")
    path = PurePosixPath(p.report_path)
    if not p.report_path or path.is_absolute() or ".." in path.parts or p.report_path.startswith("~"):
        raise bad(f"report_path {p.report_path!r} must be relative to the repository root and stay inside it",
                  f"{where}.report_path", "write the path the command writes, e.g. coverage/lcov.info")
    if p.format not in COVERAGE_FORMATS:
        raise bad(f"unknown coverage format {p.format!r}", f"{where}.format", "use one of: " + ", ".join(COVERAGE_FORMATS))
    if not p.tool_version.strip() or p.tool_version.strip() != p.tool_version or any(c in p.tool_version for c in "*^~<>= "):
        raise bad(f"tool_version {p.tool_version!r} is not an exact version", f"{where}.tool_version",
                  'write the exact installed coverage tool version, e.g. "7.17.3"')
    if p.timeout_seconds < 1:
        raise bad("timeout_seconds must be 1 or more", f"{where}.timeout_seconds", "set e.g. 900")


def validate_settings(ms: MeasurementSettings, bad: Bad) -> None:
    if ms.coverage is not None:
        validate_profile(ms.coverage, "measurement_settings.coverage", bad)
    for key, profile in ms.coverage_profiles.items():
        if not key.strip():
            raise bad("a coverage_profiles key is empty", "measurement_settings.coverage_profiles",
                      "use a language name (python, go, javascript...) or a task's exact repository_url")
        validate_profile(profile, f"measurement_settings.coverage_profiles[{key!r}]", bad)


def resolve_profile(ms: MeasurementSettings, language: str | None,
                    repository_url: str | None) -> tuple[CoverageProfile | None, str]:
    """The profile for one task and where it came from: the repository entry, else the
    language entry, else the shared default; ``(None, reason)`` when none applies."""
    if repository_url and repository_url in ms.coverage_profiles:
        return ms.coverage_profiles[repository_url], f"coverage_profiles[{repository_url!r}]"
    if language and language in ms.coverage_profiles:
        return ms.coverage_profiles[language], f"coverage_profiles[{language!r}]"
    if ms.coverage is not None:
        return ms.coverage, "coverage"
    known = f" (task language {language!r}" + (f", repository {repository_url!r})" if repository_url else ")") \
        if language or repository_url else ""
    return None, f"no coverage profile applies to this task{known}: set measurement_settings.coverage or a coverage_profiles entry"


def parse_profiles_mapping(raw: Any, where: str, bad: Bad) -> dict[str, CoverageProfile]:
    """A YAML ``coverage_profiles`` mapping (the ``--coverage-profiles`` file), validated."""
    if isinstance(raw, Mapping) and set(raw) == {"coverage_profiles"}:
        raw = raw["coverage_profiles"]
    if not isinstance(raw, Mapping) or not raw:
        raise bad("expected a non-empty mapping of language or repository_url to a coverage profile", where,
                  "write e.g. python: {command: [sh, coverage.sh], report_path: coverage.json, "
                  "format: coverage-py-json, tool_version: \"7.17.3\"}")
    try:
        profiles = msgspec.convert(dict(raw), dict[str, CoverageProfile])
    except msgspec.ValidationError as exc:
        raise bad(f"invalid coverage profile: {exc}", where, "each entry needs command, report_path, format and tool_version") from None
    ms = MeasurementSettings(coverage_profiles=profiles)
    validate_settings(ms, bad)
    return profiles
