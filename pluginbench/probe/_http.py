"""The probe's HTTP/1.1 server: the part of the stdlib's ``http.server`` the probe uses.

``http.server`` parses headers with the ``email`` package and brings ``http.client``,
``mimetypes``, ``calendar`` and ``ssl``'s users with it: about 9 ms of every probe run's
start, for a server that answers a few JSON and event-stream requests on loopback. This
module keeps its behaviour where a client can see it and reads requests more strictly:

* HTTP/1.1 with keep-alive (``Connection: close`` and HTTP/1.0 close after the answer);
  ``Expect: 100-continue`` is answered before the handler reads the body;
* a request line or header line over :data:`MAX_LINE` bytes is 414 / 431, more than
  :data:`MAX_HEADERS` headers is 431, a malformed request line, version or header line
  (a folded continuation line included) is 400, HTTP/2 and later 505, an unknown method
  501; each of these answers closes the connection;
* every answer carries ``Server`` and ``Date`` (RFC 7231's IMF-fixdate) as before.

The agent in the sandbox reaches this server, so nothing it sends is read unbounded: the
body is the handler's to read (``Content-Length``, bounded by the probe).
"""

from __future__ import annotations

import socketserver
import time
from http import HTTPStatus

#: the longest request or header line read, CRLF included (the stdlib's limit)
MAX_LINE = 65536
#: the most header lines one request may carry (the stdlib's limit)
MAX_HEADERS = 100

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def http_date(seconds: float | None = None) -> str:
    """``seconds`` (now by default) as an HTTP date: ``Sat, 05 Dec 2026 06:03:18 GMT``."""
    t = time.gmtime(seconds)
    return (f"{_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon - 1]} {t.tm_year} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT")


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return ""


class Headers:
    """A request's headers in arrival order, names as sent. ``get`` (None when absent) and
    ``h[name]`` (KeyError) ignore case and give the first value, so ``dict(headers)`` maps
    each name to its first value, as it does for the stdlib's ``HTTPMessage``."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = pairs

    def get(self, name: str, default: str | None = None) -> str | None:
        low = name.lower()
        return next((v for k, v in self._pairs if k.lower() == low), default)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def keys(self) -> list[str]:
        return [k for k, _ in self._pairs]

    def items(self) -> list[tuple[str, str]]:
        return list(self._pairs)


class RequestHandler(socketserver.StreamRequestHandler):
    """One connection: requests read one after another (keep-alive) and dispatched to
    ``do_<METHOD>``, which reads its own body from ``rfile`` and answers with
    :meth:`send_response`, :meth:`send_header`, :meth:`end_headers` and ``wfile``."""

    protocol_version = "HTTP/1.1"
    server_version = "pluginbench-probe/1"
    command = ""
    path = ""
    request_version = ""
    headers: Headers = Headers([])
    close_connection = True

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection:
            self.handle_one_request()

    def handle_one_request(self) -> None:
        self._headers_buffer: list[bytes] = []
        self.command = self.request_version = ""
        try:
            line = self.rfile.readline(MAX_LINE + 1)
            if not line:
                self.close_connection = True
                return
            if len(line) > MAX_LINE:
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
                return
            if not self._parse_request(line):
                return
            handler = getattr(self, "do_" + self.command, None)
            if handler is None:
                self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"unsupported method {self.command!r}")
                return
            handler()
            self.wfile.flush()
        except TimeoutError:  # an idle keep-alive connection past the handler's timeout
            self.close_connection = True

    def _parse_request(self, line: bytes) -> bool:
        """Read the request line and headers; False (an error answered) when malformed."""
        self.close_connection = True
        words = line.decode("iso-8859-1").rstrip("\r\n").split()
        if len(words) != 3:
            self.send_error(HTTPStatus.BAD_REQUEST, "bad request syntax")
            return False
        command, path, version = words
        major, dot, minor = version[5:].partition(".") if version.startswith("HTTP/") else ("", "", "")
        if not (dot and major.isdigit() and minor.isdigit() and len(major) <= 10 and len(minor) <= 10):
            self.send_error(HTTPStatus.BAD_REQUEST, f"bad request version {version!r}")
            return False
        number = (int(major), int(minor))
        if number >= (2, 0):
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"invalid HTTP version {version}")
            return False
        self.command, self.request_version = command, version
        self.path = "/" + path.lstrip("/") if path.startswith("//") else path  # never a scheme-relative URL
        pairs: list[tuple[str, str]] = []
        while True:
            raw = self.rfile.readline(MAX_LINE + 1)
            if len(raw) > MAX_LINE:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "header line too long")
                return False
            if raw in (b"\r\n", b"\n", b""):
                break
            if len(pairs) >= MAX_HEADERS:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, f"more than {MAX_HEADERS} headers")
                return False
            text = raw.decode("iso-8859-1").rstrip("\r\n")
            name, colon, value = text.partition(":")
            if not colon or not name or name != name.strip() or text[:1] in (" ", "\t"):
                self.send_error(HTTPStatus.BAD_REQUEST, "malformed header line")
                return False
            pairs.append((name, value.strip(" \t")))
        self.headers = Headers(pairs)
        connection = (self.headers.get("Connection") or "").lower()
        self.close_connection = connection == "close" or (number < (1, 1) and connection != "keep-alive")
        if (self.headers.get("Expect") or "").lower() == "100-continue" and number >= (1, 1):
            self.send_response_only(HTTPStatus.CONTINUE)
            self.end_headers()
        return True

    # -- answering

    def send_response_only(self, code: int, message: str | None = None) -> None:
        reason = _phrase(code) if message is None else message
        self._headers_buffer.append(f"{self.protocol_version} {int(code)} {reason}\r\n".encode("latin-1", "strict"))

    def send_response(self, code: int, message: str | None = None) -> None:
        """The status line, ``Server`` and ``Date``; headers follow, then :meth:`end_headers`."""
        self.send_response_only(code, message)
        self.send_header("Server", self.server_version)
        self.send_header("Date", http_date())

    def send_header(self, keyword: str, value: str) -> None:
        self._headers_buffer.append(f"{keyword}: {value}\r\n".encode("latin-1", "strict"))
        if keyword.lower() == "connection":
            if value.lower() == "close":
                self.close_connection = True
            elif value.lower() == "keep-alive":
                self.close_connection = False

    def end_headers(self) -> None:
        self._headers_buffer.append(b"\r\n")
        self.wfile.write(b"".join(self._headers_buffer))
        self._headers_buffer = []

    def send_error(self, code: int, message: str | None = None) -> None:
        """A plain-text error answer that closes the connection."""
        body = f"{int(code)} {_phrase(code)}: {message or _phrase(code)}\n".encode("utf-8", "replace")
        self.send_response(code)
        self.send_header("Connection", "close")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True


class ThreadingHTTPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """A thread per connection (daemon threads), the address reusable at once."""

    daemon_threads = True
    allow_reuse_address = True
