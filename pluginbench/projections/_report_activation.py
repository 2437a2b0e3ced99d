"""results.json ``activation``: was each arm's package exercised? (pure, from the attempt rows).

Folded from the ``activation`` measure's values in each complete, eligible attempt row
(``measures.activation_any``, ``measures.activation:<component>``); present only when the
run selected that measure. Per arm:

* ``exercised``: ``true`` when some attempt used a treatment component, ``false`` when
  every attempt's verdict is known and none did (``label: "not exercised"``), ``null``
  otherwise (``label: "unknown"``; an arm without treatment components is ``null`` with
  ``label: "no components"``);
* ``any``: attempts that used / did not use any treatment component / unknown, and
  ``rate`` = used / (used + not used), ``null`` when none is known;
* ``components``: the same per component (owner ``treatment`` or ``task``), with the
  median first turn of the attempts that used it;
* ``outcomes_by_activation``: passes and decided attempts among those that used the
  package and those that did not — descriptive, not causal (the agent chose to use it).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from ..measures import ACTIVATION_FIRST_TURN_PREFIX as FIRST_TURN_PREFIX
from ..measures import ACTIVATION_PREFIX as PREFIX
from ._status_groups import ACTIVATION_MEASURE

#: the measure whose values this section folds, and its value names
MEASURE = ACTIVATION_MEASURE
ANY = "activation_any"
NOTE = ("Descriptive, not causal: the agent chose whether to use the package, so attempts that "
        "used it may differ from those that did not for other reasons.")
_DECIDED = ("pass", "overlap_pass", "fail", "empty")


def _counts(values: list[float | int | None]) -> dict[str, Any]:
    used = sum(1 for v in values if v is not None and v > 0)
    not_used = sum(1 for v in values if v is not None and v == 0)
    unknown = sum(1 for v in values if v is None)
    known = used + not_used
    return {"used": used, "not_used": not_used, "unknown": unknown,
            "rate": round(used / known, 6) if known else None}


def _exercised(c: Mapping[str, Any]) -> tuple[bool | None, str]:
    if c["used"]:
        return True, "exercised"
    if c["unknown"] or not c["not_used"]:
        return None, "unknown"
    return False, "not exercised"


def _outcomes(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    decided = [r for r in rows if r.get("outcome") in _DECIDED]
    passes = sum(1 for r in decided if r.get("outcome") == "pass")
    return {"attempts": len(rows), "decided": len(decided), "passes": passes,
            "pass_rate": round(passes / len(decided), 6) if decided else None}


def _value(row: Mapping[str, Any], key: str) -> float | int | None:
    m = (row.get("measures") or {}).get(key)
    return m.get("value") if isinstance(m, Mapping) and m.get("status") != "unknown" else None


def arm_activation(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``activation`` entry of one arm from its complete, eligible attempt rows."""
    keys = sorted({k for r in rows for k in (r.get("measures") or {}) if k.startswith(PREFIX)})
    any_values = [_value(r, ANY) for r in rows]
    reasons = sorted({str(((r.get("measures") or {}).get(ANY) or {}).get("reason"))
                      for r in rows if _value(r, ANY) is None})
    components: dict[str, Any] = {}
    for key in keys:
        owner = "task" if key.startswith(PREFIX + "task:") else "treatment"
        name = key[len(PREFIX) + (len("task:") if owner == "task" else 0):]
        c = _counts([_value(r, key) for r in rows])
        turns = [t for r in rows if (_value(r, key) or 0) > 0
                 and (t := _value(r, FIRST_TURN_PREFIX + key[len(PREFIX):])) is not None]
        exercised, label = _exercised(c)
        components[name if owner == "treatment" else "task:" + name] = {
            "owner": owner, **c, "exercised": exercised, "label": label,
            "median_first_turn": statistics.median(turns) if turns else None,
        }
    overall = _counts(any_values)
    has_components = any(c["owner"] == "treatment" for c in components.values())
    exercised, label = _exercised(overall) if has_components else (None, "no components")
    used_rows = [r for r in rows if (_value(r, ANY) or 0) > 0]
    unused_rows = [r for r in rows if _value(r, ANY) == 0]
    return {
        "attempts": len(rows),
        "exercised": exercised,
        "label": label,
        "any": overall,
        "unknown_reasons": reasons if overall["unknown"] else [],
        "components": components,
        "outcomes_by_activation": {"used": _outcomes(used_rows), "not_used": _outcomes(unused_rows), "note": NOTE},
    }


def activation_section(rows: Iterable[Mapping[str, Any]], arms: Iterable[str],
                       measurements: Iterable[str]) -> dict[str, Any] | None:
    """results.json ``activation`` (see the module docstring); None when the run did not select it."""
    if MEASURE not in set(measurements):
        return None
    by_arm: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("state") == "complete" and not r.get("ineligible"):
            by_arm.setdefault(str(r.get("arm")), []).append(r)
    return {"per_arm": {arm: arm_activation(by_arm.get(arm, [])) for arm in arms}, "note": NOTE}


def activation_notes(section: Mapping[str, Any] | None) -> list[str]:
    """One plain note per arm whose package was never exercised (every attempt known, none used it)."""
    if not section:
        return []
    return [f"Not exercised: arm {arm} never used its package ({a['any']['not_used']} of {a['attempts']} attempts "
            "known to use none of its components); its result says nothing about the package's effect."
            for arm, a in section["per_arm"].items() if a["exercised"] is False]
