"""Pure: which model and effort a Codex attempt's sessions ran on.

Children inherit the runner's model and effort unless a spawn call overrides them. On the
V2 runtime PluginBench hides the spawn tool's ``model``/``reasoning_effort`` fields
(``features.multi_agent_v2.expose_spawn_agent_model_overrides = false``); V1's spawn tool
keeps them, so hiding is not a lock. Every child session's ``turn_context`` records are
compared with the runner's model and effort: any child on another model or effort makes
the record ``mixed`` (no model) and the attempt ineligible. A session whose model cannot
be read makes the record ``unknown``, never ``single``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..events import ChildModel, ModelRecord
from ._codex_events import Rollout


def model_record(sessions: Sequence[Rollout], *, model: str | None, effort: str | None) -> ModelRecord:
    """The :class:`ModelRecord` of the root session ``sessions[0]`` and its descendants.

    ``model``/``effort`` are the runner's settings (requested); an unset effort is taken from
    the root session's first turn (the CLI's default for that model). The record's
    ``effort`` is the effective one, from the root session's turn context; a root turn at
    another effort than the requested one makes the record ``unknown``."""
    if not sessions:
        return ModelRecord(status="unknown", model=None, reason="no rollout of the root session")
    root, children = sessions[0], list(sessions[1:])
    root_model = next((m for m, _ in root.turns if m is not None), None)
    root_effort = next((e for _, e in root.turns if e is not None), None)
    want_model = model or root_model
    want_effort = effort or root_effort
    mismatched: list[ChildModel] = []
    unreadable: list[str] = []
    for child in children:
        if not child.turns:
            unreadable.append(f"child session {child.session_id} has no turn context")
            continue
        for m, e in child.turns:
            if (m is not None and m != want_model) or (e is not None and want_effort is not None and e != want_effort):
                mismatched.append(ChildModel(session_id=child.session_id, model=m, effort=e))
                break
    if mismatched:
        names = ", ".join(f"{c.session_id} ({c.model}, effort {c.effort})" for c in mismatched)
        return ModelRecord(status="mixed", model=None, effort=None, children=len(children), mismatched=mismatched,
                           reason=f"child session(s) on another model or effort than {want_model} "
                           f"(effort {want_effort}): {names}; the attempt is ineligible")
    if root_model is None:
        unreadable.insert(0, "the root session has no turn context")
    elif model and root_model != model:
        unreadable.insert(0, f"the root session ran on {root_model}, not the runner's {model}")
    elif effort and root_effort is not None and root_effort != effort:
        unreadable.insert(0, f"the root session ran at effort {root_effort}, not the requested {effort}")
    if unreadable:
        return ModelRecord(status="unknown", model=None, effort=None, children=len(children),
                           reason="; ".join(unreadable))
    # The effective effort is what the root session's turn context records (native
    # evidence), never just the requested one: None when no turn recorded an effort.
    return ModelRecord(status="single", model=want_model, effort=root_effort, children=len(children),
                       reason=None if root_effort is not None else
                       f"no turn context records an effort (requested {effort!r}): effective effort unverified")

