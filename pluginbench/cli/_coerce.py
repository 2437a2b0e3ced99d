"""Command-line values coerced without pydantic where no validation is needed.

Typer 0.29 coerces every parameter's value through a pydantic ``TypeAdapter``, so every
command imported pydantic (about 0.1 s of CPU, the largest single import of
``pluginbench run``) to turn ``"runs/x"`` into ``Path("runs/x")`` and to pass a flag's
``True`` through. :func:`install` puts a coercion in front of typer's for exactly those
cases, each giving the value typer's own adapter gives:

* ``str``: a ``str`` value as it is;
* ``bool``: a ``bool`` value (click's flags) as it is;
* ``Path`` (no other ``path_type``): ``Path(value)``, then typer's own path checks
  (``exists``, ``file_okay``, ``dir_okay``, ``readable``, ``resolve_path``, ...) unchanged.

Every other value or annotation (numbers, lists, choices, a ``parser``, bytes, files) goes
to typer's coercion, built on first use, so its conversions and error messages stay
typer's; a parameter left at ``None`` is never coerced at all. With a typer whose internals
differ (no ``build_runtime_param``), nothing is installed and typer coerces as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def install() -> bool:
    """Put the plain coercion in front of typer's (once); False when this typer has no
    runtime coercion layer to put it in front of."""
    try:
        from typer import _coercion, _param_types, core
    except ImportError:
        return False
    typers: Any = getattr(core, "build_runtime_param", None)
    base: Any = getattr(_coercion, "RuntimeParam", None)
    check_path: Any = getattr(_param_types, "coerce_cli_path", None)
    if typers is None or base is None or check_path is None:
        return False
    if getattr(typers, "pluginbench_plain", False):
        return True

    @dataclass(frozen=True, eq=False)
    class PlainRuntimeParam(base):  # type: ignore[misc]  # typer's private base, found at run time
        """One parameter's coercion: plain for str/bool/Path values, typer's otherwise."""

        descriptor: Any = None
        kind: str = ""
        built: list[Any] = field(default_factory=list)  # typer's coercion, once asked for

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.kind == "str" and isinstance(value, str):
                return value
            if self.kind == "bool" and isinstance(value, bool):
                return value
            if self.kind == "path" and isinstance(value, str | Path):
                path = value if isinstance(value, Path) else Path(value)
                return check_path(path, self.parameter_info, path_type=Path, param=param, ctx=ctx)
            if not self.built:
                self.built.append(typers(self.descriptor))
            return self.built[0]._coerce_value(value, param=param, ctx=ctx)

    def build_runtime_param(descriptor: Any) -> Any:
        info, annotation = descriptor.parameter_info, descriptor.annotation
        kind = ""
        if descriptor.file_annotation is None and getattr(info, "parser", None) is None \
                and getattr(info, "click_type", None) is None:
            if annotation is str:
                kind = "str"
            elif annotation is bool:
                kind = "bool"
            elif annotation is Path and getattr(info, "path_type", None) in (None, Path):
                kind = "path"
        return PlainRuntimeParam(parameter_info=info, annotation=annotation, descriptor=descriptor, kind=kind)

    build_runtime_param.pluginbench_plain = True  # type: ignore[attr-defined]  # marks the installed wrapper
    setattr(core, "build_runtime_param", build_runtime_param)  # noqa: B010 - typer does not export it
    return True
