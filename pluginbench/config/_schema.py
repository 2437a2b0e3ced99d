"""The evaluation config schema (``evaluation.yaml`` / ``.json``), as frozen value types.

Strict: unknown keys are refused (``forbid_unknown_fields``), types are checked, and
every cross-field rule lives in :func:`pluginbench.config.validate`. Paths are stored as
written; :func:`pluginbench.config.load` resolves them against the config's folder.
See ``docs/configuration.md`` for every field.
"""

from typing import Annotated, Any, Literal

import msgspec

from ..measures import default_selection

REASONING = ("low", "medium", "high", "xhigh", "max", "minimal", "none")


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class DatasetSource(_Strict, frozen=True):
    """A Harbor registry dataset at a version, and the task names to run from it."""

    name: str
    version: str
    ids: list[str]
    #: the Harbor registry index (a registry.json path, file:// or https:// address);
    #: null is Harbor's own index
    registry: str | None = None


class TasksConfig(_Strict, frozen=True):
    """Exactly one task source: a local folder with ids, task-folder urls, or a Harbor
    registry dataset (``dataset: <name>`` with ``version`` and ``ids``, or the same as one
    mapping ``dataset: {name, version, ids, registry}``)."""

    source: str | None = None
    #: local folder names (with ``source``) or registry task names (with ``dataset``)
    ids: list[str] | None = None
    #: Git task-folder links, ``<repo>/tree/<commit|tag|branch>/<path>``, pinned to the commit
    #: at freeze time (see docs/tasks.md, "Remote task folders").
    urls: list[str] | None = None
    #: a Harbor registry dataset name (see docs/tasks.md, "Harbor registry datasets")
    dataset: str | DatasetSource | None = None
    #: the dataset version (with ``dataset: <name>``)
    version: str | None = None
    #: the Harbor registry index (with ``dataset: <name>``); null is Harbor's own index
    registry: str | None = None

    def dataset_source(self) -> DatasetSource | None:
        """The dataset in one shape, whichever way the config wrote it."""
        if isinstance(self.dataset, DatasetSource):
            return self.dataset
        if isinstance(self.dataset, str):
            return DatasetSource(name=self.dataset, version=self.version or "", ids=list(self.ids or []),
                                 registry=self.registry)
        return None

    def dataset_field(self, part: str) -> str:
        """The config field of a dataset part (``name``, ``version``, ``ids``, ``registry``)."""
        if isinstance(self.dataset, DatasetSource):
            return f"tasks.dataset.{part}"
        return "tasks.dataset" if part == "name" else f"tasks.{part}"

    def task_ids(self) -> list[str]:
        """The run's task ids in config order: ``ids``, the last folder of each link, or the
        last ``/`` part of each dataset task name."""
        if self.urls is not None:
            return [u.rstrip("/").rsplit("/", 1)[-1] for u in self.urls]
        ds = self.dataset_source()
        if ds is not None:
            return [n.rsplit("/", 1)[-1] for n in ds.ids]
        return list(self.ids or [])

    @property
    def remote(self) -> bool:
        """Whether the tasks are fetched (links or a dataset) and pinned at freeze time."""
        return self.urls is not None or self.dataset is not None


#: The built-in prompt of a generated-guidance arm (``generate.instruction`` null): PluginBench's own
#: words, in the spirit of Claude Code's ``/init``. ``{file}`` is replaced by the instruction file's
#: name for the coding harness (``CLAUDE.md``, ``AGENTS.md``...).
DEFAULT_GENERATE_INSTRUCTION = (
    "Study this repository and write a file named {file} in its root folder. Future coding agents "
    "will read {file} before they work here, so write what they need and cannot guess quickly:\n"
    "1. The commands to install dependencies, build, lint and run the tests (and how to run a "
    "single test).\n"
    "2. The high-level architecture: the parts of the code, how they fit together, and where "
    "things live, as far as it takes reading several files to understand.\n"
    "3. The conventions a change here must follow (style, error handling, tests that go with a "
    "change).\n"
    "Be concise and specific to this repository; leave out generic development advice and do "
    "not list every file. If the repository already has instruction files, keep what is useful "
    "from them. Change no other file: only {file} is kept."
)


