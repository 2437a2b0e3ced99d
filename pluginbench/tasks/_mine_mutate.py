"""Mutation-repair tasks (repo-bench's general mode), the pure part: seeded bugs in source files.

When history yields few tasks, ``tasks mine --mutants N`` seeds one deterministic textual
mutation per task into HEAD's source (a comparison flip, a boolean negation, an and/or
swap, an off-by-one), and keeps it only when it is **red**: tests that pass at HEAD fail
with the mutation (found in the sandbox like any candidate). The reverse of the mutation is
the reference solution, the repository's own test files are the hidden tests (put back over
whatever the agent changed), and the instruction says which tests fail, written by
PluginBench and marked as such. No I/O here.
"""

import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence

import msgspec

from ._mine_git import Candidate, Change

#: (operator, pattern, replacement of each matched text); the first match on a line is mutated
OPERATORS: tuple[tuple[str, re.Pattern[str], Mapping[str, str]], ...] = (
    ("comparison_flip", re.compile(r"(?<![=!<>\-])(==|!=|<=|>=|<|>)(?![=<>])"),
     {"==": "!=", "!=": "==", "<": ">=", ">": "<=", "<=": ">", ">=": "<"}),
    ("boolean_negation", re.compile(r"\b(True|False|true|false)\b"),
     {"True": "False", "False": "True", "true": "false", "false": "true"}),
    ("and_or_swap", re.compile(r"(\band\b|\bor\b|&&|\|\|)"), {"and": "or", "or": "and", "&&": "||", "||": "&&"}),
    ("off_by_one", re.compile(r"(?<![\w.])([+-]) ?1\b(?!\.)"), {"+": "-", "-": "+"}),
)
_SKIP = re.compile(r"^\s*(#|//|/\*|\*|import\b|from\b.*\bimport\b|$)")


class Mutation(msgspec.Struct, frozen=True):
    """One seeded bug: ``path``'s line ``line`` (1-based) changed from ``before`` to ``after``."""

    path: str
    line: int
    operator: str
    before: str
    after: str

    @property
    def label(self) -> str:
        return f"{self.operator} at {self.path}:{self.line}"


def _mutate(line: str, pattern: re.Pattern[str], swap: Mapping[str, str]) -> str | None:
    found = pattern.search(line)
    if found is None:
        return None
    text = found.group(1)
    mutated = found.group(0).replace(text, swap[text], 1)
    return line[:found.start()] + mutated + line[found.end():]


def mutation_sites(files: Mapping[str, str]) -> list[Mutation]:
    """Every mutation of every source line (comments, imports and blank lines skipped), in
    a deterministic order that visits each file before any file's second site."""
    per_file: list[list[Mutation]] = []
    for path in sorted(files):
        sites = []
        for number, line in enumerate(files[path].split("\n"), 1):
            if _SKIP.match(line):
                continue
            for operator, pattern, swap in OPERATORS:
                after = _mutate(line, pattern, swap)
                if after is not None and after != line:
                    sites.append(Mutation(path, number, operator, line, after))
        per_file.append(sites)
    ordered: list[Mutation] = []
    for rank in range(max((len(s) for s in per_file), default=0)):
        ordered.extend(s[rank] for s in per_file if rank < len(s))
    return ordered


def apply_mutation(text: str, m: Mutation) -> str:
    """``text`` (the file at HEAD) with the mutation's line replaced."""
    lines = text.split("\n")
    if lines[m.line - 1] != m.before:
        raise ValueError(f"{m.path}:{m.line} is not the line the mutation was made for")
    lines[m.line - 1] = m.after
    return "\n".join(lines)


def reverse_patch(path: str, mutated: str, original: str) -> str:
    """The unified diff (``git apply`` form) that undoes the mutation: the reference solution."""
    diff = difflib.unified_diff(mutated.splitlines(keepends=True), original.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(diff)


def mutant_candidate(head: str, m: Mutation, test_paths: Sequence[str]) -> Candidate:
    """The mutant as a candidate: starts at HEAD with the bug, hidden tests = every test file at HEAD."""
    changes = (Change("M", m.path, "source"), *(Change("M", p, "test") for p in sorted(test_paths)))
    return Candidate(commit=head, parent=head, merge=False, subject=f"Seeded bug: {m.label}",
                     message=f"Seeded bug: {m.label}", author_date="", changes=changes)


def mutant_task_id(head: str, m: Mutation) -> str:
    """An opaque folder name (it must not point the agent at the bug): ``mutant-<hash>-<head[:8]>``."""
    return f"mutant-{hashlib.sha256(m.label.encode()).hexdigest()[:8]}-{head[:8]}"


def mutant_instruction(m: Mutation, repo: str, failing: Sequence[str]) -> str:
    """The prompt of a mutation-repair task, written by PluginBench and marked as such."""
    shown = "".join(f"- `{t}`\n" for t in failing[:10])
    more = f"- and {len(failing) - 10} more\n" if len(failing) > 10 else ""
    return (
        f"<!-- Written by pluginbench tasks mine for a seeded bug (mutation-repair task) in {repo}; "
        "not written by the repository's authors. -->\n\n"
        "A bug has been introduced into this repository's source code, and these tests now fail:\n\n"
        f"{shown}{more}\n"
        "Find the bug and fix it in the source code. Do not change the tests.\n"
    )


__all__ = ["OPERATORS", "Mutation", "apply_mutation", "mutant_candidate", "mutant_instruction", "mutant_task_id",
           "mutation_sites",
           "reverse_patch"]
