"""How the server meets a store outage: sessions stop, requests that would write
are refused, subscribers are told; nothing here waits for the disk.

The store keeps its queue through an outage and writes it once it can (see
:mod:`actors.store.health`). What must not go on meanwhile is work whose record
cannot be kept: so at the start of each outage, every session with a running
input is interrupted (its ``interrupted`` and ``processing_end`` events wait in
the queue with the rest), and :func:`refuse_writes` turns away new inputs and new
sessions with the typed ``store_unavailable`` error until the store writes again.
"""

from __future__ import annotations

import logging

import trio

from actors.kernel import ActorError, ActorRef
from actors.server.registry import SessionRegistry
from actors.store import Store
from protocol.session import Interrupt

log = logging.getLogger("troupe.server")


async def interrupt_on_store_faults(registry: SessionRegistry, store: Store) -> None:
    """For as long as the server runs: during each outage, interrupt the running
    inputs, once each; an input that began as the outage did (its first write
    queued after the fault was told) is looked for again at each change."""
    health = store.health
    while True:
        changed = health.changed
        if health.available:
            await changed.wait()
            continue
        interrupted: set[str] = set()
        while not health.available:
            changed = health.changed  # taken first: a session needing a write rings it
            async with trio.open_nursery() as nursery:
                for record in list(registry.records.values()):
                    session_id = record.row.id
                    if session_id in interrupted or record.ref is None:
                        continue
                    if record.live and record.state == "processing":
                        interrupted.add(session_id)
                        nursery.start_soon(_interrupt, record.ref, session_id)
            await changed.wait()


async def _interrupt(ref: ActorRef, session_id: str) -> None:
    try:
        await ref.ask(Interrupt(immediate=True), timeout=30)
        log.warning("session %s interrupted: the store cannot write", session_id)
    except ActorError as error:
        log.warning("session %s could not be interrupted: %s", session_id, error)
