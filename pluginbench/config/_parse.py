"""Reading an evaluation config: the raw file (UTF-8, YAML or JSON, no duplicate keys, no
FIFO) and its conversion to the schema, with msgspec's errors explained as file, field, fix.
Validation beyond the schema is :mod:`._load`'s."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import yaml

from .._parsing import load_yaml, looks_numeric, value_at
from ..errors import ConfigError
from ._schema import Evaluation


def read_raw(path: Path) -> Any:
    """The parsed YAML or JSON of the config at ``path``; ConfigError naming the file and the
    position (or the fix) when it cannot be read or parsed."""
    try:
        regular = path.is_file()
    except OSError:
        regular = True  # the read below names the problem
    if path.exists() and not regular:
        # a FIFO or device would block the read (or never end); only a regular file is a config
        raise ConfigError("the config is not a regular file (a FIFO, socket or device)", file=str(path),
                          fix="pass a regular evaluation.yaml or .json file")
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"the config is not UTF-8 text (byte 0x{data[exc.start]:02x} is not valid UTF-8)",
                          file=str(path), field=f"line {line}, column {column}",
                          fix="save the file as UTF-8") from None
    except FileNotFoundError:
        raise ConfigError(
            "the config file does not exist",
            file=str(path),
            fix="create one with: pluginbench init " + str(path),
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the config: {exc.strerror or exc}", file=str(path),
                          fix="make the file readable, or pass another config") from None
    try:
        if path.suffix == ".json":
            return json.loads(text, object_pairs_hook=_refuse_duplicate_json_keys(path))
        return _load_yaml(text)
    except RecursionError:
        raise ConfigError("the config is nested too deeply to read", file=str(path),
                          fix="a config is a mapping of settings a few levels deep; remove the nesting") from None
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        if isinstance(exc, json.JSONDecodeError):
            where = f"line {exc.lineno}, column {exc.colno}"
        raise ConfigError(
            f"the config is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
            f"{getattr(exc, 'problem', None) or exc}",
            file=str(path),
            field=where,
            fix="write each key once (merge the two entries or rename one)"
            if "duplicate key" in str(getattr(exc, "problem", ""))
            else "write every key as a name (quote it if it must be a number)"
            if "is not a name" in str(getattr(exc, "problem", "")) else "fix the syntax at that position",
        ) from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key written twice in one mapping (PyYAML keeps the
    last silently: a second treatment of the same name would replace the first)."""


def _construct_unique_mapping(loader: yaml.SafeLoader | yaml.CSafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, Any] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:
            continue  # an unhashable key: the constructor below reports it
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None,
                f"duplicate key {key!r} (first on line {first.line + 1}); a second one would silently replace the first",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


class _ConfigLoader(_UniqueKeyLoader):
    """The config's loader: also refuses a key that is not text (``5:``, ``~:``, ``yes:``), which
    no setting, treatment or task is named by, at its line instead of as a schema type error."""


def _construct_config_mapping(loader: yaml.SafeLoader | yaml.CSafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    mapping = _construct_unique_mapping(loader, node, deep)
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(
                None, None, f"the key {key_node.value or key!r} is not a name (YAML reads it as {key!r})",
                key_node.start_mark)
    return mapping


_ConfigLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_config_mapping)

#: libyaml's parser under the same constructors and resolver, when PyYAML has it: a config
#: parsed in C costs ~1.3 ms less than in Python (a run parses it once at its start).
_CConfigLoader: Any = None
if hasattr(yaml, "CSafeLoader"):
    class _CConfigLoader(yaml.CSafeLoader):  # type: ignore[no-redef]  # the optional C variant of _ConfigLoader
        """:class:`_ConfigLoader`'s constructors over libyaml's parser."""

    _CConfigLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_config_mapping)


def _load_yaml(text: str) -> Any:
    """The config's YAML parsed with :class:`_ConfigLoader`'s rules, by libyaml when PyYAML has
    it (every refusal still worded by the Python loader; :func:`load_yaml`)."""
    return load_yaml(text, _ConfigLoader, _CConfigLoader)


