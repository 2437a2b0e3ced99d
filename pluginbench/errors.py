"""One exception tree for everything PluginBench raises on purpose.

Every error a user can cause derives from :class:`PluginBenchError`. The CLI maps
:class:`InputError` (and its children) to exit code 2 with a one-screen message that
names the file, the field and the fix; nothing is started and nothing is written outside
the run directory when one is raised before a run begins.
"""

from __future__ import annotations


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


class LockHeldError(RunDirError):
    """Another live process owns ``run.lock``."""


class CorruptLogError(InputError):
    """``events.jsonl`` has a sequence gap, a duplicate, or an undecodable line mid-file."""


class EnvironmentFailure(PluginBenchError):
    """A sandbox could not be created, used, or cleaned up."""


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
