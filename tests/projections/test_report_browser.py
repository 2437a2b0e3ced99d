"""report.html rendered by real headless Chromium (Debian's ``chromium`` package)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pluginbench import stats
from pluginbench.projections._report import build_report
from tests._prereq import require
from tests.projections.test_report import sample_run

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 1600
BANNER_RED = (0xC6, 0x28, 0x28)  # .banner background in _report_css


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[bytes]:
    require(shutil.which("chromium") is not None, "chromium (tools/install-chromium.sh)")
    argv = [
        "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(argv, capture_output=True, timeout=120, check=True)


class TableReader(HTMLParser):
    """Collects the per-task rows (cell texts) and the banners of a rendered DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.banners: dict[str, str] = {}
        self._task: str | None = None
        self._cell: list[str] | None = None
        self._banner: str | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("data-task"):
            # The per-task pass-rate table comes first; later tables (cost, code measures)
            # carry data-task rows too, and never replace it.
            self._task = a["data-task"] if a["data-task"] not in self.rows else None
            if self._task is not None:
                self.rows[self._task] = []
        elif tag in ("td", "th") and self._task is not None:
            self._cell = []
        elif tag == "div" and (a.get("id") or "").startswith("banner-"):
            self._banner = a["id"]
            self.banners[self._banner] = ""
            self._depth = 0
        elif self._banner is not None and tag == "div":
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._task is not None:
            self.rows[self._task].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._task = None
        elif tag == "div" and self._banner is not None:
            if self._depth == 0:
                self._banner = None
            else:
                self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._banner is not None:
            self.banners[self._banner] += data


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG into (width, height, rows of RGB(A) bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            ul = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + left) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + up) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif ftype == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else ul)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line) if bpp == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
        prev = line
    return width, height, rows


@pytest.fixture
def report(tmp_path: Path) -> tuple[Path, dict]:
    root = sample_run(tmp_path / "run")
    files = build_report(root)
    return files.report_html, json.loads(files.results_json.read_text())


def test_rendered_dom_has_per_task_pass_rates_and_banner(
    report: tuple[Path, dict], tmp_path: Path
) -> None:
    """Chromium's DOM holds every task row with each arm's k/n pass rate, and the simulated banner."""
    html_path, doc = report
    dom = chromium(["--dump-dom", html_path.as_uri()], tmp_path / "profile").stdout.decode()
    reader = TableReader()
    reader.feed(dom)
    assert sorted(reader.rows) == doc["tasks"]
    for task in doc["tasks"]:
        cells = reader.rows[task]
        assert cells[0] == task
        for arm in doc["arms"]:
            s = doc["per_task"][task][arm]
            known = s["passes"] + s["fails"] + s["empties"]
            expected = f"{s['passes']}/{known} ({round(s['pass_rate'] * 100)}%)"
            assert any(c.startswith(expected) for c in cells), (task, arm, expected, cells)
    assert "banner-simulated" in reader.banners
    assert "deterministic stand-in agent" in reader.banners["banner-simulated"]
    summary = doc["deltas"]["guided"]["summary"]["pass_rate"]
    assert summary["status"] == "ok"
    footer = dom[dom.index('<tr class="summary">') :]
    footer = " ".join(footer[: footer.index("</tr>")].split())
    assert stats.format_pp(summary["estimate"]) in footer  # pp with one decimal, as the headline
    assert f"90% range, no symmetry assumed, {summary['tasks']} tasks; sign-flip test at 0: p =" in footer


def test_screenshot_is_a_non_trivial_render(report: tuple[Path, dict], tmp_path: Path) -> None:
    """The screenshot is a full-size PNG with varied content and the red banner actually painted."""
    html_path, _ = report
    shot = tmp_path / "report.png"
    chromium(
        [
            f"--screenshot={shot}",
            f"--window-size={WIDTH},{HEIGHT}",
            "--hide-scrollbars",
            html_path.as_uri(),
        ],
        tmp_path / "profile",
    )
    data = shot.read_bytes()
    assert len(data) > 20_000
    width, height, rows = png_pixels(data)
    assert (width, height) == (WIDTH, HEIGHT)
    distinct_rows = len(set(rows))
    assert distinct_rows > HEIGHT // 10  # text and tables, not a blank page
    red = bytes(BANNER_RED)
    red_rows = sum(1 for r in rows if red * 20 in r)
    assert red_rows >= 20  # the banner is a solid red block many pixels tall

