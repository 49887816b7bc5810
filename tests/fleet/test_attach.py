"""``troupe attach`` keeps following a session whose owner is killed (issue 37):
behind a load balancer (here a plain TCP proxy to the first live node, as
HAProxy would do), it loses its connection, connects again, and resumes after
the last event it showed: the session's story continues on another node."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import trio

from actors.mockllm import serve_mock_llm
from protocol.client import connect
from protocol.wire import AbortSession
from tests.fleet.conftest import HANG_GUARD, TOKEN, Node, fleet, lease_of
from tests.fleet.test_failover import _create, _submit, slow_script
from tests.waiting import wait_until
from tests.wire.conftest import REPO


@asynccontextmanager
async def load_balancer(nodes: list[Node]) -> AsyncIterator[str]:
    """A TCP proxy sending each new connection to the first node still alive."""

    async def pump(source: trio.SocketStream, sink: trio.SocketStream) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await source.receive_some(65536):
                await sink.send_all(data)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await sink.send_eof()

    async def handle(client: trio.SocketStream) -> None:
        for node in nodes:
            if not node.alive:
                continue
            where = urlsplit(node.url)
            try:
                upstream = await trio.open_tcp_stream(where.hostname or "", where.port or 0)
            except OSError:
                continue
            async with client, upstream, trio.open_nursery() as nursery:
                nursery.start_soon(pump, client, upstream)
                nursery.start_soon(pump, upstream, client)
            return
        await client.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        (listener,) = listeners
        await nursery.start(trio.serve_listeners, handle, listeners)
        yield f"ws://127.0.0.1:{listener.socket.getsockname()[1]}/"
        nursery.cancel_scope.cancel()


async def test_attach_follows_a_session_whose_owner_is_killed(
    tmp_path: Path, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    url = postgres_url
    async with (
        serve_mock_llm(slow_script()) as mock,
        fleet(root, url, mock.base_url, 2) as nodes,
        load_balancer(nodes) as balanced,
    ):
        owner, other = nodes
        (session,) = await _create(owner, 1)
        await _submit(owner, session, "first input")
        command = [sys.executable, "-m", "actors.cli", "attach", session,
                   "--connect", balanced, "--token", TOKEN]  # fmt: skip
        attach = await trio.lowlevel.open_process(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=REPO,
        )  # fmt: skip
        shown = b""
        errors = b""
        try:
            assert attach.stdout is not None and attach.stderr is not None
            stdout, stderr = attach.stdout, attach.stderr

            async def read_errors() -> None:
                nonlocal errors
                while chunk := await stderr.receive_some():
                    errors += chunk

            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_errors)

                async def read_until(text: bytes) -> None:
                    nonlocal shown
                    with trio.move_on_after(HANG_GUARD):
                        while text not in shown:
                            chunk = await stdout.receive_some()
                            assert chunk, f"attach ended: {shown!r} {errors!r}"
                            shown += chunk
                    assert text in shown, f"no {text!r}: {shown!r} {errors!r}"

                await read_until(b"step 1")
                owner.kill()  # attach's node: it reconnects through the balancer
                await owner.process.wait()
                await wait_until(
                    lambda: (lease_of(url, session) or ("",))[0] == other.name,
                    what="the other node to take the session over",
                )
                await read_until(b"interrupted")
                await _submit(other, session, "second input")
                await read_until(b"Done with this input.")
                async with connect(other.url, TOKEN) as client:
                    await client.request(AbortSession, session=session, reason="enough")
                with trio.fail_after(HANG_GUARD):
                    await attach.wait()
                while chunk := await stdout.receive_some():
                    shown += chunk
                nursery.cancel_scope.cancel()
        finally:
            if attach.returncode is None:
                attach.kill()
                await attach.wait()
        assert attach.returncode == 0, (shown, errors)
        assert b"reconnecting" in errors
        text = shown.decode()
        assert text.count("Done with this input.") == 1
        # Each event shown once across the reconnection: nothing replayed twice.
        assert text.count("> first input") == text.count("> second input") == 1
        assert text.count("interrupted") == 1, text
