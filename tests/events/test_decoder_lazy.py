"""The event decoder is built on first use, so a process that only writes events skips it."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import pluginbench.events as ev
from pluginbench.events import _types
assert _types._decoder is None, "decoder built at import"
line = ev.encode(ev.stamp(ev.RunStopping(reason="user"), seq=1, at="2026-01-01T00:00:00.000Z"))
assert _types._decoder is None, "encoding built the decoder"
one = ev.decode(line)
assert _types._decoder is ev.decoder(), "decode did not keep the decoder"
assert ev.decode_many([line, line]) == [one, one]
print(type(one).__name__)
"""


def test_the_decoder_is_built_by_the_first_decode_not_by_import_or_encode() -> None:
    """Importing the events package and encoding build no decoder; the first decode builds it once and later decodes reuse it."""
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "RunStopping"
