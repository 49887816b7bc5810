"""A request forwarded to a node that dies is answered by the node that takes the
session over, when that node took it from the inbox first (issue 37).

``troupe attach`` reconnecting after its node was killed asks another node for
the session while the dead node's lease still runs: that node forwards the
request to the dead one. When the lease lapses, the node that takes the session
over (here, the asking node itself) takes what waits in the inbox for it and
answers, even if it gives the session back at rest meanwhile (a take-over does,
once the interrupted input is closed). The asking node must wait for that
answer while its taker is alive, not tell its client that a node "went away
while answering" (the attach then ended, seen under load in
tests/fleet/test_attach.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import NamedTuple

import msgspec
import pytest
import trio

from actors.server import inbox
from actors.server.fleet import Doorbell, Fleet
from actors.server.inbox import forward_if_elsewhere
from actors.server.registry import SessionRegistry
from actors.store.leases import LeaseSettings
from actors.store.ownership import Ownership
from actors.store.postgres import PostgresBackend
from protocol.wire import ErrorReply, Ok, Reply, SteerSession
from tests.registry_stack import registry_on_store
from tests.waiting import HANG_GUARD, wait_until


class CountingDoorbell(Doorbell):
    """The fleet's doorbell, counting the waits begun on it: the test knows when
    the forwarding node has looked at its request again (and waits once more)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    async def wait(self, key: str, timeout: float = inbox.POLL) -> None:
        self.waits += 1
        await super().wait(key, timeout)


class Nodes(NamedTuple):
    owner: Ownership
    """n1, the session's owner, whose lease the test ends."""
    here: Ownership
    """n2, the node that forwards (its registry's fleet)."""
    fleet: Fleet
    bell: CountingDoorbell
    registry: SessionRegistry


@asynccontextmanager
async def two_nodes(
    tmp_path: Path, postgres_url: str, owner_ttl: float, session: str
) -> AsyncIterator[Nodes]:
    """Two nodes on one PostgreSQL store, both heartbeats run, ``session`` owned by
    n1; the registry forwarding from n2."""
    async with registry_on_store(tmp_path, postgres_url) as (registry, store):
        backend = store.backend
        assert isinstance(backend, PostgresBackend)
        owner = Ownership(backend, LeaseSettings("n1", ttl=owner_ttl))
        here = Ownership(backend, LeaseSettings("n2", ttl=HANG_GUARD))
        registry.fleet = fleet = Fleet(here)
        fleet.inbox = bell = CountingDoorbell()
        for node in (owner, here):
            await trio.to_thread.run_sync(node.renew_all)
        await trio.to_thread.run_sync(owner.acquire, session)
        yield Nodes(owner, here, fleet, bell, registry)


async def posted(
    nodes: Nodes, nursery: trio.Nursery, request: SteerSession
) -> list[Reply | ErrorReply | None]:
    """Forward ``request`` from n2 in ``nursery`` and return, once it is posted for
    n1, the list its answer will be put in."""
    answers: list[Reply | ErrorReply | None] = []

    async def ask() -> None:
        answers.append(await forward_if_elsewhere(nodes.registry, request))

    nursery.start_soon(ask)
    await wait_until(lambda: nodes.bell.waits == 1, what="the request posted for n1")
    return answers


async def test_a_request_taken_by_the_session_s_next_owner_is_answered(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The forwarding node looks at its request only when rung: each look below is one.
    monkeypatch.setattr(inbox, "POLL", HANG_GUARD)
    async with two_nodes(tmp_path, postgres_url, HANG_GUARD, "s-moving") as nodes:
        dead, here, fleet, bell = nodes.owner, nodes.here, nodes.fleet, nodes.bell

        steer = SteerSession(id=7, session="s-moving", text="mind the tests")
        async with trio.open_nursery() as nursery:
            answers = await posted(nodes, nursery, steer)

            # n1 dies (its lease ends); this node takes the session over and the
            # request from the inbox, then gives the session back at rest (as a
            # take-over does when no input runs any more) before its answer is
            # written; all before the forwarder looks again: called here, without
            # a checkpoint, as a forwarder asleep in its poll sees them.
            dead.release("s-moving")
            here.acquire("s-moving")
            taken = here.take()
            here.release("s-moving")
            assert [(session, body) for _, session, body in taken] == [
                ("s-moving", msgspec.msgpack.encode(steer))
            ]
            (row, _, _), *_ = taken

            fleet.inbox.ring(f"reply:{row}")
            await wait_until(
                lambda: bell.waits == 2 or bool(answers), what="the forwarder to look again"
            )
            assert answers == [], "gave up on a request its next owner is answering"

            # This node answers it (as its serve_inbox does): the forwarder gets it.
            await trio.to_thread.run_sync(here.reply, row, msgspec.msgpack.encode(Ok(id=7)))
            fleet.inbox.ring(f"reply:{row}")
            await wait_until(lambda: bool(answers), what="the forwarded answer")
    assert answers == [Ok(id=7)]


async def test_a_request_whose_taker_went_away_is_told_unknown(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side: the node that took the request dies before answering (its
    heartbeat lapses): whether it took effect cannot be known, and the client is
    told so rather than left waiting."""
    monkeypatch.setattr(inbox, "POLL", HANG_GUARD)
    async with two_nodes(tmp_path, postgres_url, 0.5, "s-lost") as nodes:  # n1 never renewed
        dying, here, fleet = nodes.owner, nodes.here, nodes.fleet

        steer = SteerSession(id=8, session="s-lost", text="mind the tests")
        async with trio.open_nursery() as nursery:
            answers = await posted(nodes, nursery, steer)
            (row, _, _), *_ = await trio.to_thread.run_sync(dying.take)
            await wait_until(
                lambda: trio.to_thread.run_sync(lambda: not here.alive("n1")),
                what="n1's heartbeat to lapse",
            )
            fleet.inbox.ring(f"reply:{row}")
            await wait_until(lambda: bool(answers), what="the forwarder's answer")
    (answer,) = answers
    assert isinstance(answer, ErrorReply)
    assert answer.code == "unavailable"
    assert "node n1 went away" in answer.message
