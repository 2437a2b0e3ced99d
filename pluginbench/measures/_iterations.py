"""Verification iterations: a transcript count (method "verification transcript count v2").

Within each trace (root session or subagent), in order:

* a **verification command** is a shell command that started and has a verification
  segment (:mod:`._shell`); commands refused before starting are left out, interrupted
  ones count with an unknown outcome;
* an **iteration** is a verification command → at least one applied workspace edit (a
  production or test file) → the next verification command;
* a **failed** verification command exited non-zero with an unmasked status; a missing
  exit code or an interruption makes the failed count unknown.

Counts are summed over the attempt's traces. A missing trace, or an ambiguity that could
change a count (a malformed command whose words could start a verification command, an
edit whose outcome the trace does not give between two verification commands, a command
that may not have started), makes all three counts unknown with the reason: never zero.
"""

from pathlib import Path
from typing import NamedTuple

from ..events import Measure
from ._shell import analyze
from ._traces import AttemptTraces, Command, Edit, Trace, load_attempt_traces

METHOD = "verification transcript count v2"
METRICS = ("verification_commands", "verification_iterations", "failed_verification_commands")


class TraceCount(NamedTuple):
    commands: int
    iterations: int
    failed: int | None  # None: unknown, ``failed_reason`` says why
    failed_reason: str | None
    ambiguous: tuple[str, ...]  # reasons a count could be wrong


def count_trace(trace: Trace) -> TraceCount:
    """The counts of one trace (see the module docstring)."""
    ambiguous: list[str] = list(trace.problems)
    commands = iterations = failed = 0
    failed_unknown: str | None = None
    edited: bool | None = None  # since the last verification command: True, None (maybe), False
    seen_verification = False
    for action in trace.actions:
        if isinstance(action, Edit):
            if action.applied is True:
                edited = True
            elif action.applied is None and edited is False:
                edited = None
            continue
        assert isinstance(action, Command)
        analysis = analyze(action.text)
        if analysis.ambiguous is not None:
            ambiguous.append(f"{trace.name}: {analysis.ambiguous}: {action.text[:80]!r}")
            continue
        if not analysis.is_verification or action.started is False:
            continue
        if action.started is None and action.exit_code is None and not action.interrupted:
            # no result at all: the last command of a cut-off session, started or refused
            failed_unknown = failed_unknown or f"{trace.name}: a verification command has no result"
        commands += 1
        if seen_verification:
            if edited is True:
                iterations += 1
            elif edited is None:
                ambiguous.append(f"{trace.name}: an edit between two verification commands has no "
                                 "recorded outcome")
        seen_verification = True
        edited = False
        if analysis.masked:
            continue
        if action.interrupted:
            failed_unknown = failed_unknown or f"{trace.name}: a verification command was interrupted"
        elif action.exit_code is None:
            failed_unknown = failed_unknown or f"{trace.name}: a verification command has no exit code"
        elif action.exit_code != 0:
            failed += 1
    return TraceCount(commands, iterations, None if failed_unknown else failed, failed_unknown, tuple(ambiguous))


def count_traces(got: AttemptTraces) -> dict[str, Measure]:
    """The three iteration metrics of one attempt's traces, or unknowns with the reason."""
    if got.harness is None or got.missing:
        return _unknown("; ".join(got.missing) or "no saved agent trace")
    counts = [count_trace(t) for t in got.traces]
    ambiguous = [a for c in counts for a in c.ambiguous]
    if ambiguous:
        return _unknown("incomplete: " + "; ".join(ambiguous[:3]))
    failed_reasons = [c.failed_reason for c in counts if c.failed_reason]
    out = {
        "verification_commands": Measure(value=sum(c.commands for c in counts), unit="commands"),
        "verification_iterations": Measure(value=sum(c.iterations for c in counts), unit="iterations"),
    }
    if failed_reasons:
        out["failed_verification_commands"] = Measure(value=None, unit="commands", status="unknown",
                                                      reason=failed_reasons[0])
    else:
        out["failed_verification_commands"] = Measure(value=sum(c.failed or 0 for c in counts), unit="commands")
    return out


def count_attempt(attempt_dir: Path) -> dict[str, Measure]:
    """The iteration metrics of a saved attempt (reads ``agent/``)."""
    return count_traces(load_attempt_traces(attempt_dir))


def _unknown(reason: str) -> dict[str, Measure]:
    units = {"verification_commands": "commands", "verification_iterations": "iterations",
             "failed_verification_commands": "commands"}
    return {name: Measure(value=None, unit=units[name], status="unknown", reason=reason) for name in METRICS}
