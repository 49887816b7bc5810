"""Each adapter against ``troupe mock-llm`` over loopback, through a real gateway actor:
text, parallel tool calls, reasoning, and the faults (429, 500, 401, mid-stream error,
stall, drop, cancellation). Every case runs complete and streamed."""

from __future__ import annotations

import pytest
import trio

from actors.mockllm import Fault, Script, ToolCallSpec, Turn, UsageSpec
from actors.models import (
    AuthenticationError,
    ModelSession,
    NetworkError,
    RequestTimeoutError,
    RetryPolicy,
)
from protocol.llm import (
    Finish,
    Message,
    ReasoningDelta,
    Request,
    Response,
    StreamEvent,
    StreamFailed,
    StreamStart,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from tests.models.conftest import HANG_GUARD, WIRES, Connect

REQUEST = Request("mock-model", [Message.system("Be brief."), Message.user("Hello")])
MODES = ["complete", "stream"]


async def ask(session: ModelSession, mode: str) -> Response:
    """One call; a stream must end with Finish, whose response is returned."""
    with trio.fail_after(HANG_GUARD):
        if mode == "complete":
            return await session.complete(REQUEST)
        events = await collect(session)
    assert type(events[0]) is StreamStart
    last = events[-1]
    assert type(last) is Finish, last
    return last.response


async def collect(session: ModelSession) -> list[StreamEvent]:
    async with session.stream(REQUEST) as events:
        return [event async for event in events]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_text(wire: str, mode: str, connect: Connect) -> None:
    script = Script([Turn(text="Hello from the scripted provider!", usage=UsageSpec(12, 7))])
    async with connect(wire, script) as (server, session):
        response = await ask(session, mode)
    assert response.text == "Hello from the scripted provider!"
    assert response.finish_reason.reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 7)
    assert response.tool_calls == []
    assert len(server.requests) == 1
    body = server.requests[0].json()
    assert "Be brief." in str(body) and "Hello" in str(body)
    assert bool(body.get("stream")) == (mode == "stream") or wire in ("gemini", "bedrock_converse")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_parallel_tool_calls(wire: str, mode: str, connect: Connect) -> None:
    calls = [
        ToolCallSpec("read_file", {"path": "a.txt"}),
        ToolCallSpec("read_file", {"path": "b.txt", "lines": [1, 2]}),
        ToolCallSpec("list_dir", {}),
    ]
    async with connect(wire, Script([Turn(tool_calls=calls)], delta_size=5)) as (_, session):
        if mode == "stream":
            with trio.fail_after(HANG_GUARD):
                events = await collect(session)
            starts = [e for e in events if type(e) is ToolCallStart]
            ends = [e.call for e in events if type(e) is ToolCallEnd]
            assert [s.name for s in starts] == ["read_file", "read_file", "list_dir"]
            if wire != "gemini":  # Gemini sends each call whole, the others in pieces
                assert sum(1 for e in events if type(e) is ToolCallDelta) > 3
            response = events[-1].response  # type: ignore[union-attr]
            assert ends == response.tool_calls
        else:
            response = await ask(session, mode)
    got = [(c.name, c.arguments) for c in response.tool_calls]
    assert got == [
        ("read_file", {"path": "a.txt"}),
        ("read_file", {"path": "b.txt", "lines": [1, 2]}),
        ("list_dir", {}),
    ]
    assert response.finish_reason.reason == "tool_calls"
    ids = [c.id for c in response.tool_calls]
    assert len(set(ids)) == 3 and all(ids)
    assert all(c.arguments_error is None for c in response.tool_calls)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_reasoning(wire: str, mode: str, connect: Connect) -> None:
    turn = Turn(
        reasoning="First, consider the question carefully.",
        text="42",
        signature="sig-abc",
        usage=UsageSpec(20, 30, reasoning=25),
    )
    async with connect(wire, Script([turn])) as (_, session):
        if mode == "stream":
            with trio.fail_after(HANG_GUARD):
                events = await collect(session)
            deltas = "".join(e.delta for e in events if type(e) is ReasoningDelta)
            assert deltas == "First, consider the question carefully."
            response = events[-1].response  # type: ignore[union-attr]
        else:
            response = await ask(session, mode)
    assert response.reasoning == "First, consider the question carefully."
    assert response.text == "42"
    if wire not in ("anthropic", "bedrock_converse"):  # no count: the adapter estimates
        assert response.usage.reasoning_tokens == 25
    else:
        assert response.usage.reasoning_tokens
    if wire in ("anthropic", "openai_responses", "bedrock_converse"):
        thinking = response.message.content[0]
        assert thinking.signature == "sig-abc"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_429_with_retry_after_then_success(wire: str, mode: str, connect: Connect) -> None:
    script = Script([Turn(fault=Fault(status=429, retry_after=0.05)), Turn(text="after the wait")])
    policy = RetryPolicy(max_retries=2, base_delay=30.0, max_delay=10.0)  # backoff would hang
    async with connect(wire, script, policy=policy) as (server, session):
        response = await ask(session, mode)
        stats = await session.stats()
    assert response.text == "after the wait"
    assert len(server.requests) == 2
    assert stats.retries == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_500_twice_then_success(wire: str, mode: str, connect: Connect) -> None:
    boom = Turn(fault=Fault(status=500, message="internal"))
    script = Script([boom, boom, Turn(text="third time lucky")])
    async with connect(wire, script) as (server, session):
        response = await ask(session, mode)
    assert response.text == "third time lucky"
    assert len(server.requests) == 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_401_fails_at_once(wire: str, mode: str, connect: Connect) -> None:
    script = Script([Turn(fault=Fault(status=401, message="invalid api key")), Turn(text="no")])
    async with connect(wire, script) as (server, session):
        with pytest.raises(AuthenticationError) as caught:
            await ask(session, mode)
    assert len(server.requests) == 1
    assert caught.value.status_code == 401
    assert caught.value.retryable is False
    assert "invalid api key" in caught.value.message


