"""Verifier contracts at admission: who applies model.patch, and the reviewed DeepSWE payload."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pluginbench.errors import TaskError
from pluginbench.tasks import admit_contract, load_task, patch_paths

DATA = Path(__file__).resolve().parents[1] / "data"
DEEPSWE = DATA / "deep-swe"
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "tasks"


@pytest.mark.parametrize("name, language_paths", [
    ("anko-default-function-arguments", ["core/default_arguments_test.go", "test.sh", "vm/default_arguments_test.go"]),
    ("textual-kitty-key-phases", ["test.sh", "tests/test_kitty_keyboard_protocol.py"]),
])
def test_real_deepswe_tasks_load_and_pass_admission(name: str, language_paths: list[str]) -> None:
    """The two real DeepSWE tasks load and are admitted as reviewed contracts whose verifier applies model.patch."""
    task = load_task(DEEPSWE / name)
    contract = admit_contract(task)
    assert contract.kind == "deepswe" and contract.patch_applied_by == "verifier"
    assert contract.artifacts == ["/logs/artifacts/model.patch"]
    assert contract.grader_revision == "deepswe-v1.1@435ee89"
    assert contract.base_commit == task.metadata["base_commit_hash"]
    assert contract.collect_command == task.collect[0].command
    assert set(language_paths) <= set(contract.replaced_paths)
    assert sorted(contract.payload) == ["tests/config.json", "tests/grader.py", "tests/test.patch", "tests/test.sh"]
    assert contract.fail_to_pass and contract.fail_to_pass > 0


def test_workspace_tasks_keep_pluginbench_applying_the_patch() -> None:
    """A PluginBench-format workspace task without artifacts gets the patch applied by PluginBench."""
    contract = admit_contract(load_task(QUICKSTART / "roman-numerals"))
    assert (contract.kind, contract.patch_applied_by, contract.artifacts) == ("workspace", "pluginbench", [])


def _copy(tmp: Path, name: str = "textual-kitty-key-phases") -> Path:
    dest = tmp / name
    shutil.copytree(DEEPSWE / name, dest)
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _refused(root: Path) -> TaskError:
    with pytest.raises(TaskError) as info:
        admit_contract(load_task(root))
    return info.value


def test_a_grader_reading_model_patch_without_the_artifact_is_ambiguous(tmp_path: Path) -> None:
    """A verifier file that reads model.patch while artifacts does not declare it is refused, naming both fields."""
    root = _copy(tmp_path)
    _edit(root / "task.toml", 'artifacts = ["/logs/artifacts/model.patch"]\n', "")
    err = _refused(root)
    assert "ambiguous verifier contract" in str(err) and "artifacts" in (err.field or "")
    assert "verifier.collect" in (err.field or "")


def test_a_workspace_task_whose_test_sh_reads_model_patch_is_ambiguous(tmp_path: Path) -> None:
    """Without a collect command, a test.sh that reads model.patch and no declared artifact is refused naming tests/test.sh."""
    root = tmp_path / "t"
    shutil.copytree(QUICKSTART / "roman-numerals", root)
    (root / "tests" / "test.sh").write_text("#!/bin/sh\ngit apply /logs/artifacts/model.patch\n")
    err = _refused(root)
    assert err.field == "artifacts, tests/test.sh"


def test_a_declared_artifact_that_no_verifier_file_reads_is_ambiguous(tmp_path: Path) -> None:
    """artifacts declaring model.patch with no tests/ file reading it is refused (nobody would apply the patch)."""
    root = tmp_path / "t"
    shutil.copytree(QUICKSTART / "roman-numerals", root)
    toml = root / "task.toml"
    toml.write_text('artifacts = ["/logs/artifacts/model.patch"]\n' + toml.read_text())
    err = _refused(root)
    assert err.field == "artifacts, tests/" and "no file under tests/ reads model.patch" in str(err)


@pytest.mark.parametrize("change, field", [
    (lambda r: _edit(r / "tests" / "grader.py", "def log(msg):", "def log(msg):  # changed"), "tests/grader.py"),
    (lambda r: _edit(r / "task.toml", "git diff --binary", "git diff"), "verifier.collect"),
    (lambda r: _edit(r / "task.toml", "[verifier.env]\n", "[verifier.env]\nTESTS_DIR = \"/tmp/x\"\n"), "verifier.env"),
    (lambda r: _edit(r / "task.toml", "[verifier.env]\n", "[verifier.env]\nPYTHONPATH = \"/tmp/x\"\n"),
     "verifier.env.PYTHONPATH"),
    (lambda r: _edit(r / "task.toml", "[environment.env]\n", "[environment.env]\nPYTHONPATH = \"/tmp/x\"\n"),
     "environment.env.PYTHONPATH"),
    (lambda r: (r / "tests" / "Dockerfile").write_text(
        (r / "tests" / "Dockerfile").read_text() + "ENTRYPOINT [\"/bin/true\"]\n"), "tests/Dockerfile"),
    (lambda r: _edit(r / "tests" / "test.sh", "cd /app ||", "APP_DIR=/tmp/fake; cd /app ||"), "tests/test.sh"),
    (lambda r: (r / "tests" / "test.patch").unlink(), "tests/test.patch"),
    (lambda r: _edit(r / "task.toml", 'base_commit_hash = "9737a5ab', 'base_commit_hash = "0737a5ab'),
     "metadata.base_commit_hash"),
    (lambda r: (r / "tests" / "config.json").write_text(json.dumps(
        {**json.loads((r / "tests" / "config.json").read_text()), "f2p_node_ids": []})), "f2p_node_ids"),
])
def test_deepswe_payload_and_collect_command_are_checked(tmp_path: Path, change, field: str) -> None:  # type: ignore[no-untyped-def]
    """A changed grader, collect command, redirecting path or PYTHON* setting, Dockerfile entrypoint, missing test.patch,
    disagreeing base commit or empty fail-to-pass list is refused, naming the field."""
    root = _copy(tmp_path)
    change(root)
    err = _refused(root)
    assert err.field == field, str(err)


def test_patch_paths_lists_both_sides_of_renames_once() -> None:
    """The paths a diff touches, in order, once each, including a rename's old and new path."""
    diff = ("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"
            "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n")
    assert patch_paths(diff) == ["x.py", "old.py", "new.py", "gone.py"]
