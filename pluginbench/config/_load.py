"""Loading and validating an evaluation config; every failure names file, field and fix."""

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from .. import measures as measure_registry
from ..errors import BadTaskUrl, ConfigError
from ..harness_registry import SpecProblem, harness_class, harness_names
from ..measures import settings_of, validate_settings
from ._harnesses import check_entries
from ._parse import parse_evaluation, read_raw
from ._schema import (
    REASONING,
    Evaluation,
)

_ARM_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
#: Attempt ids are ``<task>__<arm>__r<repeat>``: a ``__`` inside a task id or arm name
#: could make two attempts one id (task ``x`` arm ``td__vanilla``, task ``x__td`` vanilla).
ID_SEPARATOR = "__"
#: A file name's limit on Linux and macOS (task ids are folder names).
MAX_NAME_BYTES = 255


def _has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (an ANSI escape would reach the terminal)."""
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)
_EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
#: Bounds that keep a typo from planning a billion attempts (planning is linear in them).
MAX_REPEATS = 10
MAX_CODING_ATTEMPTS = 10_000
MAX_TIMEOUT_SECONDS = 86_400
#: Scope settings and the measures that apply them (the others measure the whole repository).
SCOPE_KEYS = ("source_scope", "test_scope")
SCOPED_MEASURES = ("coverage",)


class LoadedConfig(NamedTuple):
    """A validated evaluation and the file it came from (paths resolve against its folder)."""

    evaluation: Evaluation
    path: Path

    @property
    def base(self) -> Path:
        return self.path.parent

    def resolve(self, raw: str) -> Path:
        p = Path(raw).expanduser()
        return p if p.is_absolute() else (self.base / p)


def reviewer_spec_problem(harness: str, model: str | None, reasoning: str | None) -> SpecProblem | None:
    """What is wrong with a reviewer's harness/model/effort, by the runner's rules (a
    registered harness that may review; a real one needs an exact model id; then the
    harness's own rule, e.g. an explicit effort for Claude); ``None`` when it is fine."""
    reviewers = [n for n in harness_names() if harness_class(n).reviewer]
    if harness not in reviewers:
        return SpecProblem(f"unknown reviewer harness '{harness}'", "harness", "use one of: " + ", ".join(reviewers))
    if reasoning is not None and reasoning not in REASONING:
        return SpecProblem(f"unknown reasoning '{reasoning}'", "reasoning", "use one of: " + ", ".join(REASONING))
    cls = harness_class(harness)
    if not cls.real:
        return None
    if not model:
        return SpecProblem("a reviewer needs an exact model id", "model", "set the reviewer's model")
    if model != model.strip() or any(c.isspace() for c in model):
        return SpecProblem(f"model {model!r} contains spaces", "model", "write the exact model id without spaces")
    problem: SpecProblem | None = cls.spec_problem(model, reasoning)
    return problem


def _validate_reviewer(ev: Evaluation, bad: Any) -> None:
    rv = ev.reviewer
    if rv is None:
        return
    problem = reviewer_spec_problem(rv.harness, rv.model, rv.reasoning)
    if problem is not None:
        raise bad(problem.message, f"reviewer.{problem.field}", problem.fix)
    if rv.cli_version is not None:
        raise bad("reviews run the host CLI and record its version", "reviewer.cli_version",
                  "remove reviewer.cli_version (it must be null)")
    if rv.timeout_seconds is not None and not 1 <= rv.timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise bad(f"reviewer.timeout_seconds must be a positive integer up to {MAX_TIMEOUT_SECONDS}, "
                  f"got {rv.timeout_seconds}", "reviewer.timeout_seconds",
                  "set reviewer.timeout_seconds: 600, or null to inherit timeout_seconds")


def llm_check_problem(ev: Evaluation) -> tuple[str, str] | None:
    """(message, fix) when an ``llm`` check cannot be graded: it needs a reviewer with a CLI."""
    if ev.reviewer is None:
        return ("an llm check is graded by the reviewer's CLI and this evaluation has no reviewer",
                "add reviewer: {harness: claude, model: ...} (or codex), or remove the llm check")
    if harness_class(ev.reviewer.harness).cli is None:
        return (f"an llm check needs a real reviewer CLI; reviewer.harness is '{ev.reviewer.harness}'",
                "set reviewer.harness to claude or codex, or remove the llm check")
    return None


def _validate_measurements(ev: Evaluation, bad: Any) -> None:
    """Every selected name is a registered measure; every ``measurement_settings`` key is
    owned by a selected measure and fits the type it declares."""
    known = measure_registry.names()
    for i, m in enumerate(ev.measurements):
        if m not in known:
            raise bad(f"unknown measurement '{m}'", f"measurements[{i}]", "use any of: " + ", ".join(known))
        if m in ev.measurements[:i]:
            raise bad(f"measurement '{m}' is listed twice", f"measurements[{i}]", "list each measure once")
    scoped = [k for k in SCOPE_KEYS if ev.measurement_settings.get(k)]
    if scoped and not any(m in SCOPED_MEASURES for m in ev.measurements):
        raise bad(f"measurement_settings.{scoped[0]} restricts coverage only; lines, cyclomatic, cognitive and "
                  "dead_code measure the whole repository and would ignore it",
                  f"measurement_settings.{scoped[0]}",
                  "remove it, or select coverage (whose measured package it declares)")
    owners = measure_registry.settings_owners()
    general = measure_registry.general_settings()
    for key, value in ev.measurement_settings.items():
        owner = owners.get(key)
        if key in general:
            value_type, whose = general[key], "docs/metrics.md (shared measurement settings)"
        elif owner is None:
            raise bad(f"unknown measurement setting '{key}'", f"measurement_settings.{key}",
                      "use any of: " + (", ".join(sorted({*owners, *general})) or "(no measurement settings exist)"))
        elif owner.name not in ev.measurements:
            raise bad(f"measurement_settings.{key} belongs to the measure '{owner.name}', which is not selected",
                      f"measurement_settings.{key}", f"add {owner.name} to measurements, or remove this setting")
        else:
            value_type, whose = owner.settings[key], f"the settings of the '{owner.name}' measure in docs/metrics.md"
        try:
            # strict: "yes" or 1 is not a boolean, "3" is not a number
            msgspec.convert(value, value_type, strict=True)
        except msgspec.ValidationError as exc:
            where = str(exc).rpartition(" - at `$")[2].rstrip("`") if " - at `$" in str(exc) else ""
            message = str(exc).partition(" - at ")[0]
            if key == "checks":
                where = measure_registry.field_named(message, where)
            raise bad(f"measurement_settings.{key}: {message}", f"measurement_settings.{key}{where}",
                      f"see {whose}") from None


def _validate_stopping(ev: Evaluation, n_tasks: int, bad: Any) -> None:
    """``comparison.stopping``: bounds that make a decision possible and the sequence bounded."""
    st = ev.stopping
    if st is None:
        return
    at = "comparison.stopping"
    if ev.comparison is not None and not ev.treatments:
        raise bad("sequential stopping compares treatments with vanilla, and the config has no treatment",
                  at, "add a treatment, or remove comparison.stopping")
    if st.min_tasks < 1:
        raise bad(f"{at}.min_tasks must be 1 or more, got {st.min_tasks}", f"{at}.min_tasks",
                  "set min_tasks: 10 (no decision before that many tasks are complete)")
    if st.max_tasks is not None:
        if st.max_tasks < st.min_tasks:
            raise bad(f"{at}.max_tasks ({st.max_tasks}) is below min_tasks ({st.min_tasks})", f"{at}.max_tasks",
                      "set max_tasks >= min_tasks, or null for the whole pool")
        if st.max_tasks > n_tasks:
            raise bad(f"{at}.max_tasks ({st.max_tasks}) is more than the {n_tasks} declared task(s)",
                      f"{at}.max_tasks", f"set max_tasks: {n_tasks} or less, or declare more tasks")
    elif st.min_tasks > n_tasks:
        raise bad(f"{at}.min_tasks ({st.min_tasks}) is more than the {n_tasks} declared task(s)", f"{at}.min_tasks",
                  f"set min_tasks: {n_tasks} or less, or declare more tasks")
    if not (math.isfinite(st.smallest_effect) and 0 < st.smallest_effect <= 1):
        raise bad(f"{at}.smallest_effect must be a pass-rate fraction in (0, 1], got {st.smallest_effect}",
                  f"{at}.smallest_effect", "set e.g. smallest_effect: 0.05 (5 percentage points)")
    if st.token_factor is not None and not (math.isfinite(st.token_factor) and st.token_factor > 0):
        raise bad(f"{at}.token_factor must be a positive number, got {st.token_factor}", f"{at}.token_factor",
                  "set e.g. token_factor: 1.2, or null for no token gate")
    if not (math.isfinite(st.ratio_bound) and st.ratio_bound > 1):
        raise bad(f"{at}.ratio_bound must be a number above 1, got {st.ratio_bound}", f"{at}.ratio_bound",
                  "set ratio_bound: 4 (token ratios beyond 4× or 1/4 count at the bound)")
    if st.token_factor is not None and not 1 / st.ratio_bound < st.token_factor < st.ratio_bound:
        raise bad(f"{at}.token_factor ({st.token_factor}) lies outside the clipped range of ratio_bound "
                  f"({st.ratio_bound}); the gate could never be decided", f"{at}.token_factor",
                  "raise ratio_bound or bring token_factor within it")
    if st.cost_factor is not None:
        if not (math.isfinite(st.cost_factor) and st.cost_factor > 0):
            raise bad(f"{at}.cost_factor must be a positive number, got {st.cost_factor}", f"{at}.cost_factor",
                      "set e.g. cost_factor: 1.0 (no dearer than vanilla per attempt), or null for no cost gate")
        if not 1 / st.ratio_bound < st.cost_factor < st.ratio_bound:
            raise bad(f"{at}.cost_factor ({st.cost_factor}) lies outside the clipped range of ratio_bound "
                      f"({st.ratio_bound}); the gate could never be decided", f"{at}.cost_factor",
                      "raise ratio_bound or bring cost_factor within it")


_REGISTRY_NAME = re.compile(r"^[A-Za-z0-9._+-]+(/[A-Za-z0-9._+-]+)*$")


def _check_dataset(ev: Evaluation, bad: Callable[[str, str, str], ConfigError]) -> None:
    """``tasks.dataset`` (a Harbor registry dataset): a name, a version and registry task
    names whose run ids (the last ``/`` part) are usable, distinct folder names."""
    t = ev.tasks
    if t.dataset is None:
        for key in ("version", "registry"):
            if getattr(t, key) is not None:
                raise bad(f"tasks.{key} goes with tasks.dataset", f"tasks.{key}",
                          f"remove tasks.{key}, or name the dataset with tasks.dataset")
        return
    if not isinstance(t.dataset, str):
        for key in ("ids", "version", "registry"):
            if getattr(t, key) is not None:
                raise bad(f"tasks.{key} is set twice: beside the tasks.dataset mapping, which holds its own",
                          f"tasks.{key}", f"write it once, as tasks.dataset.{key} or with dataset: <name>")
    ds = t.dataset_source()
    assert ds is not None
    field = t.dataset_field
    if not _REGISTRY_NAME.match(ds.name):
        raise bad(f"dataset name {ds.name!r} is not a registry name", field("name"),
                  "write the dataset's registry name, e.g. terminal-bench")
    from ..tasks import package_hub_refusal  # the registry code, only for a dataset source

    hub = package_hub_refusal(ds.name) if ds.registry is None else None
    if hub is not None:  # Harbor's own index never holds an org/name: that is a package-hub name
        raise bad(hub[0], field("name"), hub[1])
    if not ds.version or ds.version != ds.version.strip() or _has_control(ds.version):
        raise bad("a dataset needs its version", field("version"),
                  "write the version to run (tasks pick --dataset <name> prints the block with it)")
    if not ds.ids:
        raise bad("a dataset source needs the task names to run", field("ids"),
                  "list the registry task names (tasks pick --dataset <name> prints them)")
    if ds.registry is not None and (not ds.registry.strip() or _has_control(ds.registry)):
        raise bad("the registry location is empty", field("registry"),
                  "give a registry.json path, a file:// or https:// address, or remove it for Harbor's own index")
    if ds.registry is not None and "://" in ds.registry and not ds.registry.startswith(("https://", "file://")):
        raise bad(f"registry address {ds.registry!r} is neither https:// nor file://", field("registry"),
                  "give a registry.json path, a file:// or https:// address")
    seen: dict[str, int] = {}
    for i, name in enumerate(ds.ids):
        tid = name.rsplit("/", 1)[-1]
        if not _REGISTRY_NAME.match(name) or tid in (".", "..") or len(tid.encode()) > MAX_NAME_BYTES:
            raise bad(f"task name {name[:60]!r} is not a registry task name", f"{field('ids')}[{i}]",
                      "write the task's name as the registry lists it")
        if ID_SEPARATOR in tid:
            raise bad(f"task {name!r} has the run id {tid!r}, which contains '__' (it separates task, arm and "
                      "repeat in attempt ids)", f"{field('ids')}[{i}]", "this task cannot run under PluginBench; "
                      "pick another")
        if tid in seen:
            raise bad(f"task {name!r} has the run id {tid!r} of {field('ids')}[{seen[tid]}]", f"{field('ids')}[{i}]",
                      "list each task once; two tasks whose names end alike cannot run together")
        seen[tid] = i


def validate(ev: Evaluation, path: Path) -> None:
    """Cross-field rules msgspec cannot express. Raises :class:`ConfigError`."""
    f = str(path)

    def bad(message: str, field: str, fix: str) -> ConfigError:
        return ConfigError(message, file=f, field=field, fix=fix)

    from ..tasks import check_allowed_names

    check_allowed_names(ev.verifier_env_from_host, path)
    if ev.runner.harnesses is not None:  # a cross-agent evaluation: each harness's expansion by these rules
        check_entries(ev, path, bad, validate)
        return
    if ev.name is not None and _has_control(ev.name):
        raise bad(f"name {ev.name!r} contains a control character (an escape sequence would reach the terminal)",
                  "name", "use printable characters only")
    if ev.seed < 0:
        raise bad(f"seed must be 0 or more, got {ev.seed}", "seed", "set seed: 0 (any non-negative integer)")
    if ev.seed >= 2**63:  # events, the ledger and results.json keep it as a 64-bit integer
        raise bad(f"seed must be below 2**63, got {ev.seed}", "seed", "use a smaller non-negative integer")
    env = ev.environment
    if env.container_cpus is not None and not (math.isfinite(env.container_cpus) and env.container_cpus > 0):
        raise bad(f"environment.container_cpus must be a positive finite number, got {env.container_cpus}",
                  "environment.container_cpus", "set e.g. container_cpus: 2, or remove it")
    if env.container_memory_mb is not None and env.container_memory_mb < 1:
        raise bad(f"environment.container_memory_mb must be 1 or more, got {env.container_memory_mb}",
                  "environment.container_memory_mb", "set e.g. container_memory_mb: 4096, or remove it")
    sources = [k for k in ("source", "urls", "dataset") if getattr(ev.tasks, k) is not None]
    if len(sources) != 1:
        raise bad(
            "choose exactly one task source",
            "tasks",
            "set tasks.source with tasks.ids (local), tasks.urls, or tasks.dataset",
        )
    if ev.tasks.source is not None:
        if not ev.tasks.ids:
            raise bad("a local task source needs ids", "tasks.ids", "list the task folder names to run")
        if len(set(ev.tasks.ids)) != len(ev.tasks.ids):
            raise bad("a task id is listed twice", "tasks.ids", "list each task once")
        for i, tid in enumerate(ev.tasks.ids):
            if _has_control(tid) or len(tid.encode()) > MAX_NAME_BYTES:
                raise bad(
                    f"task id {tid[:40]!r}{'…' if len(tid) > 40 else ''} is not a usable folder name "
                    "(a control character, or longer than 255 bytes)",
                    f"tasks.ids[{i}]", "write the name of one subfolder of tasks.source",
                )
            if ID_SEPARATOR in tid:
                raise bad(
                    f"task id {tid!r} contains '__', which separates task, arm and repeat in attempt ids",
                    f"tasks.ids[{i}]", "rename the task folder without '__' (a single '_' or '-' is fine)",
                )
            if tid in ("", ".", "..") or tid != tid.strip() or any(c in tid for c in "/\\\0") or tid.startswith("-"):
                raise bad(
                    f"task id {tid!r} is not one folder name",
                    f"tasks.ids[{i}]",
                    "write the name of one subfolder of tasks.source (no '/', '.', '..' or surrounding spaces)",
                )
    if ev.tasks.urls is not None:
        if ev.tasks.ids is not None:
            raise bad("tasks.ids goes with tasks.source; with tasks.urls each link names its task", "tasks.ids",
                      "remove tasks.ids (the task id is the last folder of each link)")
        if not ev.tasks.urls:
            raise bad("tasks.urls is empty", "tasks.urls", "link at least one task folder")
        # the link parser loads only for a config that links its tasks
        from ..tasks import parse_task_url

        seen: dict[str, int] = {}
        for i, url in enumerate(ev.tasks.urls):
            try:
                link = parse_task_url(url)
            except BadTaskUrl as exc:
                raise bad(str(exc), f"tasks.urls[{i}]",
                          "write https://github.com/<owner>/<repo>/tree/<commit|tag|branch>/<path>") from None
            if link.task_id in seen:
                raise bad(f"task id '{link.task_id}' is also the last folder of tasks.urls[{seen[link.task_id]}]",
                          f"tasks.urls[{i}]", "link each task once; two tasks need different folder names")
            seen[link.task_id] = i
    _check_dataset(ev, bad)
    if not 1 <= ev.jobs <= 4:
        raise bad(f"jobs must be 1 to 4, got {ev.jobs}", "jobs", "set jobs to 1, 2, 3 or 4 (default 2)")
    if not 1 <= ev.repeats <= MAX_REPEATS:
        raise bad(f"repeats must be 1 to {MAX_REPEATS}, got {ev.repeats}", "repeats",
                  f"set repeats: 3 (at most {MAX_REPEATS}; more repeats of the same task rarely change a verdict)")
    if not 1 <= ev.timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise bad(f"timeout_seconds must be 1 to {MAX_TIMEOUT_SECONDS} (24 h), got {ev.timeout_seconds}",
                  "timeout_seconds", "set timeout_seconds: 1800")
    n_tasks = len(ev.tasks.task_ids())
    slots = n_tasks * (1 + len(ev.treatments)) * ev.repeats
    if slots > MAX_CODING_ATTEMPTS:
        raise bad(
            f"{n_tasks} tasks × {1 + len(ev.treatments)} arms × {ev.repeats} repeats = {slots} coding attempts, "
            f"over the limit of {MAX_CODING_ATTEMPTS}",
            "repeats",
            "split the evaluation into several runs, or use fewer tasks, treatments or repeats",
        )
    for name in ev.treatments:
        if name in ("vanilla", "baseline"):
            raise bad(
                f"'{name}' is the implicit no-guidance arm",
                f"treatments.{name}",
                "rename the treatment; vanilla is always included",
            )
        if not _ARM_NAME.match(name) or ID_SEPARATOR in name:
            raise bad(
                f"treatment name {name!r} is not allowed",
                f"treatments.{name!r}" if _has_control(name) else f"treatments.{name}",
                "use lowercase letters, digits, '.', '_' and '-' (no '__': it separates task, arm and repeat in attempt ids)",
            )
        t = ev.treatments[name]
        for kind, listed in (("guidance", t.guidance), ("skills", t.skills), ("plugins", t.plugins)):
            once: set[str] = set()
            for i, item in enumerate(listed):
                key = os.path.normpath(item)
                if key in once:
                    raise bad(f"treatment '{name}' lists {item} twice under {kind}", f"treatments.{name}.{kind}[{i}]",
                              "list each file or folder once (it would be delivered twice)")
                once.add(key)
        if t.generate is not None:
            _validate_generate(ev, name, bad, f)
        elif not (t.guidance or t.skills or t.plugins) and t.task_owned == "keep":
            raise bad(
                f"treatment '{name}' declares nothing",
                f"treatments.{name}",
                "give it guidance, skills or plugins, generate, or task_owned: remove; or remove it",
            )
    r = ev.runner
    harness = harness_class(r.harness, file=f)  # an unknown name lists the registered ones
    if r.reasoning is not None and r.reasoning not in REASONING:
        raise bad(f"unknown reasoning '{r.reasoning}'", "runner.reasoning", "use one of: " + ", ".join(REASONING))
    if harness.real:
        if not r.model:
            raise bad("a real harness needs an exact model id", "runner.model", "set runner.model")
        if r.model != r.model.strip() or any(c.isspace() for c in r.model):
            raise bad(f"runner.model {r.model!r} contains spaces", "runner.model",
                      "write the exact model id without spaces or quotes around spaces")
        if r.cli_version is not None and not _EXACT_VERSION.match(r.cli_version):
            raise bad(
                f"cli_version '{r.cli_version}' is not an exact version",
                "runner.cli_version",
                'use an exact version such as "2.1.328"; ranges and tags are refused',
            )
    elif r.cli_version is not None and harness_class(r.harness).cli is None:
        raise bad(f"the {r.harness} harness runs no agent CLI, so runner.cli_version {r.cli_version!r} pins nothing",
                  "runner.cli_version", "remove runner.cli_version (or set it to null)")
    problem = harness.spec_problem(r.model, r.reasoning)
    if problem is not None:
        raise bad(problem.message, f"runner.{problem.field}", problem.fix)
    harness.validate_config(ev, path)
    if ev.capabilities.max_threads is not None and not 1 <= ev.capabilities.max_threads <= 4:
        raise bad("max_threads must be 1 to 4", "capabilities.max_threads", "set it to 4 or less")
    if ev.capabilities.max_depth is not None and ev.capabilities.max_depth < 1:
        raise bad("max_depth must be 1 or more", "capabilities.max_depth", "set it to 1 (the default) or more")
    _validate_measurements(ev, bad)
    validate_settings(settings_of(ev.measurement_settings), bad)
    _validate_reviewer(ev, bad)
    for i, item in enumerate(ev.measurement_settings.get("checks") or []):
        if isinstance(item, dict) and item.get("kind") == "llm":
            problem = llm_check_problem(ev)
            if problem is not None:
                raise bad(problem[0], f"measurement_settings.checks[{i}].kind", problem[1])
    if r.max_tokens_per_attempt is not None and r.max_tokens_per_attempt < 1:
        raise bad(f"max_tokens_per_attempt must be 1 or more, got {r.max_tokens_per_attempt}",
                  "runner.max_tokens_per_attempt", "set the most tokens one attempt may use, e.g. 2000000, or remove it")
    if ev.cost_ceiling is not None:
        if not (ev.cost_ceiling > 0 and math.isfinite(ev.cost_ceiling)):
            raise bad(f"cost_ceiling must be a positive number of dollars, got {ev.cost_ceiling}", "cost_ceiling",
                      "set e.g. cost_ceiling: 50, or remove it")
        if ev.prices is None:
            raise bad("cost_ceiling needs a price table", "prices",
                      "set prices: prices.json (a dated table; see docs/results.md#prices), or remove cost_ceiling")
    _validate_stopping(ev, n_tasks, bad)
    # environment.backend and the backend's own rules are checked through the backend
    # registry (pluginbench.environments.check_backend_config), which sits above config.


def _validate_generate(ev: Evaluation, name: str, bad: Any, file: str) -> None:
    """A generated-guidance arm's rules: nothing declared beside it, a harness that can write the
    file (the runner's, in this build), an exact model for a real one, a usable prompt."""
    t = ev.treatments[name]
    g = t.generate
    assert g is not None
    field = f"treatments.{name}.generate"
    for kind, listed in (("guidance", t.guidance), ("skills", t.skills), ("plugins", t.plugins)):
        if listed:
            raise bad(f"treatment '{name}' both generates its guidance and declares {kind}",
                      f"treatments.{name}.{kind}",
                      f"a generated arm's only guidance is the file the agent writes: remove {kind}, or make "
                      "another treatment for the declared files")
    harness_name = g.harness if g.harness is not None else ev.runner.harness
    cls = harness_class(harness_name, file=file,
                        field=f"{field}.harness" if g.harness is not None else "runner.harness")
    if harness_name != ev.runner.harness:
        raise bad(f"generate.harness '{harness_name}' is not the runner's harness '{ev.runner.harness}'",
                  f"{field}.harness",
                  "generate with the runner's harness (the generating session uses the run's pinned CLI, sandbox "
                  "and probe): set it to the runner's harness or leave it out")
    if getattr(cls, "instruction_file", None) is None:
        raise bad(f"the {harness_name} harness cannot write an instruction file (it runs no agent)",
                  f"{field}.harness", "generate with a real agent harness such as claude or codex")
    if g.reasoning is not None and g.reasoning not in REASONING:
        raise bad(f"unknown reasoning '{g.reasoning}'", f"{field}.reasoning", "use one of: " + ", ".join(REASONING))
    if cls.real:
        if not g.model:
            raise bad("a generated arm on a real harness needs the generating session's exact model id",
                      f"{field}.model", f"set {field}.model (e.g. the runner's model, {ev.runner.model})")
        if g.model != g.model.strip() or any(c.isspace() for c in g.model):
            raise bad(f"generate.model {g.model!r} contains spaces", f"{field}.model",
                      "write the exact model id without spaces")
    problem = cls.spec_problem(g.model, g.effort(ev.runner.reasoning))
    if problem is not None:
        raise bad(problem.message, f"{field}.{problem.field}", problem.fix)
    if g.instruction is not None and not g.instruction.strip():
        raise bad("generate.instruction is empty", f"{field}.instruction",
                  "write the prompt, or leave instruction out for the built-in one")
    if g.instruction is not None and _has_control(g.instruction.replace("\n", "").replace("\t", "")):
        raise bad("generate.instruction holds a control character", f"{field}.instruction",
                  "write the prompt as plain text (newlines and tabs are fine)")


def load(path: str | Path) -> LoadedConfig:
    """Read, parse and validate a config file; paths inside stay relative to it."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(
            "expected a config file, got a folder",
            file=str(p),
            fix="pass evaluation.yaml, or a run directory to `pluginbench run` to resume",
        )
    if p.suffix not in (".yaml", ".yml", ".json"):
        raise ConfigError(
            f"unsupported config extension '{p.suffix}'", file=str(p), fix="use .yaml, .yml or .json"
        )
    ev = parse_evaluation(read_raw(p), p)
    validate(ev, p)
    return LoadedConfig(ev, p.resolve())


def to_builtins(ev: Evaluation) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(ev)
    return out


def frozen_builtins(ev: Evaluation) -> dict[str, Any]:
    """The settings a run freezes into evaluation.json: absent optional blocks are left out
    (``comparison``, ``grading``, ``runner.harnesses``, a treatment's ``generate``, a false
    ``environment.allow_host_root``), so a config without them freezes as it always did."""
    data = to_builtins(ev)
    if data.get("comparison") is None:
        data.pop("comparison", None)
    if data.get("grading") is None:
        data.pop("grading", None)
    if data["runner"].get("harnesses") is None:
        data["runner"].pop("harnesses", None)
    if not data["environment"].get("allow_host_root"):
        data["environment"].pop("allow_host_root", None)
    for treatment in (data.get("treatments") or {}).values():
        if isinstance(treatment, dict) and treatment.get("generate") is None:
            treatment.pop("generate", None)
    return data
