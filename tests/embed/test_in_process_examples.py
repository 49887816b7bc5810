"""The examples that host sessions in process, each under its own server on a free
loopback port, driven with httpx against ``troupe mock-llm``: SSE, steering,
approvals, disconnect, abort, stop. FastAPI under uvicorn (asyncio: SessionHost on
a thread of its own) and Quart-Trio under hypercorn (trio: run_sessions in the
app's nursery) answer the same HTTP API."""

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
    kill_group,
    running_in_group,
    stop_process_group,
    wait_for_line,
)
from tests.embed.sse import EventReader, events_until
from tests.environments.helpers import command_group
from tests.waiting import wait_until

SERVERS = {
    "fastapi-uvicorn": (
        ["fastapi", "uvicorn"],
        ["-m", "uvicorn", "examples.fastapi_sessions:app", "--host", "127.0.0.1",
         "--port", "0", "--timeout-graceful-shutdown", "2"],
        "Uvicorn running on",
    ),
    "quart-trio-hypercorn": (
        ["quart_trio", "hypercorn"],
        ["-m", "hypercorn", "--worker-class", "trio", "--bind", "127.0.0.1:0",
         "--graceful-timeout", "2", "examples.quart_trio_sessions:app"],
        "Running on",
    ),
}  # fmt: skip


class WebApp:
    def __init__(self, process: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.process = process
        self.url = url
        self.log = log


@pytest.fixture(params=sorted(SERVERS))
def web_app(request: pytest.FixtureRequest, work: Path, mock_llm: str) -> Iterator[WebApp]:
    modules, arguments, ready = SERVERS[request.param]
    for module in modules:
        pytest.importorskip(module)
    log = work / "server.log"
    environment = {
        **os.environ,
        "TROUPE_DATA_DIR": str(work / "data"),
        "TROUPE_WORKDIR": str(work / "work"),
        "TROUPE_BASE_URL": mock_llm,
        "TROUPE_API_KEY": "test-key",
    }
    command = [sys.executable, *arguments]
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
        line = wait_for_line(log, ready, process)
        yield WebApp(process, line.split("unning on ")[1].split()[0], log)
    finally:
        stop_process_group(process)
        kill_group(work / "work" / "slow.pid")


async def pid_of(pid_file: Path) -> int:
    """The slow command's process group on this host, once its shell has written
    the file (deltas are live only, so the file, not an output event, says the
    command is running); the pid in the file is the sandbox's own."""
    path = trio.Path(pid_file)
    while not await path.exists() or not (await path.read_text()).strip():  # noqa: ASYNC110
        await trio.sleep(0.02)
    group = command_group(pid_file.parent)
    assert group is not None, "the command runs in its directory"
    return group


async def start(client: httpx.AsyncClient, text: str) -> str:
    response = await client.post("/sessions", json={"text": text})
    assert response.status_code == 201, response.text
    return response.json()["session"]


async def test_a_session_streams_over_sse_and_takes_steering(web_app: WebApp) -> None:
    async with httpx.AsyncClient(base_url=web_app.url, timeout=HANG_GUARD) as client:
        session = await start(client, "quick one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{session}/events") as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                events = await events_until(response, "processing_end")
        kinds = [event.kind for event in events]
        assert kinds[0] == "session_start" and "tool_call_end" in kinds
        ids = [event.id for event in events]
        assert ids == sorted(set(ids)) and ids[0] == 1
        output = next(e for e in events if e.kind == "tool_call_end").data["data"]["output"]
        assert "hello from troupe" in output
        assert events[-1].data["data"]["state"] == "idle"

        steered = await start(client, "steer this one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{steered}/events") as response:
                reader = EventReader(response)
                await reader.until("tool_call_start")
                steer = {"text": "and tidy up"}
                reply = await client.post(f"/sessions/{steered}/steer", json=steer)
                assert reply.status_code == 202
                after = await reader.until("processing_end")
        injected = [e for e in after if e.kind == "steering_injected"]
        assert injected and "and tidy up" in str(injected[0].data)


async def test_errors_and_approvals_answer_through_the_api(web_app: WebApp) -> None:
    async with httpx.AsyncClient(base_url=web_app.url, timeout=HANG_GUARD) as client:
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


async def test_disconnect_cancels_nothing_and_abort_kills(web_app: WebApp, work: Path) -> None:
    async with httpx.AsyncClient(base_url=web_app.url, timeout=HANG_GUARD) as client:
        late = await start(client, "late one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{late}/events") as response:
                seen = await events_until(response, "tool_call_start")
            # the client has gone; the session has not
            headers = {"Last-Event-ID": str(seen[-1].id)}
            async with client.stream("GET", f"/sessions/{late}/events", headers=headers) as again:
                rest = await events_until(again, "processing_end")
        assert rest[0].id > seen[-1].id
        assert "tool_call_end" in [e.kind for e in rest]
        assert (work / "work" / "late.txt").read_text() == "finished\n"

        slow = await start(client, "slow one")
        pid_file = work / "work" / "slow.pid"
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{slow}/events") as response:
                reader = EventReader(response)
                await reader.until("tool_call_start")
                pid = await pid_of(pid_file)
                assert running_in_group(pid)
                aborted = await client.post(f"/sessions/{slow}/abort")
                assert aborted.status_code == 200
                ended = await reader.until("session_end")
        assert ended[-1].kind == "session_end"
        # the abort cancels the command's call; its environment ends the group on its own
        await wait_until(lambda: not running_in_group(pid), what="the aborted command to end")


async def test_stopping_the_server_leaves_no_process(web_app: WebApp, work: Path) -> None:
    async with httpx.AsyncClient(base_url=web_app.url, timeout=HANG_GUARD) as client:
        slow = await start(client, "slow one")
        with trio.fail_after(HANG_GUARD):
            async with client.stream("GET", f"/sessions/{slow}/events") as response:
                await events_until(response, "tool_call_start")
                pid = await pid_of(work / "work" / "slow.pid")
                assert running_in_group(pid)
                web_app.process.send_signal(signal.SIGTERM)  # with the stream still open
                await trio.to_thread.run_sync(web_app.process.wait, HANG_GUARD)
    # uvicorn shuts down gracefully, then re-raises the signal it caught (-15).
    assert web_app.process.returncode in (0, -signal.SIGTERM), web_app.log.read_text()
    assert running_in_group(pid) == []  # gone before the server exited
    # hypercorn's multiprocessing resource tracker sits in the server's group and ends
    # only once it reads the end of its pipe from the exited server: on a loaded
    # machine a moment later. What must hold is that the group empties by itself.
    await wait_until(
        lambda: running_in_group(web_app.process.pid) == [], what="the server's group to empty"
    )
