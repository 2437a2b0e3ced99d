"""`pluginbench tasks pick`: browse a git folder of tasks on loopback, print a pinned tasks: block, copy it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pluginbench.config import parse_evaluation, validate
from tests._prereq import require
from tests.tasks._gitserver import TaskRepo, git

pytestmark = pytest.mark.slow  # subprocesses, a git daemon and a real terminal
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "tasks"
# A stand-in clipboard: records what it is given (or fails) so the test can read it back.
FAKE_XCLIP = """#!/bin/sh
[ -n "$CLIP_FAIL" ] && { echo "cannot open display" >&2; exit 1; }
cat > "$CLIP_FILE"
"""


@pytest.fixture
def served(tmp_path: Path):
    repo = TaskRepo(tmp_path / "server")
    for name in ("roman-numerals", "word-wrap", "merge-intervals"):
        repo.add_tree(QUICKSTART / name, f"tasks/{name}")
    (repo.work / "tasks" / "README.md").write_text("not a task\n")
    (repo.work / "tasks" / "notes").mkdir()
    (repo.work / "tasks" / "notes" / "x.txt").write_text("not a task either\n")
    repo.commit()
    repo.serve()
    yield repo
    repo.stop()


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    bin_dir = tmp / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "xclip").write_text(FAKE_XCLIP)
    (bin_dir / "xclip").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "CLIP_FAIL")}
    return env | {"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "DISPLAY": ":99", "CLIP_FILE": str(tmp / "clip")} | extra


def _pick(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", "tasks", "pick", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_picked_ids_print_a_block_pinned_to_the_commit_that_a_config_accepts(served: TaskRepo, tmp_path: Path) -> None:
    """--id picks over git:// print links at the branch's commit, copied with --copy, valid as tasks: config; stderr says what is being fetched."""
    commit = git("rev-parse", "HEAD", cwd=served.work)
    env = _env(tmp_path)
    done = _pick(served.git_url("main", "tasks"), "--id", "word-wrap", "--id", "roman-numerals", "--copy", env=env)
    assert done.returncode == 0, done.stderr
    block = yaml.safe_load(done.stdout)
    assert block["tasks"]["urls"] == [served.git_url(commit, "tasks/word-wrap"), served.git_url(commit, "tasks/roman-numerals")]
    assert (tmp_path / "clip").read_text() == done.stdout and "copied" in done.stderr
    assert "to list the task folders in tasks" in done.stderr and "fetching and checking 2 picked task(s)" in done.stderr
    validate(parse_evaluation(block | {"runner": {"harness": "nop"}}, Path("e.yaml")), Path("e.yaml"))


