"""The reviewer's settings, preflight and adapter (foreground checks and the worker share them).

Reviews run the host CLI (``reviewer.cli_version`` must be null; the version is read and
recorded), with credentials exactly as coding runs take them (Claude: the subscription
token only, refused operator variables; Codex: a copy of the host's ``auth.json``), in a
mandatory bubblewrap sandbox. A probe run's reviewer talks to the same loopback probe.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Evaluation, reviewer_spec_problem
from ..errors import ConfigError, EnvironmentFailure
from ..events import ReviewerSpec
from ..harness_registry import harness_class
from ..review import default_criteria

if TYPE_CHECKING:  # the review call's stack loads with a run's reviewer (a run without one never does)
    from ..review import Reviewer


def criteria_bytes(ev: Evaluation, config: Path | None = None) -> bytes:
    rv = ev.reviewer
    assert rv is not None
    if rv.criteria is None:
        return default_criteria()
    path = Path(rv.criteria)
    try:
        data = path.read_bytes()
        data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the review criteria {path}: {exc}", file=str(config or path),
                          field="reviewer.criteria", fix="point reviewer.criteria at a UTF-8 Markdown file") from None
    if not data.strip():
        raise ConfigError(f"the review criteria {path} are empty", file=str(config or path), field="reviewer.criteria",
                          fix="write the criteria every arm is reviewed by, or remove the field for the built-in ones")
    return data


def preflight(harness: str, model: str | None, reasoning: str | None, *, probe: bool,
              field: str = "reviewer", file: str | None = None) -> tuple[str | None, str | None]:
    """Check the reviewer's spec, host CLI, credentials and sandbox host before any call;
    return the host CLI (path, version) (``None`` for the simulated stand-in)."""
    problem = reviewer_spec_problem(harness, model, reasoning)
    if problem is not None:
        raise ConfigError(problem.message, file=file, field=f"{field}.{problem.field}", fix=problem.fix)
    cls = harness_class(harness, file=file, field=f"{field}.harness")
    if cls.cli is None:
        return None, None
    from ..environments import bwrap_usable, find_bwrap
    from ..probe import cli_version, find_cli

    path = find_cli(harness)
    if path is None:
        raise ConfigError(f"the reviewer's {harness} CLI is not installed", file=file, field=f"{field}.harness",
                          fix="run tools/install-clis.sh (reviews run the host CLI)")
    version = cli_version(path)
    if version is None:
        raise ConfigError(f"{path} --version did not answer", file=file, field=f"{field}.harness",
                          fix="reinstall the CLI")
    cls.check_reviewer_host(path, probe=probe, field=field, file=file)  # credentials, helpers
    executable = find_bwrap()
    if executable is None or not bwrap_usable():
        raise EnvironmentFailure("reviews need a bubblewrap sandbox and bwrap is not usable here; install "
                                 "bubblewrap (apt-get install bubblewrap) or allow user namespaces")
    return str(path), version


def frozen_spec(ev: Evaluation, criteria: bytes, cli_version: str | None) -> ReviewerSpec:
    rv = ev.reviewer
    assert rv is not None
    return ReviewerSpec(
        harness=rv.harness, model=rv.model or rv.harness, reasoning=rv.reasoning, cli_version=cli_version,
        timeout_seconds=rv.timeout_seconds if rv.timeout_seconds is not None else ev.timeout_seconds,
        criteria_sha256=hashlib.sha256(criteria).hexdigest(),
    )


def make_reviewer(spec: ReviewerSpec, *, probe_base_url: str | None, hidden: tuple[Path, ...]) -> Reviewer:
    """The reviewer's adapter: the host CLI through the coding harness of the same name."""
    from ..review import Reviewer

    cls = harness_class(spec.harness)
    if cls.cli is None:  # the simulated stand-in reviews without a CLI
        return Reviewer(spec, None, None, hidden)
    from ..environments import make_environment
    from ..harnesses import make_harness
    from ..probe import find_cli

    path = find_cli(spec.harness)
    if path is None:
        raise EnvironmentFailure(f"the reviewer's {spec.harness} CLI is not installed on this host")
    options: dict[str, Any] = {"cli_path": path, "cli_version": spec.cli_version or "", "probe_base_url": probe_base_url,
                               **cls.reviewer_options()}
    harness = make_harness(spec.harness, **options)
    return Reviewer(spec, harness, make_environment("local", isolation="bubblewrap"), hidden)


def setup_reviewer(ctx: Any) -> Reviewer | None:
    """The reviewer extension's setup (``_actor_ext.SetupContext``): the frozen reviewer of
    ``run.created`` bound to its CLI adapter, or None for a run without one."""
    if ctx.created is None or ctx.created.reviewer is None:
        return None
    return make_reviewer(ctx.created.reviewer, probe_base_url=ctx.probe_base_url, hidden=ctx.hidden)
