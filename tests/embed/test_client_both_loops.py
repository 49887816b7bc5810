"""The WebSocket client, one body of code run under asyncio and under trio (anyio),
against a real ``troupe serve`` process."""

from __future__ import annotations

import anyio
import pytest
from trio_websocket import ConnectionRejected

from protocol.client import ConnectionClosed, EndOfEvents, RequestError, connect
from protocol.wire import CreateSession, SubmitInput, SubscribeSession
from tests.embed.conftest import HANG_GUARD, Serve

BACKENDS = ["asyncio", "trio"]


async def _session_round_trip(serve: Serve, encoding: str) -> list[str]:
    with anyio.fail_after(HANG_GUARD):
        async with connect(serve.url, serve.token, encoding=encoding) as client:  # type: ignore[arg-type]
            session = (await client.request(CreateSession)).session.session_id
            await client.request(SubscribeSession, session=session, after_seq=0)
            await client.request(SubmitInput, session=session, text="quick over the wire")
            kinds = []
            async for event in client.events():
                kinds.append(event.kind)
                if event.kind == "processing_end":
                    return kinds
    raise AssertionError(f"events ended early: {kinds}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_session_over_the_client(troupe_serve: Serve, backend: str, encoding: str) -> None:
    kinds = anyio.run(_session_round_trip, troupe_serve, encoding, backend=backend)
    assert kinds[0] == "session_start"
    assert "tool_call_end" in kinds and kinds[-1] == "processing_end"


async def _errors(serve: Serve) -> tuple[str, int, BaseException]:
    with anyio.fail_after(HANG_GUARD):
        async with connect(serve.url, serve.token) as client:
            with pytest.raises(RequestError) as refused:
                await client.request(SubmitInput, session="s-nope", text="hi")
            code = refused.value.code
        with pytest.raises(ConnectionRejected) as rejected:
            async with connect(serve.url, "wrong-token"):
                pass
        status = rejected.value.status_code
        try:
            async with connect(serve.url, serve.token):
                raise KeyError("the caller's own error")
        except BaseException as error:  # the test inspects what left the block
            own = error
    return code, status, own


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_are_the_same_on_both_loops(troupe_serve: Serve, backend: str) -> None:
    code, status, own = anyio.run(_errors, troupe_serve, backend=backend)
    assert code == "not_found"
    assert status == 401
    assert isinstance(own, KeyError)  # as itself, not in an ExceptionGroup


async def _server_goes_away(serve: Serve) -> tuple[BaseException, object]:
    with anyio.fail_after(HANG_GUARD):
        async with connect(serve.url, serve.token) as client:
            serve.process.terminate()  # troupe serve stops gracefully on SIGTERM
            events = [event async for event in client.events()]
            with pytest.raises(EndOfEvents):
                await client.next_event()
            try:
                await client.request(CreateSession)
            except ConnectionClosed as closed:
                return closed, events
    raise AssertionError("the request after the server left did not fail")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_server_that_leaves_closes_the_client(troupe_serve: Serve, backend: str) -> None:
    closed, events = anyio.run(_server_goes_away, troupe_serve, backend=backend)
    assert isinstance(closed, ConnectionClosed)
    assert events == []
