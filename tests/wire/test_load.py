"""Backpressure and scale: a client that stops reading is dropped without slowing
the session; 200 clients at once are all served."""

from __future__ import annotations

import json

import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from protocol.wire import CLOSE_TOO_SLOW, CreateSession, ListSessions, SubmitInput
from tests.waiting import wait_until
from tests.wire.conftest import HANG_GUARD, StartStack, events_until, shell_turns, subscribe

LOUD = "head -c 3000000 /dev/zero | tr '\\0' a | fold -w 200"


async def test_a_client_that_stops_reading_is_disconnected(start_stack: StartStack) -> None:
    async with start_stack(
        shell_turns(LOUD, LOUD), outbox_bytes=32 << 10, slow_client_timeout=0.5
    ) as stack:
        headers = [(b"authorization", f"Bearer {stack.token}".encode())]
        async with (
            stack.client() as watcher,
            open_websocket_url(stack.url, extra_headers=headers, message_queue_size=1) as sleeper,
        ):
            await sleeper.send_message(json.dumps({"type": "hello", "version": 1}))
            await sleeper.get_message()
            session = (await watcher.request(CreateSession)).session.session_id
            await sleeper.send_message(
                json.dumps({"type": "subscribe", "id": 1, "session": session})
            )
            await subscribe(watcher, session)
            await watcher.request(SubmitInput, session=session, text="be loud")
            # The sleeper reads nothing while the session runs to its end.
            events = await events_until(watcher, "processing_end")
            assert len([e for e in events if e.kind == "tool_call_end"]) == 2
            # Still reading nothing past the stall allowance (0.5 s plus a full outbox
            # at 64 KiB/s): on a fast machine the input can end before the outbox
            # overflows, and then only the stall rule judges the sleeper.
            await trio.sleep(3)
            # It reads now: what was on the wire, then the close (not 1006: the close
            # frame follows the frame in flight, not the dropped queue).
            with trio.fail_after(HANG_GUARD), pytest.raises(ConnectionClosed) as closed:
                while True:
                    await sleeper.get_message()
            assert closed.value.reason is not None
            assert closed.value.reason.code == CLOSE_TOO_SLOW
            runtime = stack.server.runtime
            await wait_until(
                lambda: "/connections/c-2" not in runtime.addresses(),
                what="the slow connection to be closed",
            )
            assert "/connections/c-1" in runtime.addresses()


async def test_two_hundred_concurrent_connections(start_stack: StartStack) -> None:
    async with start_stack(shell_turns("echo hi")) as stack, stack.client() as owner:
        session = (await owner.request(CreateSession)).session.session_id
        ready = trio.Semaphore(0)
        go = trio.Event()
        finished: list[int] = []

        async def one(n: int) -> None:
            async with stack.client(encoding="msgpack" if n % 2 else "json") as client:
                assert len((await client.request(ListSessions)).sessions) == 1
                await subscribe(client, session)
                ready.release()
                await go.wait()
                events = await events_until(client, "processing_end")
                assert events[-1].kind == "processing_end"
                finished.append(n)

        with trio.fail_after(HANG_GUARD * 2):
            async with trio.open_nursery() as nursery:
                for n in range(200):
                    nursery.start_soon(one, n)
                for _ in range(200):
                    await ready.acquire()
                connections = [a for a in stack.server.runtime.addresses() if "/connections/" in a]
                assert len(connections) == 201
                await owner.request(SubmitInput, session=session, text="hello all")
                go.set()
        assert sorted(finished) == list(range(200))


async def test_a_client_that_stops_reading_is_judged_with_room_in_its_outbox(
    start_stack: StartStack,
) -> None:
    """The outbox is never full here (256 MiB): the client is judged because the
    frame on the wire does not move, not because more is queued for it."""
    async with start_stack(
        shell_turns("seq 1 2000000"), outbox_bytes=256 << 20, slow_client_timeout=1.0
    ) as stack:
        headers = [(b"authorization", f"Bearer {stack.token}".encode())]
        async with (
            stack.client() as watcher,
            open_websocket_url(
                stack.url, extra_headers=headers, message_queue_size=1, max_message_size=64 << 20
            ) as sleeper,
        ):
            await sleeper.send_message(json.dumps({"type": "hello", "version": 1}))
            await sleeper.get_message()
            session = (await watcher.request(CreateSession)).session.session_id
            await sleeper.send_message(
                json.dumps({"type": "subscribe", "id": 1, "session": session})
            )
            await subscribe(watcher, session)
            await watcher.request(SubmitInput, session=session, text="be loud")
            await events_until(watcher, "processing_end")
            await trio.sleep(5)  # reads nothing for a while after the session went quiet
            with trio.fail_after(HANG_GUARD), pytest.raises(ConnectionClosed) as closed:
                while True:
                    await sleeper.get_message()
            assert closed.value.reason is not None
            assert closed.value.reason.code == CLOSE_TOO_SLOW
