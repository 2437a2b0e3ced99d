"""``pluginbench bundle``: a shareable, scrubbed copy of a run, and opening one read-only.

What goes in (paths kept, relative to the run directory): ``evaluation.json``,
``evaluation-binding.json``, ``events.jsonl``, ``report/`` (results.json, results.csv,
report.html) and, for every attempt (live and discarded), its receipts and records
(``invocation.json``, ``execution.json``, ``delivery.json``, ``native-treatment.json``,
``measurements.json``, ``reused.json``), ``model.patch`` and what it dropped, ``agent/``
(transcripts, rollouts, stream), ``grading/``, ``delivery/`` (the treatment as delivered,
without credential files) and ``measure/activation/``; review results
(``evidence/reviews/*/*/review.json``) and the probe's request log. Left out, and named in
the note: the working-tree export, ``collect/``/``artifacts/``, the frozen tasks and
treatments, the ledger (a projection), binary files and files over 32 MiB.

Every text file is scrubbed (:mod:`._scrub`); then every staged file is scanned again,
both by :func:`._scrub.findings` and by the engine's own credential scanner
(:func:`pluginbench.harnesses._secrets.scan_for_secrets`). Anything found refuses the
bundle and nothing is written. The archive holds ``bundle/manifest.json`` (every file's
sha256 and size, what was replaced per file, what was left out and why) and
``bundle/NOTE.md`` (the same in words). It is deterministic: sorted entries, zero
timestamps and owners, so the same run gives the same bytes.
"""

import contextlib
import getpass
import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec

from ..errors import BundleRefused, InputError
from ..harnesses import scan_for_secrets
from ..rundir import RunDir, refuse_lost_settings
from ._evidence import list_files
from ._scrub import credential_forms, findings, fragment_grams, scrub_text

MANIFEST = "bundle/manifest.json"
NOTE = "bundle/NOTE.md"
MAX_FILE = 32 << 20
_TOP_FILES = ("evaluation.json", "evaluation-binding.json", "events.jsonl", "report/results.json",
              "report/results.csv", "report/report.html", "evidence/probe/requests.jsonl")
_ATTEMPT_FILES = frozenset({"invocation.json", "execution.json", "execution-current.json", "delivery.json",
                            "native-treatment.json", "measurements.json", "reused.json", "model.patch",
                            "model.patch.dropped.txt", "export.dropped.txt"})
_ATTEMPT_FOLDERS = ("agent/", "grading/", "delivery/", "measure/activation/")
_CREDENTIAL_FILES = frozenset({".credentials.json", "auth.json", ".netrc", "credentials"})
_GENERIC = frozenset({"/", "/tmp", "/usr", "/home", "/root", "/var", "/opt", "/app", "/work", "/Users", "/private"})


class Bundle(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    files: int
    bytes: int
    replaced: dict[str, int]  # kind -> how many
    excluded: int


def delivered_credentials(environ: Mapping[str, str]) -> list[str]:
    """The credentials the harnesses deliver, as this host has them: Claude Code's token
    variable, the provider key variables, the long values of Codex's ``auth.json``, and the
    probe's fake keys (probe runs deliver those)."""
    from ..harnesses import TOKEN_VARIABLE
    from ..probe import PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY

    found = [PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY]
    for var in (TOKEN_VARIABLE, "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY"):
        if environ.get(var):
            found.append(environ[var])
    codex_home = Path(environ.get("CODEX_HOME") or Path(environ.get("HOME") or Path.home()) / ".codex")
    try:
        data = json.loads((codex_home / "auth.json").read_text())
    except (OSError, ValueError):
        data = None

    def walk(v: object) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, str) and len(v) >= 20:
            found.append(v)

    walk(data)
    return sorted(set(found))


def _probe_keys() -> tuple[str, str]:
    """The probe's fake keys: redacted whole, but too plain to redact piece by piece."""
    from ..probe import PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY

    return PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY


