"""judge prepare | run | tally end to end: two simulated runs as inputs, the real pinned Claude Code CLI
as the judge against the loopback probe (zero cost), every refusal exit 2 with file, field and fix."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import PINNED, SCENARIOS_DIR, cli_version, find_cli
from tests._prereq import require
from tests.runs_helpers import write_config

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
JUDGE = "claude:claude-sonnet-4-5:high"
JUDGE_NAME = "claude-claude-sonnet-4-5-high"
ENV_DROP = ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def pb(*args: str, cwd: Path, wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
    argv = [sys.executable, "-m", "pluginbench", *args]
    if not wait:
        return subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two simulated runs over two quickstart tasks, five repeats each (ten pairs per arm pair)."""
    path = find_cli("claude")
    require(path is not None and cli_version(path) == PINNED["claude"], f"Claude Code {PINNED['claude']}")
    root = tmp_path_factory.mktemp("judge-runs")
    procs = []
    for name in ("r1", "r2"):  # both at the same time: each mostly waits on its agents and verifiers
        folder = root / f"cfg-{name}"
        folder.mkdir()
        cfg = write_config(folder, repeats=5, jobs=2, name=name)
        procs.append(pb("run", str(cfg), "--output", str(root / name), "--foreground", "--yes", cwd=root, wait=False))
    for proc in procs:
        assert isinstance(proc, subprocess.Popen)
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, out + err
    return root / "r1", root / "r2"


