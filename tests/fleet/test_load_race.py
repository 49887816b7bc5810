"""A session read from the store while a claim publishes it keeps the claim's record.

On a fleet, a node taking a session over publishes its record (:meth:`claim`) and
starts the session's actor under it while a request or a subscriber for the same
session may be reading it from the store (:meth:`SessionRegistry.load`). The read
used to publish its own record when it finished, over the claim's: the actor then
ran under no record, and the next request on that node (an approval answer) found
the session not running and started it a second time ("address ... is already in
use"; ``tests/fleet/test_routing.py`` met it about once in ten runs on a loaded
machine). Here the claim's record is published at one exact moment of the read,
while the store answers it, with a real registry and SQLite store."""

from __future__ import annotations

import time
from pathlib import Path

from actors.server.records import Record
from actors.store.rows import SessionRow
from protocol.session import SessionConfig, Spend
from tests.registry_stack import registry_on_store, store_session


async def test_a_read_does_not_replace_the_record_a_claim_published_meanwhile(
    tmp_path: Path,
) -> None:
    async with registry_on_store(tmp_path) as (registry, store):
        encoded = store_session(store, "s-raced", tmp_path)
        await store.flush()
        now = time.time()
        row = SessionRow(
            "s-raced", "openai", "gpt", "/environments/local", str(tmp_path), encoded,
            "processing", False, now, now,
        )  # fmt: skip
        claimed = Record(row, SessionConfig(), state="processing")
        read_ledger = store.ledger

        async def ledger_while_a_claim_publishes(session_id: str) -> Spend | None:
            registry.records[session_id] = claimed  # the claim, between two reads
            return await read_ledger(session_id)

        store.ledger = ledger_while_a_claim_publishes  # type: ignore[method-assign]
        await registry.load("s-raced")
        assert registry.records["s-raced"] is claimed
