"""Main-process CPU on a one-attempt run's critical path after the agent, by window (issue 27).

    .venv/bin/python bench/bench_post_session.py --before <checkout> [--rounds 8] [--isolation bubblewrap]

A whole one-attempt Claude Code run against the loopback probe (the ``one`` part of
``bench_overhead.py``: same tasks, environment and config, warmed twice per side so the
readiness cache and the discovery store are filled), ``rounds`` times per side, the sides
alternated round by round. Each run's process records, at every event it appends and at
two points of the attempt (the coding CLI's session over: ``ClaudeHarness._copy_transcripts``
starts; the canonical patch starts: ``_patch._add_all``), its own CPU seconds (all threads)
and the wall clock, through a ``sitecustomize`` this script writes into a temporary folder
first on ``PYTHONPATH`` (nothing in the tree is changed). Printed per window: the median
CPU milliseconds of each side and the after/before ratio, with the load before and after:

* ``session over -> patch start``: the harness after the exec, then the pipeline's stop,
  export and patch preparation;
* ``agent.exited -> measures.collected``, ``measures.collected -> attempt.graded``;
* ``source_only.selected -> report.built``: the report;
* ``attempt.started -> agent.launched``: the sandbox's set-up, then the CLI's start-up (the
  main process mostly waits there; work moved into the start-up is off the critical path).

Then every round's outputs are compared between the sides (events.jsonl, execution.json,
native-treatment.json, measurements.json, report.html/CSV/JSON, the file list; not the copy
of the discovery store entry, whose origin is whichever warm-up attempt stored it), with
timestamps, run paths, ids, timings and the plots' timing-dependent ticks normalised: a
line says how many rounds had the same outputs and shows the first difference otherwise.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_overhead import MODELS, SCENARIO, _env, _load, _probe_tasks  # noqa: E402

#: Written into a temporary folder that comes first on the run's PYTHONPATH.
_SITECUSTOMIZE = r'''
import atexit, importlib.abc, importlib.util, os, sys, time
_OUT = os.environ.get("PB_BENCH_MARKS")
if _OUT:
    _marks = []
    def _mark(name):
        _marks.append((name, time.process_time(), time.perf_counter()))
    _mark("start")
    atexit.register(lambda: open(_OUT, "w").write("".join(f"{n}\t{c}\t{w}\n" for n, c, w in _marks)))

    def _patch(mod):
        if mod.__name__ == "pluginbench.harnesses._claude":
            original = mod.ClaudeHarness._copy_transcripts
            async def copy_transcripts(self, *a, **k):
                _mark("session over")
                return await original(self, *a, **k)
            mod.ClaudeHarness._copy_transcripts = copy_transcripts
        elif mod.__name__ == "pluginbench.actors._patch":
            add_all = mod._add_all
            def patched(*a, **k):
                _mark("patch start")
                return add_all(*a, **k)
            mod._add_all = patched
        elif mod.__name__ == "pluginbench.actors._writer":
            for cls in [v for v in vars(mod).values() if isinstance(v, type) and "record" in vars(v)]:
                def record(self, event, _record=cls.record):
                    out = _record(self, event)
                    _mark(event.__struct_config__.tag)
                    return out
                cls.record = record

    class _Finder(importlib.abc.MetaPathFinder):
        names = {"pluginbench.harnesses._claude", "pluginbench.actors._patch", "pluginbench.actors._writer"}
        def find_spec(self, name, path, target=None):
            if name not in self.names:
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            run = spec.loader.exec_module
            def exec_module(module):
                run(module)
                _patch(module)
            spec.loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, _Finder())
'''

WINDOWS = (
    ("session over -> patch start", "session over", "patch start"),
    ("agent.exited -> measures.collected", "agent.exited", "measures.collected"),
    ("measures.collected -> attempt.graded", "measures.collected", "attempt.graded"),
    ("source_only.selected -> report.built", "source_only.selected", "report.built"),
    ("attempt.started -> agent.launched", "attempt.started", "agent.launched"),
)


def _marks(path: Path) -> list[tuple[str, float, float]]:
    rows = [line.split("\t") for line in path.read_text().splitlines() if line]
    return [(n, float(c), float(w)) for n, c, w in rows]


def _window_ms(marks: list[tuple[str, float, float]], start: str, end: str) -> float | None:
    names = [n for n, _, _ in marks]
    if start not in names or end not in names:
        return None
    return (marks[names.index(end)][1] - marks[names.index(start)][1]) * 1000


def _normalised(text: str, root: Path) -> str:
    text = text.replace(str(root), "RUN")
    text = re.sub(r"\bout-\d+(-[0-9a-f]{10})?\b", "NAME", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", "TS", text)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", text)
    text = re.sub(r"\b\d+\.\d+\b", "F", text)
    text = re.sub(r'"(pid|pgid|seconds|coding_seconds)": ?\d+', r'"\1": N', text)
    text = re.sub(r'_ms(\\?)": ?\d+', r'_ms\1": N', text)
    text = re.sub(r"\b[0-9a-f]{64}\b", "SHA", text)
    # where the discovery store entry came from: whichever warm-up attempt stored it first
    text = re.sub(r'"(origin_run|origin_attempt)": "[^"]*"', r'"\1": "R"', text)
    text = re.sub(r"<svg.*?</svg>", lambda m: re.sub(r"\d+", "N", re.sub(
        r'<line class="grid-line"[^>]*/>|<text class="tick"[^>]*>[^<]*</text>', "", m.group(0))), text, flags=re.S)
    return re.sub(r"(/[\w.+-]+)+/\.tools/", "TOOLS/", text)


def _difference(a: Path, b: Path) -> str | None:
    """The first difference of two runs' outputs (normalised), or None."""
    def listing(root: Path) -> list[str]:
        return sorted(re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "UUID", str(p.relative_to(root)))
                      for p in root.rglob("*") if p.is_file() and "export" not in p.parts)
    if listing(a) != listing(b):
        return f"file lists differ: {sorted(set(listing(a)) ^ set(listing(b)))}"
    for rel in [*("events.jsonl", "report/report.html", "report/results.csv", "report/results.json"),
                *(str(p.relative_to(a)) for p in sorted((a / "evidence" / "attempts").rglob("*.json"))
                  # a verbatim copy of the store entry: which warm-up attempt wrote it is a race
                  if p.name != "discovery.origin.json")]:
        ta, tb = (_normalised((r / rel).read_text(errors="replace"), r) for r in (a, b))
        if ta != tb:
            diff = difflib.unified_diff(ta.splitlines(), tb.splitlines(), lineterm="", n=0)
            return f"{rel}:\n" + "\n".join(line[:240] for line in list(diff)[:8])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the older checkout (with its .tools link)")
    parser.add_argument("--after", type=Path, help="the newer checkout (default: this tree)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--isolation", default="bubblewrap", choices=["none", "bubblewrap"])
    args = parser.parse_args()
    sides = {"before": str(args.before.resolve()), "after": str(args.after.resolve()) if args.after else None}
    with tempfile.TemporaryDirectory(prefix="pb-bench-post-") as tmp:
        root = Path(tmp)
        (root / "site").mkdir()
        (root / "site" / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        source = _probe_tasks(root, 2)
        runner = {"harness": "claude", "model": MODELS["claude"], "reasoning": "low", "probe": str(SCENARIO)}
        base = {"treatments": {}, "runner": runner, "seed": 1, "timeout_seconds": 120,
                "environment": {"isolation": args.isolation}}
        (root / "warm.yaml").write_text(yaml.safe_dump({**base, "tasks": {"source": str(source), "ids": ["p0", "p1"]},
                                                        "repeats": 1, "jobs": 2}))
        (root / "one.yaml").write_text(yaml.safe_dump({**base, "tasks": {"source": str(source), "ids": ["p0"]},
                                                       "repeats": 1, "jobs": 1}))

        def run(side: str, config: str, out: Path, marks: Path | None) -> None:
            env = _env(root / f"cache-{side}", sides[side])
            env["PYTHONPATH"] = os.pathsep.join(p for p in (sides[side], str(root / "site")) if p)
            if marks is not None:
                env["PB_BENCH_MARKS"] = str(marks)
            done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(root / config), "--output", str(out),
                                   "--foreground", "--yes"], capture_output=True, text=True, env=env, cwd=root,
                                  timeout=600)
            if done.returncode != 0:
                raise SystemExit(f"{side} run exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")

        for side in sides:
            for i in range(2):
                run(side, "warm.yaml", root / side / f"warm-{i}", None)
        load_before = _load()
        for i in range(args.rounds):
            for side in (sides if i % 2 == 0 else reversed(list(sides))):
                run(side, "one.yaml", root / side / f"out-{i}", root / side / f"marks-{i}.tsv")
        load_after = _load()
        print(f"{args.rounds} rounds per side, load {load_before:.1f} -> {load_after:.1f}; main-process CPU, "
              "median ms (all its threads):")
        for label, start, end in WINDOWS:
            got = {side: [w for i in range(args.rounds)
                          if (w := _window_ms(_marks(root / side / f"marks-{i}.tsv"), start, end)) is not None]
                   for side in sides}
            if not all(got.values()):
                print(f"  {label:40s} not seen")
                continue
            b, a = statistics.median(got["before"]), statistics.median(got["after"])
            print(f"  {label:40s} before {b:6.1f}  after {a:6.1f}  ratio {a / b:.2f}")
        same = 0
        for i in range(args.rounds):
            diff = _difference(root / "before" / f"out-{i}", root / "after" / f"out-{i}")
            if diff is None:
                same += 1
            else:
                print(f"round {i}: outputs differ: {diff}")
        print(f"outputs the same (normalised) in {same} of {args.rounds} rounds")


if __name__ == "__main__":
    main()
