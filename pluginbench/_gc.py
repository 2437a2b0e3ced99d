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


#: whether :func:`pause_startup` turned the collector off (and :func:`end_startup` has not
#: turned it back on)
_startup_paused = False


def pause_startup() -> None:
    """Turn the cyclic collector off while a command starts (the console entry point).

    Importing the modules a command needs creates tens of thousands of functions, classes
    and dicts that live as long as the process; each automatic collection would rescan
    them (a tenth of ``pluginbench run``'s start-up CPU). :func:`end_startup` turns it back
    on where the long part begins."""
    global _startup_paused
    if gc.isenabled():
        gc.disable()
        _startup_paused = True


def end_startup() -> None:
    """Move what start-up made out of the collector's way (``gc.freeze``) and turn the
    collector back on; nothing unless :func:`pause_startup` turned it off."""
    global _startup_paused
    if _startup_paused:
        _startup_paused = False
        gc.freeze()
        gc.enable()
