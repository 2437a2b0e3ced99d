"""Matched pairs, anonymized diffs and seeded sides (pure: no files, no clock).

A pair is the same task and the same repeat in each of two arms. Both sides must start
from the same source and read the same instruction; an attempt without a saved
submission cannot be judged and leaves its pair out.
"""

import hashlib
import re
from collections.abc import Iterable

import msgspec

from .._parsing import git_lines
from ..errors import InputError


class Submission(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt as the judges may see it (the diff) and the key records it."""

    side_label: str  # RUN=ARM as given on the command line
    run: str
    arm: str
    task: str
    repeat: int
    attempt_id: str
    outcome: str | None  # pass, overlap_pass, fail, empty, unknown; None when not complete
    diff: str | None  # anonymized; None: no saved submission
    diff_origin: str  # "review-packet" or "snapshot"
    source_fingerprint: str
    source_path: str  # host folder of the read-only starting source
    instruction: str
    missing_reason: str | None = None


class Omitted(msgspec.Struct, frozen=True, kw_only=True):
    run: str
    arm: str
    task: str
    repeat: int
    attempt_id: str
    reason: str


class Pair(msgspec.Struct, frozen=True, kw_only=True):
    """A matched pair with its sides decided: ``a`` is shown as side A."""

    number: int  # task-N
    task: str
    repeat: int
    a: Submission
    b: Submission


_INDEX = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+( [0-7]+)?$")
_DIFF_GIT = re.compile(r"^diff --git (\S+) (\S+)$")


def _strip_prefix(path: str) -> str:
    for prefix in ("a/", "b/", "i/", "w/", "c/", "o/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def anonymize_diff(diff: str) -> str:
    """Headers become ``a/`` and ``b/`` and ``index`` lines go, so no tooling marks a side."""
    out: list[str] = []
    for line in git_lines(diff, keepends=True):
        body = line.rstrip("\n")
        if _INDEX.match(body):
            continue
        m = _DIFF_GIT.match(body)
        if m:
            line = f"diff --git a/{_strip_prefix(m.group(1))} b/{_strip_prefix(m.group(2))}\n"
        elif body.startswith("--- ") and body[4:] != "/dev/null":
            line = f"--- a/{_strip_prefix(body[4:])}\n"
        elif body.startswith("+++ ") and body[4:] != "/dev/null":
            line = f"+++ b/{_strip_prefix(body[4:])}\n"
        out.append(line)
    return "".join(out)


def side_of_first(seed: int, task: str, repeat: int) -> str:
    """Which side (``A``/``B``) the first RUN=ARM's submission takes: seeded per pair."""
    digest = hashlib.sha256(f"pluginbench-judge-sides:{seed}:{task}:{repeat}".encode()).digest()
    return "A" if digest[0] % 2 == 0 else "B"


def match_pairs(first: Iterable[Submission], second: Iterable[Submission], *, seed: int,
                tasks: Iterable[str] | None = None) -> tuple[list[Pair], list[Omitted]]:
    """Pairs of (task, repeat) present in both, numbered in task/repeat order.

    A submission without a diff is omitted with its partner. Refuses (exit 2) a pair whose
    sides start from different sources or read different instructions.
    """
    wanted = set(tasks) if tasks is not None else None
    left = {(s.task, s.repeat): s for s in first if wanted is None or s.task in wanted}
    right = {(s.task, s.repeat): s for s in second if wanted is None or s.task in wanted}
    pairs: list[Pair] = []
    omitted: list[Omitted] = []
    for key in sorted(left.keys() & right.keys()):
        one, two = left[key], right[key]
        if one.source_fingerprint != two.source_fingerprint:
            raise InputError(
                f"task {key[0]} repeat {key[1]}: the two sides start from different sources "
                f"({one.source_fingerprint[:12]} in {one.side_label}, {two.source_fingerprint[:12]} "
                f"in {two.side_label})", field="tasks",
                fix="judge runs of the same task version, or leave the task out with --exclude")
        if one.instruction != two.instruction:
            raise InputError(
                f"task {key[0]} repeat {key[1]}: the two sides read different instructions",
                field="tasks", fix="judge runs of the same task version, or leave the task out with --exclude")
        missing = [s for s in (one, two) if s.diff is None]
        if missing:
            for s in (one, two):
                reason = (s.missing_reason or "no saved submission") if s.diff is None else (
                    "its pair's other side has no saved submission")
                omitted.append(Omitted(run=s.run, arm=s.arm, task=s.task, repeat=s.repeat,
                                       attempt_id=s.attempt_id, reason=reason))
            continue
        first_side = side_of_first(seed, key[0], key[1])
        a, b = (one, two) if first_side == "A" else (two, one)
        pairs.append(Pair(number=len(pairs) + 1, task=key[0], repeat=key[1], a=a, b=b))
    return pairs, omitted
