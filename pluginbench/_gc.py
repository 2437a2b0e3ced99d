"""Pausing Python's cyclic garbage collector around a bulk decode.

Decoding a large log or ledger creates tens of thousands of objects that all stay alive;
each automatic collection would rescan every one of them for cycles they cannot have
(about a third of ``status`` on 70,000 events). Reference counting still frees
everything as usual; only the cycle scan waits until the block ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block; re-enable it only if it was on."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