@pytest.mark.parametrize("wire", WIRES)
async def test_mid_stream_error_is_the_last_event_and_not_retried(
    wire: str, connect: Connect
) -> None:
    turn = Turn(text="This answer will break halfway through.", fault=Fault(error_after=4))
    script = Script([turn, Turn(text="a retry would see this")], delta_size=4)
    async with connect(wire, script) as (server, session):
        with trio.fail_after(HANG_GUARD):
            events = await collect(session)
    last = events[-1]
    assert type(last) is StreamFailed
    assert last.error.kind == "server"
    assert "scripted fault" in last.error.message
    assert not any(type(e) is Finish for e in events)
    assert len(server.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_stall_mid_stream_hits_the_read_timeout(wire: str, connect: Connect) -> None:
    script = Script(
        [Turn(text="slow at first and then silent", fault=Fault(stall_after=5))], delta_size=4
    )
    async with connect(wire, script, stream_read=0.3) as (server, session):
        with trio.fail_after(HANG_GUARD):
            events = await collect(session)
            await server.wait_until(lambda s: s.disconnects == 1)  # the client hung up
    assert any(type(e) is TextDelta for e in events)
    last = events[-1]
    assert type(last) is StreamFailed
    assert last.error.kind == "timeout"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_stall_before_the_answer_raises_timeout(
    wire: str, mode: str, connect: Connect
) -> None:
    script = Script([Turn(text="never", fault=Fault(stall_after=0))])
    async with connect(wire, script, stream_read=0.3) as (server, session):
        with pytest.raises(RequestTimeoutError):
            await ask(session, mode)
    assert len(server.requests) == 1  # a timeout is not retried by default


@pytest.mark.parametrize("wire", WIRES)
async def test_dropped_connection_mid_stream(wire: str, connect: Connect) -> None:
    script = Script([Turn(text="cut off in the middle", fault=Fault(drop_after=3))], delta_size=4)
    async with connect(wire, script) as (server, session):
        with trio.fail_after(HANG_GUARD):
            events = await collect(session)
    last = events[-1]
    assert type(last) is StreamFailed
    assert last.error.kind == "network"
    assert len(server.requests) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_dropped_connection_before_the_answer_is_retried(
    wire: str, mode: str, connect: Connect
) -> None:
    script = Script(
        [
            Turn(fault=Fault(drop_before_response=True)),
            Turn(text="x", fault=Fault(drop_after=0)),
            Turn(text="made it"),
        ]
    )
    async with connect(wire, script) as (server, session):
        response = await ask(session, mode)
    assert response.text == "made it"
    assert len(server.requests) == 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", WIRES)
async def test_dropped_connection_every_time_is_a_network_error(
    wire: str, mode: str, connect: Connect
) -> None:
    script = Script([Turn(fault=Fault(drop_before_response=True))])
    async with connect(wire, script) as (server, session):
        with pytest.raises(NetworkError):
            await ask(session, mode)
    assert len(server.requests) == 3  # the first try and two retries


@pytest.mark.parametrize("wire", WIRES)
async def test_cancelling_the_caller_closes_its_stream(wire: str, connect: Connect) -> None:
    script = Script(
        [Turn(text="an endless answer that keeps on going", fault=Fault(stall_after=5))],
        delta_size=4,
    )
    async with connect(wire, script) as (server, session):
        received = 0
        with trio.fail_after(HANG_GUARD):
            with trio.CancelScope() as caller:
                async with session.stream(REQUEST) as events:
                    async for _ in events:
                        received += 1
                        if received == 2:
                            caller.cancel()  # the caller goes away mid-stream
            assert caller.cancelled_caught
            await server.wait_until(lambda s: s.disconnects == 1)  # the server saw it
            stats = await session.stats()
    assert received == 2
    assert stats.in_flight == 0  # the slot came back
