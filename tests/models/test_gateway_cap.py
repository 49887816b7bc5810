"""The gateway's concurrency cap: shared by every caller, held under load, FIFO."""

from __future__ import annotations

import pytest
import trio
import trio.lowlevel

from actors.mockllm import Fault, Script, Turn
from actors.models import ModelSession
from protocol.llm import Finish, Message, Request
from tests.models.conftest import HANG_GUARD, WIRES, Connect

CALLERS = 50
CAP = 4


@pytest.mark.parametrize("wire", WIRES)
async def test_cap_holds_with_50_concurrent_callers(wire: str, connect: Connect) -> None:
    script = Script([Turn(text="slow enough to overlap", delay=0.02)])
    results: list[str] = []
    async with connect(wire, script, max_concurrency=CAP) as (server, session):

        async def caller(index: int) -> None:
            request = Request("m", [Message.user(f"caller {index}")])
            if index % 2:
                results.append((await session.complete(request)).text)
                return
            async with session.stream(request) as events:
                async for event in events:
                    if type(event) is Finish:
                        results.append(event.response.text)

        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                for index in range(CALLERS):
                    nursery.start_soon(caller, index)
        stats = await session.stats()
    assert results == ["slow enough to overlap"] * CALLERS
    assert len(server.requests) == CALLERS
    assert server.max_active == CAP  # reached, never exceeded
    assert stats.max_in_flight == CAP
    assert stats.in_flight == 0 and stats.waiting == 0
    assert stats.admitted == CALLERS


async def test_waiting_requests_are_served_in_order(connect: Connect) -> None:
    # The first request stalls holding the only slot; the others queue behind it.
    script = Script([Turn(text="hold", fault=Fault(stall_after=2)), Turn(text="next")])
    async with connect("anthropic", script, max_concurrency=1) as (server, session):
        order = 10
        async with trio.open_nursery() as nursery:
            holder = trio.CancelScope()

            async def hold() -> None:
                with holder:
                    async with session.stream(Request("m", [Message.user("holder")])) as events:
                        async for _ in events:
                            pass

            async def queued(index: int) -> None:
                await session.complete(Request("m", [Message.user(f"queued {index}")]))

            with trio.fail_after(HANG_GUARD):
                nursery.start_soon(hold)
                await server.wait_until(lambda s: len(s.requests) == 1)
                for index in range(order):
                    nursery.start_soon(queued, index)
                    while (await session.stats()).waiting < index + 1:  # queued, in turn
                        await trio.lowlevel.checkpoint()
                holder.cancel()  # frees the slot; the queue drains one at a time
    served = [r.json()["messages"][0]["content"][0]["text"] for r in server.requests[1:]]
    assert served == [f"queued {index}" for index in range(order)]
    assert server.max_active == 1


async def test_two_sessions_share_one_gateway_cap(connect: Connect, runtime: object) -> None:
    script = Script([Turn(text="shared", delay=0.02)])
    async with connect("openai_chat", script, max_concurrency=2) as (server, first):
        second = await ModelSession.connect(first.gateway)  # e.g. a subagent's session
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                for session in (first, second) * 5:
                    nursery.start_soon(session.complete, Request("m", [Message.user("hi")]))
    assert len(server.requests) == 10
    assert server.max_active == 2
