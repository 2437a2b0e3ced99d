"""Time to build the report's code-quality part (``code_measures`` and its HTML sections) for a
synthetic run with every code measure selected (issue 9 item 10).

Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_report_code.py [--tasks 100] [--arms 3] [--repeats 10] [--rounds 5]

Attempt rows are made in the report's own row shape: half the tasks Python (rust-code-analysis,
Vulture, coverage.py), half Go (lizard, staticcheck, no coverage: unknown with a reason), one
value in twenty unknown. Reported: the median of ``--rounds`` for ``code_measures_section`` and
for rendering the Code quality, Measurement revisions and Not measured sections, and the HTML size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pluginbench.measures import collected_columns  # noqa: E402
from pluginbench.projections._report_code import code_measures_section  # noqa: E402
from pluginbench.projections._report_quality import (  # noqa: E402
    code_quality_html,
    not_measured_html,
    revisions_html,
)

MEASUREMENTS = ["tokens", "time", "lines", "iterations", "cyclomatic", "cognitive", "dead_code", "coverage"]
ANALYZERS = {
    "python": {"cyclomatic": "rust-code-analysis 0.0.4", "cognitive": "rust-code-analysis 0.0.4",
               "dead_code": "vulture 2.16", "coverage": "coverage-py-json 7.17.3"},
    "go": {"cyclomatic": "lizard 1.24.3", "cognitive": "lizard 1.24.3", "dead_code": "staticcheck 2023.1"},
}


def _rows(tasks: int, arms: list[str], repeats: int, rng: random.Random) -> list[dict[str, Any]]:
    owner = {c.metric: spec for spec in MEASUREMENTS for c in collected_columns([spec])}
    rows = []
    for t in range(tasks):
        language = "python" if t % 2 == 0 else "go"
        for arm in arms:
            for r in range(repeats):
                measures = {}
                for metric, spec in owner.items():
                    analyzer = ANALYZERS[language].get(spec)
                    unknown = rng.random() < 0.05 or (spec == "coverage" and analyzer is None)
                    m: dict[str, Any] = {"value": None if unknown else rng.randint(0, 30), "unit": "points",
                                         "status": "unknown" if unknown else "measured",
                                         "reason": "no coverage profile" if unknown else None}
                    if analyzer is not None:
                        m["language"], m["analyzer"] = language, analyzer
                    measures[metric] = m
                rows.append({"attempt_id": f"t{t}.{arm}.{r}", "task": f"t{t:03d}", "arm": arm, "state": "complete",
                             "ineligible": None, "measures": measures})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--arms", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    arms = ["vanilla", *(f"arm{i}" for i in range(1, args.arms))]
    rows = _rows(args.tasks, arms, args.repeats, random.Random(1))
    tasks = sorted({r["task"] for r in rows})
    build, render = [], []
    html = ""
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        section = code_measures_section(None, rows, tasks, arms, MEASUREMENTS)
        t1 = time.perf_counter()
        doc = {"arms": arms, "tasks": tasks, "code_measures": section, "measurement_history": [], "not_measured": [
            {"task": t, "measure": "coverage", "reason": "not_configured: no profile"} for t in tasks[1::2]]}
        html = code_quality_html(doc) + revisions_html(doc) + not_measured_html(doc)
        t2 = time.perf_counter()
        build.append(t1 - t0)
        render.append(t2 - t1)
    print(f"attempts: {len(rows)} ({args.tasks} tasks × {len(arms)} arms × {args.repeats} repeats), "
          f"code metrics: {len(section)}, groups: {sum(len(g) for g in section.values())}")
    print(f"code_measures_section: median {statistics.median(build):.3f} s (min {min(build):.3f}, max {max(build):.3f})")
    print(f"HTML sections:         median {statistics.median(render):.3f} s (min {min(render):.3f}, max {max(render):.3f})")
    print(f"HTML size: {len(html.encode()) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
