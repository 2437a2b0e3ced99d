"""``tasks pick``: choose task folders from a git folder of tasks and print a pinned ``tasks:`` block.

The picker browses one git folder at a ref (GitHub ``/tree/<ref>/<folder>`` links or
``<repo>.git/tree/<ref>/<folder>`` with file:// or git://): every subfolder holding a
``task.toml`` is a task, its ``instruction.md`` the preview. The ref is resolved to a commit
once; the printed links carry that commit. Each picked task is fetched into the task cache
and loaded before anything is printed, so a block that prints is one ``run`` can use.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import ClipboardError, ConfigError, TaskError
from ._common import err_console, errors_to_exit_codes
from ._help import HelpWhenBareGroup

tasks_app = typer.Typer(help="Choose remote task folders for tasks.urls, or Harbor registry dataset tasks.",
                        no_args_is_help=True,
                        cls=HelpWhenBareGroup)

_CLIPBOARDS = (
    ("WAYLAND_DISPLAY", ["wl-copy"]),
    ("DISPLAY", ["xclip", "-selection", "clipboard"]),
    ("DISPLAY", ["xsel", "--clipboard", "--input"]),
    (None, ["pbcopy"]),
)


def copy_to_clipboard(text: str) -> str:
    """Copy ``text`` with the first clipboard tool this session can use; the tool's name.
    Raises :class:`ClipboardError` when none is usable or it fails."""
    tried = []
    for needs, argv in _CLIPBOARDS:
        if (needs is not None and not os.environ.get(needs)) or shutil.which(argv[0]) is None:
            continue
        tried.append(argv[0])
        try:
            done = subprocess.run(argv, input=text.encode(), capture_output=True, timeout=10, check=False,
                                  start_new_session=True)
        except (OSError, subprocess.SubprocessError) as exc:
            raise ClipboardError(f"{argv[0]} failed: {exc}") from None
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip()
            raise ClipboardError(f"{argv[0]} exited {done.returncode}" + (f": {detail}" if detail else ""))
        return argv[0]
    raise ClipboardError("no clipboard tool found (wl-copy with WAYLAND_DISPLAY, xclip or xsel with DISPLAY, pbcopy)")


def _has_terminal() -> bool:
    """Whether this process has a controlling terminal fzf can read keys from."""
    try:
        with open("/dev/tty", "w"):
            return True
    except OSError:
        return False


def _fzf(lines: list[str], previews: Path, header: str) -> list[str] | None:
    """The lines picked in fzf (multiselect), or None when the user cancelled (Escape). Each
    line is ``<preview key>\\t<name>``: fzf shows and searches the name, previews the key."""
    argv = [
        "fzf", "--multi", "--prompt", "tasks> ", "--header", header, "--delimiter", "\t", "--with-nth", "2",
        "--preview", f"cat {shlex.quote(str(previews))}/{{1}}.md", "--preview-window", "right:60%:wrap",
    ]
    # fzf draws on stderr and reads keys from the controlling terminal: it stays in this
    # session (not setsid) and draws on the terminal itself, so `2> file` cannot hide it.
    try:
        tty = open("/dev/tty", "w")  # noqa: SIM115 - closed below
    except OSError:
        tty = None
    try:
        done = subprocess.run(argv, input="\n".join(lines) + "\n", stdout=subprocess.PIPE, stderr=tty, text=True,
                              check=False, start_new_session=False)
    finally:
        if tty is not None:
            tty.close()
    if done.returncode in (1, 130):  # 1: nothing matched, 130: Escape or Ctrl-C
        return None
    if done.returncode != 0:
        raise TaskError(f"fzf exited {done.returncode}", fix="run it again, or pick with --id NAME")
    return [line for line in done.stdout.splitlines() if line]


@tasks_app.command("pick")
@errors_to_exit_codes
def pick_command(
    source: Annotated[str | None, typer.Argument(
        help="A git folder of tasks at a commit, tag or branch: https://github.com/<owner>/<repo>/tree/<ref>/<folder> "
             "or <repository>.git/tree/<ref>/<folder> (file://, git://). Not with --dataset.")] = None,
    ids: Annotated[list[str] | None, typer.Option(
        "--id", help="Pick this task without fzf (repeatable; with --dataset, a registry task name).")] = None,
    copy: Annotated[bool, typer.Option("--copy", help="Also copy the block to the clipboard.")] = False,
    dataset: Annotated[str | None, typer.Option(
        "--dataset", help="Browse a Harbor registry dataset instead: NAME or NAME@VERSION (default version: head, "
                          "else the highest).")] = None,
    registry: Annotated[str | None, typer.Option(
        "--registry", help="The Harbor registry index for --dataset: a registry.json path, file:// or https:// "
                           "address (default: Harbor's own index).")] = None,
) -> None:
    """Pick tasks (fzf multiselect, previews show each prompt) and print a pinned tasks: block.

    Enter prints the block with every link pinned to the commit the ref names now (with --dataset: the dataset, its version and the picked task names); --copy also copies it. Escape prints nothing, leaves the clipboard alone and exits 130. A clipboard error keeps the printed block and exits 1. Without fzf or a terminal, pass --id for each task.
    """
    if dataset is not None:
        if source is not None:
            raise ConfigError("give either a git folder link or --dataset, not both", field="SOURCE",
                              fix="drop the link to browse the dataset, or drop --dataset")
        block = _pick_dataset(dataset, registry, ids)
        _print_block(block, copy)
        return
    if registry is not None:
        raise ConfigError("--registry goes with --dataset", field="--registry", fix="add --dataset NAME[@VERSION]")
    if source is None:
        raise ConfigError("name what to browse: a git folder link, or --dataset NAME[@VERSION]", field="SOURCE",
                          fix="pluginbench tasks pick https://github.com/<owner>/<repo>/tree/<ref>/<folder>, or "
                              "pluginbench tasks pick --dataset terminal-bench@2.0")
    from ..actors import task_cache
    from ..tasks import (
        BadTaskUrl,
        GitFailed,
        browse,
        fetch_into_cache,
        load_task,
        parse_task_url,
        tasks_block,
    )

    if "://" not in source and Path(source).exists():
        raise ConfigError(
            f"{source} is a local folder, not a git folder link", field="SOURCE",
            fix="local tasks need no picking: write tasks: {source: <folder>, ids: [<task>, ...]} in the config; "
                "to pin a local git repository pass file:///<repository>/.git/tree/<ref>/<folder>",
        )
    try:
        link = parse_task_url(source)
    except BadTaskUrl as exc:
        raise ConfigError(str(exc), field="SOURCE", fix="give https://github.com/<owner>/<repo>/tree/<ref>/<folder>") from None
    with tempfile.TemporaryDirectory(prefix="pluginbench-pick-") as tmp:
        scratch, fetched = Path(tmp) / "repo", set[tuple[str, str]]()
        # a large repository takes a while to fetch: say what is happening (stderr keeps stdout the block)
        err_console.print(f"fetching {link.repo} at {link.ref} to list the task folders in {link.path or '/'}…",
                          markup=False, highlight=False)
        try:
            commit, choices = browse(link, scratch, fetched)
        except BadTaskUrl as exc:
            raise TaskError(str(exc), field="SOURCE", fix="check the ref and the folder") from None
        except GitFailed as exc:
            raise TaskError(f"cannot fetch {link.repo}: {exc}", field="SOURCE",
                            fix="check the repository url and your network") from None
        if not choices:
            raise TaskError(f"no task folders (subfolders with task.toml) in {link.path} at {commit}", field="SOURCE",
                            fix="link the folder that holds the task folders")
        by_id = {c.task_id: c for c in choices}
        picked = _choose(sorted(by_id), ids, {c.task_id: c.instruction for c in choices}, Path(tmp),
                         f"{len(by_id)} tasks at {commit[:12]} · Tab selects · Enter prints · Esc cancels",
                         f"{link.path} at {commit[:12]}")
        urls = []
        err_console.print(f"fetching and checking {len(picked)} picked task(s)…", markup=False, highlight=False)
        for task_id in picked:  # fetch and load each pick, so the printed block is runnable
            try:
                pin, folder, _ = fetch_into_cache(by_id[task_id].link, commit, task_cache(), scratch, fetched)
            except (BadTaskUrl, GitFailed) as exc:
                raise TaskError(f"task '{task_id}' cannot be fetched: {exc}", field="SOURCE") from None
            load_task(folder, task_id)
            urls.append(pin.pinned_url)
    _print_block(tasks_block(urls), copy)


def _choose(names: list[str], ids: list[str] | None, previews: dict[str, str], tmp: Path, header: str,
            where: str) -> list[str]:
    """The picked names: ``--id`` values checked against ``names``, else an fzf multiselect
    (exit 130 when cancelled; exit 2 without fzf or a terminal)."""
    listed = ", ".join(sorted(names)[:40]) + (" …" if len(names) > 40 else "")
    if ids:
        unknown = [i for i in ids if i not in names]
        if unknown:
            raise ConfigError(f"no task named {', '.join(unknown)} in {where}", field="--id",
                              fix="choose from: " + listed)
        return list(dict.fromkeys(ids))
    if shutil.which("fzf") is None:
        raise ConfigError(
            f"fzf is not installed, so the picker cannot open; {len(names)} tasks are available: {listed}",
            field="--id", fix="install fzf (Debian/Ubuntu: apt-get install fzf), or pass --id NAME for each task",
        )
    if not _has_terminal():
        raise ConfigError(
            f"fzf needs a terminal to pick in and this session has none; {len(names)} tasks are available: {listed}",
            field="--id", fix="run it in a terminal, or pass --id NAME for each task",
        )
    folder = tmp / "previews"
    folder.mkdir()
    keys = {name: f"{i:06d}" for i, name in enumerate(sorted(names))}  # a name may hold '/'
    for name, key in keys.items():
        (folder / f"{key}.md").write_text(previews.get(name, ""))
    lines = [f"{keys[n]}\t{n}" for n in sorted(names)]
    chosen = _fzf(lines, folder, header)
    if not chosen:
        err_console.print("nothing picked; no block printed and the clipboard was left alone")
        raise typer.Exit(130)
    return [line.split("\t", 1)[1] for line in chosen]


def _pick_dataset(ref: str, registry: str | None, ids: list[str] | None) -> str:
    """Browse a Harbor registry dataset; fetch and load each pick; the block to print."""
    from ..actors import task_cache
    from ..errors import NotInDataset
    from ..tasks import (
        HARBOR_REGISTRY,
        dataset_block,
        dataset_previews,
        load_task,
        package_hub_refusal,
        parse_dataset_ref,
        parse_registry,
        read_registry,
        resolve_dataset,
        select_dataset,
    )

    name, version = parse_dataset_ref(ref)
    if not name:
        raise ConfigError(f"--dataset {ref!r} names no dataset", field="--dataset", fix="give NAME or NAME@VERSION")
    if version is not None and (not version or "@" in version):
        raise ConfigError(f"--dataset {ref!r} names no version after '@'" if not version
                          else f"--dataset {ref!r} has more than one '@'", field="--dataset",
                          fix="give NAME or NAME@VERSION (e.g. terminal-bench@2.0)")
    if any(ord(c) < 32 or ord(c) == 127 for c in ref):
        raise ConfigError(f"--dataset {ref!r} holds a control character", field="--dataset",
                          fix="give NAME or NAME@VERSION as printable text")
    hub = package_hub_refusal(name) if registry is None else None
    if hub is not None:
        raise ConfigError(hub[0], field="--dataset", fix=hub[1])
    location = registry or HARBOR_REGISTRY
    if "://" not in location:
        location = os.path.abspath(location)  # the printed block works from any config folder
    err_console.print(f"reading the registry index {location}…", markup=False, highlight=False)
    try:
        data = read_registry(location)
    except TaskError as exc:
        raise TaskError(exc.message, file=exc.file, field="--registry", fix=exc.fix) from None
    try:
        chosen = select_dataset(parse_registry(data, location), name, version, location)
    except NotInDataset as exc:
        raise ConfigError(exc.message, file=location, field="--dataset", fix=exc.fix) from None
    names = [t.name for t in chosen.tasks]
    if not names:
        raise TaskError(f"dataset {name}@{chosen.version} lists no tasks", file=location, field="--dataset",
                        fix="choose another version")
    where = f"{name}@{chosen.version}"
    with tempfile.TemporaryDirectory(prefix="pluginbench-pick-") as tmp:
        previews: dict[str, str] = {}
        if not ids:
            err_console.print(f"fetching previews of {len(names)} tasks…", markup=False, highlight=False)
            previews = dataset_previews(chosen, Path(tmp) / "repo", set())
        picked = _choose(names, ids, previews, Path(tmp), f"{len(names)} tasks in {where} · Tab selects · "
                                                          "Enter prints · Esc cancels", where)

        def error(part: str, message: str, fix: str) -> TaskError:
            return TaskError(message, file=location, field="--id", fix=fix)

        err_console.print(f"fetching and checking {len(picked)} picked task(s)…", markup=False, highlight=False)
        try:
            pin, fetched = resolve_dataset(name, chosen.version, picked, location, task_cache(), error=error,
                                           read=lambda _: data)
        except NotInDataset as exc:
            raise ConfigError(exc.message, file=location, field="--id", fix=exc.fix) from None
        for (task_pin, folder) in fetched:
            load_task(folder, task_pin.task_id)
    err_console.print(f"{where}: {len(picked)} task(s), content hash {pin.content_hash}", markup=False,
                      highlight=False)
    return dataset_block(name, chosen.version, picked, None if registry is None else location)


def _print_block(block: str, copy: bool) -> None:
    sys.stdout.write(block)
    sys.stdout.flush()
    if copy:
        try:
            tool = copy_to_clipboard(block)
        except ClipboardError as exc:
            err_console.print(f"error: the block above was not copied: {exc}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        err_console.print(f"copied to the clipboard ({tool})", highlight=False)


@tasks_app.command("import")
@errors_to_exit_codes
def import_command(
    source: Annotated[Path, typer.Argument(
        help="One task folder: OpenBench (instruction.md, workspace/, checker.sh, solution/) or Terminal-Bench 1 "
             "(task.yaml, Dockerfile, solution.sh, run-tests.sh, tests/).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The folder to write the Harbor task folder into "
                                                               "(as <output>/<name>/).")],
    fmt: Annotated[str, typer.Option("--format", help="auto, openbench or terminal-bench.")] = "auto",
    name: Annotated[str | None, typer.Option("--name", help="The task's name (default: the source folder's).")] = None,
    check: Annotated[bool, typer.Option("--check/--no-check", help="Run the readiness controls on the result "
                                                                   "(oracle must pass, nop must fail).")] = True,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="Where readiness runs: local or docker (default: local for a task with workspace/, "
                          "else docker).")] = None,
) -> None:
    """Convert an OpenBench or Terminal-Bench 1 task into a Harbor task folder, with a provenance note.

    The result is an ordinary Harbor folder (task.toml, instruction.md, tests/test.sh writing the reward, solution/solve.sh, workspace/ or environment/, PROVENANCE.md). Then, unless --no-check, the readiness controls run on it in a sandbox: oracle must get reward 1 and nop reward 0 (exit 1 when either fails; the folder is kept to fix). Bad input exits 2 naming the file and field; nothing from the source runs outside a sandbox.
    """
    import asyncio

    from ..config import parse_evaluation, validate
    from ..tasks import import_task
    from ._setup import _readiness

    if fmt not in ("auto", "openbench", "terminal-bench"):
        raise ConfigError(f"unknown format {fmt!r}", field="--format", fix="use auto, openbench or terminal-bench")
    kind, dest = import_task(source, output, None if fmt == "auto" else fmt, name)
    err_console.print(f"imported {kind} task {source} → {dest} (see {dest / 'PROVENANCE.md'})", markup=False,
                      highlight=False)
    if not check:
        sys.stdout.write(f"{dest}\n")
        return
    chosen = backend or ("local" if (dest / "workspace").is_dir() else "docker")
    raw = {"tasks": {"source": str(dest.parent.resolve()), "ids": [dest.name]}, "runner": {"harness": "nop"},
           "environment": {"backend": chosen}, "measurements": []}
    where = Path(f"tasks import --backend {chosen}")
    ev = parse_evaluation(raw, where)
    validate(ev, where)
    from ..actors import check_inputs

    tasks = check_inputs(ev, where)
    def show(r: dict[str, Any]) -> None:  # stderr: stdout is only the written folder
        mark = "ok" if r["ok"] else "FAILED"
        err_console.print(f"readiness {r['task']}: {r['control']} {mark}" + (f" — {r['reason']}" if r["reason"] else ""),
                          markup=False, highlight=False)
        for line in r.get("verifier_tail") or []:
            err_console.print(f"  | {line}", markup=False, highlight=False)

    rows, _ = asyncio.run(_readiness(ev, tasks, on_row=show))
    if not all(r["ok"] for r in rows):
        err_console.print(f"the imported task is not ready: fix {dest} (or the source) and check it with "
                          "pluginbench check", markup=False, highlight=False)
        raise typer.Exit(1)
    sys.stdout.write(f"{dest}\n")