class Generate(_Strict, frozen=True):
    """A generated-guidance arm (AGENTbench's and SkillsBench's "LLM-generated" condition): per
    task, before coding, the agent writes the instruction file for the task's starting
    repository in its own sandbox; that file, frozen and hash-bound, is the arm's guidance on
    that task (docs/configuration.md#generated-guidance-generate)."""

    harness: Annotated[str | None, msgspec.Meta(description=(
        "The harness whose agent writes the file; null is `runner.harness`, the only one this build runs (the "
        "generating session uses the run's pinned CLI, sandbox backend and probe)."))] = None
    model: Annotated[str | None, msgspec.Meta(description=(
        "The generating session's exact model id: required for a real harness (claude, codex, qwen, opencode, gemini); it may differ "
        "from `runner.model`. Its own row in the price table prices its usage."))] = None
    reasoning: Annotated[str | None, msgspec.Meta(description=(
        "The generating session's effort; null is `runner.reasoning`."))] = None
    instruction: Annotated[str | None, msgspec.Meta(description=(
        "The prompt; null is PluginBench's built-in one (`pluginbench.config.DEFAULT_GENERATE_INSTRUCTION`, in the "
        "spirit of Claude Code's `/init`). `{file}` is replaced by the instruction file's name."))] = None
    kind: Annotated[Literal["instruction_file"], msgspec.Meta(description=(
        "What is generated: `instruction_file`, the file the coding harness reads from the repository root "
        "(CLAUDE.md for claude and simulated, AGENTS.md for codex and opencode, QWEN.md for qwen, GEMINI.md for gemini). Skills are not generated "
        "in this build."))] = "instruction_file"

    def effort(self, runner_reasoning: str | None) -> str | None:
        """The generating session's effort: ``reasoning``, else the runner's."""
        return self.reasoning if self.reasoning is not None else runner_reasoning

    def prompt(self, file: str) -> str:
        """The generating session's prompt, with ``{file}`` replaced by ``file``."""
        return (self.instruction if self.instruction is not None else DEFAULT_GENERATE_INSTRUCTION).replace(
            "{file}", file)


class Treatment(_Strict, frozen=True):
    """One named guidance package: instruction files, skill folders, plugin folders; or a
    generated instruction file (``generate``)."""

    guidance: list[str] = []
    skills: list[str] = []
    plugins: list[str] = []
    #: ``remove``: this arm starts without the repository's own instruction files and skills
    #: (AGENTS.md, CLAUDE.md, .claude/, .agents/, at any depth); ``keep`` (default) leaves
    #: them, as on vanilla
    task_owned: Literal["keep", "remove"] = "keep"
    #: the agent writes this arm's instruction file per task before coding (never with
    #: guidance, skills or plugins); null: the files declared above
    generate: Generate | None = None


class HarnessEntry(_Strict, frozen=True):
    """One harness of a cross-agent evaluation (``runner.harnesses``): the same tasks and
    treatments run as their own arm set under this harness, compared within it only."""

    harness: Annotated[str, msgspec.Meta(description=(
        "A registered harness (`claude`, `codex`, `qwen`, `opencode`, `gemini`, `simulated`, `nop`, `oracle`), each at most once; "
        "its run folder is named after it. Its own rules apply, as for `runner.harness`."))]
    model: Annotated[str | None, msgspec.Meta(description=(
        "The exact model id, as `runner.model` (required for a real harness)."))] = None
    reasoning: Annotated[str | None, msgspec.Meta(description=(
        "The reasoning effort, as `runner.reasoning` (required for `claude`)."))] = None
    cli_version: Annotated[str | None, msgspec.Meta(description=(
        "An exact CLI version to install and run, as `runner.cli_version`; null records the host CLI's."))] = None
    max_tokens_per_attempt: Annotated[int | None, msgspec.Meta(description=(
        "This harness's worst-case tokens per attempt for the cost estimate; null takes "
        "`runner.max_tokens_per_attempt`."))] = None


