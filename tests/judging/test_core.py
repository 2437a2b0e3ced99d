"""The pure judging core: pairing, anonymized diffs, sides, verdict parsing, tally rules."""

from __future__ import annotations

import pytest

from pluginbench.errors import InputError
from pluginbench.judging._binding import mismatched_fields
from pluginbench.judging._pairs import Submission, anonymize_diff, match_pairs, side_of_first
from pluginbench.judging._spec import parse_judge
from pluginbench.judging._tally import CallUsage, position_bias, tally, usage_summary
from pluginbench.judging._verdict import VerdictError, parse_verdict

DIFF = """diff --git i/src/x.py w/src/x.py
index 3b18e51..a9c1f2d 100644
--- i/src/x.py
+++ w/src/x.py
@@ -1 +1 @@
-a
+b
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/new.txt
"""


def sub(label: str, task: str, repeat: int, *, diff: str | None = "d", fp: str = "f", instr: str = "i",
        outcome: str = "pass") -> Submission:
    return Submission(side_label=label, run=label.split("=")[0], arm=label.split("=")[1], task=task, repeat=repeat,
                      attempt_id=f"{task}__{label}__r{repeat}", outcome=outcome, diff=diff, diff_origin="snapshot",
                      source_fingerprint=fp, source_path="/src", instruction=instr)


def test_anonymized_diff_has_plain_a_b_headers_and_no_index_lines() -> None:
    """Diff headers become a/ and b/ and index lines go, so neither side's tooling identifies it."""
    out = anonymize_diff(DIFF)
    assert "index " not in out
    assert "diff --git a/src/x.py b/src/x.py" in out
    assert "--- a/src/x.py" in out and "+++ b/src/x.py" in out
    assert "--- /dev/null" in out and "+-a" not in out and "-a\n+b\n" in out


def test_pairs_match_task_and_repeat_and_sides_follow_the_seed() -> None:
    """Pairs are the same task and repeat in both arms; the seed decides sides per pair, the same every time."""
    left = [sub("r1=t", t, r) for t in ("x", "y") for r in (1, 2, 3)]
    right = [sub("r2=vanilla", t, r) for t in ("x", "y") for r in (1, 2)]
    pairs, omitted = match_pairs(left, right, seed=11)
    assert [(p.number, p.task, p.repeat) for p in pairs] == [(1, "x", 1), (2, "x", 2), (3, "y", 1), (4, "y", 2)]
    assert omitted == []
    for p in pairs:
        first_is_a = side_of_first(11, p.task, p.repeat) == "A"
        assert (p.a.side_label == "r1=t") == first_is_a
    again, _ = match_pairs(left, right, seed=11)
    assert again == pairs
    sides = {side_of_first(s, "x", 1) for s in range(20)}
    assert sides == {"A", "B"}


def test_an_attempt_without_submission_leaves_out_its_pair() -> None:
    """A side with no saved submission is omitted together with its partner, with reasons."""
    pairs, omitted = match_pairs([sub("r=t", "x", 1, diff=None)], [sub("r=vanilla", "x", 1)], seed=1)
    assert pairs == []
    assert {o.arm for o in omitted} == {"t", "vanilla"}
    assert any("other side" in o.reason for o in omitted)


@pytest.mark.parametrize("kw", [{"fp": "other"}, {"instr": "other"}])
def test_sides_must_share_source_and_instruction(kw: dict) -> None:
    """Two sides that start from different sources or read different instructions are refused."""
    with pytest.raises(InputError) as exc:
        match_pairs([sub("r=t", "x", 1)], [sub("r=vanilla", "x", 1, **kw)], seed=1)
    assert exc.value.fix and "--exclude" in exc.value.fix


def test_judge_spec_parsing_refuses_bad_specs() -> None:
    """HARNESS:MODEL:EFFORT is read exactly; unknown harnesses and malformed specs are exit-2 errors."""
    spec = parse_judge("claude:claude-sonnet-4-5:high")
    assert (spec.harness, spec.model, spec.effort, spec.name) == ("claude", "claude-sonnet-4-5", "high",
                                                                  "claude-claude-sonnet-4-5-high")
    for bad in ("claude:x", "gemini:m:high", "codex:m:turbo"):
        with pytest.raises(InputError):
            parse_judge(bad)