def prepare(tmp: Path, runs: tuple[Path, Path], out: str = "judging", seed: int = 11) -> Path:
    crit = tmp / "criteria.md"
    crit.write_text("# Review standard\n\nCorrect, minimal, tested.\n")
    done = pb("judge", "prepare", f"{runs[0]}=testing-discipline", f"{runs[1]}=vanilla", "--criteria", str(crit),
              "--seed", str(seed), "--output", str(tmp / out), cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / out


def scenario(tmp: Path, answers: dict[int, str], extra: list[dict] | None = None) -> Path:
    rules = list(extra or [])
    for n, verdict in answers.items():
        text = json.dumps({"pair": f"task-{n}", "verdict": verdict, "reason": "by the criteria"})
        rules.append({"name": f"task-{n}", "when": {"messages_contain": f'"task-{n}"'},
                      "script": [{"text": text, "usage": {"input_tokens": 800, "output_tokens": 30}}]})
    path = tmp / f"scenario-{len(list(tmp.glob('scenario-*')))}.yaml"
    path.write_text(yaml.safe_dump({"name": "judge", "rules": rules}))
    return path


def refusal(done: subprocess.CompletedProcess[str], *needles: str, file: bool = True) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for needle in ("error:", *(("file:",) if file else ()), "field:", "fix:", *needles):
        assert needle in done.stderr, done.stderr


def test_prepare_writes_blind_task_folders_and_the_key_outside(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Ten matched pairs: task folders hold the diffs, instruction, criteria, schema and a source link; the key and
    briefs stay outside; no arm name, attempt id or index line reaches a task folder; sides follow the seed."""
    d = prepare(tmp_path, runs)
    key = json.loads((d / "key.json").read_text())
    assert len(key["pairs"]) == 10
    for n in range(1, 11):
        folder = d / f"task-{n}"
        assert sorted(p.name for p in folder.iterdir()) == ["A.diff", "B.diff", "criteria.md", "instruction.md",
                                                            "response-schema.json", "source"]
        assert (folder / "source").is_symlink() and (folder / "source").resolve().is_dir()
        text = "".join((folder / f).read_text() for f in ("A.diff", "B.diff", "instruction.md"))
        assert "vanilla" not in text and "testing-discipline" not in text and "\nindex " not in text
        assert (d / f"task-{n}.brief.md").is_file()
    sides = {p["A"]["arm"] for p in key["pairs"].values()}
    assert sides == {"vanilla", "testing-discipline"}  # seeded per pair, not one arm always A
    again = prepare(tmp_path, runs, out="judging-again")
    assert json.loads((again / "key.json").read_text())["pairs"] == key["pairs"]


def test_prepare_refusals_exit_2_naming_file_field_and_fix(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """An unknown arm, a tampered model.patch and an existing output directory are refused; nothing is written."""
    crit = tmp_path / "c.md"
    crit.write_text("criteria\n")
    args = ("--criteria", str(crit), "--seed", "1")
    refusal(pb("judge", "prepare", f"{runs[0]}=nope", f"{runs[1]}=vanilla", *args, "--output", str(tmp_path / "o1"),
               cwd=tmp_path), "results.json", "attempts[].arm")
    assert not (tmp_path / "o1").exists()
    tampered = tmp_path / "tampered"
    shutil.copytree(runs[1], tampered)
    patch = next((tampered / "evidence" / "attempts").glob("*__vanilla__r1")) / "model.patch"
    patch.write_text(patch.read_text() + "\n+sneaked\n")
    refusal(pb("judge", "prepare", f"{runs[0]}=testing-discipline", f"{tampered}=vanilla", *args,
               "--output", str(tmp_path / "o2"), cwd=tmp_path), "model.patch", "patch_sha256")
    assert not (tmp_path / "o2").exists()
    (tmp_path / "o3").mkdir()
    refusal(pb("judge", "prepare", f"{runs[0]}=testing-discipline", f"{runs[1]}=vanilla", *args,
               "--output", str(tmp_path / "o3"), cwd=tmp_path), "already exists")


def test_always_a_judge_is_flagged_and_usage_is_known(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A judge that always answers A over ten pairs gets FLAG: position bias; every verdict is bound (digests and
    the CLI version); tokens equal what the probe served (900 + 40 per call); a second run reuses every verdict and calls nothing."""
    d = prepare(tmp_path, runs)
    done = pb("judge", "run", str(d), "--judge", JUDGE, "--jobs", "3", "--probe",
              str(SCENARIOS_DIR / "judge-always-a.yaml"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    verdict = json.loads((d / "results" / JUDGE_NAME / "task-1.json").read_text())
    assert verdict["verdict"] == "A" and verdict["binding"]["judge_cli_version"] == PINNED["claude"]
    assert {"files/A.diff", "files/B.diff", "files/instruction.md", "files/criteria.md", "files/response-schema.json",
            "source", "brief", "judge_spec", "seed", "key"} <= set(verdict["binding"])
    assert json.loads((d / "judge-specs" / f"{JUDGE_NAME}.json").read_text())["model"] == "claude-sonnet-4-5"
    tally = pb("judge", "tally", str(d), cwd=tmp_path)
    assert tally.returncode == 0, tally.stderr
    assert "FLAG: position bias" in tally.stdout and "1.00" in tally.stdout
    doc = json.loads(pb("judge", "tally", str(d), "--json", cwd=tmp_path).stdout)
    stats = doc["judge_stats"][JUDGE_NAME]
    assert stats["position_bias"] == "flagged" and stats["side_a_rate"] == 1.0
    assert stats["usage"] == {"tokens": 10 * 940, "known_tokens": 10 * 940, "calls": 10, "unknown_calls": 0,
                              "cached_input_tokens": 0, "reasoning_output_tokens": None}
    assert doc["correctness_decided"] + doc["judged"] == 10 and sum(doc["weighted_wins"].values()) == 10
    assert (d / "tally.json").is_file() and (d / "tally.txt").is_file()
    again = pb("judge", "run", str(d), "--judge", JUDGE, "--probe", str(SCENARIOS_DIR / "judge-always-a.yaml"),
               cwd=tmp_path)
    assert again.returncode == 0
    assert len(list((d / "results" / JUDGE_NAME).glob("task-*/call-*"))) == 10
    # An older call without host-evidence.json: its usage is parsed from the saved stream and transcripts.
    (d / "results" / JUDGE_NAME / "task-5" / "call-1" / "host-evidence.json").unlink()
    traced = json.loads(pb("judge", "tally", str(d), "--json", cwd=tmp_path).stdout)["judge_stats"][JUDGE_NAME]
    assert (traced["usage"]["tokens"], traced["usage"]["unknown_calls"]) == (10 * 940, 0)
    # A legacy verdict (no binding) and one bound before the CLI version was recorded: counted, or refused
    # with --require-bound.
    legacy = d / "results" / JUDGE_NAME / "task-1.json"
    legacy.write_text(json.dumps({k: v for k, v in json.loads(legacy.read_text()).items() if k != "binding"}))
    old = d / "results" / JUDGE_NAME / "task-2.json"
    doc2 = json.loads(old.read_text())
    del doc2["binding"]["judge_cli_version"]
    old.write_text(json.dumps(doc2))
    text = pb("judge", "tally", str(d), cwd=tmp_path).stdout
    assert "unbound verdict (written before binding)" in text and "needs rebind" in text
    doc = json.loads(pb("judge", "tally", str(d), "--json", cwd=tmp_path).stdout)
    assert (doc["unbound"], doc["needs_rebind"]) == (1, 1)
    assert doc["unbound_verdicts"] == [f"results/{JUDGE_NAME}/task-1.json"]
    refusal(pb("judge", "tally", str(d), "--require-bound", cwd=tmp_path), "task-1.json", "field: binding")


def test_failed_calls_leave_no_verdict_and_a_rerun_retries_only_them(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Malformed JSON and a provider stop save no verdict (exit 2); an unable verdict blocks tally; running again
    retries only missing calls; usage counts every recorded call, failed ones too, and a killed call without
    usage evidence makes tokens unknown while known_tokens keeps the rest."""
    d = prepare(tmp_path, runs)
    first = pb("judge", "run", str(d), "--judge", JUDGE, "--jobs", "3", "--probe",
               str(SCENARIOS_DIR / "judge-mixed.yaml"), cwd=tmp_path)
    assert first.returncode == 2 and "missing" in first.stderr
    results = d / "results" / JUDGE_NAME
    assert json.loads((results / "task-1.json").read_text())["verdict"] == "B"
    assert not (results / "task-2.json").exists() and not (results / "task-4.json").exists()
    stop = json.loads((results / "task-4" / "call-1" / "host-evidence.json").read_text())
    assert stop["provider_stop"] and stop["verdict_saved"] is False
    malformed = json.loads((results / "task-2" / "call-1" / "host-evidence.json").read_text())
    assert any("no valid verdict" in p for p in malformed["problems"])
    refusal(pb("judge", "tally", str(d), cwd=tmp_path), "verdict(s) missing", "run `pluginbench judge run`")
    good = scenario(tmp_path, {n: "tie" for n in range(2, 11)})
    second = pb("judge", "run", str(d), "--judge", JUDGE, "--jobs", "3", "--probe", str(good), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in (results / "task-2").iterdir()) == ["call-1", "call-2"]
    assert sorted(p.name for p in (results / "task-1").iterdir()) == ["call-1"]
    refusal(pb("judge", "tally", str(d), cwd=tmp_path), "unable", "task-3.json", "field: verdict")
    (results / "task-3.json").unlink()
    third = pb("judge", "run", str(d), "--judge", JUDGE, "--probe", str(good), cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    doc = json.loads(pb("judge", "tally", str(d), "--json", cwd=tmp_path).stdout)
    usage = doc["judge_stats"][JUDGE_NAME]["usage"]
    calls = len(list(results.glob("task-*/call-*")))
    assert calls > 10 and usage["calls"] == calls and usage["unknown_calls"] == 0
    assert usage["tokens"] == usage["known_tokens"] and usage["tokens"] > 0
    # A killed call leaves its reservation without usage evidence: an attempt with unknown usage.
    (results / "task-5" / f"call-{calls + 1}").mkdir()
    doc = json.loads(pb("judge", "tally", str(d), "--json", cwd=tmp_path).stdout)
    unknown = doc["judge_stats"][JUDGE_NAME]["usage"]
    assert (unknown["tokens"], unknown["known_tokens"], unknown["unknown_calls"]) == (None, usage["tokens"], 1)
    assert "unknown" in pb("judge", "tally", str(d), cwd=tmp_path).stdout


def test_inputs_edited_during_a_call_save_no_verdict(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A presented diff edited while the judge works: the call's verdict is not saved (inputs changed), exit 2."""
    d = prepare(tmp_path, runs)
    slow = [{"name": "slow", "when": {"messages_contain": '"task-1"', "tools_include": "Bash"}, "script": [
        {"tool": {"name": "Bash", "input": {"command": "sleep 6", "description": "wait"}}},
        {"text": json.dumps({"pair": "task-1", "verdict": "A", "reason": "r"})}]}]
    path = scenario(tmp_path, {}, slow)
    proc = pb("judge", "run", str(d), "--judge", JUDGE, "--jobs", "3", "--probe", str(path), cwd=tmp_path, wait=False)
    launched = d / "results" / JUDGE_NAME / "task-1" / "call-1" / "launched.json"
    deadline = time.monotonic() + 120
    while not launched.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert launched.exists()
    (d / "task-1" / "A.diff").write_text((d / "task-1" / "A.diff").read_text() + "+edited\n")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2
    assert not (d / "results" / JUDGE_NAME / "task-1.json").exists()
    evidence = json.loads((launched.parent / "host-evidence.json").read_text())
    assert any("inputs changed during the call: files/A.diff" in p for p in evidence["problems"]), evidence


def test_a_replaced_key_or_edited_input_is_refused_by_tally_and_run(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """After judging, a key replaced by re-preparing the same inputs makes tally refuse naming the verdict file and
    binding.key; an edited presented file makes run refuse to reuse the stale verdict; so does tally."""
    d = prepare(tmp_path, runs)
    every = scenario(tmp_path, {n: "B" for n in range(1, 11)})
    assert pb("judge", "run", str(d), "--judge", JUDGE, "--jobs", "3", "--probe", str(every),
              cwd=tmp_path).returncode == 0
    assert pb("judge", "tally", str(d), cwd=tmp_path).returncode == 0
    original = (d / "key.json").read_bytes()
    other = prepare(tmp_path, runs, out="judging-2", seed=12)
    shutil.copyfile(other / "key.json", d / "key.json")
    refusal(pb("judge", "tally", str(d), cwd=tmp_path), "task-1.json", "binding.key", "judge prepare")
    (d / "key.json").write_bytes(original)
    (d / "task-2" / "criteria.md").write_text("a different standard\n")
    refusal(pb("judge", "tally", str(d), cwd=tmp_path), "task-2.json", "binding.files/criteria.md")
    refusal(pb("judge", "run", str(d), "--judge", JUDGE, "--probe", str(every), cwd=tmp_path),
            "task-2.json", "binding.files/criteria.md", "stale verdict")


def test_tally_refuses_while_a_requested_judge_has_no_verdict(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A second judge whose every call is stopped by the provider leaves verdicts missing: run exits 2 and tally
    refuses, naming the missing verdict file."""
    d = prepare(tmp_path, runs)
    stop = tmp_path / "stop.yaml"
    stop.write_text((SCENARIOS_DIR / "rate-limit.yaml").read_text())
    done = pb("judge", "run", str(d), "--judge", "claude:claude-opus-4-1:low", "--jobs", "3", "--probe", str(stop),
              cwd=tmp_path)
    assert done.returncode == 2
    refusal(pb("judge", "tally", str(d), cwd=tmp_path), "claude-claude-opus-4-1-low")


def test_codex_judge_is_checked_from_its_rollouts(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The real Codex CLI as a second judge: model, effort and CLI version come from its own rollouts, every verdict
    is bound, and with two judges agreeing on every pair each one's agreement is 1.0 over all ten pairs."""
    path = find_cli("codex")
    require(path is not None and cli_version(path) == PINNED["codex"], f"Codex {PINNED['codex']}")
    d = prepare(tmp_path, runs)
    always_a = str(SCENARIOS_DIR / "judge-always-a.yaml")
    done = pb("judge", "run", str(d), "--judge", "codex:gpt-5.1-codex:high", "--judge", JUDGE, "--jobs", "3",
              "--probe", always_a, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    verdict = json.loads((d / "results" / "codex-gpt-5.1-codex-high" / "task-3.json").read_text())
    assert verdict["binding"]["judge_cli_version"] == PINNED["codex"]
    doc = json.loads(pb("judge", "tally", str(d), "--json", cwd=tmp_path).stdout)
    for judge in ("codex-gpt-5.1-codex-high", JUDGE_NAME):
        assert doc["judge_stats"][judge]["agreement"] == {"rate": 1.0, "pairs": 10}


def test_refused_credentials_stop_run_before_any_reservation(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A refused operator variable (ANTHROPIC_API_KEY) or a floating Claude model id stops judge run with exit 2
    before any judge spec or call folder is written."""
    import os

    d = prepare(tmp_path, runs)
    env = {k: v for k, v in os.environ.items() if k not in ENV_DROP} | {"ANTHROPIC_API_KEY": "sk-ant-x"}
    argv = [sys.executable, "-m", "pluginbench", "judge", "run", str(d), "--judge", JUDGE, "--probe",
            str(SCENARIOS_DIR / "judge-always-a.yaml")]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    refusal(done, "ANTHROPIC_API_KEY", "field: environment", file=False)  # the environment, not a file
    floating = pb("judge", "run", str(d), "--judge", "claude:sonnet:high", "--probe",
                  str(SCENARIOS_DIR / "judge-always-a.yaml"), cwd=tmp_path)
    refusal(floating, "field: --judge", file=False)
    assert not (d / "results").exists() and not (d / "judge-specs").exists()


def _write_packet(run: Path, attempt: str, task: str) -> Path:
    """A review packet in the layout the reviewer writes (evidence/review-packets/<attempt>/), built here from the
    attempt's own evidence: packet/{submission.patch, source/, instruction.md} and binding.json."""
    import hashlib

    from pluginbench.tasks._tree import fingerprint, scan_tree

    folder = run / "evidence" / "review-packets" / attempt
    root = folder / "packet"
    root.mkdir(parents=True)
    patch = (run / "evidence" / "attempts" / attempt / "model.patch").read_bytes()
    (root / "submission.patch").write_bytes(patch)
    frozen = run / "evidence" / "frozen" / "tasks" / task
    shutil.copytree(frozen / "workspace", root / "source")
    instruction = (frozen / "instruction.md").read_bytes()
    (root / "instruction.md").write_bytes(instruction)
    binding = {"attempt_id": attempt, "task": task, "submission_sha256": hashlib.sha256(patch).hexdigest(),
               "starting_source_fingerprint": fingerprint(scan_tree(root / "source")),
               "instruction_sha256": hashlib.sha256(instruction).hexdigest()}
    (folder / "binding.json").write_text(json.dumps(binding))
    return root


def test_prepare_prefers_a_bound_review_packet_and_refuses_a_changed_one(runs: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    """A submission with a review packet bound to its submission and starting source is read from the packet
    (diff_origin review-packet in the key); a packet whose patch no longer matches its binding is refused."""
    copy = tmp_path / "with-packets"
    shutil.copytree(runs[1], copy)
    attempt = next((copy / "evidence" / "attempts").glob("roman-numerals__vanilla__r1*")).name
    root = _write_packet(copy, attempt, "roman-numerals")
    d = prepare(tmp_path, (runs[0], copy))
    key = json.loads((d / "key.json").read_text())
    origins = {side["attempt_id"]: side["diff_origin"] for p in key["pairs"].values() for side in (p["A"], p["B"])}
    assert origins[attempt] == "review-packet"
    assert sum(1 for o in origins.values() if o == "snapshot") == len(origins) - 1
    (root / "submission.patch").write_text("diff --git a/x b/x\n")
    crit = tmp_path / "criteria.md"
    done = pb("judge", "prepare", f"{runs[0]}=testing-discipline", f"{copy}=vanilla", "--criteria", str(crit),
              "--seed", "1", "--output", str(tmp_path / "refused"), cwd=tmp_path)
    refusal(done, "binding.json", "field: submission_sha256")
    assert not (tmp_path / "refused").exists()
