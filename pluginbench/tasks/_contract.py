"""A task's verifier contract, decided at admission: who applies the canonical patch, and
which paths its trusted tests replace.

Harbor's separate verifier receives the task-declared artifacts and its own trusted
tests. Two contracts are supported:

* ``pluginbench`` applies the patch: a task that declares no ``model.patch`` artifact
  (PluginBench's own workspace format, and image tasks written like it). The verifier
  sandbox starts from the starting source, PluginBench applies ``model.patch`` with
  ``git apply``, then ``tests/test.sh`` runs.
* ``verifier`` applies the patch: a task whose ``artifacts`` lists
  ``/logs/artifacts/model.patch`` (DeepSWE and its kind). The verifier sandbox starts
  from the untouched starting source; the canonical patch is handed over only as that
  artifact, and the task's own grader applies it.

A task whose files point both ways (a collect command that writes ``model.patch`` or a
verifier file that applies it without the artifact declared, or the artifact declared with no verifier
file that reads it) is refused, naming the fields. DeepSWE-shaped tasks
(``tests/grader.py`` + ``tests/config.json``) are checked further in :mod:`._deepswe`.
"""

import re
from pathlib import Path

import msgspec

from ..errors import TaskError
from ..rundir import sha256_file
from ._harbor import HarborTask

MODEL_PATCH = "/logs/artifacts/model.patch"

_DIFF_GIT = re.compile(r'^diff --git "?a/(.*?)"? "?b/(.*?)"?$')


class VerifierContract(msgspec.Struct, frozen=True, kw_only=True):
    """How a task's verifier is fed, recorded in the frozen task evidence."""

    #: ``workspace`` (PluginBench applies), ``artifact`` (a Harbor task whose verifier
    #: applies ``model.patch``) or ``deepswe`` (a reviewed DeepSWE verifier contract)
    kind: str
    #: ``pluginbench`` or ``verifier``
    patch_applied_by: str
    artifacts: list[str]
    #: paths the hidden ``tests/test.patch`` replaces (empty without one)
    replaced_paths: list[str]
    #: sha256 of each trusted verifier file under ``tests/`` (``tests/<name>``)
    payload: dict[str, str]
    base_commit: str | None = None
    collect_command: str | None = None
    grader_revision: str | None = None
    fail_to_pass: int | None = None
    pass_to_pass: int | None = None

    def describe(self) -> str:
        who = "the task's verifier applies model.patch (an artifact)" if self.patch_applied_by == "verifier" else (
            "PluginBench applies model.patch before tests/test.sh")
        return f"{self.kind}: {who}"


def patch_paths(text: str) -> list[str]:
    """The unique paths a unified git diff touches, in order (both sides of a rename)."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        m = _DIFF_GIT.match(line)
        found: tuple[str, ...] = ()
        if m:
            found = (m.group(1), m.group(2))
        elif line.startswith("+++ b/") or line.startswith("--- a/"):
            found = (line[6:],)
        elif line.startswith("rename from ") or line.startswith("rename to "):
            found = (line.split(" ", 2)[2],)
        for path in found:
            if path and path != "/dev/null":
                seen.setdefault(path, None)
    return list(seen)


def _verifier_files(task: HarborTask) -> list[Path]:
    return sorted(p for p in task.tests_dir.rglob("*") if p.is_file() and p.suffix in (".sh", ".py", ""))


def _mentions_model_patch(path: Path, applying: bool = False) -> bool:
    """Whether a verifier file reads model.patch (``applying``: and applies a patch too,
    with ``git apply`` or ``patch -p``); a test.sh that only inspects it is no contract."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return b"model.patch" in data and (not applying or b"apply" in data or b"patch -p" in data)


def admit_contract(task: HarborTask) -> VerifierContract:
    """Decide and check ``task``'s verifier contract. Raises :class:`TaskError`."""
    toml = str(task.root / "task.toml")
    declared = MODEL_PATCH in task.artifacts
    readers = [p for p in _verifier_files(task) if _mentions_model_patch(p)]
    appliers = [p for p in readers if _mentions_model_patch(p, applying=True)]
    collects = [c.command for c in task.collect if "model.patch" in c.command]
    if not declared and collects:
        raise TaskError(
            f"ambiguous verifier contract: [[verifier.collect]] writes model.patch ({collects[0]!r}) but "
            f"artifacts does not declare {MODEL_PATCH}, so it is unclear who applies the patch",
            file=toml, field="artifacts, verifier.collect",
            fix=f'add artifacts = ["{MODEL_PATCH}"] (the verifier applies it) or drop the collect command',
        )
    if not declared and appliers:
        rel = appliers[0].relative_to(task.root)
        raise TaskError(
            f"ambiguous verifier contract: {rel} applies model.patch but artifacts does not declare "
            f"{MODEL_PATCH}; PluginBench would apply the patch and the verifier would apply it again",
            file=toml, field=f"artifacts, {rel}",
            fix=f'add artifacts = ["{MODEL_PATCH}"] so the verifier gets the patch only as an artifact',
        )
    if declared and not readers:
        raise TaskError(
            f"ambiguous verifier contract: artifacts declares {MODEL_PATCH}, so the verifier must apply it, "
            "but no file under tests/ reads model.patch",
            file=toml, field="artifacts, tests/",
            fix="make tests/test.sh apply /logs/artifacts/model.patch, or remove it from artifacts so PluginBench applies it",
        )
    test_patch = task.tests_dir / "test.patch"
    replaced = patch_paths(test_patch.read_text(errors="replace")) if test_patch.is_file() else []
    if (task.tests_dir / "grader.py").is_file() and (task.tests_dir / "config.json").is_file():
        from ._deepswe import admit_deepswe

        return admit_deepswe(task, replaced)
    payload = {f"tests/{p.relative_to(task.tests_dir).as_posix()}": sha256_file(p)
               for p in sorted(task.tests_dir.rglob("*")) if p.is_file()}
    return VerifierContract(
        kind="artifact" if declared else "workspace",
        patch_applied_by="verifier" if declared else "pluginbench",
        artifacts=list(task.artifacts),
        replaced_paths=replaced,
        payload=payload,
    )
