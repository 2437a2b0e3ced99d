"""The loopback HTTP server: routes, credential refusal, recording (stdlib threads).

Backend-neutral on purpose: it runs in its own threads (:class:`._http.ThreadingHTTPServer`),
so asyncio, trio and plain synchronous tests can all drive a real CLI against it.
"""

import contextlib
import ipaddress
import json
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from .._serving import WakeableServing
from ..errors import InputError
from . import _anthropic as anth
from . import _chat as chat
from . import _gemini as gem
from . import _responses as resp
from ._http import RequestHandler, ThreadingHTTPServer
from ._launch import PROBE_TOKENS
from ._match import choose, credential_of, is_coding, looks_real, request_cwd
from ._scenario import ErrorSpec, Scenario, Step, StepUsage

_MODELS = ("claude-sonnet-4-5", "gpt-5.5")
#: The biggest request body the probe reads (after gzip): the agent in the sandbox
#: reaches it, and a body it announces or a gzip bomb it sends is host memory.
MAX_BODY_BYTES = 64 * 1024 * 1024


def _read_body(h: RequestHandler) -> bytes | None:
    """The request body (gunzipped when so encoded), or None when it is over
    :data:`MAX_BODY_BYTES` (announced, or once decompressed)."""
    try:
        length = max(0, int(h.headers.get("Content-Length") or 0))
    except ValueError:
        length = 0
    if length > MAX_BODY_BYTES:
        return None
    raw = h.rfile.read(length)
    if (h.headers.get("Content-Encoding") or "").lower() == "gzip":
        # An undecodable body raises (zlib.error): the request ends unanswered, unrecorded.
        raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, MAX_BODY_BYTES + 1)
        if len(raw) > MAX_BODY_BYTES:
            return None
    return raw


class ProbeRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request the probe received and what it answered.

    ``kind`` is ``coding`` (a model turn of the agent's conversation: it offers tools) or
    ``side`` (title/topic generation, quota probes, ``count_tokens``, ``/v1/models``,
    ``HEAD /api/hello``, unknown paths, and refused requests). ``answer`` is text, tool, error, drop_stream,
    refused, count_tokens, models, hello or not_found. ``usage`` is what the answer
    reported (None when it reported none or a faulty one, then ``usage_fault`` says which:
    ``omitted`` or ``malformed``); ``completed`` is False when the stream was
    cut (scripted or by the client). ``headers`` has credentials redacted.
    """

    seq: int
    api: str  # anthropic | responses | chat | gemini | other
    method: str
    path: str
    kind: str
    model: str | None
    rule: str | None
    rule_index: int | None
    step: int | None
    scripted: bool
    answer: str
    status: int
    stream: bool
    usage: StepUsage | None
    completed: bool
    refused_real_credential: bool
    headers: dict[str, str]
    body: Any
    usage_fault: str | None = None  # omitted | malformed: the answer's usage was faulty by script


def _loopback(host: str) -> tuple[str, socket.AddressFamily]:
    """The bind address for ``host`` if it is loopback; anything else is refused."""
    name = "127.0.0.1" if host == "localhost" else host
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        ip = None
    if ip is None or not ip.is_loopback:
        raise InputError(f"the probe binds only to loopback, not {host!r}", field="host",
                         fix="use 127.0.0.1 (or ::1)")
    return name, socket.AF_INET6 if ip.version == 6 else socket.AF_INET


def _redact(headers: Any) -> dict[str, str]:
    out = {}
    for key, value in headers.items():
        if key.lower() in ("x-api-key", "x-goog-api-key", "authorization", "cookie"):
            value = f"<redacted {len(value)} chars>"
        out[key] = value
    return out


class _HTTPServer(ThreadingHTTPServer):
    probe: "ProbeServer"


class _Handler(RequestHandler):
    timeout = 120  # reaps idle keep-alive connections
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.probe._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.probe._track(self.connection, False)

    def do_POST(self) -> None:
        self.server.probe._handle(self, "POST")

    def do_GET(self) -> None:
        self.server.probe._handle(self, "GET")

    def do_HEAD(self) -> None:
        self.server.probe._handle(self, "HEAD")

    # -- writing helpers (called by ProbeServer._handle)

    def send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_probe_" + uuid.uuid4().hex[:16])
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_cut_json(self, obj: Any) -> None:
        """Announce a whole JSON body, send half of it, and drop the connection."""
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    def send_stream(self, events: list[bytes], cut: bool) -> bool:
        """Write SSE events chunked; ``cut`` drops the connection instead of ending the
        body. Returns False when the client went away first."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", "req_probe_" + uuid.uuid4().hex[:16])
        self.send_header("x-request-id", "req_probe_" + uuid.uuid4().hex[:16])
        self.end_headers()
        try:
            for event in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            if cut:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return False
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True
            return False
        return True


