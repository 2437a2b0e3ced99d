"""Harbor task loading and safe trees: what is read, what is refused, what a fingerprint sees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.actors._reward import classify, read_reward
from pluginbench.errors import TaskError
from pluginbench.tasks import (
    UnsafeTree,
    fingerprint,
    freeze_tree,
    load_task,
    scan_tree,
    strip_canary,
)

DEEPSWE = Path(__file__).resolve().parents[1] / "data" / "deep-swe"


def make_task(root: Path, toml: str = 'schema_version = "1.4"\n') -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "task.toml").write_text(toml)
    (root / "instruction.md").write_text("Fix it.\n")
    (root / "tests" / "test.sh").write_text("#!/bin/sh\n")
    return root


@pytest.mark.parametrize("name", ["anko-default-function-arguments", "textual-kitty-key-phases"])
def test_real_deepswe_tasks_load(name: str) -> None:
    """The two real DeepSWE tasks parse: separate verifier, published image, collect command, limits."""
    task = load_task(DEEPSWE / name)
    assert task.environment_mode == "separate"
    assert task.docker_image and task.cpus == 2.0 and task.memory_mb == 8192
    assert task.collect and "model.patch" in task.collect[0].command
    assert task.instruction.strip() and not task.has_workspace


def test_defaults_follow_harbor() -> None:
    """An almost empty task.toml gets Harbor's defaults and PluginBench's separate grading."""
    task = load_task(make_task(Path(os.environ.get("TMPDIR", "/tmp")) / f"pb-default-{os.getpid()}"))
    assert (task.workdir, task.verifier_timeout_sec, task.agent_timeout_sec, task.environment_mode) == (
        "/app", 600.0, None, "separate")


@pytest.mark.parametrize("toml, needle", [
    ('[[steps]]\nname = "a"\n', "multi-step"),
    ('[environment]\ngpus = 1\n', "GPU"),
    ('[environment]\nos = "windows"\n', "Linux"),
    ('[verifier]\ntimeout_sec = "soon"\n', "must be a number"),
    ('not toml = = 1\n', "does not parse"),
])
def test_unsupported_or_malformed_tasks_are_refused(tmp_path: Path, toml: str, needle: str) -> None:
    """Features this runner cannot honour, and malformed fields, are refused with the field named."""
    with pytest.raises(TaskError, match=needle):
        load_task(make_task(tmp_path / "t", toml))


def test_task_authored_compose_is_refused(tmp_path: Path) -> None:
    """A docker-compose.yaml in environment/ is refused."""
    root = make_task(tmp_path / "t")
    (root / "environment").mkdir()
    (root / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    with pytest.raises(TaskError, match="Compose"):
        load_task(root)


def test_canary_lines_are_stripped() -> None:
    """Leading canary lines and the blank lines after them never reach the agent."""
    assert strip_canary("<!-- canary GUID abc -->\n\nDo the thing.\n") == "Do the thing.\n"
    assert strip_canary("Do it.\n# canary later\n") == "Do it.\n# canary later\n"


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo"])
def test_unsafe_entries_are_refused(tmp_path: Path, kind: str) -> None:
    """Symlinks, hardlinked files and special files in a frozen tree are refused, naming the path."""
    (tmp_path / "a.txt").write_text("a")
    bad = tmp_path / "bad"
    if kind == "symlink":
        os.symlink(tmp_path / "a.txt", bad)
    elif kind == "hardlink":
        os.link(tmp_path / "a.txt", bad)
    else:
        os.mkfifo(bad)
    with pytest.raises(UnsafeTree) as info:
        scan_tree(tmp_path)
    assert info.value.file and (info.value.file.endswith("bad") or info.value.file.endswith("a.txt"))


def test_fingerprint_sees_content_and_mode_not_mtime(tmp_path: Path) -> None:
    """Changing a byte or an executable bit changes the fingerprint; touching a file does not."""
    f = tmp_path / "run.sh"
    f.write_text("echo hi\n")
    f.chmod(0o644)
    first = fingerprint(scan_tree(tmp_path))
    os.utime(f, (1, 1))
    assert fingerprint(scan_tree(tmp_path)) == first
    f.chmod(0o755)
    assert fingerprint(scan_tree(tmp_path)) != first
    f.chmod(0o644)
    f.write_text("echo ho\n")
    assert fingerprint(scan_tree(tmp_path)) != first


def test_freeze_copies_exactly_and_skips_git(tmp_path: Path) -> None:
    """A frozen copy has the same fingerprint and leaves .git behind."""
    src = tmp_path / "src"
    (src / ".git").mkdir(parents=True)
    (src / ".git" / "HEAD").write_text("ref")
    (src / "pkg").mkdir()
    (src / "pkg" / "m.py").write_text("x = 1\n")
    fp, entries = freeze_tree(src, tmp_path / "dest")
    assert [e.relpath for e in entries] == ["pkg/m.py"]
    assert fingerprint(scan_tree(tmp_path / "dest")) == fp
    assert not (tmp_path / "dest" / ".git").exists()


@pytest.mark.parametrize("files, reward, reason", [
    ({"reward.json": '{"reward": 1, "f2p": 0.5}', "reward.txt": "0"}, 1.0, None),
    ({"reward.txt": " 0\n"}, 0.0, None),
    ({"reward.txt": ""}, None, "empty"),
    ({"reward.txt": "yes"}, None, "not a number"),
    ({"reward.json": '{"score": 1}'}, None, "no finite numeric"),
    ({"reward.txt": "nan"}, None, "not finite"),
    ({}, None, "neither"),
])
def test_reward_contract(tmp_path: Path, files: dict[str, str], reward: float | None, reason: str | None) -> None:
    """reward.json wins over reward.txt; empty, non-numeric, non-finite or missing is unknown, never 0."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    got, why, _native = read_reward(tmp_path)
    assert got == reward
    assert (why is None) == (reason is None) and (reason is None or reason in why)


@pytest.mark.parametrize("reward, empty, outcome", [
    (1.0, False, "pass"), (0.0, False, "fail"), (None, False, "unknown"), (0.5, False, "unknown"),
    (0.0, True, "empty"), (1.0, True, "empty"),
])
def test_outcome_classification(reward: float | None, empty: bool, outcome: str) -> None:
    """An empty patch is 'empty' whatever the reward; only 1 passes and only 0 fails."""
    assert classify(reward, None if reward is not None else "missing", empty).outcome == outcome


def test_a_task_toml_with_a_byte_order_mark_is_refused_saying_so(tmp_path: Path) -> None:
    """A task.toml an editor saved with a UTF-8 BOM is refused naming the BOM and the fix, not as an invalid statement."""
    with pytest.raises(TaskError, match="byte-order mark") as caught:
        load_task(make_task(tmp_path / "t", '\ufeffschema_version = "1.4"\n'))
    assert caught.value.fix == "save task.toml as UTF-8 without a BOM"
