"""Harbor registry datasets: ``name@version`` → task folders in git, pinned once at freeze.

A Harbor registry index (``registry.json``) is a JSON list of datasets, each
``{name, version, description, tasks: [{name, git_url, git_commit_id, path}], metrics}``
(Harbor's ``JsonRegistryClient`` format). PluginBench reads it from a file or an
``https://``/``file://`` address (default: Harbor's own index,
:data:`HARBOR_REGISTRY`), selects one dataset version and the named tasks, and fetches each
task folder through the same verified task cache as ``tasks.urls``
(:func:`~pluginbench.tasks._remote.fetch_into_cache`). The result is pinned: each task's
commit, git tree and SHA-256 fingerprint, and the dataset's **content hash** (SHA-256 over
every selected task's name, repository, commit, path, tree and fingerprint) together with
the SHA-256 of the index bytes it was read from. A run writes these once; resume and report
read them and never consult the registry again.

The parsing and selection here are pure; :func:`read_registry` and
:func:`resolve_dataset` are the edges (a read, git fetches).
"""

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from ..errors import BadTaskUrl, GitFailed, NotInDataset, TaskError
from ._remote import TaskPin, fetch_into_cache, git
from ._urls import COMMIT, TaskUrl

#: Harbor's default registry index (``DEFAULT_REGISTRY_URL`` in Harbor's ``constants.py``)
HARBOR_REGISTRY = "https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json"
#: the most bytes read from a registry index (Harbor's own is a few MiB)
MAX_REGISTRY_BYTES = 64 * 1024 * 1024
REGISTRY_TIMEOUT = 60.0
_SCHEMES = ("https", "git", "file")
_PART = re.compile(r"^[A-Za-z0-9._+-]+$")
_HEAD = (None, "", "head", "HEAD")


#: Harbor's package hub: ``org/name[@ref]`` task and dataset packages (not a registry index)
PACKAGE_HUB = "hub.harborframework.com"


def package_hub_refusal(name: str) -> tuple[str, str] | None:
    """Why ``name`` cannot be run as a registry dataset when Harbor's own index is asked for
    it, and the fix; None for a name the index may hold. A name with ``/`` (``org/name``)
    is, for Harbor, a package on its package hub: content-addressed archives behind
    Harbor's hosted database and storage API, with no index file to read or pin offline."""
    if "/" not in name:
        return None
    return (
        f"{name!r} names a package on Harbor's package hub ({PACKAGE_HUB}; org/name), which PluginBench does not "
        "read: the hub is Harbor's hosted service, not a registry index",
        f"download it with Harbor (harbor download {name}) and run the folder with tasks.source and tasks.ids, or "
        "name a registry.json that lists it with tasks.registry (tasks pick: --registry)",
    )


class RegistryTask(msgspec.Struct, frozen=True, kw_only=True):
    """One task of a dataset version as the index lists it."""

    name: str
    git_url: str
    git_commit_id: str | None  # a full commit, or None/"head": the repository's HEAD at freeze
    path: str

    @property
    def task_id(self) -> str:
        """The run's id for this task: the last ``/`` part of its name."""
        return self.name.rsplit("/", 1)[-1]


class Dataset(msgspec.Struct, frozen=True, kw_only=True):
    """One dataset version selected from an index."""

    name: str
    version: str
    tasks: tuple[RegistryTask, ...]


class DatasetPin(msgspec.Struct, frozen=True, kw_only=True):
    """What a run froze of a registry dataset (``evidence/remote/dataset.json``)."""

    name: str
    version: str
    registry: str  # the index location as configured
    registry_sha256: str  # SHA-256 of the index bytes read at freeze
    content_hash: str  # ``sha256:`` over the selected tasks' pins (see :func:`content_hash`)
    tasks: list[str]  # registry task names, in config order


def _bad(message: str, where: str, field: str, fix: str) -> TaskError:
    return TaskError(message, file=where, field=field, fix=fix)


