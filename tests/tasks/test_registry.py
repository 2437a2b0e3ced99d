"""Harbor registry datasets: the index format, version choice, config rules, and resolution
through a local registry file and a loopback git server holding real task folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pluginbench.config import parse_evaluation, validate
from pluginbench.errors import ConfigError, NotInDataset, TaskError
from pluginbench.tasks import choose_version, parse_registry, resolve_dataset, select_dataset
from pluginbench.tasks._registry import dataset_block, parse_dataset_ref, read_registry
from tests.tasks._gitserver import TaskRepo, git

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "tasks"
SHA = "0b9fabbb63b9104d678fe965e1632f2dd9eaa2ea"


def _entry(version: str = "1.0", **task: Any) -> dict[str, Any]:
    row = {"name": "word-wrap", "git_url": "https://github.com/o/r.git", "git_commit_id": SHA, "path": "tasks/word-wrap"}
    return {"name": "demo", "version": version, "description": "", "tasks": [row | task], "metrics": []}


def _select(entries: list[dict[str, Any]], version: str | None = "1.0"):
    return select_dataset(parse_registry(json.dumps(entries).encode(), "reg.json"), "demo", version, "reg.json")


@pytest.mark.parametrize(("versions", "chosen"), [
    (["1.0", "head", "2.0"], "head"),
    (["1.9", "1.10", "0.9"], "1.10"),
    (["beta", "2.0"], "2.0"),
    (["alpha", "beta"], "beta"),
])
def test_without_a_version_harbor_order_picks_head_then_the_highest_release(versions: list[str], chosen: str) -> None:
    """head wins; releases compare numerically (1.10 > 1.9) and beat other names; the rest compare as text."""
    assert choose_version(versions) == chosen


@pytest.mark.parametrize(("data", "field", "words"), [
    (b"{not json", "(whole file)", "not JSON"),
    (b'{"name": "demo"}', "(top level)", "JSON list of datasets"),
    (b'[{"name": "demo"}]', "[0].version", "no version string"),
])
def test_a_malformed_index_names_the_file_and_the_field(data: bytes, field: str, words: str) -> None:
    """An index that is not a JSON list of {name, version, ...} is refused naming the registry file and the field."""
    with pytest.raises(TaskError) as err:
        parse_registry(data, "reg.json")
    assert err.value.file == "reg.json" and err.value.field == field and words in err.value.message and err.value.fix


@pytest.mark.parametrize(("task", "field", "words"), [
    ({"git_commit_id": "abc123"}, "git_commit_id", "neither a full 40-hex commit nor head"),
    ({"git_url": None}, "git_url", "is a local path"),
    ({"git_url": "ssh://host/r.git"}, "git_url", "not an https://, git:// or file://"),
    ({"git_url": "https://u:p@github.com/o/r.git"}, "git_url", "without credentials"),
    ({"path": "tasks/../etc"}, "path", "not a folder inside the repository"),
    ({"name": "a b"}, "name", "not a name of plain parts"),
])
def test_a_bad_task_entry_names_its_index_field(task: dict[str, Any], field: str, words: str) -> None:
    """Short SHAs, local paths, other schemes, credentials, escaping paths and odd names are refused at [i].tasks[j]."""
    with pytest.raises(TaskError) as err:
        _select([_entry(**task)])
    assert err.value.field == f"[0].tasks[0].{field}" and words in err.value.message


def test_unknown_dataset_version_and_task_are_not_in_dataset_errors_listing_choices() -> None:
    """A name, version or task the index lacks raises NotInDataset naming the part and the versions to choose."""
    entries = [_entry("1.0"), _entry("2.0")]
    with pytest.raises(NotInDataset) as err:
        select_dataset(parse_registry(json.dumps(entries).encode(), "r"), "nope", "1.0", "r")
    assert err.value.field == "name"
    with pytest.raises(NotInDataset) as err:
        _select(entries, "3.0")
    assert err.value.field == "version" and "1.0, 2.0" in (err.value.fix or "")
    assert _select(entries, None).version == "2.0" and _select(entries, "1.0").version == "1.0"
    assert _select([_entry(git_commit_id="head")]).tasks[0].git_commit_id is None  # head: resolved at freeze


def test_the_printed_block_is_a_config_the_loader_accepts() -> None:
    """dataset_block quotes every value, so version 1.0 and a task named true stay strings, and validates as tasks:."""
    import yaml

    block = yaml.safe_load(dataset_block("org/set", "1.0", ["true", "org/word-wrap"], "/srv/registry.json"))
    assert block["tasks"] == {"dataset": "org/set", "version": "1.0", "ids": ["true", "org/word-wrap"],
                              "registry": "/srv/registry.json"}
    assert _config(block["tasks"]) is None
    assert parse_dataset_ref("org/set@1.0") == ("org/set", "1.0") and parse_dataset_ref("x") == ("x", None)


def _config(tasks: dict[str, Any]) -> ConfigError | None:
    try:
        validate(parse_evaluation({"tasks": tasks, "runner": {"harness": "nop"}}, Path("e.yaml")), Path("e.yaml"))
    except ConfigError as exc:
        return exc
    return None


@pytest.mark.parametrize(("tasks", "field"), [
    ({"dataset": "demo", "version": "1.0", "ids": ["a", "org/b"]}, None),
    ({"dataset": {"name": "demo", "version": "1.0", "ids": ["a"], "registry": "r.json"}}, None),
    ({"dataset": "demo", "ids": ["a"]}, "tasks.version"),
    ({"dataset": "demo", "version": "1.0"}, "tasks.ids"),
    ({"dataset": "demo", "version": "1.0", "ids": ["x/a", "y/a"]}, "tasks.ids[1]"),
    ({"dataset": "demo", "version": "1.0", "ids": ["a__b"]}, "tasks.ids[0]"),
    ({"dataset": "demo", "version": "1.0", "ids": ["a"], "registry": "ssh://h/r.json"}, "tasks.registry"),
    ({"dataset": {"name": "demo", "version": "1.0", "ids": []}}, "tasks.dataset.ids"),
    ({"dataset": {"name": "demo", "version": "1.0", "ids": ["a"]}, "ids": ["a"]}, "tasks.ids"),
    ({"dataset": "demo", "version": "1.0", "ids": ["a"], "urls": ["file:///r.git/tree/main/a"]}, "tasks"),
    ({"source": "t", "ids": ["a"], "version": "1.0"}, "tasks.version"),
    ({"dataset": "datacurve/deep-swe-1-1", "version": "1.0", "ids": ["a"]}, "tasks.dataset"),  # the package hub
    ({"dataset": {"name": "org/set", "version": "latest", "ids": ["a"]}}, "tasks.dataset.name"),
    ({"dataset": "org/set", "version": "1.0", "ids": ["a"], "registry": "r.json"}, None),  # an index that may list it
])
def test_config_dataset_forms_and_their_refusals_name_the_field(tasks: dict[str, Any], field: str | None) -> None:
    """dataset: <name> with version and ids, or one mapping, is accepted; a missing part, clashing run ids, '__',
    a non-https registry, parts set twice, two sources, or version without a dataset are refused naming the field."""
    err = _config(tasks)
    assert (err.field if err else None) == field, err


def test_a_package_hub_name_is_refused_before_any_read_saying_what_the_hub_is(tmp_path: Path) -> None:
    """An org/name against Harbor's own index is a package-hub name: the config and tasks pick exit 2 naming the field,
    the hub and the fix (harbor download, then tasks.source) without reading any index; an index that does not list it
    says the same."""
    from typer.testing import CliRunner

    from pluginbench.cli import app

    err = _config({"dataset": "datacurve/deep-swe-1-1", "version": "1.0", "ids": ["a"]})
    assert err is not None and "hub.harborframework.com" in err.message and "harbor download" in (err.fix or "")
    done = CliRunner().invoke(app, ["tasks", "pick", "--dataset", "terminal-bench/terminal-bench-2@latest"])
    assert done.exit_code == 2 and "package hub" in done.output and "field: --dataset" in done.output
    assert "reading the registry index" not in done.output
    with pytest.raises(NotInDataset) as missing:
        select_dataset(parse_registry(json.dumps([_entry("1.0")]).encode(), "r"), "org/other", None, "r")
    assert "package hub" in missing.value.message and "harbor download org/other" in (missing.value.fix or "")


# --- resolution through a local registry file and a loopback git server ----------------------


@pytest.fixture
def served(tmp_path: Path):
    repo = TaskRepo(tmp_path / "server")
    for name in ("roman-numerals", "word-wrap"):
        repo.add_tree(QUICKSTART / name, f"tasks/{name}")
    repo.commit()
    repo.serve()
    yield repo
    repo.stop()


def _registry(tmp: Path, repo: TaskRepo, commit: str | None, version: str = "1.0") -> Path:
    assert repo.port is not None
    url = f"git://127.0.0.1:{repo.port}/tasks.git"
    tasks = [{"name": f"quick/{n}", "git_url": url, "git_commit_id": commit, "path": f"tasks/{n}"}
             for n in ("roman-numerals", "word-wrap")]
    path = tmp / "registry.json"
    path.write_text(json.dumps([{"name": "quick", "version": version, "description": "", "tasks": tasks,
                                 "metrics": []}]))
    return path


def _error(part: str, message: str, fix: str) -> TaskError:
    return TaskError(message, field=part, fix=fix)


def test_a_dataset_resolves_pins_and_is_served_from_the_cache_with_the_server_gone(served: TaskRepo,
                                                                                  tmp_path: Path) -> None:
    """head is pinned to the commit it names now; pins carry git's tree; the content hash is stable; a verified cache
    entry serves the same dataset with the server stopped; a later commit changes the content hash."""
    first = git("rev-parse", "HEAD", cwd=served.work)
    registry, cache = _registry(tmp_path, served, None), tmp_path / "cache"
    names = ["quick/word-wrap", "quick/roman-numerals"]
    pin, tasks = resolve_dataset("quick", "1.0", names, str(registry), cache, error=_error)
    assert [p.task_id for p, _ in tasks] == ["word-wrap", "roman-numerals"]
    assert {p.commit for p, _ in tasks} == {first} and tasks[0][0].url == "quick@1.0:quick/word-wrap"
    assert tasks[0][0].tree == git("rev-parse", f"{first}:tasks/word-wrap", cwd=served.work)
    assert (tasks[0][1] / "instruction.md").read_bytes() == (QUICKSTART / "word-wrap" / "instruction.md").read_bytes()
    assert pin.tasks == names and pin.content_hash.startswith("sha256:") and pin.version == "1.0"

    pinned = _registry(tmp_path, served, first)  # the same commit, written out: same content
    served.stop()
    again, cached = resolve_dataset("quick", "1.0", names, str(pinned), cache, error=_error)
    assert again.content_hash == pin.content_hash and [f for _, f in cached] == [f for _, f in tasks]
    assert again.registry_sha256 != pin.registry_sha256  # the index bytes differ; the tasks do not

    served.serve()
    (served.work / "tasks" / "word-wrap" / "instruction.md").write_text("Changed later.\n")
    second = served.commit("later")
    moved, _ = resolve_dataset("quick", "1.0", names, str(_registry(tmp_path, served, None)), cache, error=_error)
    assert moved.content_hash != pin.content_hash and second != first


def test_unreachable_tasks_and_missing_registry_files_are_clear_errors(served: TaskRepo, tmp_path: Path) -> None:
    """A registry commit the server lacks fails for that ids[i]; a missing index names its path; nothing is cached."""
    registry = _registry(tmp_path, served, "f" * 40)
    with pytest.raises(TaskError) as err:
        resolve_dataset("quick", "1.0", ["quick/word-wrap"], str(registry), tmp_path / "cache", error=_error)
    assert err.value.field == "ids[0]" and "quick/word-wrap" in err.value.message
    assert not any((tmp_path / "cache").glob("*/origin.json"))
    with pytest.raises(TaskError) as err:
        read_registry(str(tmp_path / "absent.json"))
    assert err.value.file == str(tmp_path / "absent.json") and "cannot read the registry index" in err.value.message


def test_picker_previews_show_each_instruction_and_say_why_one_is_missing(served: TaskRepo, tmp_path: Path) -> None:
    """dataset_previews shows each task's instruction.md (one fetch per repository and commit); a task whose
    repository cannot be reached previews its origin and the reason instead of failing the picker."""
    from pluginbench.tasks import dataset_previews

    registry = json.loads(_registry(tmp_path, served, None).read_text())
    registry[0]["tasks"].append({"name": "quick/gone", "git_url": "git://127.0.0.1:9/gone.git",
                                 "git_commit_id": "a" * 40, "path": "tasks/gone"})
    ds = select_dataset(registry, "quick", "1.0", "r")
    previews = dataset_previews(ds, tmp_path / "scratch", set())
    wrap = (QUICKSTART / "word-wrap" / "instruction.md").read_text()
    assert previews["quick/word-wrap"].endswith(wrap) and previews["quick/word-wrap"].startswith("# quick/word-wrap\n")
    assert "(no preview:" in previews["quick/gone"] and "git://127.0.0.1:9/gone.git" in previews["quick/gone"]