def test_verdict_parsing_takes_the_last_json_object_and_checks_the_pair() -> None:
    """The verdict is the last JSON object of the final message; a wrong pair, verdict or no JSON fails."""
    msg = 'thinking {"x": 1} then {"pair": "task-2", "verdict": "tie", "reason": "same"}'
    assert parse_verdict(msg, pair="task-2")["verdict"] == "tie"
    for bad, pair in ((msg, "task-3"), ("{not json", "task-2"),
                      ('{"pair": "task-2", "verdict": "C", "reason": "r"}', "task-2"),
                      ('{"pair": "task-2", "verdict": "A"}', "task-2")):
        with pytest.raises(VerdictError):
            parse_verdict(bad, pair=pair)


def _key(outcomes: list[tuple[str, str]]) -> dict:
    return {"sides": {"first": "r1=t", "second": "r2=vanilla"}, "pairs": {
        f"task-{i + 1}": {"task": "x" if i % 2 else "y", "repeat": i + 1,
                          "A": {"label": "r1=t", "outcome": a}, "B": {"label": "r2=vanilla", "outcome": b}}
        for i, (a, b) in enumerate(outcomes)}}


def test_correctness_decides_first_then_majority_then_half_credit() -> None:
    """Exactly one passing side wins without a vote (overlap passes count, unknown does not); otherwise
    more than half of the judges decide; a split or tie scores half to each side."""
    key = _key([("pass", "fail"), ("unknown", "overlap_pass"), ("fail", "fail"), ("pass", "pass")])
    verdicts = {"j1": {"task-1": "B", "task-2": "A", "task-3": "A", "task-4": "A"},
                "j2": {"task-1": "B", "task-2": "A", "task-3": "A", "task-4": "B"}}
    out = tally(key, verdicts, {})
    assert (out["correctness_decided"], out["judged"]) == (2, 2)
    # task-1: A by correctness; task-2: B by correctness; task-3: A by majority; task-4: 1-1 split → half.
    assert out["weighted_wins"] == {"r1=t": 2.5, "r2=vanilla": 1.5}
    assert [p["decided_by"] for p in out["pair_results"]] == ["correctness", "correctness", "judges", "judges"]


def test_agreement_uses_the_other_judges_strict_majority() -> None:
    """With three judges, a 2-1 pair enters only the differing judge's agreement denominator; side-A rate
    counts ties in the denominator and correctness-decided pairs too."""
    key = _key([("fail", "fail"), ("fail", "fail"), ("pass", "fail")])
    verdicts = {"a": {"task-1": "A", "task-2": "tie", "task-3": "B"},
                "b": {"task-1": "A", "task-2": "tie", "task-3": "A"},
                "c": {"task-1": "B", "task-2": "tie", "task-3": "tie"}}
    s = tally(key, verdicts, {})["judge_stats"]
    # task-1 (A,A,B): only c is eligible (others agree on A), c disagrees. task-2: all tie, all eligible, agree.
    # task-3 (B,A,tie): nobody's others share a majority.
    assert s["a"]["agreement"] == {"rate": 1.0, "pairs": 1}
    assert s["b"]["agreement"] == {"rate": 1.0, "pairs": 1}
    assert s["c"]["agreement"] == {"rate": 0.5, "pairs": 2}
    assert s["a"]["side_a_rate"] == pytest.approx(1 / 3) and s["c"]["side_a_rate"] == 0.0
    single = tally(key, {"a": verdicts["a"]}, {})["judge_stats"]["a"]
    assert single["agreement"] == {"rate": None, "pairs": 0}


def test_position_bias_band_and_sample_size() -> None:
    """Outside 0.2–0.8 with at least 10 pairs is flagged; the endpoints are inside; below 10 is too small."""
    assert position_bias(1.0, 10) == "flagged" and position_bias(0.1, 12) == "flagged"
    assert position_bias(0.2, 10) == "within_band" and position_bias(0.8, 10) == "within_band"
    assert position_bias(1.0, 9) == "too_small"


def test_usage_with_unknown_calls_is_never_zero() -> None:
    """Any call without input/output usage makes tokens null; known_tokens keeps what is known, null when none."""
    known = CallUsage(input_tokens=100, output_tokens=10, cached_input_tokens=5)
    assert usage_summary([known, known]) == {"tokens": 220, "known_tokens": 220, "calls": 2, "unknown_calls": 0,
                                             "cached_input_tokens": 10, "reasoning_output_tokens": None}
    mixed = usage_summary([known, CallUsage()])
    assert (mixed["tokens"], mixed["known_tokens"], mixed["unknown_calls"]) == (None, 110, 1)
    assert usage_summary([CallUsage()])["known_tokens"] is None


def test_binding_mismatch_names_every_differing_field() -> None:
    """A changed or missing binding field is reported by name."""
    assert mismatched_fields({"key": "1", "files/A.diff": "x"}, {"key": "2", "files/A.diff": "x", "seed": "3"}) == [
        "key", "seed"]