def read_registry(location: str, *, timeout: float = REGISTRY_TIMEOUT) -> bytes:
    """The bytes of a registry index: a local path, ``file://`` or ``https://`` address.
    Raises :class:`TaskError` naming the location."""
    parts = urlsplit(location)
    fix = "check tasks.registry (a registry.json path, file:// or https:// address) and your network"
    if parts.scheme in ("", "file"):
        path = Path(parts.path if parts.scheme == "file" else location)
        try:
            with path.open("rb") as fh:
                data = fh.read(MAX_REGISTRY_BYTES + 1)
        except OSError as exc:
            raise _bad(f"cannot read the registry index: {exc.strerror or exc}", location, "tasks.registry", fix) from None
    elif parts.scheme == "https":
        import urllib.request  # on first use: http.client and ssl cost every command that loads a config

        try:
            with urllib.request.urlopen(location, timeout=timeout) as resp:  # noqa: S310 - https only
                data = resp.read(MAX_REGISTRY_BYTES + 1)
        except (OSError, ValueError) as exc:
            raise _bad(f"cannot download the registry index: {exc}", location, "tasks.registry", fix) from None
    else:
        raise _bad(f"unsupported registry address scheme {parts.scheme!r}", location, "tasks.registry",
                   "give a file path, a file:// or an https:// address")
    if len(data) > MAX_REGISTRY_BYTES:
        raise _bad(f"the registry index is larger than {MAX_REGISTRY_BYTES // (1024 * 1024)} MiB", location,
                   "tasks.registry", "point tasks.registry at a Harbor registry.json")
    return data


