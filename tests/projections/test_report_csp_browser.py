"""report.html carries a strict Content-Security-Policy that real headless Chromium (Debian's
``chromium``) enforces: nothing loads or runs but the page's own inline style."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest

from pluginbench.projections._report import build_report
from tests.projections._synthetic_run import make_run
from tests.projections.test_report_browser import chromium

pytestmark = pytest.mark.browser

META = re.compile(r'<head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def _violations(html: Path, profile: Path) -> list[str]:
    """Chromium's console lines about the Content Security Policy while it loads ``html``."""
    done = chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", html.as_uri()], profile)
    return [line for line in done.stderr.decode(errors="replace").splitlines() if "Content Security Policy" in line]


def test_the_report_allows_only_its_own_style_and_chromium_enforces_it(tmp_path: Path) -> None:
    """The policy is default-src 'none' with the one inline style allowed by its hash (no script, no network,
    no 'unsafe-inline'); Chromium reports no violation on the page and one on a copy whose style changed."""
    run = make_run(tmp_path / "run", tasks=5, repeats=2, running=2)
    page = build_report(run).report_html
    text = page.read_text(encoding="utf-8")
    found = META.search(text)
    assert found is not None and found.start() < text.index("<style>")
    directives = dict(d.strip().split(" ", 1) for d in found.group(1).split(";"))
    style = text[text.index("<style>") + len("<style>"):text.index("</style>")]
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert directives == {"default-src": "'none'", "style-src": f"'sha256-{digest}'", "base-uri": "'none'",
                          "form-action": "'none'"}
    assert text.count("<style>") == 1 and "<script" not in text and " style=" not in text
    assert _violations(page, tmp_path / "p1") == []
    changed = tmp_path / "changed.html"
    changed.write_text(text.replace("<style>", "<style> ", 1), encoding="utf-8")
    assert any("style-src" in line for line in _violations(changed, tmp_path / "p2"))
