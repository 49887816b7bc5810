"""The server killed with SIGKILL mid-session and started again: nothing a client
received is lost, the input is marked interrupted, and the session continues."""

from __future__ import annotations

import signal
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.events import EPHEMERAL_KINDS
from protocol.session import UserTurn
from protocol.wire import CreateSession, GetSession, ListSessions, SubmitInput
from tests.waiting import wait_for_file, wait_until
from tests.wire.conftest import (
    HANG_GUARD,
    end_orphaned_command,
    events_until,
    shell_turns,
    subscribe,
    troupe_serve,
)


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


SLOW = "echo $$ > command.pid; echo started; exec sleep 60"


async def test_sigkill_then_restart_keeps_events_and_continues(tmp_path: Path, store: str) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(SLOW, final="Resumed and done."), Script)
    async with serve_mock_llm(script) as mock:
        try:
            async with troupe_serve(data_dir, work, mock.base_url, store) as serve:
                token = (data_dir / "token").read_text().strip()
                async with connect(serve.url, token) as client:
                    session = (await client.request(CreateSession)).session.session_id
                    await subscribe(client, session)
                    await client.request(SubmitInput, session=session, text="first input")
                    received = await events_until(client, "tool_call_start")

                    async def stored_two_turns() -> bool:
                        detail = await client.request(GetSession, session=session)
                        return len(detail.history) >= 2

                    await wait_until(stored_two_turns, what="two stored turns")
                    await wait_for_file(work / "command.pid")  # so the test can end it
                    serve.process.send_signal(signal.SIGKILL)
                    with trio.fail_after(HANG_GUARD):
                        await serve.process.wait()
        finally:
            end_orphaned_command(work)
        durable = [(e.seq, e.kind) for e in received if e.kind not in EPHEMERAL_KINDS]

        async with (
            troupe_serve(data_dir, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            listed = (await client.request(ListSessions)).sessions
            assert [(s.session_id, s.interrupted) for s in listed] == [(session, True)]
            await subscribe(client, session)
            replay = await events_until(client, "processing_end")
            stored = [(e.seq, e.kind) for e in replay]
            assert stored[: len(durable)] == durable
            assert stored[-2:][0][1] == "input_interrupted"
            # The call the kill cut short is ended too, as the model's history ends it:
            # no client shows it running for good.
            started = next(e for e in received if e.kind == "tool_call_start")
            closing = replay[-3:]
            assert [e.kind for e in closing] == [
                "tool_call_end", "input_interrupted", "processing_end"
            ]  # fmt: skip
            assert closing[0].data == {
                "call_id": started.data["call_id"], "tool_name": "shell", "is_error": True,
                "output": "[not finished: the server stopped while this input was running]",
            }  # fmt: skip
            ended = {"state": "idle", "interrupted": True, "background_agents": [], "spend": None}
            assert replay[-1].data == ended
            detail = await client.request(GetSession, session=session)
            first = detail.history[0]
            assert isinstance(first, UserTurn) and first.content == "first input"

            await client.request(SubmitInput, session=session, text="second input")
            after = await events_until(client, "processing_end")
            assert all(e.seq > replay[-1].seq for e in after)
            texts = [e.data["text"] for e in after if e.kind == "assistant_text_end"]
            assert texts == ["Resumed and done."]
        last_body = mock.requests[-1].json()
        sent = msgspec.json.encode(last_body).decode()
        assert "first input" in sent and "second input" in sent
