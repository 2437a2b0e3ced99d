"""What a published vanilla cache entry holds: the attempt's final files only, never an
atomic write still in flight (``*.tmp``), the private HOME, grading or measurements."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.cache import publish_entry, read_manifest
from pluginbench.cache._store import NOT_PUBLISHED

from .test_key import _manifest

FINAL = {
    "invocation.json": "{}\n",
    "execution.json": '{"exit_code": 0}\n',
    "delivery.json": "{}\n",
    "model.patch": "diff --git a/x b/x\n",
    "agent/stdout.jsonl": "{}\n",
    "export/app/x.py": "print(1)\n",
}
NEVER = {
    # atomic writes in flight: the collector renames measurements.json.tmp -> measurements.json
    "measurements.json.tmp": '{"partial": ',
    "execution.json.tmp": "{",
    "agent/receipt.json.tmp": "{",
    "measurements.json": "{}\n",
    "grading/verifier/reward.txt": "1\n",
    "delivery/.codex/auth.json": '{"OPENAI_API_KEY": "sk-secret"}\n',
    "reused.json": "{}\n",
    "execution-current.json": "{}\n",
}


def _attempt(root: Path, files: dict[str, str]) -> Path:
    attempt = root / "attempts" / "t__vanilla__r1"
    for rel, text in files.items():
        path = attempt / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return attempt


def test_a_stray_tmp_file_is_not_published(tmp_path: Path) -> None:
    """A publication that meets in-flight ``*.tmp`` files, grading, measurements and the private HOME copies exactly the attempt's final files."""
    attempt = _attempt(tmp_path, {**FINAL, **NEVER})
    entry, reason = publish_entry(tmp_path / "cache", _manifest(), attempt)
    assert reason is None and entry is not None
    published = tmp_path / "cache" / entry
    copied = sorted(str(p.relative_to(published / "attempt")) for p in (published / "attempt").rglob("*") if p.is_file())
    assert copied == sorted(FINAL)
    manifest = read_manifest(published)
    assert not isinstance(manifest, str) and sorted(manifest.files) == sorted(FINAL)
    assert not list((tmp_path / "cache").rglob("*.tmp")) and not list((tmp_path / "cache").rglob(".tmp-*"))


def test_a_tmp_file_renamed_while_publishing_does_not_break_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector renaming ``measurements.json.tmp`` into place in the middle of a publication neither fails it nor leaks either name into the entry."""
    import pluginbench.cache._store as store

    attempt = _attempt(tmp_path, {**FINAL, "measurements.json.tmp": "{}\n"})
    real_copy = store.copy_tree

    def copy_during_rename(src: Path, dest: Path, entries: list) -> None:  # type: ignore[type-arg]
        (attempt / "measurements.json.tmp").replace(attempt / "measurements.json")
        real_copy(src, dest, entries)

    monkeypatch.setattr(store, "copy_tree", copy_during_rename)
    entry, reason = publish_entry(tmp_path / "cache", _manifest(), attempt)
    assert reason is None and entry is not None
    manifest = read_manifest(tmp_path / "cache" / entry)
    assert not isinstance(manifest, str) and sorted(manifest.files) == sorted(FINAL)


def test_never_published_names_cover_what_the_run_redoes() -> None:
    """Grading, measurements, the private HOME and this run's own receipts are never part of an entry."""
    assert {"delivery", "grading", "measurements.json", "reused.json", "execution-current.json"} <= NOT_PUBLISHED