def test_unknown_id_is_refused_listing_the_task_folders(served: TaskRepo, tmp_path: Path) -> None:
    """An id that is not a task folder exits 2 naming the choices (folders without task.toml are not tasks)."""
    done = _pick(served.file_url("main", "tasks"), "--id", "notes", env=_env(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert "no task named notes" in done.stderr and "merge-intervals, roman-numerals, word-wrap" in done.stderr


def test_a_clipboard_error_keeps_the_printed_block_and_exits_nonzero(served: TaskRepo, tmp_path: Path) -> None:
    """When the clipboard tool fails the block is still on stdout, the error says so, and the exit code is 1."""
    done = _pick(served.file_url("main", "tasks"), "--id", "word-wrap", "--copy", env=_env(tmp_path, CLIP_FAIL="1"))
    assert done.returncode == 1
    assert yaml.safe_load(done.stdout)["tasks"]["urls"][0].endswith("/tasks/word-wrap")
    assert "not copied" in done.stderr and "cannot open display" in done.stderr


def test_without_fzf_the_picker_explains_how_to_pick(served: TaskRepo, tmp_path: Path) -> None:
    """With no fzf on PATH and no --id, pick exits 2 saying how to install fzf or use --id, listing the tasks."""
    only_git = tmp_path / "onlygit"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = _env(tmp_path) | {"PATH": str(only_git)}
    done = _pick(served.file_url("main", "tasks"), env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert "fzf is not installed" in done.stderr and "apt-get install fzf" in done.stderr and "--id" in done.stderr
    assert "3 tasks are available" in done.stderr and "Traceback" not in done.stderr


def test_without_a_terminal_the_picker_says_so_instead_of_running_fzf(served: TaskRepo, tmp_path: Path) -> None:
    """With fzf installed but no controlling terminal (a pipe, cron, CI), pick exits 2 saying to pass --id, listing the tasks."""
    require(shutil.which("fzf") is not None, "fzf (tools/setup.sh --dev)")
    done = subprocess.run([sys.executable, "-m", "pluginbench", "tasks", "pick", served.file_url("main", "tasks")],
                          capture_output=True, text=True, timeout=120, env=_env(tmp_path), stdin=subprocess.DEVNULL,
                          start_new_session=True)  # a new session has no controlling terminal
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert "needs a terminal" in done.stderr and "--id NAME" in done.stderr and "3 tasks are available" in done.stderr
    assert "fzf exited" not in done.stderr and "Traceback" not in done.stderr


def test_a_local_folder_is_refused_pointing_to_tasks_source(tmp_path: Path) -> None:
    """A plain local path (no scheme) exits 2 explaining tasks.source + tasks.ids and the file:// form, not 'unsupported scheme'."""
    done = _pick(str(QUICKSTART), "--id", "word-wrap", env=_env(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert "is a local folder, not a git folder link" in done.stderr and "tasks: {source:" in done.stderr
    assert "file:///" in done.stderr and "unsupported scheme" not in done.stderr


class Tmux:
    """One private tmux server (its own socket) running one command in a real terminal."""

    def __init__(self, tmp: Path, command: str, env: dict[str, str]) -> None:
        self.socket = f"pb-pick-{os.getpid()}-{time.monotonic_ns()}"
        self.env = env
        self.tmux("new-session", "-d", "-s", "pick", "-x", "160", "-y", "40", command)

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env,
                              timeout=30).stdout

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.tmux("capture-pane", "-p", "-t", "pick")
            if text in screen:
                return screen
            assert time.monotonic() < deadline, f"{text!r} never appeared:\n{screen}"
            time.sleep(0.1)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "pick", *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


def _wait_file(path: Path, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.1)
    return path.read_text()


@pytest.mark.parametrize("action", ["enter", "escape"])
def test_real_fzf_in_a_terminal_enter_prints_and_copies_escape_prints_nothing(served: TaskRepo, tmp_path: Path,
                                                                             action: str) -> None:
    """In real fzf (tmux) selecting two and Enter prints and copies two pinned links; Escape prints nothing, exits 130, leaves the clipboard."""
    require(shutil.which("fzf") is not None and shutil.which("tmux") is not None, "fzf and tmux (tools/setup.sh --dev)")
    env = _env(tmp_path) | {"TERM": "xterm-256color"}
    (tmp_path / "clip").write_text("before\n")
    out, err, rc = tmp_path / "out", tmp_path / "err", tmp_path / "rc"
    command = (f"{sys.executable} -m pluginbench tasks pick {served.git_url('main', 'tasks')} --copy "
               f"> {out} 2> {err}; echo $? > {rc}")
    tmux = Tmux(tmp_path, command, env)
    try:
        screen = tmux.wait_for("tasks>")
        assert "3 tasks at" in screen and "word-wrap" in screen
        tmux.wait_for("touching intervals")  # the preview shows the focused task's instruction.md
        if action == "enter":
            tmux.keys("BTab")  # select the focused task and move up to the next
            tmux.keys("BTab")
            tmux.wait_for("(2)")  # fzf counts two selected
            tmux.keys("Enter")
        else:
            tmux.keys("Escape")
        code = int(_wait_file(rc))
    finally:
        tmux.close()
    commit = git("rev-parse", "HEAD", cwd=served.work)
    if action == "enter":
        assert code == 0, err.read_text()
        urls = yaml.safe_load(out.read_text())["tasks"]["urls"]
        assert len(urls) == 2 and all(f"/tree/{commit}/tasks/" in u for u in urls)
        assert (tmp_path / "clip").read_text() == out.read_text()
    else:
        assert code == 130 and out.read_text() == ""
        assert "nothing picked" in err.read_text()
        assert (tmp_path / "clip").read_text() == "before\n"


def test_dataset_picks_print_a_dataset_block_that_a_config_accepts(served: TaskRepo, tmp_path: Path) -> None:
    """--dataset NAME with --registry and --id fetches the picks, prints dataset, highest version and names; an unknown
    version exits 2 naming --dataset and the versions to choose."""
    registry = tmp_path / "registry.json"
    url = served.file_url("x", "y").split("/tree/")[0]
    rows = [{"name": f"acme/{n}", "git_url": url, "git_commit_id": None, "path": f"tasks/{n}"}
            for n in ("word-wrap", "merge-intervals")]
    registry.write_text(json.dumps([{"name": "acme", "version": v, "tasks": rows} for v in ("1.9", "1.10")]))
    env = _env(tmp_path)
    done = _pick("--dataset", "acme", "--registry", str(registry), "--id", "acme/word-wrap", env=env)
    assert done.returncode == 0, done.stderr
    block = yaml.safe_load(done.stdout)
    assert block["tasks"] == {"dataset": "acme", "version": "1.10", "ids": ["acme/word-wrap"], "registry": str(registry)}
    assert "content hash sha256:" in done.stderr
    validate(parse_evaluation(block | {"runner": {"harness": "nop"}}, Path("e.yaml")), Path("e.yaml"))
    bad = _pick("--dataset", "acme@3", "--registry", str(registry), "--id", "acme/word-wrap", env=env)
    assert bad.returncode == 2 and bad.stdout == "" and "--dataset" in bad.stderr and "1.9, 1.10" in bad.stderr


def test_a_malformed_dataset_ref_is_refused_before_any_download(tmp_path: Path) -> None:
    """--dataset with an empty version, two '@' or an escape sequence exits 2 naming --dataset, reading no registry."""
    from typer.testing import CliRunner

    from pluginbench.cli import app

    for ref, words in (("acme@", "no version after '@'"), ("acme@1@2", "more than one '@'"),
                       ("\x1b[31macme@1", "control character")):
        res = CliRunner().invoke(app, ["tasks", "pick", "--dataset", ref, "--registry", str(tmp_path / "none.json"),
                                       "--id", "acme/x"])
        assert res.exit_code == 2 and words in res.output and "--dataset" in res.output, res.output
        assert "reading the registry index" not in res.output
