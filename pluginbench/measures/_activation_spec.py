"""The ``activation`` measure (issue 23): which declared components each attempt exercised.

The I/O edge of :mod:`._activation`: it reads the attempt's discovery receipt
(``native-treatment.json``) for the components and the saved traces under ``agent/`` for
the uses, and returns

* ``activation_any``: 1 when the attempt used a treatment component, 0 when it used none
  and every one is known, unknown otherwise (also for an arm that declares none);
* one value per component in the family ``activation:<component>`` (task-owned ones as
  ``activation:task:<component>``): the number of uses, 0 when not used, unknown with the
  reason when the traces cannot tell;
* ``activation_first_turn:<component>``: the root session's model turn of the first use
  (0: before the first reply), unknown when not used or first used in a subagent.

The full verdicts (kind, owner, state, count, first turn, reason) are kept as evidence in
``measure/activation/activation.json``. Which receipt layouts it can read is the table
:data:`READERS`, keyed by the receipt's ``schema`` (no harness is named).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..events import Measure
from ._activation import (
    METHOD,
    Activation,
    Component,
    TraceEvidence,
    activation,
    any_exercised,
    claude_components,
    claude_evidence,
    codex_components,
    codex_evidence,
)
from ._port import CollectorInput, Column, MeasureSpec
from ._registry import register

PREFIX = "activation:"
FIRST_TURN_PREFIX = "activation_first_turn:"


def _text(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def claude_traces(agent: Path) -> TraceEvidence:
    """Root and subagent transcripts (``agent/transcripts``) and the stdout stream."""
    transcripts = agent / "transcripts"
    roots = sorted(transcripts.glob("*.jsonl")) if transcripts.is_dir() else []
    stdout = _text(agent / "stdout.jsonl")
    if not roots:
        return claude_evidence(None, (), stdout)
    subs = []
    for root in roots:
        folder = transcripts / root.stem
        for sub in sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []:
            subs.append((str(sub.relative_to(transcripts)), _text(sub) or ""))
    root_text = "\n".join(_text(r) or "" for r in roots)
    return claude_evidence(root_text, subs, stdout)


def codex_traces(agent: Path) -> TraceEvidence:
    """Every ``agent/rollouts/**/rollout-*.jsonl``, the root session (no parent thread) first."""
    folder = agent / "rollouts"
    files = sorted(folder.rglob("rollout-*.jsonl")) if folder.is_dir() else []
    texts = [(p.name, _text(p) or "") for p in files]

    def is_child(text: str) -> bool:
        head = text.split("\n", 1)[0]
        return '"parent_thread_id"' in head

    return codex_evidence(sorted(texts, key=lambda t: (is_child(t[1]), t[0])))


#: receipt schema -> (its components, the evidence reader of the traces)
READERS: dict[str, tuple[Callable[[Mapping[str, Any]], list[Component]], Callable[[Path], TraceEvidence]]] = {
    "pluginbench.claude.native-treatment/2": (claude_components, claude_traces),
    "pluginbench.codex.native-treatment/2": (codex_components, codex_traces),
}


def metric_of(v: Activation) -> str:
    return PREFIX + ("task:" if v.owner == "task" else "") + v.key


def verdicts(attempt_dir: Path) -> tuple[list[Activation] | None, str | None]:
    """The attempt's verdicts, or None and why they cannot be given (no readable receipt)."""
    receipt_path = attempt_dir / "native-treatment.json"
    try:
        receipt = json.loads(receipt_path.read_text())
    except (OSError, ValueError) as exc:
        return None, f"no readable discovery receipt (native-treatment.json): {type(exc).__name__}"
    reader = READERS.get(str(receipt.get("schema"))) if isinstance(receipt, dict) else None
    if reader is None:
        return None, f"the discovery receipt's schema {receipt.get('schema')!r} lists no components activation reads"
    components, traces = reader
    return activation(components(receipt), traces(attempt_dir / "agent")), None


def collect_activation(inp: CollectorInput) -> dict[str, Measure]:
    if not inp.agent_traces:
        return ACTIVATION.unknown(f"the {inp.harness} harness saves no agent trace to read activation from")
    found, why = verdicts(inp.attempt_dir)
    if found is None:
        return ACTIVATION.unknown(why or "no verdict")
    inp.work_dir.mkdir(parents=True, exist_ok=True)
    (inp.work_dir / "activation.json").write_text(json.dumps(
        {"method": METHOD, "components": [v.as_dict() for v in found]}, indent=2, sort_keys=True) + "\n")
    value, reason = any_exercised(found)
    out = {"activation_any": Measure(value=value, unit="flag", status="measured" if value is not None else "unknown",
                                     reason=reason)}
    for v in found:
        out[metric_of(v)] = (Measure(value=v.uses, unit="uses", reason=v.reason) if v.state != "unknown"
                             else Measure(value=None, unit="uses", status="unknown", reason=v.reason))
        key = FIRST_TURN_PREFIX + metric_of(v)[len(PREFIX):]
        out[key] = (Measure(value=v.first_turn, unit="turn") if v.first_turn is not None
                    else Measure(value=None, unit="turn", status="unknown",
                                 reason=v.reason or ("not used" if v.state == "not_used" else "unknown")))
    return out


ACTIVATION = register(MeasureSpec(
    name="activation",
    description=("Which declared components (skills, plugin agents, commands, hooks, MCP servers) each attempt "
                 f"used, read from the saved root and subagent traces ({METHOD})."),
    columns=(
        Column("activation_any", "flag", "used pkg",
               "1 when the attempt used a component of its treatment, 0 when it used none (every one known).",
               "activation_any", summary=False),
    ),
    families=(
        Column(PREFIX, "uses", "uses",
               "Uses of one declared component (activation:<kind>:<name>; task-owned: activation:task:…); "
               "0 = not used; unknown when the traces cannot tell.", summary=False, table=False),
        Column(FIRST_TURN_PREFIX, "turn", "first turn",
               "The root session's model turn of the component's first use (0 = before the first reply).",
               summary=False, table=False),
    ),
    observer_version="1",
    collect=collect_activation,
    observer_modules=("pluginbench.measures._activation",),
))