def safe_load_unique(text: str) -> Any:
    """YAML's safe load, raising :class:`yaml.YAMLError` for a key written twice in one mapping
    (for every YAML file PluginBench reads: config, gates)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _refuse_duplicate_json_keys(path: Path) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ConfigError(
                    f"duplicate key '{key}' in the config; a second one would silently replace the first",
                    file=str(path), field=key, fix="write each key once (merge the two entries or rename one)",
                )
            out[key] = value
        return out

    return hook


def _field_from_msgspec(message: str) -> tuple[str, str | None]:
    """Split msgspec's ``... - at `$.runner.jobs` `` into (message, dotted field)."""
    m = re.search(r" - at `\$(.*)`$", message)
    if not m:
        return message, None
    field = m.group(1).lstrip(".")
    field = re.sub(r"\[(\d+)\]", r"[\1]", field)
    return message[: m.start()], field or None


def _concrete_field(raw: Any, field: str | None, fits: Callable[[Any], bool] = lambda _node: True) -> str | None:
    """``field`` with each ``[...]`` (msgspec's placeholder for a mapping key, as in
    ``treatments[...].guidanc``) replaced by the first key of ``raw`` where the rest of the
    path exists and its node ``fits``: ``treatments.core.guidanc``. Unchanged when none does."""
    if not field or "[...]" not in field:
        return field
    parts = re.findall(r"\[\.\.\.\]|\[\d+\]|[^.\[\]]+", field)

    def walk(node: Any, i: int, path: str) -> str | None:
        if i == len(parts):
            return path if fits(node) else None
        part = parts[i]
        if part == "[...]":
            if not isinstance(node, Mapping):
                return None
            for key in node:
                found = walk(node[key], i + 1, f"{path}.{key}" if path else str(key))
                if found is not None:
                    return found
            return None
        try:
            child = node[int(part[1:-1])] if part.startswith("[") else node[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        return walk(child, i + 1, path + part if part.startswith("[") else (f"{path}.{part}" if path else part))

    return walk(raw, 0, "") or field


_GOT_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "float": (float,), "bool": (bool,), "null": (type(None),),
    "object": (Mapping,), "array": (list, tuple),
}


def _has_type_named(message: str) -> Callable[[Any], bool]:
    """For msgspec's ``Expected `x`, got `str` ``: whether a node is of the type it got."""
    got = re.search(r"got `([^`]+)`", message)
    types = _GOT_TYPES.get(got.group(1)) if got else None
    if types is None:
        return lambda _node: True
    return lambda node: isinstance(node, types) and not (bool not in types and isinstance(node, bool))


def parse_evaluation(raw: Any, path: Path) -> Evaluation:
    if raw is None:
        raise ConfigError("the config is empty", file=str(path), fix="pluginbench init writes a starter")
    try:
        return msgspec.convert(raw, Evaluation, strict=True)
    except msgspec.ValidationError as exc:
        message, field = _field_from_msgspec(str(exc))
        fix = "see docs/configuration.md for the allowed fields and types"
        if message.startswith("Object contains unknown field"):
            unknown = re.search(r"`([^`]+)`", message)
            name = unknown.group(1) if unknown else "?"
            field = _concrete_field(raw, field, lambda node: isinstance(node, Mapping) and name in node)
            field = f"{field}.{name}" if field else name
            message = f"unknown key '{name}'"
            fix = "remove it or check its spelling; every setting is listed in docs/configuration.md"
        elif message.startswith("Invalid enum value"):
            shown = message[len("Invalid enum value "):]
            field = _concrete_field(raw, field, lambda node: isinstance(node, str) and shown in (repr(node), f"'{node}'"))
            message = f"invalid value {shown}"
            fix = "use one of the values docs/configuration.md lists for this field"
        elif message.startswith("Object missing required field"):
            missing = re.search(r"`([^`]+)`", message)
            name = missing.group(1) if missing else "?"
            field = _concrete_field(raw, field, lambda node: isinstance(node, Mapping) and name not in node)
            field = f"{field}.{name}" if field else name
            message = f"required key '{name}' is missing"
            fix = "add it; pluginbench init writes a complete example"
        elif message.startswith("Expected"):
            field = _concrete_field(raw, field, _has_type_named(message))
            value = value_at(raw, field)
            if isinstance(value, str) and looks_numeric(value):
                message = (f"{value!r} is text, not a number: YAML reads an exponent as a number only with a dot "
                           f"and a sign (1.0e+9; 1e9 and 1.0e9 are text) and quoted numbers as strings")
                fix = "write the number in plain digits without quotes (e.g. 1800), or as 1.0e+9"
            else:
                message = f"wrong type: {message[0].lower()}{message[1:]}"
        raise ConfigError(message, file=str(path), field=field, fix=fix) from None
