"""The measure registry: every measure PluginBench knows, in registration order.

The built-in measures register when :mod:`pluginbench.measures` is imported
(``_builtin.py``); a new measure is its module plus one :func:`register` call there.
Config validation, the collector actor and the report ask this registry; none of them
names a measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import msgspec

from ..errors import RegistryError
from ._port import Column, MeasureSpec

_MEASURES: dict[str, MeasureSpec] = {}

#: ``measurement_settings`` keys that belong to no single measure (scope and readiness
#: policy), each with the type its value decodes to; every collector sees the ones set.
#: Add one with :func:`register_general_setting`.
_GENERAL: dict[str, Any] = {}


def register(spec: MeasureSpec) -> MeasureSpec:
    """Add ``spec``; its name and every column's metric must be new."""
    if spec.name in _MEASURES:
        raise RegistryError(f"measure {spec.name!r} is already registered")
    taken = {c.metric: m.name for m in _MEASURES.values() for c in m.columns}
    for c in spec.columns:
        if c.metric in taken:
            raise RegistryError(f"measure {spec.name!r}: column {c.metric!r} already belongs to {taken[c.metric]!r}")
    if len({c.metric for c in spec.columns}) != len(spec.columns):
        raise RegistryError(f"measure {spec.name!r} declares a column twice")
    for c in spec.columns:
        if c.better not in (None, "lower", "higher"):
            raise RegistryError(f"measure {spec.name!r}: column {c.metric!r} declares better={c.better!r}; "
                                "use 'lower', 'higher' or None (descriptive)")
    owned = settings_owners()
    for key in spec.settings:
        if key in _GENERAL:
            raise RegistryError(f"measure {spec.name!r}: setting {key!r} is a shared measurement setting")
        if key in owned:
            raise RegistryError(f"measure {spec.name!r}: setting {key!r} already belongs to {owned[key].name!r}")
    if spec.source == "collector" and spec.collect is None:
        raise RegistryError(f"measure {spec.name!r} has source 'collector' but no collect function")
    _MEASURES[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    _MEASURES.pop(name, None)


@contextmanager
def registered(spec: MeasureSpec) -> Iterator[MeasureSpec]:
    """``spec`` registered for the duration of the block (tests, plugins loaded for one run)."""
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


def measures() -> tuple[MeasureSpec, ...]:
    """Every registered measure, in registration order."""
    return tuple(_MEASURES.values())


def names() -> tuple[str, ...]:
    return tuple(_MEASURES)


def get(name: str) -> MeasureSpec | None:
    return _MEASURES.get(name)


def default_selection() -> list[str]:
    """What ``measurements:`` means when the config leaves it out."""
    return [m.name for m in _MEASURES.values() if m.default]


def selected(selection: Iterable[str]) -> tuple[MeasureSpec, ...]:
    """The registered measures among ``selection``, in registration order (unknown names
    are left out: config validation refuses them before a run exists)."""
    chosen = set(selection)
    return tuple(m for m in _MEASURES.values() if m.name in chosen)


def collectors(selection: Iterable[str]) -> tuple[MeasureSpec, ...]:
    """The selected measures the collector actor runs."""
    return tuple(m for m in selected(selection) if m.source == "collector")


def collected_columns(selection: Iterable[str]) -> tuple[Column, ...]:
    """The columns every complete attempt with a submission should carry under ``measures``."""
    return tuple(c for m in collectors(selection) for c in m.columns)


def all_columns() -> tuple[Column, ...]:
    """Every registered collector column (the report's per-attempt columns, in order)."""
    return tuple(c for m in _MEASURES.values() if m.source == "collector" for c in m.columns)


def column(metric: str) -> Column | None:
    for c in all_columns():
        if c.metric == metric:
            return c
    return None


def register_general_setting(key: str, value_type: Any) -> None:
    """Declare a ``measurement_settings`` key shared by all measures (``require_ready``,
    ``source_scope``…); it must not be a measure's key."""
    if key in _GENERAL or key in settings_owners():
        raise RegistryError(f"measurement setting {key!r} is already declared")
    _GENERAL[key] = value_type


def unregister_general_setting(key: str) -> None:
    _GENERAL.pop(key, None)


def general_settings() -> dict[str, Any]:
    """The shared ``measurement_settings`` keys and their types."""
    return dict(_GENERAL)


def settings_owners() -> dict[str, MeasureSpec]:
    """``measurement_settings`` key → the measure that owns it."""
    return {key: m for m in _MEASURES.values() for key in m.settings}


def settings_for(spec: MeasureSpec, measurement_settings: Mapping[str, Any]) -> dict[str, Any]:
    """The shared keys and ``spec``'s own keys of ``measurement_settings`` that are set, decoded
    to their declared types (config validation has already checked them)."""
    types = {**_GENERAL, **spec.settings}
    return {key: msgspec.convert(measurement_settings[key], t, strict=False)
            for key, t in types.items() if key in measurement_settings}
