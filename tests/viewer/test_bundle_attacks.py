"""An attacker's table against ``pluginbench bundle`` and opening a bundle: damaged, tampered
or crafted archives, and outputs that exist or sit inside the run, all end in exit 2 with
the member or file named, no traceback and nothing written; NUL-holding text never ships."""

from __future__ import annotations

import base64
import copy
import gzip
import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pluginbench.cli import app
from pluginbench.viewer import _bundle, _scrub
from tests.viewer._fixture import CLAUDE_ID, inspect_run

TOKEN = "sk-ant-oat01-" + "R" * 30 + "attack-test-token"
Mutate = Callable[[tarfile.TarInfo, bytes | None], tuple[tarfile.TarInfo, bytes | None] | None]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("attack")
    run = inspect_run(base / "attack-run")
    out = base / "good.tar.gz"
    _bundle.write_bundle(run, out, environ=dict(os.environ))
    return run, out


def _variant(good: Path, target: Path, mutate: Mutate, extra: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    raw = io.BytesIO()
    with tarfile.open(good) as src, tarfile.open(fileobj=raw, mode="w") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None  # type: ignore[union-attr]  # files only
            got = mutate(copy.copy(m), data)
            if got is not None:
                info, body = got
                if body is not None:
                    info.size = len(body)
                dst.addfile(info, None if body is None else io.BytesIO(body))
        for info, body in extra:
            dst.addfile(info, None if body is None else io.BytesIO(body))
    target.write_bytes(gzip.compress(raw.getvalue()))
    return target


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, size
    return info


def _on(suffix: str, body: bytes | None = None, kind: bytes | None = None, link: str = "") -> Mutate:
    def mutate(m: tarfile.TarInfo, data: bytes | None) -> tuple[tarfile.TarInfo, bytes | None]:
        if not m.name.endswith(suffix):
            return m, data
        if kind is not None:
            m.type, m.linkname, m.size = kind, link, 0
            return m, None
        return m, body

    return mutate


def _same(m: tarfile.TarInfo, data: bytes | None) -> tuple[tarfile.TarInfo, bytes | None]:
    return m, data


TOP = "attack-run"
CASES: list[tuple[str, Mutate, list[tuple[tarfile.TarInfo, bytes | None]], str]] = [
    ("manifest not JSON", _on("bundle/manifest.json", b"{not json"), [], "is not JSON"),
    ("manifest an array", _on("bundle/manifest.json", b"[1, 2]"), [], "no list `files`"),
    ("manifest entry without sha256", _on("bundle/manifest.json", b'{"files": [{"path": "../../etc/passwd"}]}'), [],
     "files[0] is not"),
    ("a file added", _same, [(_info(f"{TOP}/evidence/extra.txt", size=3), b"abc")], "evidence/extra.txt is not in the manifest"),
    ("absolute symlink", _same, [(_info(f"{TOP}/evil", tarfile.SYMTYPE, "/etc/passwd"), None)], "a link or a special file"),
    ("events.jsonl a symlink", _on("/events.jsonl", kind=tarfile.SYMTYPE, link="report/results.csv"), [], "link or a special"),
    ("hard link to a later member", _on("/events.jsonl", kind=tarfile.LNKTYPE, link=f"{TOP}/report/results.json"), [],
     "link or a special"),
    ("a FIFO", _on("/events.jsonl", kind=tarfile.FIFOTYPE), [], "link or a special"),
    ("../ member", _same, [(_info("../escape.txt", size=3), b"abc")], "not a plain relative name"),
    ("absolute member", _same, [(_info("/tmp/pb-absolute-member.txt", size=3), b"abc")], "not a plain relative name"),
    ("two top folders", _same, [(_info("second", tarfile.DIRTYPE), None)], "2 top folders"),
]


def test_damaged_or_crafted_bundles_are_refused_by_name(good: tuple[Path, Path], tmp_path: Path) -> None:
    """Each crafted bundle (bad manifest, added file, links, FIFOs, ../ or absolute members) exits 2 naming why."""
    _run, archive = good
    runner = CliRunner()
    for i, (label, mutate, extra, words) in enumerate(CASES):
        crafted = _variant(archive, tmp_path / f"case{i}.tar.gz", mutate, extra)
        res = runner.invoke(app, ["show", str(crafted), CLAUDE_ID])
        assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output, (label, res.output)
    assert not Path("/tmp/pb-absolute-member.txt").exists() and not (tmp_path.parent / "escape.txt").exists()
    truncated = tmp_path / "cut.tar.gz"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    res = runner.invoke(app, ["show", str(truncated)])
    assert res.exit_code == 2 and "not a readable bundle" in res.output
    assert runner.invoke(app, ["show", str(archive), CLAUDE_ID]).exit_code == 0


def test_bundle_refuses_an_existing_output_or_one_inside_the_run(good: tuple[Path, Path], tmp_path: Path) -> None:
    """-o naming an existing file, or a file inside the run directory, exits 2 and writes nothing."""
    run, archive = good
    before = archive.read_bytes()
    runner = CliRunner()
    res = runner.invoke(app, ["bundle", str(run), "-o", str(archive)])
    assert res.exit_code == 2 and "already exists" in res.output and archive.read_bytes() == before
    for inside in (run / "inside.tar.gz", run / "report" / "b.tar.gz"):
        res = runner.invoke(app, ["bundle", str(run), "-o", str(inside)])
        assert res.exit_code == 2 and "inside the run directory" in res.output and not inside.exists(), res.output


def test_text_holding_nul_bytes_is_left_out(good: tuple[Path, Path], tmp_path: Path) -> None:
    """A UTF-16 file (valid UTF-8 bytes, but the token hides between NULs) is left out, never shipped."""
    run, _archive = good
    leak = run / "evidence" / "attempts" / CLAUDE_ID / "grading" / "u16.txt"
    leak.write_bytes(f"token {TOKEN}\n".encode("utf-16-le"))
    try:
        out = tmp_path / "u16.tar.gz"
        _bundle.write_bundle(run, out, environ={**os.environ, "CLAUDE_CODE_OAUTH_TOKEN": TOKEN})
        raw = gzip.decompress(out.read_bytes())
        assert TOKEN.encode("utf-16-le")[:40] not in raw and b"u16.txt" in raw
        with tarfile.open(out) as tar:
            manifest = json.loads(tar.extractfile(f"{TOP}/bundle/manifest.json").read())  # type: ignore[union-attr]  # a file
        assert any(x["path"].endswith("grading/u16.txt") and "not UTF-8" in x["reason"] for x in manifest["left_out"])
    finally:
        leak.unlink()


def test_pieces_of_a_delivered_token_cut_by_line_wraps_are_redacted(good: tuple[Path, Path], tmp_path: Path) -> None:
    """base64 wrapped at 76 columns and a token folded across lines leave no 16-character piece of any form."""
    run, _archive = good
    leak = run / "evidence" / "attempts" / CLAUDE_ID / "grading" / "test-stdout.txt"
    original = leak.read_bytes()
    wrapped = base64.encodebytes(f"Authorization: {TOKEN}".encode()).decode()
    leak.write_bytes(original + f"{wrapped}\nfolded: {TOKEN[:33]}\\\n{TOKEN[33:]}\n".encode())
    try:
        out = tmp_path / "wrapped.tar.gz"
        result = _bundle.write_bundle(run, out, environ={**os.environ, "CLAUDE_CODE_OAUTH_TOKEN": TOKEN})
        raw = gzip.decompress(out.read_bytes()).decode("utf-8", "replace")
        grams = _scrub.fragment_grams(_scrub.credential_forms([TOKEN]))
        assert result.replaced.get("piece of a delivered credential", 0) >= 3
        assert not [g for g in grams if g in raw]
    finally:
        leak.write_bytes(original)


def test_show_prints_escape_sequences_from_evidence_as_text(good: tuple[Path, Path]) -> None:
    """An ANSI/OSC escape in the verifier's output reaches the terminal as visible \\x1b text, never raw."""
    run, _archive = good
    out = run / "evidence" / "attempts" / CLAUDE_ID / "grading" / "test-stdout.txt"
    original = out.read_bytes() if out.exists() else None
    out.write_bytes((original or b"") + b"ESC-TEST \x1b]0;retitled\x07 \x1b[2J\n")
    try:
        res = CliRunner().invoke(app, ["show", str(run), CLAUDE_ID])
        assert res.exit_code == 0 and "\x1b" not in res.output and "\x07" not in res.output
        assert "\\x1b]0;retitled\\x07" in res.output, res.output
    finally:
        if original is None:
            out.unlink()
        else:
            out.write_bytes(original)


def test_a_member_larger_than_a_bundle_holds_is_refused_before_unpacking(good: tuple[Path, Path], tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A member over twice the largest file a bundle writes (a decompression bomb) exits 2 before anything is unpacked."""
    _run, archive = good
    with tarfile.open(archive) as tar:
        largest = max(m.size for m in tar.getmembers())
    monkeypatch.setattr(_bundle, "MAX_FILE", largest)
    big = _variant(archive, tmp_path / "big.tar.gz", _same, [(_info(f"{TOP}/zeros.txt", size=2 * largest + 1), b"\0" * (2 * largest + 1))])
    res = CliRunner().invoke(app, ["show", str(big)])
    assert res.exit_code == 2 and "more than a bundle ever holds" in res.output and "zeros.txt" in res.output, res.output
