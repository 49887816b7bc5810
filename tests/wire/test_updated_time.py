"""The session list's "updated" time is the same before and after a restart: what
the store keeps is the time the live server shows (the time of the event that
last changed the session), never a clock reading of its own taken a moment later."""

from __future__ import annotations

import pytest

from protocol.wire import CreateSession, GetSession, SubmitInput
from tests.waiting import wait_until
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe


@pytest.fixture
def store(store_setting: str) -> str:
    """On SQLite and on PostgreSQL."""
    return store_setting


async def test_the_stored_updated_time_is_the_live_one(start_stack: StartStack) -> None:
    async with start_stack(shell_turns("echo one")) as stack, stack.client() as client:
        session = (await client.request(CreateSession)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="go")
        await events_until(client, "processing_end")

        async def idle() -> bool:
            detail = await client.request(GetSession, session=session)
            return detail.session.state == "idle"

        await wait_until(idle, what="the session to be idle")
        live = (await client.request(GetSession, session=session)).session.updated
        store = stack.server.store
        await store.flush()
        row, summary = await store.session(session), await store.summary(session)
        assert row is not None and summary is not None
        # What a restarted server shows (Record: the row's and the summary's latest).
        assert max(row.updated, summary.updated) == live
        assert row.state == "idle"
