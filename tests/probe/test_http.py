"""The probe's own HTTP/1.1 layer, spoken to over raw sockets: keep-alive, closing, and
the bounded, strict reading of what an agent in a sandbox may send it."""

from __future__ import annotations

import datetime as dt
import email.utils
import socket
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from pluginbench.probe import PROBE_ANTHROPIC_KEY, ProbeServer, load_scenario
from pluginbench.probe._http import MAX_HEADERS, MAX_LINE, Headers, http_date

SCENARIO = {"final": {"text": "ok"}}


@pytest.fixture()
def conn() -> Iterator[socket.socket]:
    with ProbeServer(load_scenario(SCENARIO)) as probe:
        parts = urlsplit(probe.base_url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as s:
            yield s


def _answer(s: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One answer off the connection: status, headers (lower-case names), body."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        assert chunk, f"connection closed before an answer: {buf!r}"
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = s.recv(65536)
        assert chunk
        rest += chunk
    return int(status_line.split()[1]), headers, rest[:length]


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def test_a_keep_alive_connection_serves_request_after_request_with_server_and_date(conn: socket.socket) -> None:
    """Two GETs on one HTTP/1.1 connection are both answered; each answer names the
    server and carries an RFC 7231 date of now."""
    for _ in range(2):
        conn.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nx-api-key: " + PROBE_ANTHROPIC_KEY.encode() + b"\r\n\r\n")
        status, headers, body = _answer(conn)
        assert status == 200 and b"claude" in body
        assert headers["server"] == "pluginbench-probe/1"
        sent = email.utils.parsedate_to_datetime(headers["date"])
        assert abs((sent - dt.datetime.now(dt.UTC)).total_seconds()) < 60


@pytest.mark.parametrize("request_head", [b"GET /v1/models HTTP/1.0\r\n\r\n",
                                          b"GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n"],
                         ids=["http-1.0", "connection-close"])
def test_http_1_0_and_connection_close_end_the_connection_after_the_answer(conn: socket.socket,
                                                                            request_head: bytes) -> None:
    """The answer arrives, then the server closes the connection."""
    conn.sendall(request_head)
    assert _answer(conn)[0] == 200
    assert _closed(conn)


def test_expect_100_continue_is_answered_before_the_body_is_sent(conn: socket.socket) -> None:
    """A client that waits for ``100 Continue`` gets it, sends its body, and gets the answer."""
    body = b'{"model": "claude-sonnet-4-5", "messages": []}'
    conn.sendall(b"POST /v1/messages/count_tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Expect: 100-continue\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    interim = b""
    while not interim.endswith(b"\r\n\r\n"):
        interim += conn.recv(1)
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    conn.sendall(body)
    status, _, answer = _answer(conn)
    assert status == 200 and b"input_tokens" in answer


@pytest.mark.parametrize(("request_head", "status"), [
    (b"GET /" + b"a" * MAX_LINE + b" HTTP/1.1\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nX-Long: " + b"a" * MAX_LINE + b"\r\n\r\n", 431),
    (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1)) + b"\r\n", 431),
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET / HTTP/x.y\r\n\r\n", 400),
    (b"GET / SPDY/1.1\r\n\r\n", 400),
    (b"GET / HTTP/2.0\r\n\r\n", 505),
    (b"GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nX-Space : 1\r\n\r\n", 400),
    (b"PUT /v1/messages HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 501),
], ids=["request-line-too-long", "header-line-too-long", "too-many-headers", "no-request-line",
        "bad-version", "not-http", "http-2", "folded-header", "header-without-colon",
        "space-before-colon", "unknown-method"])
def test_a_malformed_or_oversized_request_is_refused_and_the_connection_closed(
        conn: socket.socket, request_head: bytes, status: int) -> None:
    """Over-long lines, too many headers, a bad request line, version or header line, and
    an unknown method each get their status and a closed connection, never a hang."""
    conn.sendall(request_head)
    got, headers, _ = _answer(conn)
    assert got == status
    assert headers["connection"] == "close"
    assert _closed(conn)


def test_http_dates_are_imf_fixdate_in_english_whatever_the_locale() -> None:
    """The Date header's format, for a known instant."""
    assert http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT"
    assert http_date(1796450598) == email.utils.formatdate(1796450598, usegmt=True)


def test_the_probe_server_loads_neither_http_server_nor_email() -> None:
    """Starting the probe imports none of http.server's stack (its start-up cost)."""
    code = ("import sys; from pluginbench.probe import ProbeServer, load_scenario; "
            f"ProbeServer(load_scenario({SCENARIO!r})).start().stop(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('email', 'mimetypes', 'calendar') "
            "or m in ('http.server', 'http.client')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_headers_are_read_case_blind_first_value_first_as_the_stdlibs_message() -> None:
    """``get`` and ``[]`` ignore case and give the first of repeated headers; ``dict()``
    keeps the names as sent with their first values; ``items()`` keeps every pair."""
    h = Headers([("X-Api-Key", "a"), ("x-api-key", "b"), ("Host", "x")])
    assert (h.get("X-API-KEY"), h["host"], h.get("missing")) == ("a", "x", None)
    assert dict(h) == {"X-Api-Key": "a", "x-api-key": "a", "Host": "x"}
    assert h.items() == [("X-Api-Key", "a"), ("x-api-key", "b"), ("Host", "x")]
    with pytest.raises(KeyError):
        h["missing"]
