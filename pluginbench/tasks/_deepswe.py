"""DeepSWE verifier contracts, reviewed explicitly.

A DeepSWE task (``tests/grader.py`` with ``tests/config.json``) is admitted only when its
whole trusted verifier payload has the reviewed shape:

* ``tests/grader.py`` is a reviewed revision (its sha256 is in :data:`REVIEWED_GRADERS`):
  it resets the files ``model.patch`` touches to the base commit, applies the patch, resets
  the files ``test.patch`` touches, applies ``test.patch``, and scores fail-to-pass /
  pass-to-pass node ids into ``reward.json``;
* ``tests/config.json`` names a 40-hex ``base_commit`` (equal to
  ``[metadata].base_commit_hash`` when that is set), a non-empty ``f2p_node_ids``, a
  ``p2p_node_ids`` list and a ``grade`` table with a known ``format`` and ``reports``;
* ``tests/test.patch`` touches at least one path; ``tests/test.sh`` runs
  ``python3 /tests/grader.py prepare`` and ``... grade``;
* ``artifacts`` is exactly ``["/logs/artifacts/model.patch"]`` and the only
  ``[[verifier.collect]]`` command is exactly :func:`collect_command` of the base commit;
* nothing redirects verification: no ``TESTS_DIR``/``VERIFIER_DIR``/``APP_DIR``/
  ``ARTIFACTS_DIR`` in ``[verifier.env]`` or assigned in ``test.sh``, no ``PYTHON*``
  variable in ``[verifier.env]`` (it would change how grader.py runs), a ``/app`` workdir,
  and a ``tests/Dockerfile`` (when present) that only copies files and runs ``chmod``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import TaskError
from ..rundir import sha256_file
from ._contract import MODEL_PATCH, VerifierContract
from ._harbor import HarborTask

#: grader.py revisions whose contract was reviewed (sha256 -> revision name)
REVIEWED_GRADERS = {
    "47cc9eaadf21e636323c360ec4fa786f0733ec9fd1d21ea5a5717ff9f8c4077c": "deepswe-v1.1@435ee89",
}
PAYLOAD = ("test.sh", "grader.py", "test.patch", "config.json")
REDIRECTING = ("TESTS_DIR", "VERIFIER_DIR", "APP_DIR", "ARTIFACTS_DIR")
_SAFE_DOCKERFILE = re.compile(r"^\s*(#.*|FROM\s+\S+(\s+AS\s+\S+)?|COPY\s+[^\n]+|RUN\s+chmod\s+[^;&|]+|)\s*$", re.IGNORECASE)


def collect_command(base_commit: str) -> str:
    """The one artifact-collection command a reviewed DeepSWE task declares."""
    return (
        "cd /app && mkdir -p /logs/artifacts && git config --global --add safe.directory /app && "
        f"git diff --binary {base_commit} HEAD > /logs/artifacts/model.patch"
    )


def _refuse(task: HarborTask, what: str, field: str, fix: str, file: str | None = None) -> TaskError:
    return TaskError(f"task '{task.id}': DeepSWE verifier contract: {what}", file=file or str(task.root / "task.toml"),
                     field=field, fix=fix)


def _config(task: HarborTask) -> dict[str, Any]:
    path = task.tests_dir / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _refuse(task, f"tests/config.json does not parse: {exc}", "tests/config.json", "fix the JSON",
                      str(path)) from None
    if not isinstance(data, dict):
        raise _refuse(task, "tests/config.json is not an object", "tests/config.json", "write a JSON object", str(path))
    base = data.get("base_commit")
    if not isinstance(base, str) or not re.fullmatch(r"[0-9a-f]{40}", base):
        raise _refuse(task, "tests/config.json has no 40-hex base_commit", "base_commit",
                      "set base_commit to the task image's git HEAD", str(path))
    for key, nonempty in (("f2p_node_ids", True), ("p2p_node_ids", False)):
        ids = data.get(key)
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or (nonempty and not ids):
            raise _refuse(task, f"tests/config.json {key} must be a {'non-empty ' if nonempty else ''}list of node ids",
                          key, "list the node ids", str(path))
    grade = data.get("grade")
    if (not isinstance(grade, dict) or grade.get("format") not in ("ctrf", "junit")
            or not isinstance(grade.get("reports"), list) or not grade["reports"]
            or not all(isinstance(r, str) and r.startswith("/logs/verifier/") for r in grade["reports"])):
        raise _refuse(task, "tests/config.json grade needs format ctrf|junit and reports under /logs/verifier/",
                      "grade", "set grade.format and grade.reports", str(path))
    return data


def admit_deepswe(task: HarborTask, replaced: list[str]) -> VerifierContract:
    """Check a DeepSWE task's trusted verifier payload and collect command."""
    tests = task.tests_dir
    for name in PAYLOAD:
        if not (tests / name).is_file():
            raise _refuse(task, f"tests/{name} is missing", f"tests/{name}", "restore the task's verifier payload",
                          str(tests / name))
    grader_sha = sha256_file(tests / "grader.py")
    revision = REVIEWED_GRADERS.get(grader_sha)
    if revision is None:
        raise _refuse(task, f"tests/grader.py (sha256 {grader_sha[:12]}) is not a reviewed revision",
                      "tests/grader.py", "use a reviewed DeepSWE grader.py (docs/tasks.md lists them)",
                      str(tests / "grader.py"))
    config = _config(task)
    base = str(config["base_commit"])
    meta_base = task.metadata.get("base_commit_hash")
    if meta_base is not None and meta_base != base:
        raise _refuse(task, f"[metadata].base_commit_hash {meta_base} differs from tests/config.json base_commit {base}",
                      "metadata.base_commit_hash", "make them name the same commit")
    if list(task.artifacts) != [MODEL_PATCH]:
        raise _refuse(task, f"artifacts must be exactly [\"{MODEL_PATCH}\"], not {list(task.artifacts)}", "artifacts",
                      f'write artifacts = ["{MODEL_PATCH}"]')
    expected = collect_command(base)
    if [c.command for c in task.collect] != [expected]:
        raise _refuse(task, "the artifact-collection command is not the reviewed one", "verifier.collect",
                      f"declare exactly one [[verifier.collect]] with command = {expected!r}")
    if task.workdir != "/app":
        raise _refuse(task, f"the workdir is {task.workdir}, the grader works in /app", "environment.workdir",
                      "remove environment.workdir or set it to /app")
    for env, table in ((task.verifier_env, "verifier.env"), (task.environment_env, "environment.env")):
        redirect = sorted(k for k in env if k in REDIRECTING)  # [environment.env] reaches test.sh too
        if redirect:
            raise _refuse(task, f"[{table}] sets {', '.join(redirect)}, which could redirect verification",
                          table, f"remove {', '.join(redirect)} from [{table}]")
        interpreter = sorted(k for k in env if k.startswith("PYTHON"))
        if interpreter:  # PYTHONPATH/PYTHONSTARTUP/... would run other code inside the reviewed grader.py
            raise _refuse(task, f"[{table}] sets {', '.join(interpreter)}, which changes how the reviewed grader.py runs",
                          f"{table}.{interpreter[0]}", f"remove {', '.join(interpreter)} from [{table}]")
    test_sh = (tests / "test.sh").read_text(errors="replace")
    for sub in ("prepare", "grade"):
        if f"python3 /tests/grader.py {sub}" not in test_sh:
            raise _refuse(task, f"tests/test.sh never runs 'python3 /tests/grader.py {sub}'", "tests/test.sh",
                          "use the DeepSWE verifier frame", str(tests / "test.sh"))
    assigned = [k for k in REDIRECTING if re.search(rf"(^|[\s;]){k}=", test_sh, re.MULTILINE)]
    if assigned:
        raise _refuse(task, f"tests/test.sh assigns {', '.join(assigned)}, which could redirect verification",
                      "tests/test.sh", "remove the assignment", str(tests / "test.sh"))
    dockerfile = tests / "Dockerfile"
    if dockerfile.is_file():
        for n, line in enumerate(dockerfile.read_text(errors="replace").splitlines(), 1):
            if not _SAFE_DOCKERFILE.match(line):
                raise _refuse(task, f"tests/Dockerfile line {n} ({line.strip()[:60]!r}) could redirect verification",
                              "tests/Dockerfile", "keep only FROM, COPY and RUN chmod lines", str(dockerfile))
    if not replaced:
        raise _refuse(task, "tests/test.patch touches no path", "tests/test.patch", "restore the hidden tests",
                      str(tests / "test.patch"))
    return VerifierContract(
        kind="deepswe",
        patch_applied_by="verifier",
        artifacts=list(task.artifacts),
        replaced_paths=replaced,
        payload={f"tests/{name}": sha256_file(tests / name) for name in PAYLOAD},
        base_commit=base,
        collect_command=expected,
        grader_revision=revision,
        fail_to_pass=len(config["f2p_node_ids"]),
        pass_to_pass=len(config["p2p_node_ids"]),
    )
