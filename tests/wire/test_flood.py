"""A flood of output with three subscribers that never read: each is closed with
4008 (not queued behind the data) within 10 s of falling behind, and the server's
memory stays bounded in bytes, during the flood and after it (generous guards;
``bench/gateway.py`` reports the figures)."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from pathlib import Path

import msgspec
import pytest
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import CLOSE_TOO_SLOW, CreateSession, SubmitInput
from tests.wire.conftest import HANG_GUARD, events_until, shell_turns, subscribe, troupe_serve

FLOOD = "seq 1 3000000"
MB = 1 << 20
BEHIND_FOR = 10.0
"""The promise: a client that has fallen behind is closed within this many seconds.
The sleepers fell behind during the flood, so by this long after its end each must
have been judged, though none read a byte until then."""


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_three_sleepers_are_closed_and_memory_stays_bounded(tmp_path: Path) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(FLOOD, FLOOD, FLOOD), Script)
    async with (
        serve_mock_llm(script) as mock,
        troupe_serve(data_dir, work, mock.base_url) as serve,
    ):
        token = (data_dir / "token").read_text().strip()
        headers = [(b"authorization", f"Bearer {token}".encode())]
        pid = serve.process.pid
        async with connect(serve.url, token, max_frame_bytes=256 * MB) as watcher:
            session = (await watcher.request(CreateSession)).session.session_id
            await subscribe(watcher, session)
            sleepers: list[WebSocketConnection] = []
            async with AsyncExitStack() as stack:
                for _ in range(3):
                    sleeper = await stack.enter_async_context(
                        open_websocket_url(
                            serve.url,
                            extra_headers=headers,
                            message_queue_size=1,
                            max_message_size=256 * MB,
                        )
                    )
                    sleepers.append(sleeper)
                    await sleeper.send_message(json.dumps({"type": "hello", "version": 1}))
                    await sleeper.get_message()
                    subscribe_frame = {"type": "subscribe", "id": 1, "session": session}
                    await sleeper.send_message(json.dumps(subscribe_frame))
                async with trio.open_nursery() as nursery:
                    baseline = rss(pid)
                    peak = baseline

                    async def sample(stop: trio.Event) -> None:
                        nonlocal peak
                        while not stop.is_set():
                            peak = max(peak, rss(pid))
                            await trio.sleep(0.1)

                    stop = trio.Event()
                    nursery.start_soon(sample, stop)
                    await watcher.request(SubmitInput, session=session, text="flood")
                    with trio.fail_after(HANG_GUARD * 6):
                        async for event in watcher.events():
                            if event.kind == "processing_end":
                                break
                    stop.set()
                    await trio.sleep(BEHIND_FOR)
                    for sleeper in sleepers:  # they read now: what was on the wire, then 4008
                        with trio.fail_after(HANG_GUARD), pytest.raises(ConnectionClosed) as closed:
                            while True:
                                await sleeper.get_message()
                        assert closed.value.reason is not None
                        assert closed.value.reason.code == CLOSE_TOO_SLOW
            await trio.sleep(1)
            after = rss(pid)
            print(
                f"rss baseline {baseline / MB:.0f} MB, peak {peak / MB:.0f}, after {after / MB:.0f}"
            )
            assert peak < baseline + 300 * MB
            assert after < baseline + 100 * MB
            await subscribe(watcher, session)  # the server still serves
            await events_until(watcher, "session_start")
