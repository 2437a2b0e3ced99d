"""The cross-run discovery store's trust rules and the Claude Code reuse of its entries."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from pluginbench.harnesses import _discovery_store
from pluginbench.harnesses._claude_cache import cache_key
from pluginbench.harnesses._claude_reuse import from_store, store_entry
from pluginbench.harnesses._discovery_store import ORIGIN_FILE, DiscoveryStore, store_enabled

KEY = "ab" * 32


def _receipt(passed: bool = True) -> dict[str, Any]:
    return {"passed": passed, "problems": [] if passed else ["skills differ"], "discovery_argv": ["-p", "x"],
            "cli_processes": 2, "attempt_id": "a2"}


def _stored(tmp_path: Path) -> DiscoveryStore:
    store = DiscoveryStore(tmp_path / "discovery" / "claude")
    entry = store_entry(run="r1", attempt="a1", cli_version="2.1.328", control_stdout='{"type":"control_response"}\n',
                        receipt=_receipt())
    assert store.write(KEY, entry) is None
    return store


def _foreign(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``path`` belong to someone else: chown as root, otherwise be another user."""
    if os.geteuid() == 0:
        os.chown(path, 65534, -1, follow_symlinks=False)
    else:
        uid = os.geteuid() + 1
        monkeypatch.setattr(_discovery_store.os, "geteuid", lambda: uid)


def test_an_entry_is_written_0600_in_a_0700_folder_whatever_the_umask(tmp_path: Path) -> None:
    """A written entry is mode 0600 in a 0700 folder even under a permissive umask, and reads back as a hit."""
    old = os.umask(0o002)
    try:
        store = _stored(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.folder / f"{KEY}.json").st_mode) == 0o600
    read = store.read(KEY)
    assert read.status == "hit" and read.entry is not None and read.entry["origin"] == {"run": "r1", "attempt": "a1"}
    assert store.read("cd" * 32).status == "miss"


def test_a_foreign_owned_entry_is_ignored_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry owned by another user is refused, naming the owner."""
    store = _stored(tmp_path)
    if os.geteuid() != 0:  # as another user the folder is foreign too: keep the check on the entry
        monkeypatch.setattr(_discovery_store, "_folder_problem", lambda folder: None)
    _foreign(store.folder / f"{KEY}.json", monkeypatch)
    read = store.read(KEY)
    assert read.status == "refused" and read.entry is None
    assert "is owned by uid" in str(read.reason) and "not the current user" in str(read.reason)


def test_a_foreign_owned_folder_is_ignored_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store folder owned by another user is neither read nor written."""
    store = _stored(tmp_path)
    _foreign(store.folder, monkeypatch)
    read = store.read(KEY)
    assert read.status == "refused" and "store folder" in str(read.reason) and "owned by uid" in str(read.reason)
    assert "owned by uid" in str(store.write(KEY, {"origin": {}}))


@pytest.mark.parametrize(("target", "mode", "words"), [
    ("entry", 0o660, "mode 0660, not 0600"),
    ("entry", 0o644, "mode 0644, not 0600"),
    ("folder", 0o770, "writable by others"),
])
def test_a_group_or_world_writable_entry_or_folder_is_ignored(tmp_path: Path, target: str, mode: int,
                                                              words: str) -> None:
    """An entry not exactly 0600, or a folder others may write, is refused with the mode in the reason."""
    store = _stored(tmp_path)
    (store.folder / f"{KEY}.json" if target == "entry" else store.folder).chmod(mode)
    read = store.read(KEY)
    assert read.status == "refused" and words in str(read.reason)


def test_a_symlinked_renamed_or_foreign_schema_entry_is_ignored(tmp_path: Path) -> None:
    """A symlink is not followed, an entry naming another key or of another schema is refused."""
    store = _stored(tmp_path)
    other = "cd" * 32
    os.symlink(store.folder / f"{KEY}.json", store.folder / f"{other}.json")
    assert store.read(other).status == "refused" and "symlink" in str(store.read(other).reason)
    os.unlink(store.folder / f"{other}.json")
    os.rename(store.folder / f"{KEY}.json", store.folder / f"{other}.json")
    assert "names another key" in str(store.read(other).reason)
    path = store.folder / f"{other}.json"
    path.write_text(json.dumps({"schema": "something/1", "key": other}))
    assert "is not a pluginbench.discovery-store/1 entry" in str(store.read(other).reason)


def test_a_hit_is_judged_again_and_copied_into_the_attempt(tmp_path: Path) -> None:
    """A stored entry's answers are judged again; a pass becomes the receipt (origin run and attempt, one CLI
    process) and the entry is copied verbatim into the attempt's agent folder."""
    store = _stored(tmp_path)
    judged: list[str] = []

    def judge(stdout: str) -> dict[str, Any]:
        judged.append(stdout)
        return _receipt()

    agent = tmp_path / "attempt" / "agent"
    receipt, note = from_store(store, KEY, judge, agent)
    assert judged == ['{"type":"control_response"}\n']
    assert receipt is not None and receipt["cli_processes"] == 1 and note["read"] == "hit"
    assert receipt["cache"] == {"key": KEY, "hit": True, "origin_attempt": "a1", "origin_run": "r1",
                                "store": {"read": "hit", "reason": None, "written": False}}
    assert json.loads((agent / ORIGIN_FILE).read_text()) == store.read(KEY).entry


def test_stored_answers_that_fail_todays_checks_drop_the_entry(tmp_path: Path) -> None:
    """Answers whose receipt fails this attempt's checks are not used, and the entry is removed."""
    store = _stored(tmp_path)
    receipt, note = from_store(store, KEY, lambda stdout: _receipt(passed=False), tmp_path / "agent")
    assert receipt is None and note["read"] == "refused" and "skills differ" in note["reason"]
    assert store.read(KEY).status == "miss" and not (tmp_path / "agent").exists()


def test_the_store_is_switched_off_by_the_process_variable(tmp_path: Path) -> None:
    """PLUGINBENCH_DISCOVERY_STORE=off gives no store; unset, the store lies under the cache root."""
    assert not store_enabled({"PLUGINBENCH_DISCOVERY_STORE": "off"})
    assert DiscoveryStore.for_harness("claude", {"PLUGINBENCH_DISCOVERY_STORE": "off"}) is None
    store = DiscoveryStore.for_harness("claude", {"XDG_CACHE_HOME": str(tmp_path)})
    assert store is not None and store.folder == tmp_path.resolve() / "pluginbench" / "discovery" / "claude"


def test_probe_runs_share_a_key_across_loopback_ports_only() -> None:
    """Two probe runs differing only in the loopback server's port get one key; any other base URL keeps its port."""
    def key(url: str) -> str:
        return cache_key(files=b"f", cli_version="2.1.328", argv=["claude", "--session-id", "s"],
                         env={"ANTHROPIC_BASE_URL": url}, paths=["/app"], model="m", arm="vanilla", treatment="t",
                         facts={})

    assert key("http://127.0.0.1:40001") == key("http://127.0.0.1:40002")
    assert key("http://example.test:40001") != key("http://example.test:40002")
    assert key("http://127.0.0.1:40001") != key("http://127.0.0.2:40001")
