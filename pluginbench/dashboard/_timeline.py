"""When attempts finished: an incremental tail of ``events.jsonl`` for the time plot.

Reads only the bytes appended since the last call, keeps a partial last line until its
newline arrives, and records the ``at`` of every ``attempt.completed`` and
``attempt.started``. A line that does not decode is left to status to judge (it reports
corruption); the tail only stops collecting at it.
"""

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

_TRACKED = {"attempt.started": "started", "attempt.completed": "completed"}


class _Line(msgspec.Struct):
    type: str = ""
    at: str = ""
    seq: int = 0


@dataclass
class Timeline:
    """Times (ISO-8601 strings, in log order) at which attempts started and completed."""

    started: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    offset: int = 0
    _partial: bytes = b""
    _broken: bool = False

    def feed(self, chunk: bytes) -> None:
        if self._broken or not chunk:
            return
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            try:
                ev = msgspec.json.decode(line, type=_Line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                self._broken = True
                return
            kind = _TRACKED.get(ev.type)
            if kind is not None:
                getattr(self, kind).append(ev.at)

    def tail(self, path: Path) -> None:
        """Read what was appended to ``path`` since the last call; a log that shrank
        (replaced) is read again from the start."""
        try:
            with path.open("rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                if size < self.offset:
                    self.started.clear()
                    self.completed.clear()
                    self.offset, self._partial, self._broken = 0, b"", False
                fh.seek(self.offset)
                chunk = fh.read(size - self.offset)
        except OSError:
            return
        self.offset += len(chunk)
        self.feed(chunk)
