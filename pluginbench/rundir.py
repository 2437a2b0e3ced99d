"""The layout of a run directory, in one place.

```
runs/<run>/
  evaluation.json  evaluation-binding.json   frozen settings and their hash binding
  events.jsonl                               the log (append-only, fsync per event)
  run.lock  run.log
  evidence/
    ledger.sqlite                            projection: attempt states
    frozen/tasks/<task>/                     frozen task folders
    frozen/treatments/<arm>/                 frozen guidance, skills, plugins
    frozen/starting/<task>/                  image tasks: the starting source exported
    remote/pins.json  remote/tasks/<task>/   tasks.urls / tasks.dataset: each task's pinned
                                             commit and fingerprints, and the folder fetched at it
    remote/dataset.json                      tasks.dataset: name, version, registry SHA-256,
                                             content hash
    attempts/<attempt-id>/                   invocation.json, execution.json, agent/,
                                             delivery/, export/, artifacts/, model.patch,
                                             grading/verifier/, measurements.json
    discarded/<attempt-id>/                  attempts a resume replaced
  report/  report.html  results.json  results.csv
```

A cross-agent evaluation (``runner.harnesses``) is a folder of such runs, one per harness::

```
runs/<evaluation>/
  cross-agent.json                           the frozen config, its SHA-256 and the harness runs
  <harness>/                                 an ordinary run directory (above), one per harness
  report/  report.html  results.json  results.csv   the package × harness matrix (a fold of the runs' logs)
```
"""

import hashlib
import os
from pathlib import Path
from typing import NamedTuple


class RunDir(NamedTuple):
    root: Path

    @property
    def run_id(self) -> str:
        """The run's identity on shared resources (container labels, sandbox folders):
        its folder name plus a hash of its absolute path, so two runs named alike in
        different folders never touch each other's resources."""
        digest = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:10]
        return f"{self.root.name[:28]}-{digest}"

    @property
    def evaluation(self) -> Path:
        return self.root / "evaluation.json"

    @property
    def binding(self) -> Path:
        return self.root / "evaluation-binding.json"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def lock(self) -> Path:
        return self.root / "run.lock"

    @property
    def log(self) -> Path:
        return self.root / "run.log"

    @property
    def evidence(self) -> Path:
        return self.root / "evidence"

    @property
    def ledger(self) -> Path:
        return self.evidence / "ledger.sqlite"

    def frozen_task(self, task: str) -> Path:
        return self.evidence / "frozen" / "tasks" / task

    @property
    def remote_pins(self) -> Path:
        return self.evidence / "remote" / "pins.json"

    @property
    def remote_dataset(self) -> Path:
        return self.evidence / "remote" / "dataset.json"

    def remote_task(self, task: str) -> Path:
        return self.evidence / "remote" / "tasks" / task

    def frozen_treatment(self, arm: str) -> Path:
        return self.evidence / "frozen" / "treatments" / arm

    def attempt(self, attempt_id: str) -> Path:
        return self.evidence / "attempts" / attempt_id

    def discarded(self, attempt_id: str) -> Path:
        return self.evidence / "discarded" / attempt_id

    @property
    def report_dir(self) -> Path:
        return self.root / "report"

    def is_run(self) -> bool:
        return self.evaluation.is_file() and self.binding.is_file()

    def lost_settings(self) -> Path | None:
        """evaluation.json or evaluation-binding.json when a folder ``pluginbench run`` made
        (it holds events.jsonl) has lost it, else None."""
        if not self.events.is_file():
            return None
        return next((p for p in (self.evaluation, self.binding) if not p.is_file()), None)


#: The manifest that makes a folder a cross-agent evaluation (a folder of per-harness runs).
CROSS_AGENT_FILE = "cross-agent.json"


class GroupDir(NamedTuple):
    """A cross-agent evaluation's folder: one run directory per harness, and the matrix report."""

    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / CROSS_AGENT_FILE

    @property
    def report_dir(self) -> Path:
        return self.root / "report"

    def run(self, harness: str) -> RunDir:
        return RunDir(self.root / harness)

    def is_group(self) -> bool:
        return self.manifest.is_file()


def sha256_file(path: Path) -> str:
    """The sha256 of ``path``'s bytes, read in 1 MiB blocks (evidence files can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def patch_mismatch(patch: Path | str, recorded_sha256: str | None) -> str | None:
    """Why ``patch`` is not the canonical patch recorded at capture, or ``None`` when its
    sha256 still matches. Grading, measuring and reporting each check it first."""
    if recorded_sha256 is None:
        return None
    digest = hashlib.sha256()
    try:  # a file descriptor, no buffered file object: the report checks every attempt's (half the CPU)
        fd = os.open(patch, os.O_RDONLY)
        try:
            while block := os.read(fd, 1 << 20):
                digest.update(block)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"patch integrity: model.patch is unreadable ({exc.strerror or exc})"
    got = digest.hexdigest()
    if got != recorded_sha256:
        return (f"patch integrity: model.patch has sha256 {got[:12]}…, not the {recorded_sha256[:12]}… "
                "recorded at capture; the saved submission was changed")
    return None


def refuse_lost_settings(rd: RunDir) -> None:
    """Refuse a run folder that lost its frozen settings (exit 2), naming the missing file,
    instead of calling it no run directory."""
    lost = rd.lost_settings()
    if lost is not None:
        from .errors import RunDirError

        raise RunDirError(
            f"{rd.root} is a run whose {lost.name} is missing", file=str(lost),
            fix=f"restore {lost.name} from a backup; status, report and resume need the run's frozen settings")