def parse_registry(data: bytes, where: str) -> list[Mapping[str, Any]]:
    """The index's dataset entries (each a JSON object with string ``name`` and ``version``)."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(f"the registry index is not JSON: {exc}", where, "(whole file)",
                   "point tasks.registry at a Harbor registry.json (a JSON list of datasets)") from None
    if not isinstance(doc, list):
        raise _bad("the registry index must be a JSON list of datasets", where, "(top level)",
                   "point tasks.registry at a Harbor registry.json (a JSON list of datasets)")
    for i, entry in enumerate(doc):
        if not isinstance(entry, dict):
            raise _bad(f"dataset entry {i} is not an object", where, f"[{i}]", "each entry is {name, version, tasks}")
        for key in ("name", "version"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise _bad(f"dataset entry {i} has no {key} string", where, f"[{i}].{key}",
                           "each entry is {name, version, tasks}")
    return doc


def _version_key(version: str) -> tuple[int, tuple[tuple[int, int | str], ...]]:
    """Harbor's order: a release like ``2.0`` or ``1.10.1`` beats any non-numeric version, and
    releases compare numerically; the rest compare as text."""
    if re.fullmatch(r"\d+(\.\d+)*", version):
        return (1, tuple((0, int(p)) for p in version.split(".")))
    return (0, ((1, version),))


def choose_version(versions: Sequence[str]) -> str:
    """The version Harbor picks when none is named: ``head`` if listed, else the highest."""
    if "head" in versions:
        return "head"
    return max(versions, key=_version_key)


def _task(raw: object, where: str, field: str) -> RegistryTask:
    if not isinstance(raw, dict):
        raise _bad("a dataset task is not an object", where, field, "each task is {name, git_url, git_commit_id, path}")
    name = raw.get("name")
    if not isinstance(name, str) or not name or any(not _PART.match(p) for p in name.split("/")):
        raise _bad(f"task name {name!r} is not a name of plain parts separated by /", where, f"{field}.name",
                   "fix the registry entry")
    url = raw.get("git_url")
    if not isinstance(url, str) or not url:
        if isinstance(raw.get("path"), str) and url is None:
            raise _bad(f"task {name!r} is a local path, not a git task", where, f"{field}.git_url",
                       "registry tasks must name a git_url; run local folders with tasks.source and tasks.ids")
        raise _bad(f"task {name!r} has no git_url", where, f"{field}.git_url", "fix the registry entry")
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES or parts.username or parts.password or parts.query or parts.fragment:
        raise _bad(f"task {name!r}: git_url {url!r} is not an https://, git:// or file:// address without "
                   "credentials", where, f"{field}.git_url", "fix the registry entry")
    commit = raw.get("git_commit_id")
    if commit not in _HEAD and not (isinstance(commit, str) and COMMIT.match(commit)):
        raise _bad(f"task {name!r}: git_commit_id {commit!r} is neither a full 40-hex commit nor head", where,
                   f"{field}.git_commit_id", "fix the registry entry (a short SHA cannot be fetched)")
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip("/") or any(
            p in ("", ".", "..") or not _PART.match(p) for p in path.strip("/").split("/")):
        raise _bad(f"task {name!r}: path {path!r} is not a folder inside the repository", where, f"{field}.path",
                   "fix the registry entry (plain names separated by /)")
    return RegistryTask(name=name, git_url=url, git_commit_id=None if commit in _HEAD else commit,
                        path=path.strip("/"))


def select_dataset(entries: Sequence[Mapping[str, Any]], name: str, version: str | None, where: str) -> Dataset:
    """The dataset ``name`` at ``version`` (None: Harbor's default choice), every task checked."""
    found = [(i, e) for i, e in enumerate(entries) if e["name"] == name]
    if not found:
        near = sorted({str(e["name"]) for e in entries if name.lower() in str(e["name"]).lower()})[:10]
        hub = package_hub_refusal(name)
        raise NotInDataset(f"the registry {where} has no dataset named {name!r}"
                           + (f" (an org/name is a package on Harbor's package hub, {PACKAGE_HUB}, which "
                              "PluginBench does not read)" if hub else ""), file=where, field="name",
                           fix=hub[1] if hub and not near else "check the name" + (
                               f"; similar: {', '.join(near)}" if near else ""))
    versions = [str(e["version"]) for _, e in found]
    wanted = choose_version(versions) if version is None else version
    match = [(i, e) for i, e in found if e["version"] == wanted]
    if not match:
        raise NotInDataset(f"dataset {name!r} has no version {wanted!r} in the registry {where}", file=where,
                           field="version", fix="choose one of: " + ", ".join(sorted(set(versions), key=_version_key)))
    i, entry = match[-1]
    raw_tasks = entry.get("tasks")
    if not isinstance(raw_tasks, list):
        raise _bad(f"dataset {name}@{wanted} has no task list", where, f"[{i}].tasks", "fix the registry entry")
    tasks = tuple(_task(t, where, f"[{i}].tasks[{j}]") for j, t in enumerate(raw_tasks))
    names: dict[str, int] = {}
    for j, task in enumerate(tasks):
        if task.name in names:
            continue  # Harbor keeps one of two identical entries
        names[task.name] = j
    unique = tuple(tasks[j] for j in sorted(names.values()))
    return Dataset(name=name, version=wanted, tasks=unique)


def pick_tasks(dataset: Dataset, ids: Sequence[str], where: str, field: str) -> list[RegistryTask]:
    """The tasks named by ``ids`` (registry task names), in that order; unknown names and two
    tasks with the same run id are refused naming ``field[i]``."""
    by_name = {t.name: t for t in dataset.tasks}
    out: list[RegistryTask] = []
    seen: dict[str, int] = {}
    for i, name in enumerate(ids):
        task = by_name.get(name)
        if task is None:
            near = [t.name for t in dataset.tasks if name.lower() in t.name.lower()][:5]
            raise NotInDataset(f"dataset {dataset.name}@{dataset.version} has no task named {name!r}", file=where,
                               field=f"{field}[{i}]",
                               fix="write a task name the registry lists" + (
                                   f"; similar: {', '.join(near)}" if near else " (tasks pick --dataset lists them)"))
        if task.task_id in seen:
            raise NotInDataset(f"task {name!r} has the run id {task.task_id!r} of {field}[{seen[task.task_id]}]",
                               file=where, field=f"{field}[{i}]",
                               fix="pick each task once (two tasks whose names end alike cannot run together)")
        seen[task.task_id] = i
        out.append(task)
    return out


def task_link(task: RegistryTask, dataset: Dataset) -> TaskUrl:
    """A :class:`TaskUrl` for fetching ``task`` (its ref: the commit, or ``HEAD``)."""
    parts = urlsplit(task.git_url)
    github = parts.scheme == "https" and parts.netloc.lower() == "github.com"
    repo = task.git_url
    if github:
        segs = parts.path.strip("/").split("/")
        repo = f"https://github.com/{segs[0]}/{segs[1].removesuffix('.git')}.git" if len(segs) >= 2 else repo
    return TaskUrl(url=f"{dataset.name}@{dataset.version}:{task.name}", repo=repo,
                   ref=task.git_commit_id or "HEAD", path=task.path, github=github)


def content_hash(pins: Sequence[TaskPin], names: Sequence[str]) -> str:
    """``sha256:`` over each selected task's name and pin (repository, commit, path, tree,
    fingerprint), in name order: equal exactly when the same files were frozen."""
    rows = sorted(
        [name, p.repo, p.commit, p.path, p.tree, p.fingerprint] for name, p in zip(names, pins, strict=True)
    )
    return "sha256:" + hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


def _head(repo: str) -> str:
    out = git("ls-remote", repo, "HEAD")
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name == "HEAD" and COMMIT.match(sha):
            return sha
    raise BadTaskUrl(f"{repo} has no HEAD to pin (give git_commit_id a full commit)")


def resolve_dataset(
    name: str, version: str, ids: Sequence[str], registry: str, cache: Path, *,
    error: Callable[[str, str, str], Exception], read: Callable[[str], bytes] = read_registry,
) -> tuple[DatasetPin, list[tuple[TaskPin, Path]]]:
    """Read the index, select ``name@version`` and ``ids``, fetch and verify each task through
    the task cache. ``error(field, message, fix)`` builds the exception for a task that cannot
    be fetched (so the caller names its config file and field)."""
    data = read(registry)
    dataset = select_dataset(parse_registry(data, registry), name, version, registry)
    tasks = pick_tasks(dataset, ids, registry, "ids")  # NotInDataset names the part: name, version, ids[i]
    out: list[tuple[TaskPin, Path]] = []
    heads: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="pluginbench-fetch-") as tmp:
        scratch, fetched = Path(tmp) / "repo", set[tuple[str, str]]()
        for i, task in enumerate(tasks):
            link = task_link(task, dataset)
            try:
                if task.git_commit_id is None:
                    if link.repo not in heads:
                        heads[link.repo] = _head(link.repo)
                    commit = heads[link.repo]
                else:
                    commit = task.git_commit_id
                pin, folder, _ = fetch_into_cache(link, commit, cache, scratch, fetched)
            except BadTaskUrl as exc:
                raise error(f"ids[{i}]", f"task {task.name!r} of {name}@{dataset.version}: {exc}",
                            "the registry entry names a commit or folder that does not exist; report it to the "
                            "dataset's maintainers or pick another task") from None
            except GitFailed as exc:
                raise error(f"ids[{i}]", f"cannot fetch task {task.name!r} from {link.repo}: {exc}",
                            "check your network, then run again") from None
            out.append((msgspec.structs.replace(pin, task_id=task.task_id, url=link.url, ref=link.ref), folder))
    names = [t.name for t in tasks]
    dataset_pin = DatasetPin(
        name=name, version=dataset.version, registry=registry, registry_sha256=hashlib.sha256(data).hexdigest(),
        content_hash=content_hash([p for p, _ in out], names), tasks=names,
    )
    return dataset_pin, out


