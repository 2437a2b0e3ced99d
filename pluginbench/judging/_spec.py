"""A judge: ``HARNESS:MODEL:EFFORT`` (pure)."""

import re

import msgspec

from ..errors import InputError
from ..harness_registry import harness_class, real_harness_names

EFFORTS = ("low", "medium", "high", "xhigh", "max", "minimal")


class JudgeSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Who judges: the harness, its exact model and the reasoning effort."""

    harness: str
    model: str
    effort: str

    @property
    def name(self) -> str:
        """The judge's folder name: ``<harness>-<model>-<effort>``, filesystem safe."""
        return re.sub(r"[^A-Za-z0-9._-]", "_", f"{self.harness}-{self.model}-{self.effort}")


def parse_judge(text: str) -> JudgeSpec:
    """``claude:claude-opus-5-5:high`` → a :class:`JudgeSpec`; bad input is exit 2."""
    parts = text.split(":")
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise InputError(f"cannot read the judge {text!r}", field="--judge",
                         fix="write HARNESS:MODEL:EFFORT, e.g. claude:claude-sonnet-4-5:high")
    harness, model, effort = (p.strip() for p in parts)
    # a judge is a real agent CLI whose adapter reads a final answer (read_final), as a reviewer's does
    judges = [n for n in real_harness_names() if harness_class(n).reviewer]
    if harness not in judges:
        raise InputError(f"unknown judge harness {harness!r}", field="--judge",
                         fix="use one of: " + ", ".join(judges))
    if effort not in EFFORTS:
        raise InputError(f"unknown effort {effort!r} in the judge {text!r}", field="--judge",
                         fix="use one of: " + ", ".join(EFFORTS))
    return JudgeSpec(harness=harness, model=model, effort=effort)