class RunnerConfig(_Strict, frozen=True):
    """The coding agent, fixed across arms."""

    #: a registered harness (``pluginbench.harness_registry``); its own rules apply
    harness: str = "simulated"
    model: str | None = None
    reasoning: str | None = None
    cli_version: str | None = None
    #: Reuse and publish vanilla attempts through the shared cache (see docs/vanilla-cache.md).
    #: Not part of any key: turning it off only codes vanilla afresh.
    vanilla_cache: bool = True
    #: Probe mode: a scenario file for PluginBench's loopback model server. The run is
    #: labelled a probe run everywhere, and real credentials are refused.
    probe: str | None = None
    #: The most tokens (input, cached input and output together) one coding attempt is assumed
    #: to use. Only the cost estimate and ``cost_ceiling`` read it; the agent is not limited.
    max_tokens_per_attempt: int | None = None
    #: A cross-agent evaluation: two or more harnesses, each with its own model and settings,
    #: instead of ``harness``/``model``/``reasoning``/``cli_version``. Each runs vanilla and every
    #: treatment as its own run; arms are compared within a harness only, never pooled
    #: (docs/cross-agent.md).
    harnesses: list[HarnessEntry] | None = None


class ReviewerConfig(_Strict, frozen=True):
    """The independent reviewer: a registered harness that may review (the real CLIs claude
    and codex, the host's own version) with an exact model and effort, a separate budget and
    a fixed criteria file bound by SHA-256; ``simulated`` is a deterministic stand-in for
    pipeline tests, labelled as such."""

    harness: str
    model: str | None = None
    reasoning: str | None = None
    #: the review budget in seconds; null inherits ``timeout_seconds``
    timeout_seconds: int | None = None
    #: the fixed review criteria (Markdown); null uses PluginBench's built-in criteria
    criteria: str | None = None
    #: must stay null: reviews run the host CLI and record its version
    cli_version: str | None = None


class Capabilities(_Strict, frozen=True):
    """The same capability policy for vanilla and every treatment."""

    subagents: bool = True
    max_threads: int | None = None
    max_depth: int | None = None


class EnvironmentConfig(_Strict, frozen=True):
    """Where attempts run. ``backend`` names a registered execution backend (checked
    against the backend registry, ``pluginbench.environments``); ``isolation`` and
    ``allow_unisolated`` apply to the local backend, the ``container_*`` limits and
    ``allow_host_root`` to docker (and ray's docker sandboxes);
    ``settings`` is the selected backend's own block, decoded by that backend's type."""

    backend: str = "local"
    isolation: Literal["auto", "bubblewrap", "none"] = "auto"
    allow_unisolated: bool = False
    #: docker: accept an engine whose container root is the host's root (no user-namespace
    #: remapping); refused by default. Recorded in the report's comparison identity.
    allow_host_root: bool = False
    container_cpus: float | None = None
    container_memory_mb: int | None = None
    #: the selected backend's own settings (a backend without settings refuses any)
    settings: dict[str, Any] = {}


class StatisticsConfig(_Strict, frozen=True):
    """How the report decides: one confidence level for every interval on the page, and the
    power the planning numbers aim at (docs/configuration.md#statistics)."""

    #: Two-sided level of every interval shown; each better/worse verdict is the one-sided sign-flip test at 0 at (1 − level) / 2.
    confidence_level: Annotated[float, msgspec.Meta(gt=0.5, lt=1.0)] = 0.90
    #: The power of "tasks needed" and the minimum detectable effect.
    power: Annotated[float, msgspec.Meta(gt=0.5, lt=1.0)] = 0.80
    #: A verdict says "no difference larger than X" only when the whole interval lies within ± this (pass-rate fraction).
    equivalence_margin: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = 0.10


