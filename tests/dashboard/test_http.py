"""The real dashboard server over HTTP: what it serves and everything it refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pluginbench.dashboard._discovery import run_key
from pluginbench.projections import served_report
from tests.dashboard._runs import synthetic_run
from tests.dashboard.server import dashboard, request


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, Path]]:
    runs = tmp_path_factory.mktemp("runs")
    root = synthetic_run(runs / "demo")
    (root / "secret.txt").write_text("not for the browser")
    corrupt = synthetic_run(runs / "corrupt", report=False)
    (corrupt / "events.jsonl").write_bytes(b"not json\n" + (corrupt / "events.jsonl").read_bytes())
    with dashboard(runs) as port:
        yield port, run_key(root), root


def test_pages_and_the_runs_two_files_are_served(served: tuple[int, str, Path]) -> None:
    """GET answers the three views, report.html (its attempt links made live, nothing else changed) and results.csv by the run's key."""
    port, key, root = served
    for path in ("/", "/results", f"/run/{key}", "/results?arm=vanilla"):
        status, body = request(port, "GET", path)
        assert status == 200 and b"<main id=\"live\" data-live=\"1\"" in body, path
    disk = (root / "report" / "report.html").read_bytes()
    assert request(port, "GET", f"/run/{key}/report.html") == (200, served_report(disk)) and served_report(disk) != disk
    assert request(port, "GET", f"/run/{key}/results.csv") == (200, (root / "report" / "results.csv").read_bytes())
    assert request(port, "HEAD", "/")[0] == 200
    assert request(port, "GET", "/", host=f"localhost:{port}")[0] == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_every_method_but_get_is_refused(served: tuple[int, str, Path], method: str) -> None:
    """Anything but GET/HEAD gets 405, on pages and on the run's files alike."""
    port, key, _ = served
    for path in ("/", f"/run/{key}", f"/run/{key}/report.html"):
        assert request(port, method, path, body=b"x=1")[0] == 405


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1", "localhost", "127.0.0.1:1", "[::1]:{port}",
                                  "0.0.0.0:{port}", "127.0.0.1:{port}.evil.example", ""])
def test_a_wrong_host_is_refused(served: tuple[int, str, Path], host: str) -> None:
    """Only Host 127.0.0.1:<port> or localhost:<port> is answered (DNS rebinding gets 403)."""
    port, key, _ = served
    status, body = request(port, "GET", f"/run/{key}", host=host.format(port=port))
    assert status == 403 and b"Host must be" in body


@pytest.mark.parametrize("path", [
    "/run/{key}/evaluation.json",
    "/run/{key}/secret.txt",
    "/run/{key}/events.jsonl",
    "/run/{key}/report/report.html",
    "/run/{key}/results.json",
    "/run/{key}/../{key}/secret.txt",
    "/run/../../etc/passwd",
    "/run/{key}/..%2Fsecret.txt",
    "/run/{key}/%2e%2e/secret.txt",
    "/run/{key}/%2E%2E%2Fevents.jsonl",
    "/run/{key}/..%5Csecret.txt",
    "/run/not-a-run/report.html",
    "/etc/passwd",
])
def test_no_file_but_the_runs_report_and_csv_is_served(served: tuple[int, str, Path], path: str) -> None:
    """Other files of the run, '..' and encoded traversal are refused (400) or not found (404)."""
    port, key, _ = served
    status, body = request(port, "GET", path.format(key=key))
    assert status in (400, 404), (path, status)
    assert b"not for the browser" not in body and b"evaluation_sha256" not in body


def test_pages_carry_a_strict_content_security_policy(served: tuple[int, str, Path]) -> None:
    """Pages load scripts only from the dashboard itself: no CDN, no inline script."""
    import http.client

    port, _, _ = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/")
    resp = conn.getresponse()
    csp = resp.getheader("Content-Security-Policy") or ""
    body = resp.read()
    conn.close()
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert b"http://" not in body.replace(b"http://www.w3.org/2000/svg", b"") and b"https://" not in body


def test_the_server_listens_on_loopback_only(served: tuple[int, str, Path]) -> None:
    """Nothing answers on the machine's other addresses."""
    import socket

    port, _, _ = served
    addresses = {ai[4][0] for ai in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
    addresses.add("127.0.0.2")  # another loopback address: answered only if bound to 0.0.0.0
    for addr in addresses:
        with socket.socket() as s:
            s.settimeout(2)
            assert s.connect_ex((addr, port)) != 0, addr


def test_a_taken_port_is_bad_input(served: tuple[int, str, Path], tmp_path: Path) -> None:
    """Starting a second dashboard on a taken port exits 2 naming --port, without a traceback."""
    import subprocess
    import sys

    port, _, _ = served
    out = subprocess.run([sys.executable, "-m", "pluginbench", "dashboard", str(tmp_path), "--port", str(port)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--port" in out.stderr and "Traceback" not in out.stderr


def test_a_missing_folder_is_bad_input(tmp_path: Path) -> None:
    """A folder that does not exist exits 2 naming it, and no server starts."""
    import subprocess
    import sys

    missing = tmp_path / "nope"
    out = subprocess.run([sys.executable, "-m", "pluginbench", "dashboard", str(missing)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and str(missing) in out.stderr and "Traceback" not in out.stderr


def test_containers_check_of_an_unreadable_run_says_why(served: tuple[int, str, Path]) -> None:
    """The left-running check on a run whose log does not decode answers with the reason, not a server error."""
    port, _, root = served
    status, body = request(port, "GET", f"/run/{run_key(root.parent / 'corrupt')}/left-running")
    assert status == 200 and b"could not check" in body and b"line 1" in body


def test_containers_check_of_a_local_run_answers_without_docker(served: tuple[int, str, Path]) -> None:
    """On the local backend the check lists left-behind sandbox folders: none for a finished run."""
    port, key, _ = served
    status, body = request(port, "GET", f"/run/{key}/left-running")
    assert status == 200 and b"nothing left running" in body


def test_report_html_carries_the_pages_csp(served: tuple[int, str, Path]) -> None:
    """report.html is served with the same Content-Security-Policy as the dashboard's own pages."""
    import http.client

    port, key, _ = served

    def csp(path: str) -> str | None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200, path
            return resp.getheader("Content-Security-Policy")
        finally:
            conn.close()

    page = csp(f"/run/{key}")
    assert page and "default-src 'none'" in page
    assert csp(f"/run/{key}/report.html") == page
