"""A task repository served on loopback: a bare repo under a ``git daemon`` on 127.0.0.1
(and reachable as ``file://``), with helpers to commit, tag and stop the server."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
}


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=os.environ | GIT_ENV, capture_output=True, text=True, check=True)
    return done.stdout.strip()


class TaskRepo:
    """``<root>/tasks.git`` (bare) and a work tree that commits into it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.bare = root / "tasks.git"
        self.work = root / "work"
        git("init", "-q", "--bare", "-b", "main", str(self.bare), cwd=root)
        git("init", "-q", "-b", "main", str(self.work), cwd=root)
        git("remote", "add", "origin", str(self.bare), cwd=self.work)
        self.daemon: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    def add_tree(self, source: Path, dest: str) -> None:
        shutil.copytree(source, self.work / dest, dirs_exist_ok=True)

    def commit(self, message: str = "tasks", branch: str = "main") -> str:
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=self.work)
        git("push", "-q", "-f", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def tag(self, name: str, annotated: bool = False) -> None:
        git("tag", *(["-a", "-m", name] if annotated else []), name, cwd=self.work)
        git("push", "-q", "origin", f"refs/tags/{name}", cwd=self.work)

    def file_url(self, ref: str, path: str) -> str:
        return f"file://{self.bare}/tree/{ref}/{path}"

    def git_url(self, ref: str, path: str) -> str:
        assert self.port is not None, "serve() first"
        return f"git://127.0.0.1:{self.port}/tasks.git/tree/{ref}/{path}"

    def serve(self) -> None:
        """Start ``git daemon`` on a free loopback port and wait until it accepts."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.daemon = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", f"--base-path={self.root}", "--export-all", "--informative-errors",
             "--listen=127.0.0.1", f"--port={self.port}", str(self.root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 60  # generous: CI shares 2 cores
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "git daemon did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            os.killpg(self.daemon.pid, signal.SIGTERM)
            self.daemon.wait(timeout=60)
        self.daemon = None
