"""What a verifier's run means: Harbor's reward files read (:func:`read_reward`) and the
grade they give (:func:`classify`), pure but for reading the files the verifier wrote.
"""

import math
import os
import stat
from pathlib import Path
from typing import NamedTuple, TypeGuard

from .._parsing import loads_json
from ..events import Outcome

#: the most a reward file may hold (Harbor's are a number or a small flat object)
REWARD_FILE_LIMIT = 1 << 20


class GradeResult(NamedTuple):
    outcome: Outcome
    reward: float | None
    reason: str | None
    #: every numeric key of reward.json beyond ``reward`` (partial credit), None without one
    native_grading: dict[str, float] | None = None
    #: paths the patch changes that the hidden test.patch replaces
    overlap_paths: tuple[str, ...] = ()


def read_reward(verifier_dir: Path) -> tuple[float | None, str | None, dict[str, float] | None]:
    """Harbor's reward contract: ``reward.json`` (flat object with ``reward``) first,
    else ``reward.txt`` (one number). Neither, empty, or non-numeric → unknown. The third
    value is every other finite numeric key of ``reward.json`` (the native grading)."""
    rj = verifier_dir / "reward.json"
    rt = verifier_dir / "reward.txt"
    for path in (rj, rt):
        refused = _not_plain(path)
        if refused is not None:
            return None, refused, None
    if rj.is_file():
        try:
            data = loads_json(_read(rj))
        except (ValueError, UnicodeDecodeError) as exc:
            return None, f"reward.json does not parse: {exc}", None
        if not isinstance(data, dict):
            return None, "reward.json is not an object", None
        extra = {str(k): float(v) for k, v in sorted(data.items()) if k != "reward" and _finite(v)}
        value = data.get("reward")
        if not _finite(value):
            return None, "reward.json has no finite numeric 'reward'", extra
        return float(value), None, extra
    if rt.is_file():
        text = _read(rt).decode(errors="replace").strip()
        if not text:
            return None, "reward.txt is empty", None
        try:
            value = float(text)
        except ValueError:
            return None, f"reward.txt is not a number: {text[:40]!r}", None
        if not math.isfinite(value):
            return None, "reward.txt is not finite", None
        return value, None, None
    return None, "the verifier wrote neither reward.json nor reward.txt", None


def _finite(v: object) -> TypeGuard[int | float]:
    """Whether ``v`` is a finite number as a float (not a bool; an integer too large for a
    float, ``1`` followed by 400 zeros, is not one)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _not_plain(path: Path) -> str | None:
    """Why the reward file ``path`` (in the verifier's copied-out folder) is not read, or None.

    Code under test runs as the verifier's user, so it can plant ``reward.txt`` as a symlink
    to a file that exists only on the host (``/proc/sys/net/ipv4/ip_forward`` holds ``1``):
    the test script's own write through it fails inside, and following it here would grade
    the host's file. A symlink is never followed; a huge file is never loaded."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"{path.name} is a symlink (never followed out of the verifier's sandbox)"
    if stat.S_ISREG(st.st_mode) and st.st_size > REWARD_FILE_LIMIT:
        return f"{path.name} is larger than {REWARD_FILE_LIMIT} bytes"
    return None


def _read(path: Path) -> bytes:
    """At most :data:`REWARD_FILE_LIMIT` bytes of ``path``, never through a symlink."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as fh:
        return fh.read(REWARD_FILE_LIMIT)


def classify(
    reward: float | None, reason: str | None, empty: bool,
    native: dict[str, float] | None = None, overlap: tuple[str, ...] = (),
) -> GradeResult:
    """The binary outcome of one native grade (see docs/results.md, "Outcomes")."""
    if empty:
        return GradeResult("empty", reward, "the graded patch is empty", native)
    if reward is None:
        return GradeResult("unknown", None, reason, native, overlap)
    if native and native.get("apply_failed"):
        return GradeResult("unknown", reward, "the task's verifier could not apply the canonical patch", native, overlap)
    if overlap:
        return _classify_overlap(reward, native or {}, overlap)
    if reward == 1.0:
        return GradeResult("pass", reward, None, native)
    if reward == 0.0:
        return GradeResult("fail", reward, None, native)
    return GradeResult("unknown", reward, f"non-binary reward {reward:g}", native)


def _classify_overlap(reward: float, native: dict[str, float], overlap: tuple[str, ...]) -> GradeResult:
    """A patch that changes paths the hidden tests replace: its source-bound correctness is
    withheld. overlap_pass when reward 1 and every fail-to-pass and pass-to-pass test
    passed; fail when reward 0; unknown otherwise, and for reward 0 with pass-to-pass tests
    none of which passed (a replaced file may have broken the suite's build)."""
    why = f"the patch changes paths the hidden tests replace ({', '.join(overlap)}); source-bound correctness is withheld"
    counts = [native.get(k) for k in ("f2p_total", "f2p_passed", "p2p_total", "p2p_passed")]
    if reward == 1.0:
        if None not in counts and counts[0] == counts[1] and counts[2] == counts[3]:
            return GradeResult("overlap_pass", reward, why, native, overlap)
        return GradeResult("unknown", reward, why + "; the verifier did not report every fail-to-pass and "
                           "pass-to-pass test passing", native, overlap)
    if reward == 0.0:
        p2p_total, p2p_passed = native.get("p2p_total"), native.get("p2p_passed")
        if p2p_total and p2p_passed == 0:
            return GradeResult("unknown", reward, why + "; reward 0 with no pass-to-pass test passing: the replaced "
                               "tests may have broken the suite before any test ran", native, overlap)
        return GradeResult("fail", reward, why, native, overlap)
    return GradeResult("unknown", reward, why + f"; non-binary reward {reward:g}", native, overlap)


def _stderr_hint(path: Path) -> str:
    """The last line test.sh wrote to stderr (the real cause, e.g. a bad interpreter), and where the rest is."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    if not lines:
        return " with nothing on stderr"
    return f": {lines[-1][:200]!r} (all of it in the attempt's evidence: grading/test-stderr.txt)"