def host_paths(run_dir: Path, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(host folder, placeholder): the run directory and its parent, HOME, the working
    folder, the temp folder and the Python prefix (generic system folders are kept)."""
    out: dict[str, str] = {}

    def add(p: str | Path | None, placeholder: str, *, short: bool = False) -> None:
        if not p:
            return
        for form in {str(p), os.path.realpath(p)}:
            form = form.rstrip("/")
            if short and form.count("/") == 1 and len(form) > 1:  # HOME=/root: its children, not the word
                out.setdefault(form + "/", placeholder + "/")
            elif form and form not in _GENERIC and form.count("/") >= 2 and form not in out:
                out[form] = placeholder

    add(run_dir.absolute(), "<run>")
    add(run_dir.absolute().parent, "<runs>")
    add(environ.get("HOME"), "<home>", short=True)
    add(os.getcwd(), "<cwd>")
    add(tempfile.gettempdir(), "<tmp>")
    add(sys.prefix, "<python>")
    add(Path(__file__).resolve().parents[2], "<pluginbench>")
    return sorted(out.items(), key=lambda kv: (-len(kv[0]), kv[0]))


def _selected(run_dir: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """(files to bundle, (file, why) left out), relative to the run directory."""
    keep: list[str] = []
    left: list[tuple[str, str]] = []
    for rel in _TOP_FILES:
        if (run_dir / rel).is_file() and not (run_dir / rel).is_symlink():
            keep.append(rel)
    evidence = RunDir(run_dir).evidence
    for kind in ("attempts", "discarded"):
        base = evidence / kind
        if not base.is_dir() or base.is_symlink():
            continue
        for attempt in sorted(p.name for p in base.iterdir() if p.is_dir() and not p.is_symlink()):
            folder = base / attempt
            for rel, _size in list_files(folder):
                full = f"evidence/{kind}/{attempt}/{rel}"
                name = rel.rsplit("/", 1)[-1]
                if name in _CREDENTIAL_FILES:
                    left.append((full, "a credential file"))
                elif rel in _ATTEMPT_FILES or rel.startswith(_ATTEMPT_FOLDERS):
                    keep.append(full)
                elif rel.startswith("export/"):
                    continue  # the working tree: the patch is its record (named once below)
                else:
                    left.append((full, "not part of a bundle (scratch, collected artifacts)"))
    reviews = evidence / "reviews"
    if reviews.is_dir() and not reviews.is_symlink():
        for rel, _size in list_files(reviews):
            if rel.endswith("/review.json") and rel.count("/") == 2:
                keep.append(f"evidence/reviews/{rel}")
    left += [("evidence/attempts/*/export/", "the exported working tree (model.patch is its canonical record)"),
             ("evidence/frozen/", "frozen tasks and treatments (hidden tests and solutions stay private)"),
             ("evidence/ledger.sqlite", "a projection of events.jsonl (status folds the log without it)")]
    return sorted(keep), left


def _tar_bytes(files: dict[str, bytes], top: str) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs: set[str] = set()
        for rel in sorted(files):
            parts = rel.split("/")[:-1]
            for i in range(len(parts) + 1):
                d = "/".join([top, *parts[:i]])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
                    tar.addfile(info)
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mode, info.mtime = len(files[rel]), 0o644, 0
            tar.addfile(info, io.BytesIO(files[rel]))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def write_bundle(run_dir: Path, out: Path, *, environ: Mapping[str, str] | None = None) -> Bundle:
    """Scrub and pack ``run_dir`` into ``out`` (.tar.gz); :class:`BundleRefused` (nothing
    written) when a scan still finds something."""
    env = dict(os.environ if environ is None else environ)
    if not RunDir(run_dir).is_run():
        refuse_lost_settings(RunDir(run_dir))
        raise InputError(f"{run_dir} is not a run directory (no evaluation.json and evaluation-binding.json)",
                         file=str(run_dir), fix="pass the folder `pluginbench run` wrote (runs/<run>)")
    from ._facts import run_status

    run_status(run_dir)  # a damaged log is refused here: a bundle of it could not be opened
    if out.is_dir():
        raise InputError(f"{out} is a folder", file=str(out), fix="give -o a file name ending .tar.gz")
    if out.exists() or out.is_symlink():
        raise InputError(f"{out} already exists; nothing was written", file=str(out),
                         fix="remove it, or give -o another file name")
    if not out.parent.is_dir():
        raise InputError(f"{out.parent} does not exist", file=str(out), fix="create the folder first, or give another -o")
    if _inside(out, run_dir):
        raise InputError(f"{out} is inside the run directory {run_dir}; a bundle is written beside the run, never into it",
                         file=str(out), fix="give -o a file outside the run directory")
    delivered = delivered_credentials(env)
    forms = credential_forms(delivered)
    grams = fragment_grams(credential_forms(c for c in delivered if c not in _probe_keys()))
    paths = host_paths(run_dir, env)
    user = env.get("USER") or env.get("LOGNAME") or _login()
    keep, left = _selected(run_dir)
    staged: dict[str, bytes] = {}
    replaced: dict[str, dict[str, int]] = {}
    for rel in keep:
        data = (run_dir / rel).read_bytes()
        if len(data) > MAX_FILE:
            left.append((rel, f"over {MAX_FILE >> 20} MiB"))
            continue
        try:
            if b"\x00" in data:  # UTF-16 and other NUL-holding text would pass the scans unseen
                raise UnicodeDecodeError("utf-8", data, data.index(b"\x00"), data.index(b"\x00") + 1, "a NUL byte")
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            left.append((rel, "not UTF-8 text (binary files are not scrubbed, so not shared)"))
            continue
        clean, counts = scrub_text(text, forms, paths, user, grams)
        if counts:
            replaced[rel] = counts
        staged[rel] = clean.encode()
    # the second look: the scrubbed bytes, by the scrubber's own check and the engine's scanner
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pb-bundle-") as tmp:
        for rel, data in staged.items():
            hits = findings(data.decode(), forms, [p for p, _ in paths], user, grams)
            if hits:
                problems.append(f"{rel}: {', '.join(hits)}")
            target = Path(tmp, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        for path, _found in scan_for_secrets([Path(tmp)], delivered_credentials(env)):
            problems.append(f"{path.relative_to(tmp)}: a delivered credential (engine scanner)")
    if problems:
        raise BundleRefused("the bundle was not written: a scan still finds something after scrubbing:\n  "
                            + "\n  ".join(sorted(set(problems))[:20]))
    name = _bundle_name(run_dir)
    kinds: dict[str, int] = {}
    for counts in replaced.values():
        for k, v in counts.items():
            kinds[k] = kinds.get(k, 0) + v
    listed = [{"path": rel, "sha256": hashlib.sha256(staged[rel]).hexdigest(), "bytes": len(staged[rel])}
              for rel in sorted(staged)]
    manifest = {
        "schema_version": 1,
        "run": name,
        "files": listed,
        "replaced": {rel: dict(sorted(c.items())) for rel, c in sorted(replaced.items())},
        "replaced_totals": dict(sorted(kinds.items())),
        "placeholders": {"<redacted credential>": "a delivered credential (any encoding)",
                         "<redacted token>": "a token-like string", "<user>": "the host user name",
                         **{ph: "a host folder" for _p, ph in paths}},
        "left_out": [{"path": p, "reason": r} for p, r in sorted(set(left))],
    }
    staged[MANIFEST] = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
    staged[NOTE] = _note(manifest).encode()
    blob = _tar_bytes(staged, name)
    tmp_out = out.with_name(out.name + ".partial")
    tmp_out.write_bytes(blob)
    os.replace(tmp_out, out)
    return Bundle(path=str(out), files=len(listed), bytes=len(blob), replaced=kinds, excluded=len(left))


def _inside(path: Path, folder: Path) -> bool:
    real = Path(os.path.realpath(path.parent)) / path.name
    return real == Path(os.path.realpath(folder)) or Path(os.path.realpath(folder)) in real.parents


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def _bundle_name(run_dir: Path) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "-", run_dir.name).strip("-.") or "run"


def _note(manifest: dict[str, object]) -> str:
    totals = manifest["replaced_totals"]
    assert isinstance(totals, dict)
    left = manifest["left_out"]
    assert isinstance(left, list)
    lines = [f"# PluginBench bundle of run {manifest['run']}", "",
             "A scrubbed copy of a run, made by `pluginbench bundle`. Open it with `pluginbench show <bundle>`, ",
             "`pluginbench report <bundle>` or `pluginbench dashboard <bundle>` (read-only).", "",
             "## Replaced", ""]
    lines += [f"* {k}: {v}" for k, v in totals.items()] or ["* nothing"]
    lines += ["", "Placeholders: `<redacted credential>` (a delivered credential in any encoding), "
              "`<redacted token>` (a token-like string), `<user>`, and `<run>`, `<runs>`, `<home>`, `<cwd>`, `<tmp>`, "
              "`<python>`, `<pluginbench>` for host folders. Per file: `manifest.json` `replaced`.", "",
              "## Left out", ""]
    lines += [f"* `{x['path']}`: {x['reason']}" for x in left if isinstance(x, dict)]
    lines += ["", "Every file's sha256 is in `manifest.json`."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ opening a bundle


def is_bundle(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz")) and path.is_file()


#: The most a bundle may unpack to (every member's size, summed): a bundle is text, well under this.
MAX_UNPACKED = 4 << 30


def _refuse(path: Path, why: str, field: str | None = None) -> InputError:
    return InputError(f"{path} is not a bundle `pluginbench bundle` wrote: {why}", file=str(path), field=field,
                      fix="pass the .tar.gz exactly as `pluginbench bundle` wrote it; if it was changed, ask for it again")


def _members(path: Path, tar: tarfile.TarFile) -> str:
    """The one top folder of a bundle's members, after checking each member: a plain file or
    folder (a bundle holds no links or devices), a relative name without ``..`` under that
    folder, at most twice :data:`MAX_FILE`, and the unpacked total under :data:`MAX_UNPACKED`."""
    tops: set[str] = set()
    total = 0
    for m in tar.getmembers():
        parts = m.name.split("/")
        if m.name.startswith("/") or any(p in ("..", ".") for p in parts) or "\\" in m.name or "\x00" in m.name:
            raise _refuse(path, f"member {m.name!r} is not a plain relative name", field=m.name)
        if not (m.isfile() or m.isdir()):
            raise _refuse(path, f"member {m.name!r} is a link or a special file", field=m.name)
        if m.size > 2 * MAX_FILE:  # bundle writes no file over MAX_FILE; the manifest stays far below this
            raise _refuse(path, f"member {m.name!r} is {m.size:,} bytes, more than a bundle ever holds", field=m.name)
        total += m.size
        if total > MAX_UNPACKED:
            raise _refuse(path, f"it unpacks to over {MAX_UNPACKED >> 30} GiB")
        tops.add(parts[0])
    if len(tops) != 1:
        raise _refuse(path, f"it holds {len(tops)} top folders, not one ({', '.join(sorted(tops)[:3]) or 'none'})")
    return tops.pop()


def _manifest_files(path: Path, manifest_path: Path) -> dict[str, str]:
    """{file: sha256} from a bundle's manifest, or bad input naming what is wrong with it."""
    try:
        manifest = json.loads(manifest_path.read_bytes())
    except (OSError, ValueError) as exc:
        raise _refuse(path, f"{MANIFEST} is not JSON ({exc})", field=MANIFEST) from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, list):
        raise _refuse(path, f"{MANIFEST} has no list `files`", field=f"{MANIFEST}: files")
    out: dict[str, str] = {}
    for i, entry in enumerate(files):
        if not (isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("sha256"), str)):
            raise _refuse(path, f"{MANIFEST} files[{i}] is not {{path, sha256}}", field=f"{MANIFEST}: files[{i}]")
        out[entry["path"]] = entry["sha256"]
    return out


