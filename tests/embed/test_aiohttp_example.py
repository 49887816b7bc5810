"""examples/aiohttp_sessions.py as a process, in front of a real ``troupe serve``,
driven with httpx: SSE, steering, approvals, disconnect, abort, stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trio

from tests.embed.conftest import (
    HANG_GUARD,
    REPO,
    Serve,
    kill_group,
    running_in_group,
    stop_process_group,
    wait_for_line,
)
from tests.embed.sse import EventReader, events_until
from tests.embed.test_in_process_examples import pid_of, start
from tests.waiting import wait_until

pytest.importorskip("aiohttp")


class App:
    def __init__(self, process: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.process = process
        self.url = url
        self.log = log


@pytest.fixture
def aiohttp_app(work: Path, troupe_serve: Serve) -> Iterator[App]:
    log = work / "aiohttp.log"
    environment = {**os.environ, "TROUPE_URL": troupe_serve.url, "TROUPE_TOKEN": troupe_serve.token}
    command = [sys.executable, "examples/aiohttp_sessions.py", "--port", "0"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its group: what it leaves behind is findable
        )
    try:
        line = wait_for_line(log, "serving on", process)
        yield App(process, line.split()[-1], log)
    finally:
        stop_process_group(process)
        kill_group(work / "work" / "slow.pid")


async def test_a_session_streams_over_sse_and_takes_steering(aiohttp_app: App) -> None:
    async with httpx.AsyncClient(base_url=aiohttp_app.url, timeout=HANG_GUARD) as client:
        session = await start(client, "quick one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{session}/events") as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                events = await events_until(response, "processing_end")
        kinds = [event.kind for event in events]
        assert kinds[0] == "session_start" and "tool_call_end" in kinds
        output = next(e for e in events if e.kind == "tool_call_end").data["data"]["output"]
        assert "hello from troupe" in output

        steered = await start(client, "steer this one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{steered}/events") as response:
                reader = EventReader(response)
                await reader.until("tool_call_start")
                reply = await client.post(f"/sessions/{steered}/steer", json={"text": "tidy up"})
                assert reply.status_code == 202
                after = await reader.until("processing_end")
        injected = [e for e in after if e.kind == "steering_injected"]
        assert injected and "tidy up" in str(injected[0].data)


async def test_errors_and_approvals_answer_through_the_api(aiohttp_app: App) -> None:
    async with httpx.AsyncClient(base_url=aiohttp_app.url, timeout=HANG_GUARD) as client:
        missing = await client.get("/sessions/s-nope/events")
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"
        session = await start(client, "quick approval check")
        answer = await client.post(
            f"/sessions/{session}/approvals/ap-unknown", json={"approved": True}
        )
        assert answer.status_code == 404 and answer.json()["code"] == "not_found"
        detail = await client.get(f"/sessions/{session}")
        assert detail.status_code == 200 and detail.json()["pending"] == []
        bad = await client.post("/sessions", json={"nothing": 1})
        assert bad.status_code == 422


async def test_disconnect_cancels_nothing_and_abort_kills(aiohttp_app: App, work: Path) -> None:
    async with httpx.AsyncClient(base_url=aiohttp_app.url, timeout=HANG_GUARD) as client:
        late = await start(client, "late one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{late}/events") as response:
                seen = await events_until(response, "tool_call_start")
            headers = {"Last-Event-ID": str(seen[-1].id)}
            async with client.stream("GET", f"/sessions/{late}/events", headers=headers) as again:
                rest = await events_until(again, "processing_end")
        assert rest[0].id > seen[-1].id
        assert (work / "work" / "late.txt").read_text() == "finished\n"

        slow = await start(client, "slow one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{slow}/events") as response:
                reader = EventReader(response)
                await reader.until("tool_call_start")
                pid = await pid_of(work / "work" / "slow.pid")
                assert running_in_group(pid)
                aborted = await client.post(f"/sessions/{slow}/abort")
                assert aborted.status_code == 200
                ended = await reader.until("session_end")
        assert ended[-1].kind == "session_end"
        # the abort cancels the command's call; its environment ends the group on its own
        await wait_until(lambda: not running_in_group(pid), what="the aborted command to end")


async def test_stopping_the_app_leaves_no_process_and_cancels_no_session(
    aiohttp_app: App, troupe_serve: Serve, work: Path
) -> None:
    async with httpx.AsyncClient(base_url=aiohttp_app.url, timeout=HANG_GUARD) as client:
        slow = await start(client, "slow one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{slow}/events") as response:
                await events_until(response, "tool_call_start")
                pid = await pid_of(work / "work" / "slow.pid")
                aiohttp_app.process.send_signal(signal.SIGTERM)  # with the stream still open
                await trio.to_thread.run_sync(aiohttp_app.process.wait, HANG_GUARD)
    assert aiohttp_app.process.returncode == 0, aiohttp_app.log.read_text()
    assert running_in_group(aiohttp_app.process.pid) == []
    assert pid in running_in_group(pid)  # the session lives in the server: it goes on
    troupe_serve.process.send_signal(signal.SIGTERM)  # the server's ladder ends it
    await trio.to_thread.run_sync(troupe_serve.process.wait, HANG_GUARD)
    assert running_in_group(pid) == []
