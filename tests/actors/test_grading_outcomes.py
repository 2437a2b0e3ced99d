"""Native grading, overlap and partial credit: the pure part of grading."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.actors._reward import classify, read_reward

DEEPSWE_PASS = {"f2p_total": 3.0, "f2p_passed": 3.0, "p2p_total": 2.0, "p2p_passed": 2.0}


def test_reward_json_keys_beyond_reward_are_the_native_grading(tmp_path: Path) -> None:
    """Every finite numeric key of reward.json other than reward is kept as native grading; the reward stays binary."""
    (tmp_path / "reward.json").write_text(
        '{"reward": 0, "f2p_total": 24, "f2p_passed": 20, "partial": 0.9, "note": "x", "flag": true}')
    reward, reason, native = read_reward(tmp_path)
    assert reward == 0.0 and reason is None
    assert native == {"f2p_passed": 20.0, "f2p_total": 24.0, "partial": 0.9}
    assert classify(reward, reason, False, native).native_grading == native


def test_reward_txt_has_no_native_grading(tmp_path: Path) -> None:
    """A reward.txt verifier records no native grading (None, not an empty table)."""
    (tmp_path / "reward.txt").write_text("1\n")
    assert read_reward(tmp_path) == (1.0, None, None)


@pytest.mark.parametrize("name", ["reward.txt", "reward.json"])
def test_a_reward_file_symlinked_to_a_host_file_is_never_followed(tmp_path: Path, name: str) -> None:
    """A reward file the code under test planted as a symlink to a host file holding a passing reward is refused
    (unknown, naming the symlink), even when the verifier's own reward.txt says 0."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "one").write_text('{"reward": 1}\n' if name == "reward.json" else "1\n")
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    if name == "reward.json":
        (verifier / "reward.txt").write_text("0\n")
    (verifier / name).symlink_to(host / "one")
    reward, reason, _native = read_reward(verifier)
    assert reward is None and reason is not None and f"{name} is a symlink" in reason
    assert classify(reward, reason, False).outcome == "unknown"


def test_a_huge_reward_file_is_not_loaded(tmp_path: Path) -> None:
    """A reward.txt past the size bound is unknown without being read (a sparse file costs no disk)."""
    with (tmp_path / "reward.txt").open("wb") as fh:
        fh.truncate((1 << 20) + 1)
    reward, reason, _native = read_reward(tmp_path)
    assert reward is None and reason is not None and "larger than" in reason


@pytest.mark.parametrize("reward, native, outcome, why", [
    (1.0, DEEPSWE_PASS, "overlap_pass", "withheld"),
    (1.0, {**DEEPSWE_PASS, "p2p_passed": 1.0}, "unknown", "did not report every"),
    (1.0, {}, "unknown", "did not report every"),
    (0.0, {**DEEPSWE_PASS, "f2p_passed": 1.0}, "fail", "withheld"),
    (0.0, {"f2p_total": 3.0, "f2p_passed": 0.0, "p2p_total": 2.0, "p2p_passed": 0.0}, "unknown", "no pass-to-pass"),
    (0.0, {"f2p_total": 3.0, "f2p_passed": 0.0, "p2p_total": 0.0, "p2p_passed": 0.0}, "fail", "withheld"),
    (-1.0, {}, "unknown", "non-binary"),
])
def test_overlap_classification(reward: float, native: dict[str, float], outcome: str, why: str) -> None:
    """A patch overlapping replaced test paths: overlap_pass only for reward 1 with every f2p and p2p test passing;
    fail for reward 0 unless pass-to-pass tests exist and none passed; unknown otherwise."""
    got = classify(reward, None, False, native, ("tests/test_calc.py",))
    assert got.outcome == outcome
    assert why in (got.reason or "") and "tests/test_calc.py" in (got.reason or "")
    assert got.overlap_paths == ("tests/test_calc.py",)


def test_apply_failed_is_unknown_not_fail() -> None:
    """A verifier that could not apply the canonical patch gives unknown, never a fail of the agent."""
    got = classify(0.0, None, False, {"apply_failed": 1.0, "f2p_total": 3.0, "f2p_passed": 0.0})
    assert got.outcome == "unknown" and "could not apply" in (got.reason or "")


def test_no_overlap_keeps_the_plain_outcomes() -> None:
    """Without overlapping paths reward 1 is a confirmed pass and reward 0 a fail, with partial credit kept."""
    assert classify(1.0, None, False, DEEPSWE_PASS).outcome == "pass"
    assert classify(0.0, None, False, {"partial": 0.5}).native_grading == {"partial": 0.5}


class _Outbox:
    def __init__(self) -> None:
        self.sent: list[object] = []

    async def send(self, event: object) -> None:
        self.sent.append(event)


@pytest.mark.anyio
async def test_grading_and_measuring_recheck_the_patch_sha256(tmp_path: Path) -> None:
    """Before grading and measuring, model.patch is checked against the sha256 recorded at capture; a mismatch
    grades unknown and measures unknown, each with the patch-integrity reason, and starts no verifier."""
    import hashlib

    from pluginbench.actors._collector import collect_one
    from pluginbench.actors._grader import grade_one
    from pluginbench.rundir import RunDir, patch_mismatch

    rd = RunDir(tmp_path)
    patch = rd.attempt("a1") / "model.patch"
    patch.parent.mkdir(parents=True)
    patch.write_text("diff --git a/x b/x\n")
    recorded = hashlib.sha256(patch.read_bytes()).hexdigest()
    assert patch_mismatch(patch, recorded) is None
    patch.write_text("diff --git a/y b/y\n")

    class Evaluation:
        measurements = ("lines",)

    class Engine:
        run_dir = rd
        outbox = _Outbox()
        evaluation = Evaluation()

    engine = Engine()
    await grade_one(engine, "a1", "t", recorded)  # type: ignore[arg-type]
    await collect_one(engine, "a1", recorded)  # type: ignore[arg-type]
    graded, measured = engine.outbox.sent
    assert graded.outcome == "unknown" and graded.reason.startswith("patch integrity")  # type: ignore[attr-defined]
    assert all(m.status == "unknown" and m.reason.startswith("patch integrity")  # type: ignore[attr-defined]
               for m in measured.measures.values())  # type: ignore[attr-defined]
