"""Task-folder links: parsing, the git tree id, resolution, the verified cache, and config rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.config import parse_evaluation, validate
from pluginbench.errors import ConfigError, TaskError
from pluginbench.tasks._remote import git_tree_id, resolve_pins
from pluginbench.tasks._urls import BadTaskUrl, parse_task_url, tasks_block
from tests.tasks._gitserver import TaskRepo, git

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "tasks"
SHA = "0b9fabbb63b9104d678fe965e1632f2dd9eaa2ea"


def test_github_link_parses_to_repository_ref_path_and_task_id() -> None:
    """A GitHub tree link names the .git repository, the ref, the folder, and its last part as the task id."""
    link = parse_task_url(f"https://github.com/datacurve-ai/deep-swe/tree/{SHA}/tasks/testem-per-launcher-reports")
    assert link.repo == "https://github.com/datacurve-ai/deep-swe.git"
    assert (link.ref, link.path, link.task_id) == (SHA, "tasks/testem-per-launcher-reports", "testem-per-launcher-reports")
    pinned = parse_task_url("https://github.com/o/r/tree/main/tasks/x").pinned(SHA)
    assert pinned == f"https://github.com/o/r/tree/{SHA}/tasks/x"


def test_plain_git_links_split_after_the_dot_git_repository() -> None:
    """file:// and git:// links are <repository>.git/tree/<ref>/<path>; the pin keeps the repository."""
    link = parse_task_url("git://127.0.0.1:9418/sets/tasks.git/tree/v1/a/b")
    assert (link.repo, link.ref, link.path) == ("git://127.0.0.1:9418/sets/tasks.git", "v1", "a/b")
    assert parse_task_url("file:///srv/t.git/tree/main/x").pinned(SHA) == f"file:///srv/t.git/tree/{SHA}/x"


@pytest.mark.parametrize(("url", "words"), [
    ("http://github.com/o/r/tree/main/x", "unsupported scheme 'http'"),
    ("ssh://host/r.git/tree/main/x", "unsupported scheme 'ssh'"),
    ("https://github.com/o/r/blob/main/x", "<owner>/<repo>/tree/<ref>/<path>"),
    ("https://github.com/o/r/tree/main", "<owner>/<repo>/tree/<ref>/<path>"),
    ("https://user:pw@host/r.git/tree/main/x", "credentials"),
    ("file:///srv/repo/tree/main/x", "ends in .git"),
    ("file:///srv/r.git/tree/main/../etc", "no '.', '..'"),
    ("file:///srv/r.git/tree/-x/t", "not a commit, tag or single-component branch"),
    (" file:///srv/r.git/tree/main/t", "surrounding spaces"),
])
def test_bad_links_are_refused_saying_why(url: str, words: str) -> None:
    """Unsupported schemes, other GitHub pages, credentials, missing parts and escaping paths are refused."""
    with pytest.raises(BadTaskUrl) as err:
        parse_task_url(url)
    assert words in str(err.value)


def test_tasks_block_is_yaml_for_the_config() -> None:
    """The printed block is a tasks: mapping with the pinned urls, loadable as config."""
    import yaml

    block = tasks_block(["file:///r.git/tree/" + SHA + "/a"])
    assert yaml.safe_load(block) == {"tasks": {"urls": ["file:///r.git/tree/" + SHA + "/a"]}}


def test_git_tree_id_matches_git(tmp_path: Path) -> None:
    """The tree id computed from files equals git's, with executable bits, nesting and git's name order."""
    repo = TaskRepo(tmp_path)
    w = repo.work / "t"
    (w / "a").mkdir(parents=True)
    (w / "a" / "x.sh").write_text("#!/bin/sh\n")
    (w / "a" / "x.sh").chmod(0o755)
    (w / "a.b").write_text("dot\n")
    (w / "a-b").write_text("dash\n")
    (w / "empty").mkdir()
    repo.commit()
    assert git_tree_id(w) == git("rev-parse", "HEAD:t", cwd=repo.work)
    (w / "a" / "x.sh").chmod(0o644)
    assert git_tree_id(w) != git("rev-parse", "HEAD:t", cwd=repo.work)


def _error(i: int, message: str, fix: str) -> TaskError:
    return TaskError(message, field=f"tasks.urls[{i}]", fix=fix)


@pytest.fixture
def served(tmp_path: Path):
    repo = TaskRepo(tmp_path / "server")
    repo.add_tree(QUICKSTART / "roman-numerals", "tasks/roman-numerals")
    repo.add_tree(QUICKSTART / "word-wrap", "tasks/word-wrap")
    repo.commit()
    repo.serve()
    yield repo
    repo.stop()


def test_branch_tag_and_commit_links_pin_to_the_commit_over_git_daemon(served: TaskRepo, tmp_path: Path) -> None:
    """Over git:// on loopback a branch, an annotated tag and a commit each pin to the commit they name now."""
    first = git("rev-parse", "HEAD", cwd=served.work)
    served.tag("v1", annotated=True)
    (served.work / "tasks" / "word-wrap" / "instruction.md").write_text("Changed later.\n")
    second = served.commit("later")
    cache = tmp_path / "cache"
    pins = resolve_pins([served.git_url("main", "tasks/word-wrap"), served.git_url("v1", "tasks/roman-numerals")],
                        cache, error=_error)
    assert [p.commit for p, _ in pins] == [second, first]
    assert pins[0][0].pinned_url == served.git_url(second, "tasks/word-wrap")
    assert (pins[0][1] / "instruction.md").read_text() == "Changed later.\n"
    old = resolve_pins([served.git_url(first, "tasks/word-wrap")], cache, error=_error)[0]
    assert old[0].commit == first and (old[1] / "instruction.md").read_text() != "Changed later.\n"
    assert old[0].tree == git("rev-parse", f"{first}:tasks/word-wrap", cwd=served.work)


