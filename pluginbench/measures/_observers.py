"""Frozen measurement profile: each observer version declares the source hashes it covers.

A measure's *observer* is the code whose output is its values: the pure rules and analyzer
edges named in ``MeasureSpec.observer_modules``. A run binds each selected measure's
observer version at preparation. A PluginBench fix that keeps a version may still measure
saved runs, so a version declares every source hash that gives its values
(``_observers_declared.DECLARED``); an observer whose source hash no version declares, or
that a different version declares, is refused: readiness is ``broken`` for every task
(the run stops before coding) and ``pluginbench measure`` exits 2.

The hash reads the modules' source with comments and string-only statements (docstrings)
removed and blank lines and trailing spaces dropped, so a comment or docstring edit needs
no new declaration; any code edit does (``tools/declare_observers.py`` adds the current
hash under the current version: do it only when the values cannot change, else bump
``observer_version``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import tokenize
from collections.abc import Iterable, Mapping
from pathlib import Path

from ._observers_declared import DECLARED
from ._port import MeasureSpec

_SKIP_BEFORE = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}


def _strip(source: str) -> str:
    """``source`` without comments and string-only statements, blank lines, trailing spaces."""
    lines = source.splitlines()
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.NL,)]
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            spans.append((tok.start, tok.end))
        elif tok.type == tokenize.STRING:
            before = next((t for t in reversed(tokens[:i]) if t.type != tokenize.COMMENT), None)
            after = next((t for t in tokens[i + 1:] if t.type != tokenize.COMMENT), None)
            if (before is None or before.type in _SKIP_BEFORE) and (after is None or after.type in
                                                                     (tokenize.NEWLINE, tokenize.ENDMARKER)):
                spans.append((tok.start, tok.end))
    for (r0, c0), (r1, c1) in sorted(spans, reverse=True):
        if r0 == r1:
            lines[r0 - 1] = lines[r0 - 1][:c0] + lines[r0 - 1][c1:]
        else:
            lines[r0 - 1] = lines[r0 - 1][:c0]
            lines[r1 - 1] = lines[r1 - 1][c1:]
            for r in range(r0, r1 - 1):
                lines[r] = ""
    return "\n".join(s for line in lines if (s := line.rstrip()))


def module_path(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"observer module {module} is not importable")
    return Path(spec.origin)


def source_hash(modules: Iterable[str]) -> str:
    """The SHA-256 of the observer modules' stripped source, in module-name order."""
    digest = hashlib.sha256()
    for module in sorted(modules):
        text = _strip(module_path(module).read_text(encoding="utf-8"))
        digest.update(f"{module}\0{len(text)}\0{text}\0".encode())
    return digest.hexdigest()


def observer_source(spec: MeasureSpec) -> str | None:
    """``spec``'s observer source hash, or None when it names no observer modules."""
    return source_hash(spec.observer_modules) if spec.observer_modules else None


def observer_sources(specs: Iterable[MeasureSpec]) -> dict[str, str]:
    return {s.name: h for s in specs if (h := observer_source(s)) is not None}


def declaring_versions(name: str, digest: str, declared: Mapping[str, Mapping[str, Iterable[str]]] | None = None) -> list[str]:
    table = DECLARED if declared is None else declared
    return sorted(v for v, hashes in table.get(name, {}).items() if digest in hashes)


def observer_refusal(spec: MeasureSpec, frozen_version: str | None = None) -> str | None:
    """Why ``spec``'s observer must not measure (None: it may). The source hash must be
    declared by ``spec.observer_version``, and that must be the version a run froze."""
    version = spec.observer_version
    if frozen_version is not None and frozen_version != version:
        return (f"the run froze the '{spec.name}' observer at version {frozen_version}; this PluginBench has "
                f"version {version}, whose values could differ for the same input")
    digest = observer_source(spec)
    if digest is None:
        return None
    versions = declaring_versions(spec.name, digest)
    if version in versions:
        return None
    if versions:
        return (f"the '{spec.name}' observer source (sha256 {digest[:12]}) is declared by observer version "
                f"{', '.join(versions)}, but this PluginBench says version {version}")
    return (f"the '{spec.name}' observer source (sha256 {digest[:12]}, modules {', '.join(sorted(spec.observer_modules))}) "
            f"is declared by no observer version: its code changed without a declaration, so its values "
            f"could differ from version {version}'s; bump observer_version, or run tools/declare_observers.py "
            "when the change keeps every value")
