"""One exception tree for everything PluginBench raises on purpose.

Every error a user can cause derives from :class:`PluginBenchError`. The CLI maps
:class:`InputError` (and its children) to exit code 2 with a one-screen message that
names the file, the field and the fix; nothing is started and nothing is written outside
the run directory when one is raised before a run begins.
"""

from __future__ import annotations

from collections.abc import Sequence


class PluginBenchError(Exception):
    """Base of every error PluginBench raises deliberately."""

    exit_code = 1


class InputError(PluginBenchError):
    """Bad input: a config, task, treatment, or run directory the user must fix.

    ``file`` is the offending path (or ``None``), ``field`` the dotted field inside it
    (or ``None``), ``fix`` a short instruction saying what to do.
    """

    exit_code = 2

    def __init__(
        self, message: str, *, file: str | None = None, field: str | None = None, fix: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.fix = fix

    def render(self) -> str:
        lines = [f"error: {self.message}"]
        if self.file:
            lines.append(f"  file:  {self.file}")
        if self.field:
            lines.append(f"  field: {self.field}")
        if self.fix:
            lines.append(f"  fix:   {self.fix}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class ConfigError(InputError):
    """The evaluation config is missing, malformed, or invalid."""


class TaskError(InputError):
    """A task folder is missing, malformed, or unsafe (symlinks, escapes, ...)."""


class TreatmentError(InputError):
    """A treatment package breaks an admission rule."""


class RunDirError(InputError):
    """A run directory cannot be used: exists, locked, moved, or not a run."""


class OutputExistsError(RunDirError):
    """The new run's output folder already exists (or appeared while it was being made)."""


class LockHeldError(RunDirError):
    """Another live process owns ``run.lock``."""


class CorruptLogError(InputError):
    """``events.jsonl`` has a sequence gap, a duplicate, or an undecodable line mid-file."""


class EnvironmentFailure(PluginBenchError):
    """A sandbox could not be created, used, or cleaned up."""


class HostRootEngine(EnvironmentFailure):
    """The Docker engine maps container root to the host's root (no user-namespace
    remapping) and ``environment.allow_host_root`` does not accept it."""


class WorkerLost(EnvironmentFailure):
    """The cluster node that ran a sandbox died (its attempt is interrupted, not failed)."""


class CommandStartFailed(EnvironmentFailure):
    """A sandbox's runtime failed to start a command for a passing reason (its init
    process died before the command ran); nothing ran, so the start may be tried again."""


class ResourceLimitHit(EnvironmentFailure):
    """A sandbox's limit refused an operation (e.g. an export over ``storage_mb``): the
    attempt's execution outcome is ``resource_limit``."""
class LaunchRefused(PluginBenchError):
    """The Supervisor did not record ``agent.launched`` (the run is stopping): the agent
    must not start, and its attempt goes back to pending."""


class SandboxLost(WorkerLost):
    """The sandbox ended under the agent from outside the run (``docker kill``, the
    engine's OOM killer): an environment failure, so its attempt is discarded and
    replaced, never scored as the agent's outcome."""


class MeasurementError(PluginBenchError):
    """A collector's input or output breaks its rules (a malformed coverage report, a
    report that contradicts itself); the measure becomes unknown with this reason."""


class ProviderStop(PluginBenchError):
    """The model provider or account stopped the session (limit, auth, 5xx).

    Not an outcome of the agent: the attempt stays interrupted and the run stops.
    """

    def __init__(self, attempt_id: str, cause: str) -> None:
        super().__init__(f"attempt {attempt_id}: provider stop: {cause}")
        self.attempt_id = attempt_id
        self.cause = cause


class CacheError(InputError):
    """The cache root cannot be used as it is: a symlink inside it, or an output folder
    that overlaps it."""


class ReadinessFailure(PluginBenchError):
    """A task's oracle did not pass or its nop did not fail."""


class DiscoveryMismatch(PluginBenchError):
    """A harness's discovery found something other than exactly the declared treatment
    (Claude Code or Codex); the attempt stops before coding.

    ``subject`` says whose (``arm <arm>`` or ``attempt <id>``), ``problems`` what differed.
    """

    def __init__(self, subject: str, problems: Sequence[str]) -> None:
        super().__init__(f"{subject}: discovery mismatch, attempt stopped before coding: " + "; ".join(problems))
        self.subject = subject
        self.problems = tuple(problems)


class CodexSetupError(PluginBenchError):
    """A no-model Codex setup command (plugin install, discovery) failed inside the sandbox."""


class CodexLoginError(CodexSetupError):
    """``codex login status`` in the sandbox says the delivered credential is not usable."""


class PacketError(PluginBenchError):
    """A review packet could not be built, or no longer matches its binding."""


class MalformedResponse(PluginBenchError, ValueError):
    """A reviewer's final message holds no valid review JSON (the message says what is wrong)."""


class VerdictError(PluginBenchError, ValueError):
    """A judge's final message holds no valid verdict; the call leaves no verdict."""


class BadTaskUrl(PluginBenchError, ValueError):
    """A task link PluginBench cannot read; the message says what is wrong and how to write it."""


class GitFailed(PluginBenchError):
    """A git command behind a task link failed or timed out (the message is git's stderr)."""


class ClipboardError(PluginBenchError):
    """``tasks pick`` printed the block but could not copy it."""


class RegistryError(PluginBenchError, ValueError):
    """A registration that would make two entries of a registry ambiguous (a programming error)."""


class ScenarioError(InputError):
    """A probe scenario file is missing, malformed, or invalid."""


class CompareRefused(InputError):
    """Two runs whose saved comparison identities disagree on a compared field."""


class UnsafeTree(InputError):
    """A tree holds a symlink, hardlink, special file or escaping name."""


class AnalyzerFailed(PluginBenchError):
    """A code-quality analyzer did not produce a report (its reason is the message)."""


class PatchDoesNotApply(PluginBenchError):
    """``model.patch`` does not apply to the frozen starting source."""


class NotInDataset(TaskError):
    """A dataset name, version or task name the Harbor registry index does not list (the
    caller names its own config field; ``field`` is the part: ``name``, ``version``, ``ids[i]``)."""


class BundleRefused(PluginBenchError):
    """``pluginbench bundle``: a scan still found a credential, token or host path after scrubbing; nothing written."""

    exit_code = 1
