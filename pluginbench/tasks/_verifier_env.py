"""The variables a task's ``[verifier.env]``, ``[solution.env]`` and ``[environment.env]``
give its scripts (pure; one resolution for the three tables, :func:`resolve_env`).

``[verifier.env]`` goes to ``tests/test.sh``; ``[solution.env]`` to ``solution/solve.sh``
when the ``oracle`` readiness control runs it; ``[environment.env]`` to every command of
the agent's coding sandbox (the agent, the oracle's ``solve.sh``, the collect commands) and
to ``tests/test.sh``, under ``[verifier.env]`` (see :data:`ENVIRONMENT`).

Harbor gives the verifier ``[verifier.env]``, with a whole value ``${NAME}`` or
``${NAME:-default}`` read from the host's environment. PluginBench does the same with one
difference: a host variable is read only when the evaluation names it in
``grading.verifier_env_from_host``; a reference to any other name is refused (a task folder
from elsewhere must not be able to read the host's secrets into its test output). Any other
value (a string, an integer, a float) is passed as written. ``[solution.env]`` may read the
same allowed names. ``[environment.env]`` may read no host variable at all: the agent under
test sees every value there (and can print it, or send it to its model), so a host secret
would leave the host through the agent; a task that needs one for grading puts it in
``[verifier.env]``.

:func:`resolve_env` returns the values (which may hold host secrets: they go to the verifier's
``exec`` only) and a record safe to keep (:attr:`VerifierEnv.record`: for each variable,
where it came from; a task literal with its value, a host variable by its name only).

Some names are refused whatever their value (:func:`forbidden`): the variables every
sandbox command gets from PluginBench (a task value would point the verifier at other
folders, another ``PATH`` or around the egress proxy), the dynamic loader's and glibc's
(in the local backend the command's environment reaches the host-side programs that start
the sandbox, which run as root), and the shell's start-up hooks (``BASH_ENV``, ``ENV``,
exported functions), which would run code before ``test.sh``. ``[environment.env]`` may also
not set the variables the agent CLIs read (model endpoints, credentials, configuration
folders: :data:`_AGENT_PREFIXES`): a task must not change how the harness under test runs.
"""

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import ConfigError, TaskError

#: the config field listing the host variables a task may read
FROM_HOST_FIELD = "grading.verifier_env_from_host"

