"""How often the cyclic garbage collector walks everything, for a server process.

A server holds thousands of long-lived sessions (about a hundred tracked objects
each), and CPython's default starts a full collection every 10 young-generation
passes once the live set has grown by a quarter: starting 10,000 sessions then pays
nine walks over the whole growing heap, about half the start time. Young garbage
is what a server makes, and the two young generations still collect it as often as
before; only the full walk becomes rarer (every 100 passes instead of 10), so
garbage that did reach the old generation waits a little longer.

This is a process-wide setting, so only ``troupe serve`` (a program that owns its
process) makes it; embedding the server or the supervisor leaves the host
program's collector alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FULL_COLLECTION_EVERY = 100
"""Young (generation 1) collections between two full ones; CPython's default is 10."""


@contextmanager
def collector_tuned_for_many_sessions() -> Iterator[None]:
    """Make full collections rarer while the block runs, and restore the thresholds."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, max(old, FULL_COLLECTION_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)
