"""Sequence numbers never go back: a server killed (SIGKILL) right after a client
received a live-only event numbers what it stores next above that event, so a
client resuming after the highest seq it saw still gets ``input_interrupted``."""

from __future__ import annotations

import signal
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import CreateSession, SubmitInput
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


TALKS_THEN_WAITS = "echo $$ > command.pid; echo live-only line; exec sleep 60"


async def test_resume_after_a_live_only_event_gets_the_interruption(
    tmp_path: Path, store: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(TALKS_THEN_WAITS), Script)
    async with serve_mock_llm(script) as mock:
        try:
            async with troupe_serve(data_dir, work, mock.base_url, store) as serve:
                token = (data_dir / "token").read_text().strip()
                async with connect(serve.url, token) as client:
                    session = (await client.request(CreateSession)).session.session_id
                    await subscribe(client, session)
                    await client.request(SubmitInput, session=session, text="go")
                    seen = await events_until(client, "tool_call_output_delta")
                    serve.process.send_signal(signal.SIGKILL)  # right after a live-only event
                    with trio.fail_after(HANG_GUARD):
                        await serve.process.wait()
        finally:
            end_orphaned_command(work)
        highest = max(event.seq for event in seen)
        assert seen[-1].kind == "tool_call_output_delta" and seen[-1].seq == highest

        async with (
            troupe_serve(data_dir, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            await subscribe(client, session, after_seq=highest)
            resumed = await events_until(client, "processing_end")
            kinds = [event.kind for event in resumed]
            assert "input_interrupted" in kinds, kinds
            assert all(event.seq > highest for event in resumed)

            await client.request(SubmitInput, session=session, text="again")
            later = await events_until(client, "processing_end")
            seqs = [event.seq for event in seen + resumed + later]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