def extract_bundle(path: Path, into: Path) -> Path:
    """Unpack a bundle into ``into`` (only plain files and folders under one top folder, and
    tar's data filter too), check that the files are exactly the manifest's, each with its
    sha256, make it read-only; the run folder."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            top = _members(path, tar)
            tar.extractall(into, filter="data")
    except InputError:
        raise
    except (tarfile.TarError, OSError, EOFError, KeyError, ValueError) as exc:
        raise InputError(f"{path} is not a readable bundle ({exc})", file=str(path),
                         fix="pass a .tar.gz written by `pluginbench bundle`") from exc
    root = into / top
    manifest_path = root / MANIFEST
    if not root.is_dir() or not manifest_path.is_file():
        raise InputError(f"{path} holds no {MANIFEST}", file=str(path), fix="pass a .tar.gz written by `pluginbench bundle`")
    listed = _manifest_files(path, manifest_path)
    present = {rel for rel, _size in list_files(root)} - {MANIFEST, NOTE}
    for rel in sorted(present - set(listed)):
        raise _refuse(path, f"{rel} is not in the manifest (a file was added after the bundle was written)", field=rel)
    for rel, sha in sorted(listed.items()):
        f = root / rel
        if rel not in present or hashlib.sha256(f.read_bytes()).hexdigest() != sha:
            raise InputError(f"{path}: {rel} does not match the manifest's sha256", file=str(path),
                             field=rel, fix="the bundle was changed after it was written; ask for it again")
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames:
            os.chmod(os.path.join(dirpath, n), 0o444)
        for n in dirnames:
            os.chmod(os.path.join(dirpath, n), 0o555)
    os.chmod(root, 0o555)
    return root


def _writable(root: Path) -> None:
    for dirpath, dirnames, _files in os.walk(root):
        os.chmod(dirpath, stat.S_IRWXU)
        for n in dirnames:
            os.chmod(os.path.join(dirpath, n), stat.S_IRWXU)


def remove_extracted(base: Path) -> None:
    with contextlib.suppress(OSError):
        _writable(base)
    shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def opened_run(path: Path) -> Iterator[Path]:
    """A run directory as given, or a bundle unpacked read-only into a temp folder (removed after)."""
    if not is_bundle(path):
        yield path.absolute()
        return
    base = Path(tempfile.mkdtemp(prefix="pb-open-bundle-"))
    try:
        yield extract_bundle(path, base)
    finally:
        remove_extracted(base)
