"""Cross-agent evaluations (``runner.harnesses``): one config, one arm set per harness. Pure.

A config that lists several harnesses is expanded into one ordinary single-harness
:class:`Evaluation` per harness (:func:`per_harness`): the same tasks, treatments, repeats,
seed and settings, with that harness's ``harness``, ``model``, ``reasoning``,
``cli_version`` and token budget in ``runner``. Each becomes its own run (its own log,
vanilla, statistics, gates and stopping), so arms are compared within a harness only and
never pooled. Validation runs the single-harness rules on each expansion and names the
entry's field (``runner.harnesses[1].model``) when one of them fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import msgspec

from ..errors import InputError
from ._schema import Evaluation, HarnessEntry, RunnerConfig

#: The runner fields a harness entry sets; with ``runner.harnesses`` they stay unset at the top.
ENTRY_FIELDS = ("harness", "model", "reasoning", "cli_version")
_DEFAULT_RUNNER = RunnerConfig()
_HARNESS_FIELD = re.compile(r"^runner\.(harness|model|reasoning|cli_version|max_tokens_per_attempt)$")


def is_cross_agent(ev: Evaluation) -> bool:
    """Whether the config lists several harnesses (``runner.harnesses``)."""
    return ev.runner.harnesses is not None


def harness_entries(ev: Evaluation) -> list[HarnessEntry]:
    """The evaluation's harnesses in config order: ``runner.harnesses``, or the one
    ``runner.harness`` as a single entry."""
    r = ev.runner
    if r.harnesses is not None:
        return list(r.harnesses)
    return [HarnessEntry(harness=r.harness, model=r.model, reasoning=r.reasoning, cli_version=r.cli_version,
                         max_tokens_per_attempt=r.max_tokens_per_attempt)]


def for_harness(ev: Evaluation, entry: HarnessEntry) -> Evaluation:
    """The single-harness evaluation of one entry: everything else exactly as configured."""
    runner = msgspec.structs.replace(
        ev.runner, harness=entry.harness, model=entry.model, reasoning=entry.reasoning, cli_version=entry.cli_version,
        max_tokens_per_attempt=(entry.max_tokens_per_attempt if entry.max_tokens_per_attempt is not None
                                else ev.runner.max_tokens_per_attempt),
        harnesses=None)
    return msgspec.structs.replace(ev, runner=runner)


def per_harness(ev: Evaluation) -> list[tuple[str, Evaluation]]:
    """(harness name, its single-harness evaluation) for each harness, in config order."""
    return [(e.harness, for_harness(ev, e)) for e in harness_entries(ev)]


def entry_field(index: int, field: str | None) -> str | None:
    """A single-harness field as the cross-agent config spells it: ``runner.model`` of the
    entry at ``index`` is ``runner.harnesses[index].model``; other fields are unchanged."""
    if field is not None and (m := _HARNESS_FIELD.match(field)):
        return f"runner.harnesses[{index}].{m.group(1)}"
    return field


def under_harness(index: int, harness: str, exc: InputError) -> InputError:
    """``exc`` raised by a single-harness check of entry ``index``, said for the cross-agent
    config: the message names the harness, the field its entry (same error class, exit 2)."""
    out = type(exc)(f"under the {harness} harness (runner.harnesses[{index}]): {exc.message}", file=exc.file,
                    field=entry_field(index, exc.field), fix=exc.fix)
    return out


def check_entries(ev: Evaluation, path: Path, bad: Callable[[str, str, str], InputError],
                  validate_one: Callable[[Evaluation, Path], None]) -> None:
    """The cross-agent rules: at least two distinct harnesses, the per-harness runner fields
    only in the entries, then each expansion validated by ``validate_one`` (the single-harness
    rules), its errors naming the entry."""
    r = ev.runner
    listed = r.harnesses or []
    if len(listed) < 2:
        raise bad(f"runner.harnesses lists {len(listed)} harness(es); a cross-agent evaluation needs two or more",
                  "runner.harnesses", "list two or more harnesses, or use runner.harness for one")
    for key in ENTRY_FIELDS:
        if getattr(r, key) != getattr(_DEFAULT_RUNNER, key):
            raise bad(f"runner.{key} is set beside runner.harnesses, which sets it per harness", f"runner.{key}",
                      f"move it into each entry (runner.harnesses[i].{key}) and remove runner.{key}")
    seen: dict[str, int] = {}
    for i, entry in enumerate(listed):
        if entry.harness in seen:
            raise bad(f"harness '{entry.harness}' is listed twice (also runner.harnesses[{seen[entry.harness]}])",
                      f"runner.harnesses[{i}].harness",
                      "list each harness once (its run folder is named after it); compare models in two evaluations")
        seen[entry.harness] = i
    for i, entry in enumerate(listed):
        try:
            validate_one(for_harness(ev, entry), path)
        except InputError as exc:
            raise under_harness(i, entry.harness, exc) from None


__all__ = ["ENTRY_FIELDS", "check_entries", "entry_field", "for_harness", "harness_entries", "is_cross_agent",
           "per_harness", "under_harness"]
