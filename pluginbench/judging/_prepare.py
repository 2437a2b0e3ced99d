"""``judge prepare``: read two RUN=ARM inputs, match pairs, write the prepared directory.

Layout of the output directory (nothing the judges must not see is inside ``task-N/``)::

    key.json                 sides → run, arm, attempt, correctness; omitted attempts; seed
    task-N.brief.md          the prompt of pair N
    task-N/A.diff B.diff     the anonymized diffs, instruction.md, criteria.md,
           response-schema.json, source -> ../sources/<task>-<digest>/ (read-only)
    sources/<task>-<digest>/ the starting source, read-only
    submissions/<n>-<run>/<attempt>.diff   diffs built from the saved snapshots

Each submission's diff comes from its review packet (``evidence/review-packets/<attempt>/``)
when the run has one, which must be bound to the attempt's submission (the log's
``submission.captured`` digest), starting source and instruction; otherwise from the
attempt's saved ``model.patch``, whose SHA-256 must equal that digest. The frozen task must
match the task fingerprint in ``report/results.json``'s comparison identity.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..projections import check_results_version
from ..rundir import RunDir
from ..tasks import fingerprint, scan_tree
from ._binding import SOURCE_LINK, sha256_bytes, source_digest
from ._pairs import Omitted, Pair, Submission, anonymize_diff, match_pairs
from ._verdict import RESPONSE_SCHEMA

BRIEF_TEMPLATE = """\
# Blind pairwise review: {pair}

You are judging two submissions, A and B, that each try to complete the same coding task
from the same starting source. You cannot tell which tool or configuration produced either.

Files in your working directory (read them; change nothing, this is a read-only review):

* `instruction.md`: the task the submissions were written for
* `criteria.md`: the review standard; judge by it
* `A.diff` and `B.diff`: the two submissions as unified diffs against the starting source
* `source/`: the read-only starting source
* `response-schema.json`: the JSON schema of your answer

Compare A and B against the criteria. Do not run or modify anything.

Answer with JSON in your final message, exactly one object matching the schema:

{{"pair": "{pair}", "verdict": "A" | "B" | "tie" | "unable", "reason": "..."}}