class ProbeServer:
    """A scripted model server on loopback, serving in a background thread.

    Use as a context manager (or :meth:`start` / :meth:`stop`). ``base_url`` has no
    ``/v1`` (Claude Code appends it; Codex's provider ``base_url`` is ``{base_url}/v1``,
    see :func:`launch_env`). Requests carrying a credential shaped like a real one
    (``sk-…`` other than the probe's, or a JWT) get 401 and are recorded with
    ``refused_real_credential=True``. ``log``, if given, receives every record as a JSON line
    (without its request body when ``log_bodies`` is false) as soon as it is settled, so a
    killed process leaves every request answered before the kill in it,
    in arrival order like :attr:`requests` (a streamed answer is recorded when its stream
    ends, which can be after a later, shorter request was answered: its line waits for it).
    """

    def __init__(self, scenario: Scenario, host: str = "127.0.0.1", port: int = 0,
                 *, log: str | Path | None = None, log_bodies: bool = True) -> None:
        self.scenario = scenario
        self._log_bodies = log_bodies
        bind, family = _loopback(host)

        class Server(_HTTPServer):
            address_family = family

        if not 0 <= port <= 65535:
            raise InputError(f"port {port} is out of range", field="--port", fix="pass a port from 1 to 65535, or 0 for any free port")
        self._log = Path(log) if log is not None else None
        if self._log is not None:
            try:  # an unwritable log is refused before the server answers anything
                with self._log.open("ab"):
                    pass
            except OSError as exc:
                raise InputError(f"cannot append to the request log {self._log}: {exc.strerror}", file=str(self._log),
                                 field="--log", fix="choose a writable file (its folder must exist)") from None
        try:
            self._httpd = Server((bind, port), _Handler, bind_and_activate=True)
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}", field="--port",
                             fix="choose another port, or 0 for any free port") from None
        self._httpd.probe = self
        self._lock = threading.Condition()
        self._records: list[ProbeRequest] = []
        self._seq = 0
        self._logged_upto = 0  # every seq up to this one is settled in the log
        self._unlogged: dict[int, ProbeRequest | None] = {}  # settled out of order; None: nothing to log
        self._in_flight = 0
        self._last_activity = time.monotonic()
        self._conns: set[socket.socket] = set()
        self._serving: WakeableServing | None = None
        h = bind if family == socket.AF_INET else f"[{bind}]"
        self.port: int = self._httpd.server_address[1]
        self.base_url = f"http://{h}:{self.port}"

    # -- lifecycle

    def start(self) -> "ProbeServer":
        if self._serving is None:
            self._serving = WakeableServing(self._httpd, f"probe:{self.port}")
        return self

    def stop(self) -> None:
        """Stop serving and cut any open connection (idempotent)."""
        if self._serving is not None:
            self._serving.stop()  # at once: no poll interval to wait out
            self._serving = None
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> "ProbeServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- observations

    @property
    def requests(self) -> tuple[ProbeRequest, ...]:
        """Every recorded request, in arrival order. A streamed answer is recorded when its
        stream ends, so call :meth:`wait_idle` before reading after a client returns."""
        with self._lock:
            return tuple(sorted(self._records, key=lambda r: r.seq))

    def served_usage(self, kind: str = "coding") -> dict[str, StepUsage]:
        """Usage the probe reported, summed per model, over completed answers of ``kind``
        (``coding``, ``side`` or ``all``). Cut streams and errors are not counted."""
        totals: dict[str, StepUsage] = {}
        for r in self.requests:
            if r.usage is None or not r.completed or r.status != 200:
                continue
            if kind != "all" and r.kind != kind:
                continue
            key = r.model or ""
            totals[key] = totals[key] + r.usage if key in totals else r.usage
        return totals

    def wait_idle(self, timeout: float = 5.0, quiet: float = 0.1) -> bool:
        """Block until no request has been in flight for ``quiet`` seconds; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                now = time.monotonic()
                idle_for = now - self._last_activity
                if self._in_flight == 0 and idle_for >= quiet:
                    return True
                if now >= deadline:
                    return False
                self._lock.wait(min(deadline - now, max(quiet - idle_for, 0.01)))

    # -- internals

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _record(self, rec: ProbeRequest) -> None:
        with self._lock:
            self._records.append(rec)
            self._settle(rec.seq, rec)

    def _settle(self, seq: int, rec: ProbeRequest | None) -> None:
        """Append the log lines now in arrival order (hold the lock). A request is settled
        by its record, or with ``None`` when it ended without one, so none holds back the
        rest for ever."""
        if self._log is None:
            return
        self._unlogged[seq] = rec
        lines: list[bytes] = []
        while self._logged_upto + 1 in self._unlogged:
            self._logged_upto += 1
            ready = self._unlogged.pop(self._logged_upto)
            if ready is not None:
                kept = ready if self._log_bodies else msgspec.structs.replace(ready, body=None)
                lines.append(msgspec.json.encode(kept) + b"\n")
        if lines:
            with self._log.open("ab") as f:
                f.write(b"".join(lines))

    def _handle(self, h: _Handler, method: str) -> None:
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._in_flight += 1
            self._last_activity = time.monotonic()
        try:
            self._serve(h, method, seq)
        finally:
            with self._lock:
                if seq > self._logged_upto and seq not in self._unlogged:
                    self._settle(seq, None)  # it failed before recording
                self._in_flight -= 1
                self._last_activity = time.monotonic()
                self._lock.notify_all()

    def _serve(self, h: _Handler, method: str, seq: int) -> None:
        raw = _read_body(h) if method == "POST" else b""
        if raw is None:  # over MAX_BODY_BYTES: never read into memory
            h.close_connection = True
            spec = ErrorSpec(status=413, message=f"pluginbench probe: a request body over {MAX_BODY_BYTES} bytes")
            self._record(ProbeRequest(seq=seq, api="other", method=method, path=h.path[:2000],
                                      headers=_redact(h.headers), body=None, model=None, kind="side",
                                      rule=None, rule_index=None, step=None, scripted=False, stream=False,
                                      usage=None, completed=True, refused_real_credential=False,
                                      answer="too_large", status=413))
            return h.send_json(413, resp.error_body(spec))
        try:
            body = json.loads(raw) if raw else {}
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = {"_undecodable": raw[:2000].decode("utf-8", "replace")}
        path = h.path.split("?", 1)[0].rstrip("/")
        gemini_method = gem.method_of(path)
        api = ("anthropic" if path.startswith("/v1/messages")
               else "responses" if path.endswith("/responses")
               else "chat" if path.endswith("/chat/completions")
               else "gemini" if gemini_method in ("generateContent", "streamGenerateContent") else "other")
        model = gem.model_of(path) if gemini_method else body.get("model") if isinstance(body, dict) else None
        base = dict(seq=seq, api=api, method=method, path=h.path, headers=_redact(h.headers),
                    body=body, model=model,
                    rule=None, rule_index=None, step=None, scripted=False, stream=False,
                    usage=None, completed=True, refused_real_credential=False)

        def record(**kw: Any) -> None:
            self._record(ProbeRequest(**{**base, **kw}))

        if looks_real(credential_of(dict(h.headers)), PROBE_TOKENS):
            spec = ErrorSpec(status=401, message="pluginbench probe: refused a real-looking "
                             "credential; probe mode accepts only the probe's fake key")
            record(kind="side", answer="refused", status=401, refused_real_credential=True)
            return h.send_json(401, anth.error_body(spec) if api == "anthropic"
                               else gem.error_body(spec) if api == "gemini" else resp.error_body(spec))
        if method == "HEAD":
            record(kind="side", answer="hello", status=200)
            return h.send_json(200, {})
        if method == "GET" and path.endswith("/models"):
            record(kind="side", answer="models", status=200)
            return h.send_json(200, resp.models_body(list(_MODELS)))
        if method == "POST" and path == "/v1/messages/count_tokens":
            record(kind="side", answer="count_tokens", status=200)
            return h.send_json(200, anth.count_tokens_body(body))
        if method == "POST" and gemini_method == "countTokens":
            record(kind="side", answer="count_tokens", status=200)
            return h.send_json(200, gem.count_tokens_body(body if isinstance(body, dict) else {}))
        if method != "POST" or api == "other" or not isinstance(body, dict):
            spec = ErrorSpec(status=404, message=f"pluginbench probe: no route {method} {path}")
            record(kind="side", answer="not_found", status=404)
            return h.send_json(404, resp.error_body(spec))

        stream = (gemini_method == "streamGenerateContent" if api == "gemini"
                  else bool(body.get("stream", api == "responses")))
        if is_coding(body):
            choice = choose(self.scenario, api, body)
            step = choice.step
            base.update(kind="coding", rule=choice.rule_name, rule_index=choice.rule_index,
                        step=choice.step_index, scripted=choice.scripted, stream=stream)
        else:
            step = self.scenario.side
            base.update(kind="side", stream=stream)
        self._answer(h, api, body, step, stream, record, model)

    def _answer(self, h: _Handler, api: str, body: dict[str, Any], step: Step, stream: bool,
                record: Callable[..., None], model_id: str | None = None) -> None:
        model = str(model_id or body.get("model") or "probe-model")
        if step.delay_seconds > 0:  # a slow model (this request's own handler thread waits)
            time.sleep(step.delay_seconds)
        if step.error is not None:
            spec = step.error
            extra = {"retry-after": f"{spec.retry_after:g}"} if spec.retry_after is not None else {}
            record(answer="error", status=spec.status)
            return h.send_json(spec.status, anth.error_body(spec) if api == "anthropic"
                               else gem.error_body(spec) if api == "gemini" else resp.error_body(spec), extra)
        if step.drop_stream:
            # Anthropic's message_start already reports input-side usage, so a cut stream
            # has served that much (Claude Code's result.usage counts it, modelUsage not).
            partial: StepUsage | None = StepUsage(input_tokens=step.usage.input_tokens,
                                output_tokens=min(1, step.usage.output_tokens),
                                cache_read_input_tokens=step.usage.cache_read_input_tokens,
                                cache_creation_input_tokens=step.usage.cache_creation_input_tokens)
            if not stream:  # e.g. Claude Code's non-streaming fallback after a cut stream
                h.send_cut_json(anth.build_message(Step(text="cut", usage=step.usage), model, None)
                                if api == "anthropic" else {"output": []})
                partial = None
            elif api == "anthropic":
                h.send_stream(anth.dropped_stream_events(step, model), cut=True)
            elif api == "chat":
                h.send_stream(chat.dropped_stream_events(model), cut=True)
                partial = None
            elif api == "gemini":
                h.send_stream(gem.dropped_stream_events(model), cut=True)
                partial = None
            else:
                h.send_stream(resp.dropped_stream_events(model), cut=True)
                partial = None
            return record(answer="drop_stream", status=200, usage=partial, completed=False)
        cwd = request_cwd(api, body)
        answer = "tool" if step.calls else "text"
        served = step.usage if step.usage_fault is None else None  # faulty usage served no count
        fault = step.usage_fault
        if api == "anthropic":
            message = anth.build_message(step, model, cwd)
            if not stream:
                record(answer=answer, status=200, usage=served, usage_fault=fault)
                return h.send_json(200, message)
            done = h.send_stream(anth.stream_events(message), cut=False)
        elif api == "chat":
            message = chat.build_message(step, body, cwd)
            usage_obj = chat.step_usage_json(step)
            if not stream:
                record(answer=answer, status=200, usage=served, usage_fault=fault)
                return h.send_json(200, chat.completion(message, usage_obj, model))
            done = h.send_stream(chat.stream_events(message, usage_obj, model), cut=False)
        elif api == "gemini":
            parts = gem.build_parts(step, body, cwd)
            usage_obj = gem.step_usage_json(step)
            if not stream:
                record(answer=answer, status=200, usage=served, usage_fault=fault)
                return h.send_json(200, gem.generate(parts, usage_obj, model))
            done = h.send_stream(gem.stream_events(parts, usage_obj, model), cut=False)
        else:
            events = resp.stream_events(resp.build_items(step, body, cwd), resp.step_usage_json(step), model)
            done = h.send_stream(events, cut=False)
        record(answer=answer, status=200, usage=served, completed=done, usage_fault=fault)


def serve_forever(scenario: Scenario, port: int = 0, host: str = "127.0.0.1",
                  *, log: str | Path | None = None, out: Any = None) -> None:
    """Serve ``scenario`` in the foreground until interrupted, printing the base URL first."""
    import signal
    import sys

    def _term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _term)
    stream = out if out is not None else sys.stdout
    with ProbeServer(scenario, host=host, port=port, log=log) as server:
        # The print sits inside the try: a SIGTERM that lands as soon as the URL is
        # out (the reader may act on it at once) must end the server cleanly too.
        try:
            print(server.base_url, file=stream, flush=True)
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
