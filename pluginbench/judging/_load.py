"""``judge tally``'s edge: read the key and every verdict once, check bindings, gather usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._binding import mismatched_fields, sha256_bytes
from ._call import native_cli_version
from ._run import Prepared
from ._tally import CallUsage, tally

FIX_REPREPARE = "prepare a new directory with `pluginbench judge prepare` and run the judges there"


def _traced_usage(call_dir: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """An older call without host-evidence.json: its usage from the saved stdout.jsonl and native traces
    (Claude transcripts, Codex rollouts), validated by today's rules; a killed call's partial trace is unknown."""
    if not (call_dir / "agent" / "stdout.jsonl").is_file():
        return {}
    from ..harnesses import revalidate_usage

    try:
        version = json.loads((call_dir / "native-treatment.json").read_text()).get("cli_version")
    except (OSError, json.JSONDecodeError):
        version = None
    usage = revalidate_usage(str(spec.get("harness")), call_dir, model=spec.get("model"), cli_version=version,
                             timed_out=False, exit_code=None, seconds=None)
    return {} if usage is None else {"status": usage.status, "input_tokens": usage.input_tokens,
                                     "output_tokens": usage.output_tokens,
                                     "cached_input_tokens": usage.cached_input_tokens}


def _call_usage(call_dir: Path, spec: dict[str, Any]) -> CallUsage:
    try:
        ev = json.loads((call_dir / "host-evidence.json").read_text())
    except FileNotFoundError:
        ev = {"usage": _traced_usage(call_dir, spec)}
    except (OSError, json.JSONDecodeError):
        return CallUsage()
    u = ev.get("usage") or {}
    if u.get("status") not in ("exact", "unvalidated"):
        return CallUsage()
    return CallUsage(input_tokens=u.get("input_tokens"), output_tokens=u.get("output_tokens"),
                     cached_input_tokens=u.get("cached_input_tokens"))


def _judges(prepared: Prepared) -> list[str]:
    folder = prepared.root / "judge-specs"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def tally_dir(root: Path, *, require_bound: bool) -> dict[str, Any]:
    """The tally of a prepared directory; refuses (exit 2) what cannot be tallied."""
    prepared = Prepared(root)
    judges = _judges(prepared)
    if not judges:
        raise InputError("no judge has run in this directory", file=str(root / "judge-specs"), field="judge-specs",
                         fix="run `pluginbench judge run DIR --judge HARNESS:MODEL:EFFORT` first")
    key_digest = sha256_bytes(prepared.key_bytes)
    missing = [str(prepared.verdict_path(j, p).relative_to(root)) for j in judges for p in prepared.pairs
               if not prepared.verdict_path(j, p).is_file()]
    if missing:
        raise InputError(f"{len(missing)} verdict(s) missing, first {missing[0]}", file=str(root / missing[0]),
                         field="results", fix="run `pluginbench judge run` again with the same judges; it retries only missing calls")
    verdicts: dict[str, dict[str, str]] = {}
    usage: dict[str, list[CallUsage]] = {}
    unbound: list[str] = []
    rebind: list[str] = []
    for judge in judges:
        spec_bytes = prepared.spec_path(judge).read_bytes()
        spec = json.loads(spec_bytes)
        calls: list[CallUsage] = []
        for pair in prepared.pairs:
            path = prepared.verdict_path(judge, pair)
            rel = str(path.relative_to(root))
            try:
                doc = json.loads(path.read_bytes())
            except json.JSONDecodeError as exc:
                raise InputError(f"the verdict is not valid JSON: {exc}", file=str(path),
                                 fix=f"delete it and run `pluginbench judge run {root}` again") from None
            if doc.get("verdict") == "unable":
                raise InputError(f"judge {judge} was unable to judge {pair}", file=str(path), field="verdict",
                                 fix=f"delete the verdict and run `pluginbench judge run {root}` again, "
                                     "or prepare without that task")
            if doc.get("verdict") not in ("A", "B", "tie"):
                raise InputError(f"unknown verdict {doc.get('verdict')!r}", file=str(path), field="verdict",
                                 fix=f"delete it and run `pluginbench judge run {root}` again")
            call_dirs = sorted((root / "results" / judge / pair).glob("call-*"))
            calls.extend(_call_usage(c, spec) for c in call_dirs)
            if not call_dirs:
                calls.append(CallUsage())  # a verdict without call evidence is one unknown call
            binding = doc.get("binding")
            if not isinstance(binding, dict):
                if require_bound:
                    raise InputError("unbound verdict (written before binding)", file=str(path), field="binding",
                                     fix=FIX_REPREPARE)
                unbound.append(rel)
            else:
                version = binding.get("judge_cli_version")
                if version is None:
                    if require_bound:
                        raise InputError("the verdict needs a rebind (no judge CLI version)", file=str(path),
                                         field="binding.judge_cli_version",
                                         fix=f"delete the verdict and run `pluginbench judge run {root}`")
                    rebind.append(rel)
                else:
                    call = root / "results" / judge / str(doc.get("call", ""))
                    produced = native_cli_version(call, str(spec.get("harness"))) if doc.get("call") else None
                    if produced != version:
                        raise InputError("the verdict's judge CLI version is not what its call evidence records",
                                         file=str(path), field="binding.judge_cli_version", fix=FIX_REPREPARE)
                current = prepared.binding(sha256_bytes(spec_bytes), pair, version)
                current["key"] = key_digest
                fields = mismatched_fields(binding, current)
                if fields:
                    raise InputError(f"the verdict's binding does not match: {', '.join(fields)}", file=str(path),
                                     field="binding." + fields[0], fix=FIX_REPREPARE)
            verdicts.setdefault(judge, {})[pair] = doc["verdict"]
        usage[judge] = calls
    result = tally(prepared.key, verdicts, usage)
    result.update({"unbound": len(unbound), "unbound_verdicts": unbound,
                   "needs_rebind": len(rebind), "needs_rebind_verdicts": rebind, "judges": judges})
    (root / "tally.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return result