class StoppingConfig(_Strict, frozen=True):
    """Sequential evaluation (docs/configuration.md#stopping): tasks in a seeded random order,
    an anytime-valid confidence sequence per gate after each complete task, and a stop as soon
    as every gate is decided."""

    #: No decision before this many tasks are complete (every arm × repeat of each).
    min_tasks: int = 10
    #: At most this many tasks of the pool are planned (null: the whole pool).
    max_tasks: int | None = None
    #: The smallest pass-rate gain worth having (fraction, e.g. 0.05 = 5 pp): futility once the sequence excludes it.
    smallest_effect: float = 0.05
    #: A token gate as well: the treatment's token ratio must be credibly below this factor (null: no token gate).
    token_factor: float | None = None
    #: Per-task token (and dollar) ratios are clipped to [1/ratio_bound, ratio_bound] so the sequence is bounded.
    ratio_bound: float = 4.0
    #: A cost gate as well: the treatment's dollars-per-attempt ratio must be credibly below this factor (null: no
    #: cost gate). Priced with the run's price row, frozen into run.created at creation.
    cost_factor: float | None = None


class ComparisonConfig(_Strict, frozen=True):
    """How the arms are compared while the run goes (docs/configuration.md#stopping)."""

    #: null (the default): a fixed-size run of every declared task.
    stopping: StoppingConfig | None = None


class GradingConfig(_Strict, frozen=True):
    """How attempts are graded (docs/configuration.md#grading)."""

    verifier_env_from_host: Annotated[list[str], msgspec.Meta(description=(
        "Host environment variables a task's `[verifier.env]` (and `[solution.env]`) may read with a whole value "
        "`${NAME}` or `${NAME:-default}`. A reference to any other name is refused at `check`/`run` (exit 2, "
        "naming `verifier.env.<KEY>` or `solution.env.<KEY>` in task.toml), and so is an allowed name the host "
        "does not set (without a default). The values reach `tests/test.sh` (and the oracle's `solve.sh`) only, "
        "never the agent: the run records each variable's name and that it came from the host, never its value, "
        "and the grading and oracle output is redacted of it. `[environment.env]` may read no host variable."))] = []


class Evaluation(_Strict, frozen=True):
    """A whole evaluation: tasks × (vanilla + treatments) × repeats, everything else fixed."""

    tasks: TasksConfig
    name: str | None = None
    treatments: dict[str, Treatment] = {}
    runner: RunnerConfig = RunnerConfig()
    capabilities: Capabilities = Capabilities()
    repeats: int = 3
    jobs: int = 2
    seed: int = 0
    timeout_seconds: int = 1800
    environment: EnvironmentConfig = EnvironmentConfig()
    reviewer: ReviewerConfig | None = None
    #: Registered measure names (``pluginbench.measures``); default: every measure registered as default.
    measurements: list[str] = msgspec.field(default_factory=default_selection)
    #: Each key is owned by a registered measure (``MeasureSpec.settings``) and decoded with
    #: its type; validation refuses an unknown key or one whose measure is not selected.
    measurement_settings: dict[str, Any] = {}
    #: A dated price table (prices.json), copied into the run folder at creation.
    prices: str | None = None
    #: Dollars: no attempt starts that could take the run's spend over this (see docs/configuration.md#cost).
    cost_ceiling: float | None = None
    #: The report's confidence level and planning power.
    statistics: StatisticsConfig = StatisticsConfig()
    #: Sequential stopping (off when absent); left out of the frozen evaluation.json when absent.
    comparison: ComparisonConfig | None = None
    #: Grading settings (absent: no host variable reaches a verifier); left out of the frozen
    #: evaluation.json when absent.
    grading: GradingConfig | None = None

    @property
    def stopping(self) -> StoppingConfig | None:
        """The sequential-stopping settings, or None for a fixed-size run."""
        return self.comparison.stopping if self.comparison is not None else None

    @property
    def verifier_env_from_host(self) -> tuple[str, ...]:
        """The host variables a task's ``[verifier.env]`` may read (``grading.verifier_env_from_host``)."""
        return tuple(self.grading.verifier_env_from_host) if self.grading is not None else ()