`pair` must be "{pair}". Use "unable" only when the submissions cannot be judged.
"""


def parse_side(arg: str) -> tuple[Path, str]:
    folder, sep, arm = arg.rpartition("=")
    if not sep or not folder or not arm.strip() or "," in arm:
        raise InputError(f"cannot read the input {arg!r}", field="RUN=ARM",
                         fix="write one run directory and one arm, e.g. runs/r3=workflow-r3")
    return Path(folder), arm.strip()


def _read_json(path: Path, fix: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("the file is missing", file=str(path), fix=fix) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", file=str(path), fix=fix) from None


def _patch_digests(rd: RunDir) -> dict[str, str]:
    """attempt id → the ``submission.captured`` (or reused) patch digest from the log."""
    out: dict[str, str] = {}
    try:
        lines = rd.events.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("the run has no events.jsonl", file=str(rd.events),
                         fix="pass a run directory made by `pluginbench run`") from None
    for line in lines:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("type") in ("submission.captured", "attempt.reused") and ev.get("patch_sha256"):
            out[ev["attempt_id"]] = ev["patch_sha256"]
    return out


def _starting_source(rd: RunDir, task: str) -> Path:
    for candidate in (rd.evidence / "frozen" / "starting" / task, rd.frozen_task(task) / "workspace"):
        if candidate.is_dir():
            return candidate
    raise InputError(f"task {task}: the run saved no starting source", file=str(rd.frozen_task(task)),
                     fix="judge runs whose evidence/frozen holds the task's workspace")


def _read_packet(rd: RunDir, attempt_id: str, patch_sha256: str | None, source_fp: str,
                 instruction: str) -> bytes | None:
    """The attempt's review packet submission, when the run has one bound to this very submission and
    starting source (``evidence/review-packets/<attempt>/``); ``None`` without a packet."""
    folder = rd.evidence / "review-packets" / attempt_id
    binding_path = folder / "binding.json"
    if not binding_path.is_file() or patch_sha256 is None:
        return None
    binding = _read_json(binding_path, "rebuild the review packets with `pluginbench review`")
    root = folder / "packet"
    try:
        patch = (root / "submission.patch").read_bytes()
        actual = {
            "submission_sha256": sha256_bytes(patch),
            "starting_source_fingerprint": fingerprint(scan_tree(root / "source")),
            "instruction_sha256": sha256_bytes((root / "instruction.md").read_bytes()),
        }
    except OSError as exc:
        raise InputError(f"attempt {attempt_id}: the review packet is unreadable ({exc.strerror})",
                         file=str(root), fix="judge a run with complete review packets") from None
    expected = {"submission_sha256": patch_sha256, "starting_source_fingerprint": source_fp,
                "instruction_sha256": sha256_bytes(instruction.encode())}
    for field, value in actual.items():
        if binding.get(field) != value or value != expected[field]:
            raise InputError(f"attempt {attempt_id}: the review packet is not bound to the attempt's submission, "
                             "starting source and instruction", file=str(binding_path), field=field,
                             fix="the evidence was changed after the run; judge an unchanged run")
    return patch


def load_submissions(arg: str, *, excluded: set[str]) -> list[Submission]:
    """Every assigned attempt of one RUN=ARM (``vanilla`` also matches ``baseline``)."""
    folder, arm = parse_side(arg)
    rd = RunDir(folder)
    if not rd.is_run():
        raise InputError(
            f"{folder} " + ("does not exist" if not folder.exists() else "is not a run directory"),
            file=str(folder), field="RUN=ARM",
            fix="pass a folder made by `pluginbench run` (it holds evaluation.json), then =ARM",
        )
    results_path = rd.report_dir / "results.json"
    doc = _read_json(results_path, f"build it with `pluginbench report {folder}`")
    if isinstance(doc, dict):
        check_results_version(doc, results_path)
    rows = [r for r in doc.get("attempts") or [] if isinstance(r, dict)]
    arms = {str(r.get("arm")) for r in rows}
    if arm not in arms and arm == "vanilla" and "baseline" in arms:
        arm = "baseline"
    if arm not in arms:
        raise InputError(f"the run has no arm {arm!r}", file=str(results_path), field="attempts[].arm",
                         fix="select one of: " + ", ".join(sorted(arms)))
    identity_tasks = (doc.get("comparison_identity") or {}).get("tasks") or {}
    digests = _patch_digests(rd)
    subs: list[Submission] = []
    sources: dict[str, tuple[str, Path, str]] = {}
    for row in rows:
        if row.get("arm") != arm or row.get("task") in excluded:
            continue
        task = str(row["task"])
        if task not in sources:
            frozen = rd.frozen_task(task)
            expected = identity_tasks.get(task)
            if expected is not None and fingerprint(scan_tree(frozen)) != expected:
                raise InputError(f"task {task}: the frozen task does not match the report's fingerprint",
                                 file=str(results_path), field=f"comparison_identity.tasks.{task}",
                                 fix="rebuild the report with `pluginbench report`, or judge another run")
            try:
                instruction = (frozen / "instruction.md").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(f"task {task}: cannot read the frozen instruction ({exc})",
                                 file=str(frozen / "instruction.md"), fix="judge a complete run") from None
            src = _starting_source(rd, task)
            sources[task] = (fingerprint(scan_tree(src)), src, instruction)
        fp, src, instruction = sources[task]
        attempt_id = str(row["attempt_id"])
        patch = rd.root / str(row.get("evidence") or f"evidence/attempts/{attempt_id}") / "model.patch"
        diff: str | None = None
        missing: str | None = None
        if row.get("state") != "complete":
            missing = f"the attempt is {row.get('state')}, not complete"
        elif attempt_id not in digests:
            missing = "no saved submission (the log records no captured patch)"
        elif not patch.is_file() and not (rd.evidence / "review-packets" / attempt_id / "binding.json").is_file():
            missing = f"no saved submission ({patch} is missing)"
        origin = "snapshot"
        packet = _read_packet(rd, attempt_id, digests.get(attempt_id), fp, instruction)
        if missing is None and packet is not None:
            diff, origin = anonymize_diff(packet.decode("utf-8", errors="replace")), "review-packet"
        elif missing is None:
            data = patch.read_bytes()
            if sha256_bytes(data) != digests[attempt_id]:
                raise InputError(f"attempt {attempt_id}: model.patch does not match its recorded digest",
                                 file=str(patch), field="submission.captured.patch_sha256",
                                 fix="the evidence was changed after the run; judge an unchanged run")
            diff = anonymize_diff(data.decode("utf-8", errors="replace"))
        subs.append(Submission(side_label=arg, run=str(folder), arm=arm, task=task, repeat=int(row["repeat"]),
                               attempt_id=attempt_id, outcome=row.get("outcome") if row.get("state") == "complete"
                               else None, diff=diff, diff_origin=origin, source_fingerprint=fp,
                               source_path=str(src), instruction=instruction, missing_reason=missing))
    return subs


def _read_only(root: Path) -> None:
    for dirpath, _dirs, filenames in os.walk(root, topdown=False):
        for f in filenames:
            p = Path(dirpath) / f
            p.chmod(stat.S_IMODE(p.stat().st_mode) & 0o555)
        Path(dirpath).chmod(0o555)


def write_prepared(out: Path, first: str, second: str, pairs: list[Pair], omitted: list[Omitted], *,
                   criteria: bytes, seed: int, excluded: Iterable[str]) -> dict[str, Any]:
    """Write the prepared directory; returns the key."""
    out.mkdir(parents=True)
    sources: dict[str, str] = {}
    for pair in pairs:
        name = f"task-{pair.number}"
        if pair.task not in sources:
            src = Path(pair.a.source_path)
            folder = out / "sources" / f"{pair.task}-{pair.a.source_fingerprint[:12]}"
            shutil.copytree(src, folder, symlinks=False)
            _read_only(folder)
            sources[pair.task] = folder.name
        task_dir = out / name
        task_dir.mkdir()
        (task_dir / "A.diff").write_text(pair.a.diff or "")
        (task_dir / "B.diff").write_text(pair.b.diff or "")
        (task_dir / "instruction.md").write_text(pair.a.instruction)
        (task_dir / "criteria.md").write_bytes(criteria)
        (task_dir / "response-schema.json").write_text(json.dumps(RESPONSE_SCHEMA, indent=1) + "\n")
        os.symlink(f"../sources/{sources[pair.task]}", task_dir / SOURCE_LINK)
        (out / f"{name}.brief.md").write_text(BRIEF_TEMPLATE.format(pair=name))
        for side in (pair.a, pair.b):
            sub_dir = out / "submissions" / f"{1 if side.side_label == first else 2}-{Path(side.run).name}"
            sub_dir.mkdir(parents=True, exist_ok=True)
            (sub_dir / f"{side.attempt_id}.diff").write_text(side.diff or "")
    key = {
        "format": "pluginbench-judge-key-1", "seed": seed,
        "sides": {"first": first, "second": second},
        "criteria_sha256": sha256_bytes(criteria), "excluded": sorted(set(excluded)),
        "pairs": {f"task-{p.number}": {
            "task": p.task, "repeat": p.repeat,
            "source": {"folder": f"sources/{sources[p.task]}",
                       "sha256": source_digest(out / "sources" / sources[p.task])},
            **{side: {"label": s.side_label, "run": s.run, "arm": s.arm, "attempt_id": s.attempt_id,
                      "outcome": s.outcome, "diff_origin": s.diff_origin}
               for side, s in (("A", p.a), ("B", p.b))}} for p in pairs},
        "omitted": [{"run": o.run, "arm": o.arm, "task": o.task, "repeat": o.repeat,
                     "attempt_id": o.attempt_id, "reason": o.reason} for o in omitted],
    }
    (out / "key.json").write_text(json.dumps(key, indent=1, sort_keys=True) + "\n")
    return key


def prepare(first: str, second: str, *, tasks: list[str] | None, exclude: list[str], criteria: Path,
            seed: int, output: Path) -> tuple[dict[str, Any], list[Omitted]]:
    """Check every input, then write ``output``; raises :class:`InputError` before writing anything."""
    if not 0 <= seed < 2**63:
        raise InputError(f"--seed must be 0 or more and below 2**63, got {seed}", field="--seed",
                         fix="pass a non-negative integer, e.g. --seed 0 (the same rule as a config's seed)")
    if output.exists():
        raise InputError("the output directory already exists", file=str(output), field="--output",
                         fix="choose a new --output (a prepared directory is never reused)")
    try:
        criteria_bytes = criteria.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the criteria: {exc.strerror}", file=str(criteria), field="--criteria",
                         fix="pass the review standard as a readable Markdown file") from None
    if not criteria_bytes.strip():
        raise InputError("the criteria file is empty", file=str(criteria), field="--criteria",
                         fix="write the review standard the judges apply")
    excluded = set(exclude)
    if tasks is not None:
        both = sorted(set(tasks) & excluded)
        if both:
            raise InputError(f"--tasks names excluded tasks: {', '.join(both)}", field="--tasks",
                             fix="holdout tasks listed in --exclude are never judged; remove them from --tasks")
    left = load_submissions(first, excluded=excluded)
    right = load_submissions(second, excluded=excluded)
    if tasks is not None:
        known = {s.task for s in left} & {s.task for s in right}
        unknown = sorted(set(tasks) - known)
        if unknown:
            raise InputError(f"--tasks names tasks not in both inputs: {', '.join(unknown)}", field="--tasks",
                             fix="use tasks both runs have: " + ", ".join(sorted(known)))
    pairs, omitted = match_pairs(left, right, seed=seed, tasks=tasks)
    if not pairs:
        raise InputError("no matched pair to judge (same task and repeat in both inputs, each with a submission)",
                         field="RUN=ARM", fix="pass two runs that share tasks and repeats")
    key = write_prepared(output, first, second, pairs, omitted, criteria=criteria_bytes, seed=seed,
                         excluded=excluded)
    return key, omitted
