"""The bubblewrap usability probe: a start that fails for a moment is tried again, a
failure says bwrap's own words, and a success is remembered (a real executable is run;
a shell script stands in for bwrap so the failures are chosen)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.environments import _bwrap


def _fake_bwrap(tmp_path: Path, fail_first: int) -> tuple[Path, Path]:
    """A bwrap that fails its first ``fail_first`` starts as a loaded host's would."""
    calls = tmp_path / "calls"
    script = tmp_path / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        f'echo x >> "{calls}"\n'
        f'if [ "$(wc -l < "{calls}")" -le {fail_first} ]; then\n'
        '  echo "bwrap: Creating new namespace failed: Resource temporarily unavailable" >&2\n'
        "  exit 1\n"
        "fi\n"
        "exit 0\n"
    )
    script.chmod(0o755)
    return script, calls


@pytest.fixture(autouse=True)
def _fresh_probe_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bwrap, "_usable", set())
    monkeypatch.setattr(_bwrap, "_failed", {})
    monkeypatch.setattr(_bwrap, "PROBE_RETRY_PAUSES", (0.0, 0.0))
    # The stand-in counts its starts in tmp_path, which the sandbox uid root would start it as
    # cannot write; the uid switch itself is tested in test_local_uid.py.
    monkeypatch.setattr(_bwrap, "drops", lambda: False)


def _starts(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_a_start_that_fails_once_is_tried_again_and_counts_as_usable(tmp_path: Path) -> None:
    """One failed start (EAGAIN under load) does not make bubblewrap unusable: the retry succeeds."""
    script, calls = _fake_bwrap(tmp_path, fail_first=1)
    assert _bwrap.bwrap_failure(str(script)) is None
    assert _starts(calls) == 2


def test_a_success_is_remembered_for_the_process(tmp_path: Path) -> None:
    """Once bwrap started a sandbox, it is not probed again."""
    script, calls = _fake_bwrap(tmp_path, fail_first=0)
    assert _bwrap.bwrap_failure(str(script)) is None
    assert _bwrap.bwrap_failure(str(script)) is None
    assert _starts(calls) == 1


def test_a_lasting_failure_says_bwraps_words_after_three_starts(tmp_path: Path) -> None:
    """Three failed starts make it unusable, with bwrap's last stderr line as the reason."""
    script, calls = _fake_bwrap(tmp_path, fail_first=99)
    why = _bwrap.bwrap_failure(str(script))
    assert why == "bwrap: Creating new namespace failed: Resource temporarily unavailable"
    assert _starts(calls) == 3


def test_a_failure_stands_only_for_its_ttl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the TTL a failure is answered from memory; after it, bwrap is probed afresh."""
    script, calls = _fake_bwrap(tmp_path, fail_first=3)
    assert _bwrap.bwrap_failure(str(script)) is not None
    assert _bwrap.bwrap_failure(str(script)) is not None
    assert _starts(calls) == 3
    monkeypatch.setattr(_bwrap, "PROBE_FAILURE_TTL", 0.0)
    assert _bwrap.bwrap_failure(str(script)) is None
    assert _starts(calls) == 4


def test_required_bubblewrap_that_cannot_start_names_bwraps_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """isolation=bubblewrap with a bwrap that cannot start fails with bwrap's own reason in the message."""
    from pluginbench.environments._local_env import LocalEnvironment
    from pluginbench.errors import EnvironmentFailure

    script, _ = _fake_bwrap(tmp_path, fail_first=99)
    monkeypatch.setattr(_bwrap, "find_bwrap", lambda: str(script))
    with pytest.raises(EnvironmentFailure, match="Resource temporarily unavailable"):
        LocalEnvironment("bubblewrap")._bwrap_executable()


def test_a_prefetched_probe_is_the_one_the_first_check_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """prefetch_bwrap probes in the background; the check that follows waits for that probe's answer instead of starting bwrap again."""
    script, calls = _fake_bwrap(tmp_path, fail_first=0)
    monkeypatch.setattr(_bwrap, "find_bwrap", lambda: str(script))
    _bwrap.prefetch_bwrap()
    assert _bwrap.bwrap_usable()
    assert _bwrap.bwrap_failure() is None
    assert _starts(calls) == 1
