"""The backend port: what an execution backend declares about itself.

An :class:`~pluginbench.environments.Environment` makes sandboxes; a :class:`Backend` is
everything else the engine needs to know about one kind of environment, so that config
validation, run creation, preparation, the worker, status and the report ask the backend
instead of testing its name:

* its name, a one-line summary, and the type of its own settings block
  (``environment.settings``), decoded strictly by :meth:`Backend.settings`;
* its cross-field config rules (:meth:`Backend.validate`, pure) and its foreground host
  checks before a run is created (:meth:`Backend.check_host`: an engine answers, bubblewrap
  works, the tasks' limits fit);
* how it builds an environment for a run (:meth:`Backend.environment`,
  :meth:`Backend.options`) and how it checks capacity before preparation;
* what it adds to the readiness-cache key, its effective isolation label, where an agent
  CLI installed on the host is found inside its sandboxes;
* what a killed worker left behind (:meth:`Backend.left_running`, for ``status``); the
  environment's own ``stop_left_running`` stops it on resume.

A new backend subclasses :class:`Backend`, overrides what differs from the defaults, and is
registered once (:func:`pluginbench.environments.register_backend`). See
``docs/architecture.md`` ("Backends").
"""

import abc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import Evaluation
    from ..harness_registry import CliPin
    from ..tasks import HarborTask
    from ._port import Environment


class LeftRunning(msgspec.Struct, frozen=True, kw_only=True):
    """What a killed worker of one run left on a backend, as ``status`` shows it.

    ``containers`` are ``{"id", "name", "attempt"}`` rows, ``folders`` host paths, and
    ``stop_command`` the command that stops what is left (``None`` when nothing is or
    when nothing needs a command: resume cleans up on its own).
    """

    containers: list[dict[str, str]] = []
    folders: list[str] = []
    stop_command: str | None = None


