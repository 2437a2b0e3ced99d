"""``judge run``: reserve, launch, check and save verdicts; reuse only verdicts whose binding holds.

Every judge's spec is saved to ``judge-specs/<judge>.json`` (outside every task folder) and
every harness is built (credentials checked once) before the first reservation. A call
atomically reserves ``results/<judge>/task-N/call-K/`` (``mkdir``) before launch and
records its evidence there; the verdict ``results/<judge>/task-N.json`` is written only
when the model, effort, read-only trace, pair number and the unchanged inputs all check out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from ..errors import InputError, VerdictError
from ..rundir import sha256_file
from ._binding import make_binding, mismatched_fields, sha256_bytes, workspace_digests
from ._call import launch_judge, read_trace
from ._spec import JudgeSpec
from ._verdict import parse_verdict


class Prepared:
    """A prepared directory as run and tally read it (the key read once, as bytes)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        key_path = root / "key.json"
        try:
            self.key_bytes = key_path.read_bytes()
            self.key = json.loads(self.key_bytes)
            self.pairs = list(self.key["pairs"])
            self.seed = int(self.key["seed"])
        except FileNotFoundError:
            raise InputError("not a prepared judging directory: key.json is missing", file=str(key_path),
                             fix="prepare one with `pluginbench judge prepare`") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"key.json is not a judging key ({exc})", file=str(key_path),
                             fix="prepare a new directory with `pluginbench judge prepare`") from None

    def spec_path(self, judge: str) -> Path:
        return self.root / "judge-specs" / f"{judge}.json"

    def verdict_path(self, judge: str, pair: str) -> Path:
        return self.root / "results" / judge / f"{pair}.json"

    def binding(self, spec_digest: str, pair: str, cli_version: str | None) -> dict[str, str | None]:
        """The binding of ``pair`` as the directory holds it now."""
        return make_binding(workspace_digests(self.root / pair),
                            brief=sha256_file(self.root / f"{pair}.brief.md"), judge_spec=spec_digest,
                            seed=self.seed, key=sha256_bytes(self.key_bytes), judge_cli_version=cli_version)


def spec_bytes(spec: JudgeSpec) -> bytes:
    return (json.dumps({"harness": spec.harness, "model": spec.model, "effort": spec.effort},
                       indent=1, sort_keys=True) + "\n").encode()


def save_specs(prepared: Prepared, specs: Sequence[JudgeSpec]) -> None:
    """Write each judge's spec, or refuse one whose saved spec differs."""
    for spec in specs:
        path = prepared.spec_path(spec.name)
        if path.exists():
            if path.read_bytes() != spec_bytes(spec):
                raise InputError("the saved judge spec differs from this launch specification", file=str(path),
                                 field="harness/model/effort", fix="prepare a new directory for a different judge")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(spec_bytes(spec))


def check_saved_verdict(prepared: Prepared, spec: JudgeSpec, pair: str) -> bool:
    """True when a bound verdict exists and its binding still holds; refuses a stale one."""
    path = prepared.verdict_path(spec.name, pair)
    if not path.is_file():
        return False
    doc = json.loads(path.read_bytes())
    saved = doc.get("binding")
    if not isinstance(saved, dict):
        return True  # a legacy verdict: tally reports it as unbound
    current = prepared.binding(sha256_file(prepared.spec_path(spec.name)), pair, saved.get("judge_cli_version"))
    fields = mismatched_fields(saved, current)
    if fields:
        raise InputError(f"a saved verdict's binding no longer matches its inputs: {', '.join(fields)}",
                         file=str(path), field="binding." + fields[0],
                         fix="prepare a new directory with `pluginbench judge prepare` (a stale verdict is never reused)")
    return True


