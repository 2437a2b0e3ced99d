"""Reference tables for the docs, generated from msgspec types (never written by hand).

A field's description is its ``Annotated[..., msgspec.Meta(description=...)]``. Nested
structs are expanded with dotted names (``a.b``); a list of structs as ``a[]``; a mapping
of structs as ``a.<key>``. :func:`replace_generated` swaps the text between
``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->`` markers in a page, so
``tools/gen_docs.py`` rewrites the docs and a test checks that they match the types.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import msgspec.inspect as mi


def _meta(t: mi.Type) -> tuple[mi.Type, str]:
    if isinstance(t, mi.Metadata):
        desc = (t.extra_json_schema or {}).get("description", "")
        inner, inner_desc = _meta(t.type)
        return inner, desc or inner_desc
    return t, ""


def type_name(t: mi.Type) -> str:
    """A short, readable name of a msgspec type (``int | null``, ``list[str]``, ``"a" | "b"``)."""
    t, _ = _meta(t)
    simple = {
        mi.IntType: "int", mi.FloatType: "number", mi.StrType: "string", mi.BoolType: "bool",
        mi.NoneType: "null", mi.AnyType: "any",
    }
    for cls, name in simple.items():
        if isinstance(t, cls):
            return name
    if isinstance(t, mi.LiteralType):
        return " \\| ".join(f'`"{v}"`' if isinstance(v, str) else f"`{v}`" for v in t.values)
    if isinstance(t, mi.UnionType):
        return " \\| ".join(type_name(x) for x in t.types)
    if isinstance(t, (mi.ListType, mi.TupleType, mi.VarTupleType)):
        item = t.item_type if hasattr(t, "item_type") else t.item_types[0]
        return f"list[{type_name(item)}]"
    if isinstance(t, mi.DictType):
        return f"map[{type_name(t.key_type)} → {type_name(t.value_type)}]"
    if isinstance(t, mi.StructType):
        return "object"
    return type(t).__name__.removesuffix("Type").lower()


def _default(f: mi.Field) -> str:
    if f.required:
        return "required"
    if f.default is not msgspec.NODEFAULT:
        d = f.default
        return "`null`" if d is None else f"`{str(d).lower() if isinstance(d, bool) else d}`"
    if f.default_factory is not msgspec.NODEFAULT:
        return f"`{f.default_factory()}`"
    return ""


def _struct_of(t: mi.Type) -> tuple[mi.StructType | None, str]:
    """The struct a field holds (directly, as ``X | None``, in a list or as map values)."""
    t, _ = _meta(t)
    if isinstance(t, mi.StructType):
        return t, ""
    if isinstance(t, mi.UnionType):
        structs = [x for x in t.types if isinstance(_meta(x)[0], mi.StructType)]
        if len(structs) == 1:
            return _struct_of(structs[0])
    if isinstance(t, mi.ListType):
        s, suffix = _struct_of(t.item_type)
        return s, "[]" + suffix if s else ""
    if isinstance(t, mi.DictType):
        s, suffix = _struct_of(t.value_type)
        return s, ".<key>" + suffix if s else ""
    return None, ""


def rows(cls: Any, prefix: str = "", *, with_default: bool = True) -> list[str]:
    """Markdown table rows (``| name | type | [default |] description |``) of a struct, nested."""
    out = []
    info = mi.type_info(cls)
    if not isinstance(info, mi.StructType):
        raise TypeError(f"{cls!r} is not a msgspec Struct: its fields cannot be tabulated")
    for f in info.fields:
        _, desc = _meta(f.type)
        name = f"{prefix}{f.encode_name}"
        cells = [f"`{name}`", type_name(f.type)]
        if with_default:
            cells.append(_default(f))
        cells.append(desc.replace("|", "\\|").replace("\n", " "))
        out.append("| " + " | ".join(cells) + " |")
        nested, suffix = _struct_of(f.type)
        if nested is not None:
            out.extend(rows(nested.cls, f"{name}{suffix}.", with_default=with_default))
    return out


def table(cls: Any, *, with_default: bool = True) -> str:
    """A whole markdown table of ``cls``'s fields."""
    head = ["Field", "Type", *(["Default"] if with_default else []), "Meaning"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    return "\n".join([*lines, *rows(cls, with_default=with_default)]) + "\n"


def replace_generated(page: str, name: str, content: str) -> str:
    """``page`` with the block between the ``name`` markers replaced by ``content``."""
    pattern = re.compile(
        rf"(<!-- generated: {re.escape(name)} -->\n).*?(<!-- end generated: {re.escape(name)} -->)",
        re.DOTALL,
    )
    if not pattern.search(page):
        raise ValueError(f"no generated block {name!r} in the page")
    return pattern.sub(lambda m: m.group(1) + content + m.group(2), page)