#: a whole value that reads a host variable, as Harbor matches it: ``${NAME}`` or ``${NAME:-default}``
_REF = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: names PluginBench sets for every sandbox command (paths, PATH, locale, git, the egress
#: proxy, the docker backend's process marker): the sandbox and the verifier contract own them
SANDBOX_SET = frozenset({
    "PATH", "HOME", "TMPDIR", "LANG", "APP_DIR", "TESTS_DIR", "SOLUTION_DIR", "LOGS_DIR",
    "GIT_CONFIG_NOSYSTEM", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
    "PLUGINBENCH_EXEC",
})
#: names that change how programs load or start, and why each is refused ({script}: the script the table is for)
_REFUSED = {
    "BASH_ENV": "bash runs the file it names before {script}",
    "ENV": "sh runs the file it names before {script}",
    "SHELLOPTS": "it changes how every shell script runs",
    "GLIBC_TUNABLES": "glibc reads it in every program, the host-side programs that start the sandbox too",
    "GCONV_PATH": "glibc loads code from the folder it names",
    "LOCPATH": "glibc reads locale data from the folder it names",
    "NLSPATH": "glibc reads message catalogues from the path it names",
}
#: prefixes refused for the same reasons (the dynamic loader, glibc's malloc, exported bash functions)
_REFUSED_PREFIXES = {
    "LD_": "the dynamic loader reads it in every program, the host-side programs that start the sandbox too",
    "MALLOC_": "glibc's allocator reads it in every program",
    "BASH_FUNC_": "bash runs an exported function of that name",
}
#: prefixes ``[environment.env]`` may not set: what the agent CLIs (and the simulated agent) read
_AGENT_PREFIXES = ("PLUGINBENCH_", "ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "OPENCODE_",
                   "QWEN_", "XDG_")
_AGENT_REFUSED = "the agent CLIs read it (model endpoint, credentials, configuration): a task must not change the harness under test"


class EnvTable(NamedTuple):
    """One task table of variables: its dotted ``name``, the ``script`` it is for and its
    ``path`` and ``reader`` (in messages), and the config field that allows host references
    (``None``: refused)."""

    name: str
    script: str
    path: str
    reader: str
    from_host: str | None
    #: whether the agent sees its values (then the agent CLIs' own names are refused too)
    agent: bool = False


#: ``[verifier.env]``: for ``tests/test.sh``
VERIFIER = EnvTable("verifier.env", "test.sh", "tests/test.sh", "the verifier", FROM_HOST_FIELD)
#: ``[solution.env]``: for ``solution/solve.sh`` in the oracle readiness control
SOLUTION = EnvTable("solution.env", "solve.sh", "solution/solve.sh", "solution/solve.sh", FROM_HOST_FIELD)
#: ``[environment.env]``: every command of the coding sandbox, and ``tests/test.sh`` under ``[verifier.env]``
ENVIRONMENT = EnvTable("environment.env", "the sandbox's commands", "a command", "the agent", None, agent=True)


class VerifierEnv(NamedTuple):
    """``values``: what ``tests/test.sh`` gets (may hold host secrets; never recorded).
    ``record``: variable -> ``{"from": "task", "value": v}`` for a literal,
    ``{"from": "host", "variable": NAME}`` for a host value, or ``{"from": "default",
    "variable": NAME, "value": d}`` when an allowed host variable was unset and the task's
    default was used."""

    values: dict[str, str]
    record: dict[str, dict[str, str]]


def forbidden(name: str, table: EnvTable = VERIFIER) -> str | None:
    """Why ``name`` may not be set in ``table`` (default ``[verifier.env]``), or ``None``."""
    if name in SANDBOX_SET:
        return "PluginBench sets it for every sandbox command (the sandbox's folders, PATH, locale and egress proxy)"
    if name in _REFUSED:
        return _REFUSED[name].format(script=table.script)
    for prefix, why in _REFUSED_PREFIXES.items():
        if name.startswith(prefix):
            return why
    if table.agent and name.startswith(_AGENT_PREFIXES):
        return _AGENT_REFUSED
    return None


def check_allowed_names(names: Sequence[str], config: Path | str | None) -> None:
    """Each ``grading.verifier_env_from_host`` entry is a variable name. Raises :class:`ConfigError`."""
    for i, name in enumerate(names):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigError(f"{FROM_HOST_FIELD}[{i}] is not an environment variable name: {name!r}",
                              file=str(config) if config is not None else None, field=f"{FROM_HOST_FIELD}[{i}]",
                              fix="write the name alone (letters, digits, underscores), e.g. HF_TOKEN")


def _literal(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


def resolve_env(env: Mapping[str, Any], table: EnvTable, *, allowed: Sequence[str], host: Mapping[str, str],
                file: str, tid: str) -> VerifierEnv:
    """``table`` (``[verifier.env]``, ``[solution.env]`` or ``[environment.env]``) resolved for
    its script. Raises :class:`TaskError` (naming ``file`` and ``<table>.<KEY>``) for a
    refused name, a value that is not a string or number, a host reference the table may not
    make (``table.from_host`` is ``None``) or to a name ``allowed`` lacks, or an allowed name
    ``host`` lacks (without a default)."""
    values: dict[str, str] = {}
    record: dict[str, dict[str, str]] = {}
    for key in sorted(env):
        field = f"{table.name}.{key}"
        if not _NAME.fullmatch(key):
            raise TaskError(f"task '{tid}': [{table.name}] key {key!r} is not an environment variable name", file=file,
                            field=field, fix="use letters, digits and underscores, not starting with a digit")
        why = forbidden(key, table)
        if why is not None:
            raise TaskError(f"task '{tid}': [{table.name}] may not set {key}: {why}", file=file, field=field,
                            fix=f"remove {key} from [{table.name}] ({table.path} may set it itself inside the sandbox)")
        text = _literal(env[key])
        if text is None or "\0" in text:
            raise TaskError(f"task '{tid}': {field} must be a string or a number, got {env[key]!r}", file=file,
                            field=field, fix=f'write it as {key} = "value"')
        ref = _REF.fullmatch(text)
        if ref is None:
            values[key], record[key] = text, {"from": "task", "value": text}
            continue
        name, default = ref.group(1), ref.group(2)
        if table.from_host is None:
            raise TaskError(
                f"task '{tid}': {field} reads the host variable {name}; [{table.name}] may not read host variables "
                "(the agent sees every value there)", file=file, field=field,
                fix="write the value into task.toml, or put the variable in [verifier.env] if only tests/test.sh "
                    f"needs it (host variables there are allowed by {FROM_HOST_FIELD})")
        if name not in allowed:
            raise TaskError(
                f"task '{tid}': {field} reads the host variable {name}, which the evaluation does not allow",
                file=file, field=field,
                fix=f"add {name} to {table.from_host} in the evaluation config if {table.reader} may see it, "
                    "or write the value into task.toml")
        if name in host:
            values[key], record[key] = host[name], {"from": "host", "variable": name}
        elif default is not None:
            values[key], record[key] = default, {"from": "default", "variable": name, "value": default}
        else:
            raise TaskError(
                f"task '{tid}': {field} reads the host variable {name}, which is not set here", file=file,
                field=field, fix=f"export {name} before check/run, or give a default: ${{{name}:-value}}")
    return VerifierEnv(values, record)


def resolve_verifier_env(env: Mapping[str, Any], *, allowed: Sequence[str], host: Mapping[str, str], file: str,
                         tid: str) -> VerifierEnv:
    """``[verifier.env]`` resolved for ``tests/test.sh`` (:func:`resolve_env` with :data:`VERIFIER`)."""
    return resolve_env(env, VERIFIER, allowed=allowed, host=host, file=file, tid=tid)


def host_values(*resolved: VerifierEnv) -> list[str]:
    """The host values among ``resolved`` (what grading and readiness output must be redacted of)."""
    return [r.values[k] for r in resolved for k, rec in r.record.items() if rec["from"] == "host"]


__all__ = ["ENVIRONMENT", "FROM_HOST_FIELD", "SANDBOX_SET", "SOLUTION", "VERIFIER", "EnvTable", "VerifierEnv",
           "check_allowed_names", "forbidden", "host_values", "resolve_env", "resolve_verifier_env"]
