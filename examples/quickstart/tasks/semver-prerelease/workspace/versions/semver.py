"""Parse and compare Semantic Versioning 2.0.0 strings such as "1.4.2-beta.3+build.7"."""

import re

_VERSION = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


def parse(version):
    """Split a version into (major, minor, patch, prerelease, build).

    ``prerelease`` and ``build`` are strings, or None when absent. Raises ValueError
    for anything that is not a semantic version.
    """
    match = _VERSION.match(version)
    if not match:
        raise ValueError(f"not a semantic version: {version!r}")
    major, minor, patch, prerelease, build = match.groups()
    return int(major), int(minor), int(patch), prerelease, build


def compare(a, b):
    """Return -1, 0 or 1 as version ``a`` ranks below, equal to, or above ``b``."""
    core_a = parse(a)[:3]
    core_b = parse(b)[:3]
    return (core_a > core_b) - (core_a < core_b)