def test_cache_entry_is_reused_only_while_its_fingerprints_match(served: TaskRepo, tmp_path: Path) -> None:
    """A commit link is served from the cache with the server down; a changed file or mode is fetched afresh."""
    commit = git("rev-parse", "HEAD", cwd=served.work)
    url = served.git_url(commit, "tasks/roman-numerals")
    cache = tmp_path / "cache"
    pin, folder = resolve_pins([url], cache, error=_error)[0]
    script = next(p for p in sorted(folder.rglob("*.sh")))
    served.stop()
    again_pin, again = resolve_pins([url], cache, error=_error)[0]  # no server needed: verified cache hit
    assert again == folder and again_pin == pin
    (folder / "instruction.md").write_text("tampered\n")
    with pytest.raises(TaskError, match="cannot fetch"):  # a changed file is never reused
        resolve_pins([url], cache, error=_error)
    served.serve()
    url = served.git_url(commit, "tasks/roman-numerals")  # the new port
    pin2, folder2 = resolve_pins([url], cache, error=_error)[0]
    assert pin2.fingerprint == pin.fingerprint and (folder2 / "instruction.md").read_text() != "tampered\n"
    os.chmod(folder2 / script.relative_to(folder), 0o644 if os.stat(script).st_mode & 0o100 else 0o755)
    served.stop()
    with pytest.raises(TaskError, match="cannot fetch"):  # a changed permission is never reused either
        resolve_pins([url], cache, error=_error)


def test_cache_entry_from_another_origin_is_not_reused(served: TaskRepo, tmp_path: Path) -> None:
    """An entry whose origin.json names another repository is fetched again, not trusted."""
    commit = git("rev-parse", "HEAD", cwd=served.work)
    url = served.file_url(commit, "tasks/word-wrap")
    cache = tmp_path / "cache"
    _, folder = resolve_pins([url], cache, error=_error)[0]
    origin = folder.parent / "origin.json"
    origin.write_text(origin.read_text().replace(str(served.bare), "/elsewhere/tasks.git"))
    os.rename(served.bare, served.root / "moved.git")
    with pytest.raises(TaskError, match="cannot fetch"):
        resolve_pins([url], cache, error=_error)


@pytest.mark.parametrize(("case", "words"), [
    ("no-branch", "has no branch or tag named 'nope'"),
    ("no-folder", "tasks/missing does not exist"),
    ("a-file", "is a file, not a task folder"),
    ("symlink", "is a symlink"),
    ("ambiguous", "both a branch and a tag"),
    ("short-sha", "a commit must be the full 40-hex SHA"),
])
def test_unresolvable_links_are_refused_naming_the_link(served: TaskRepo, tmp_path: Path, case: str, words: str) -> None:
    """Missing refs or folders, files, symlinks, ambiguous refs and short SHAs fail with the link's field."""
    if case == "symlink":
        (served.work / "tasks" / "word-wrap" / "link").symlink_to("instruction.md")
        served.commit("symlink")
    if case == "ambiguous":
        served.tag("v1")
        served.commit("moved on", branch="v1")
        (served.work / "x").write_text("x")
        served.commit("branch v1 ahead", branch="v1")
    ref = {"no-branch": "nope", "ambiguous": "v1", "short-sha": git("rev-parse", "--short", "HEAD", cwd=served.work)}
    path = {"no-folder": "tasks/missing", "a-file": "tasks/word-wrap/instruction.md"}
    url = served.file_url(ref.get(case, "main"), path.get(case, "tasks/word-wrap"))
    with pytest.raises(TaskError) as err:
        resolve_pins([url], tmp_path / "cache", error=_error)
    assert words in err.value.message and err.value.field == "tasks.urls[0]"


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    """A link whose server does not answer fails with 'cannot fetch' and a fix, not a traceback."""
    with pytest.raises(TaskError) as err:
        resolve_pins(["git://127.0.0.1:9/tasks.git/tree/main/t"], tmp_path / "cache", error=_error)
    assert "cannot fetch git://127.0.0.1:9/tasks.git" in err.value.message and err.value.fix


def _config(tasks: dict) -> ConfigError | None:
    raw = {"tasks": tasks, "runner": {"harness": "nop"}}
    try:
        validate(parse_evaluation(raw, Path("e.yaml")), Path("e.yaml"))
    except ConfigError as exc:
        return exc
    return None


def test_config_accepts_links_and_names_the_bad_one() -> None:
    """tasks.urls validates each link and names tasks.urls[i]; duplicate task ids and ids beside urls are refused."""
    good = f"https://github.com/o/r/tree/{SHA}/tasks/a"
    assert _config({"urls": [good]}) is None
    bad = _config({"urls": [good, "https://github.com/o/r/tree/main"]})
    assert bad is not None and bad.field == "tasks.urls[1]"
    dup = _config({"urls": [good, "file:///s.git/tree/main/other/a"]})
    assert dup is not None and dup.field == "tasks.urls[1]" and "tasks.urls[0]" in dup.message
    both = _config({"urls": [good], "ids": ["a"]})
    assert both is not None and both.field == "tasks.ids"
    assert _config({"urls": []}) is not None