class Backend(abc.ABC):
    """One execution backend (the port every backend adapter implements).

    Class attributes say what it is; methods have safe defaults, so a backend overrides
    only what it knows. Every method is called with the validated :class:`Evaluation`.
    """

    #: the value of ``environment.backend`` that selects it
    name: ClassVar[str]
    #: one line for ``--help``, docs and the unknown-backend error
    summary: ClassVar[str] = ""
    #: the strict type of its ``environment.settings`` block; ``None``: it takes none
    settings_type: ClassVar[type[msgspec.Struct] | None] = None
    #: tasks must bring a ``workspace/`` folder (a backend that starts from task images
    #: can also run image-only tasks)
    needs_workspace: ClassVar[bool] = True
    #: sandboxes start from per-task images that preparation freezes (coding, verifier);
    #: a backend with images implements :meth:`Environment.prepare_image` and friends
    uses_images: ClassVar[bool] = False
    #: the task.toml settings it honours beyond :data:`pluginbench.tasks.COMMON_SETTINGS`
    #: (``table.key``); ``check`` names every other declared setting as ignored
    task_settings: ClassVar[frozenset[str]] = frozenset()

    # -- configuration ---------------------------------------------------------------

    def for_evaluation(self, ev: "Evaluation") -> "Backend":
        """The backend object that serves ``ev`` (what :func:`backend_of` returns). A
        backend whose settings change what it is (e.g. ray with docker sandboxes, which
        uses task images) returns a variant; default: itself."""
        return self

    def settings(self, ev: "Evaluation", path: Path | str | None = None) -> Any:
        """``environment.settings`` decoded into :attr:`settings_type` (``None`` without
        one); a wrong key or type is a :class:`ConfigError` naming the dotted field."""
        raw = ev.environment.settings
        if self.settings_type is None:
            if raw:
                raise ConfigError(
                    f"the {self.name} backend takes no environment.settings",
                    file=str(path) if path else None, field="environment.settings",
                    fix="remove environment.settings (or choose the backend these settings are for)",
                )
            return None
        try:
            return msgspec.convert(raw, self.settings_type, strict=True)
        except msgspec.ValidationError as exc:
            message = str(exc)
            field = "environment.settings"
            where = message.rsplit(" - at `$", 1)
            if len(where) == 2:
                message, field = where[0], field + where[1].rstrip("`")
            raise ConfigError(
                f"{self.name} backend settings: {message}", file=str(path) if path else None, field=field,
                fix=f"see the {self.name} backend's settings in docs/configuration.md",
            ) from None

    def validate(self, ev: "Evaluation", path: Path | str) -> None:
        """Cross-field rules of this backend's settings (pure; raise :class:`ConfigError`)."""
        self.settings(ev, path)

    def check_host(self, ev: "Evaluation", path: Path, tasks: "Mapping[str, HarborTask]") -> None:
        """Foreground checks before a run is created (I/O allowed): raise an
        :class:`~pluginbench.errors.InputError` naming the field and the fix. Default:
        nothing to check on the host."""
        return None

    def check_tools(self, ev: "Evaluation", path: Path, tools: Sequence[Path]) -> None:
        """Foreground check that sandboxes can use the host tool folders ``tools`` (the
        agent CLI's), once the CLI is resolved: raise an :class:`~pluginbench.errors.InputError`.
        Default: tools are not taken from the host."""
        return None

    # -- building environments -------------------------------------------------------

    @abc.abstractmethod
    def environment(self, **options: Any) -> "Environment":
        """An environment built from backend-specific ``options``."""

    def options(self, ev: "Evaluation", run_id: str) -> dict[str, Any]:
        """The options :meth:`make` passes to :meth:`environment` for a run."""
        return {}

    def make(self, ev: "Evaluation", run_id: str) -> "Environment":
        """The environment a run (or ``check``, with run id ``check``) uses."""
        return self.environment(**self.options(ev, run_id))

    async def check_capacity(self, environment: "Environment", jobs: int, cpus: float | None,
                             memory_mb: int | None) -> None:
        """Before preparation: refuse (never lower) when ``jobs`` sandboxes of these limits
        do not fit. Default: the environment's own :meth:`check`."""
        await environment.check()

    # -- identity --------------------------------------------------------------------

    def isolation(self, ev: "Evaluation") -> str:
        """The effective isolation label recorded in ``run.created`` and the report."""
        return self.name

    def isolated(self, ev: "Evaluation") -> bool:
        """Whether agents run behind a sandbox boundary (the report's ``isolated``)."""
        return True

    def refuse_runtime(self, ev: "Evaluation", runtime: Mapping[str, str], path: Path) -> None:
        """Refuse (raise an :class:`~pluginbench.errors.InputError`) to resume coding under
        ``runtime`` (a worker's recorded runtime, ``run.started.runtime``), e.g. an engine
        that changed since the run started. Default: nothing refused."""
        return None

    def sandbox_root(self, ev: "Evaluation") -> str | None:
        """Whose uid a sandbox's root is on this host, as ``check`` reports it (I/O allowed):
        the docker backend says ``userns`` or ``rootless`` (an unprivileged host uid) or
        ``none`` (the host's root); ``None``: the backend does not say."""
        return None

    def readiness_key(self, ev: "Evaluation") -> list[str]:
        """What readiness results depend on besides the task and images: a cached
        readiness pass is reused only when these parts are equal."""
        return [self.name, self.isolation(ev)]

    def cli_path(self, cli: "CliPin", host_path: str | Path) -> str | Path:
        """Where the harness CLI pinned by ``cli``, installed on the host at ``host_path``,
        runs inside this backend's coding sandboxes."""
        return host_path

    # -- what a killed worker left ---------------------------------------------------

    def left_running(self, run_id: str) -> LeftRunning:
        """What a killed worker of ``run_id`` left (sync, for ``status``); raises when the
        backend cannot be asked, so the caller can say it could not check."""
        return LeftRunning()


__all__ = ["Backend", "LeftRunning"]