def reserve_call(prepared: Prepared, judge: str, pair: str) -> Path:
    """Atomically reserve the next ``call-K`` folder (mkdir either creates it or fails)."""
    parent = prepared.root / "results" / judge / pair
    parent.mkdir(parents=True, exist_ok=True)
    k = 1 + sum(1 for p in parent.iterdir() if p.name.startswith("call-"))
    while True:
        try:
            (parent / f"call-{k}").mkdir()
            return parent / f"call-{k}"
        except FileExistsError:
            k += 1


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def check_call(spec: JudgeSpec, evidence: dict[str, Any], final: str | None, writes: list[str],
               pair: str) -> tuple[dict[str, str] | None, list[str]]:
    """The verdict and the reasons it cannot be saved (pure)."""
    problems: list[str] = []
    if evidence.get("error"):
        problems.append(f"the call failed: {evidence['error']}")
    if evidence.get("provider_stop"):
        problems.append(f"the provider stopped the call: {evidence['provider_stop']}")
    if evidence.get("timed_out"):
        problems.append("the call timed out")
    if evidence.get("model") != spec.model:
        problems.append(f"model {evidence.get('model')!r} is not the judge's {spec.model!r}")
    if evidence.get("effort") != spec.effort:
        problems.append(f"effort {evidence.get('effort')!r} is not the judge's {spec.effort!r}")
    if writes:
        problems.append("the trace is not read-only: " + ", ".join(sorted(set(writes))))
    if evidence.get("workspace_changed"):
        problems.append("the judge changed its workspace: " + ", ".join(evidence["workspace_changed"][:5]))
    verdict = None
    try:
        verdict = parse_verdict(final or "", pair=pair)
    except VerdictError as exc:
        problems.append(f"no valid verdict: {exc}")
    return (verdict if not problems else None), problems


async def judge_pair(prepared: Prepared, spec: JudgeSpec, harness: Any, environment: Any, pair: str, *,
                     timeout: float, log: Callable[[str], None]) -> bool:
    """One call for (judge, pair); True when a verdict was saved."""
    spec_path = prepared.spec_path(spec.name)
    if spec_path.read_bytes() != spec_bytes(spec):
        raise InputError("the saved judge spec changed", file=str(spec_path), field="harness/model/effort",
                         fix="prepare a new directory")
    spec_digest = sha256_file(spec_path)
    before = prepared.binding(spec_digest, pair, None)
    call_dir = reserve_call(prepared, spec.name, pair)
    brief = (prepared.root / f"{pair}.brief.md").read_text(encoding="utf-8")
    evidence = await launch_judge(harness, environment, spec, task_dir=prepared.root / pair, brief=brief,
                                  call_dir=call_dir, seed=prepared.seed, timeout=timeout)
    final, writes = read_trace(spec, call_dir)
    verdict, problems = check_call(spec, evidence, final, writes, pair)
    after = prepared.binding(spec_digest, pair, None)
    changed = mismatched_fields(before, after)
    if changed:
        problems.append("inputs changed during the call: " + ", ".join(changed))
        verdict = None
    evidence["final_message"] = final
    evidence["problems"] = problems
    evidence["verdict_saved"] = verdict is not None
    (call_dir / "host-evidence.json").write_text(json.dumps(evidence, indent=1, sort_keys=True) + "\n")
    if verdict is None:
        log(f"{spec.name} {pair} {call_dir.name}: no verdict saved: " + "; ".join(problems))
        return False
    binding = {**before, "judge_cli_version": evidence.get("cli_version")}
    doc = {**verdict, "judge": spec.name, "call": f"{pair}/{call_dir.name}", "binding": binding}
    _write_atomic(prepared.verdict_path(spec.name, pair), (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
    log(f"{spec.name} {pair}: {verdict['verdict']}")
    return True


async def run_judges(prepared: Prepared, specs: Sequence[JudgeSpec], harnesses: dict[str, Any], environment: Any,
                     *, jobs: int, timeout: float, log: Callable[[str], None]) -> list[tuple[str, str]]:
    """Every missing (judge, pair) call, ``jobs`` at a time; returns what is still missing."""
    todo = [(s, p) for s in specs for p in prepared.pairs if not check_saved_verdict(prepared, s, p)]
    limiter = anyio.CapacityLimiter(jobs)

    async def one(spec: JudgeSpec, pair: str) -> None:
        async with limiter:
            await judge_pair(prepared, spec, harnesses[spec.name], environment, pair, timeout=timeout, log=log)

    async with anyio.create_task_group() as tg:
        for spec, pair in todo:
            tg.start_soon(one, spec, pair)
    return [(s.name, p) for s in specs for p in prepared.pairs if not prepared.verdict_path(s.name, p).is_file()]