def write_dataset_pin(pin: DatasetPin, path: Path) -> None:
    path.write_bytes(json.dumps(msgspec.to_builtins(pin), indent=2).encode() + b"\n")


def read_dataset_pin(path: Path) -> DatasetPin:
    return msgspec.json.decode(path.read_bytes(), type=DatasetPin)


def parse_dataset_ref(text: str) -> tuple[str, str | None]:
    """``name[@version]`` as ``tasks pick --dataset`` takes it."""
    name, at, version = text.partition("@")
    return name, (version if at else None)


def dataset_block(name: str, version: str, ids: Sequence[str], registry: str | None) -> str:
    """The ``tasks:`` YAML block for a dataset pick (every value quoted: a name such as
    ``true`` or a version such as ``1.0`` stays a string)."""
    q = json.dumps
    lines = ["tasks:", f"  dataset: {q(name)}", f"  version: {q(version)}", "  ids:"]
    lines += [f"    - {q(i)}" for i in ids]
    if registry is not None and registry != HARBOR_REGISTRY:
        lines.append(f"  registry: {q(registry)}")
    return "\n".join(lines) + "\n"


def dataset_previews(dataset: Dataset, scratch: Path, fetched: set[tuple[str, str]]) -> dict[str, str]:
    """Each task's ``instruction.md`` for the picker's previews, one shallow fetch per
    repository and commit; a task whose repository cannot be fetched previews its origin."""
    heads: dict[str, str | None] = {}
    out: dict[str, str] = {}
    for task in dataset.tasks:
        link = task_link(task, dataset)
        origin = f"{link.repo} at {task.git_commit_id or 'HEAD'}, folder {task.path}"
        try:
            if task.git_commit_id is None:
                if link.repo not in heads:
                    heads[link.repo] = _head(link.repo)
                commit = heads[link.repo]
            else:
                commit = task.git_commit_id
            if commit is None:
                raise BadTaskUrl(f"{link.repo} could not be reached")
            if not (scratch / ".git").is_dir():
                git("init", "-q", "--template=", str(scratch))
            if (link.repo, commit) not in fetched:
                git("fetch", "-q", "--depth", "1", "--no-tags", link.repo, commit, cwd=scratch)
                fetched.add((link.repo, commit))
            text = git("show", f"{commit}:{task.path}/instruction.md", cwd=scratch)
        except (GitFailed, BadTaskUrl) as exc:
            heads.setdefault(link.repo, None)
            text = f"(no preview: {exc})"
        out[task.name] = f"# {task.name}\n{origin}\n\n{text}"
    return out
