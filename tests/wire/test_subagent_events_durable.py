"""A subagent's events are stored under its own id and replayable over the wire by
its address, with sequence numbers that never go back: a ``troupe serve`` killed
(SIGKILL) right after a client received a subagent's live-only event, restarted,
gives a client resuming after the highest seq it saw ``input_interrupted``, and no
number is ever used twice. The resumed parent numbers its next subagent after it."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.events import EPHEMERAL_KINDS
from protocol.wire import CreateSession, ListSessions, SubmitInput
from tests.wire.conftest import (
    HANG_GUARD,
    end_orphaned_command,
    events_until,
    subscribe,
    troupe_serve,
)


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


# It talks only once the watcher listens (the ``talk`` file): output deltas are live-only.
TALKS_THEN_WAITS = (
    "echo $$ > command.pid; while [ ! -e talk ]; do sleep 0.05; done; "
    "echo live-only line; exec sleep 60"
)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


SCRIPT = {
    "conversations": [
        {
            "match": "PARENT",
            "turns": [
                call("spawn_agent", task="CHILD: talk, then wait"),
                call("wait", agent_ids=["a-1"], timeout_ms=120_000),
                call("spawn_agent", task="SECOND: answer at once"),
                call("wait", agent_ids=["a-2"], timeout_ms=120_000),
                {"text": "parent done"},
            ],
        },
        {"match": "SECOND", "turns": [{"text": "second done"}]},
        {
            "match": "CHILD",
            "turns": [call("shell", command=TALKS_THEN_WAITS), {"text": "child done"}],
        },
    ]
}


async def test_subagent_resume_after_a_live_only_event_gets_the_interruption(
    tmp_path: Path, store: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    script = msgspec.convert(SCRIPT, Script)
    async with serve_mock_llm(script) as mock:
        try:
            async with troupe_serve(data_dir, work, mock.base_url, store) as serve:
                token = (data_dir / "token").read_text().strip()
                async with (
                    connect(serve.url, token) as client,
                    connect(serve.url, token) as watcher,
                ):
                    session = (await client.request(CreateSession)).session.session_id
                    await subscribe(client, session)
                    await client.request(SubmitInput, session=session, text="PARENT: delegate")
                    spawned = await events_until(client, "subagent_spawned")
                    address = spawned[-1].data["address"]
                    await subscribe(watcher, address)
                    (work / "talk").touch()
                    seen = await events_until(watcher, "tool_call_output_delta")
                    serve.process.send_signal(signal.SIGKILL)  # right after a live-only event
                    with trio.fail_after(HANG_GUARD):
                        await serve.process.wait()
        finally:
            end_orphaned_command(work)
        assert {event.session for event in seen} == {address}
        highest = max(event.seq for event in seen)
        assert seen[-1].kind == "tool_call_output_delta" and seen[-1].seq == highest

        async with (
            troupe_serve(data_dir, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            await subscribe(client, address, after_seq=highest)
            resumed = await events_until(client, "processing_end")
            kinds = [event.kind for event in resumed]
            assert "input_interrupted" in kinds, kinds
            assert all(event.seq > highest for event in resumed)
            assert resumed[-1].data["interrupted"] is True

            await subscribe(client, address)  # the whole stored stream, from the start
            replayed = await events_until(client, "processing_end")
            while replayed[-1].seq < resumed[-1].seq:
                replayed += await events_until(client, "processing_end")

            # The resumed parent names its next subagent after the one it had.
            listed = (await client.request(ListSessions)).sessions
            await subscribe(client, session, after_seq=listed[0].last_seq)
            await client.request(SubmitInput, session=session, text="again")
            again = await events_until(client, "subagent_spawned")
            assert again[-1].data["address"] == address.replace("/a-1", "/a-2")
            assert (await events_until(client, "processing_end"))[-1].data["interrupted"] is False
    seqs = [event.seq for event in replayed]
    assert seqs == sorted(set(seqs))
    stored = {event.seq: event.kind for event in replayed}
    for event in seen:  # what a client saw before the kill is what the store holds
        if event.kind in EPHEMERAL_KINDS:
            assert event.seq not in stored
        else:
            assert stored[event.seq] == event.kind
    assert stored[min(stored)] == "session_start"
