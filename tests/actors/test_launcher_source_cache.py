"""The launcher source hash is cached by the source files' stat signature: the same bytes
give the same hash with or without the cache, and any edit is seen."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from pluginbench.actors import _runtime


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("A = 1\n")
    (pkg / "sub" / "b.py").write_text("B = 2\n")
    (pkg / "sub" / "__pycache__" / "c.py").write_text("ignored\n")
    monkeypatch.setattr(_runtime, "_PACKAGE", pkg)
    monkeypatch.setattr(_runtime, "SETTLE_NS", 0)  # files written just now count as settled
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return pkg


def _fresh() -> str:
    _runtime._launcher_source_sha256.cache_clear()
    return _runtime._launcher_source_sha256()


def _by_hand(pkg: Path) -> str:
    h = hashlib.sha256()
    for rel in ("a.py", "sub/b.py"):
        h.update(rel.encode() + b"\0" + (pkg / rel).read_bytes() + b"\0")
    return h.hexdigest()


def test_the_hash_is_over_relative_paths_and_bytes_and_is_stored(package: Path, tmp_path: Path) -> None:
    """The hash is SHA-256 over each file's relative path and bytes, and is stored beside its signature."""
    assert _fresh() == _by_hand(package)
    saved = json.loads((tmp_path / "cache" / "pluginbench" / _runtime.SOURCE_HASH_CACHE).read_text())
    assert saved["sha256"] == _by_hand(package)


def test_unchanged_source_is_not_read_again(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process (the function's memo cleared) with unchanged files reads no source byte."""
    first = _fresh()

    def no_reading(self: Path) -> bytes:
        raise AssertionError(f"read {self}")

    monkeypatch.setattr(Path, "read_bytes", no_reading)
    assert _fresh() == first


def test_an_edit_that_keeps_size_and_modification_time_is_seen(package: Path) -> None:
    """Changing a file's bytes while restoring its size and modification time gives the new hash."""
    first = _fresh()
    target = package / "a.py"
    st = target.stat()
    time.sleep(0.05)  # past the file system's clock tick, so the change time moves
    target.write_text("A = 3\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_size == st.st_size
    second = _fresh()
    assert second != first
    assert second == _by_hand(package)


def test_a_new_file_is_seen(package: Path) -> None:
    """A file added to the package changes the hash."""
    first = _fresh()
    (package / "sub" / "new.py").write_text("")
    assert _fresh() != first


def test_a_tampered_or_unwritable_cache_is_never_believed_or_fatal(package: Path, tmp_path: Path) -> None:
    """A cache file with another signature, or garbage, is ignored; an unwritable root only means no cache."""
    expected = _by_hand(package)
    cache = tmp_path / "cache" / "pluginbench" / _runtime.SOURCE_HASH_CACHE
    cache.parent.mkdir(parents=True)
    cache.write_text(json.dumps({"signature": "other", "sha256": "0" * 64}))
    assert _fresh() == expected
    cache.write_text("{not json")
    assert _fresh() == expected
    cache.unlink()
    cache.mkdir()  # the file's name taken by a folder: nothing can be written there
    assert _fresh() == expected


def test_a_recently_changed_source_is_hashed_but_not_stored(package: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Files changed within the settle time are hashed every time: their stat may not yet tell edits apart."""
    monkeypatch.setattr(_runtime, "SETTLE_NS", 60_000_000_000)
    assert _fresh() == _by_hand(package)
    assert not (tmp_path / "cache" / "pluginbench" / _runtime.SOURCE_HASH_CACHE).exists()
