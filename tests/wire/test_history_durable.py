"""History is durable as it happens: a ``troupe serve`` killed with SIGKILL in the
middle of an input has stored exactly the session's history up to its last
completed turn, the same turns a run that was not killed holds at that point."""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import TroupeClient, connect
from protocol.session import AssistantTurn, CompactionTurn, RewindTurn, ToolResultsTurn, Turn
from protocol.wire import CreateSession, GetSession, SubmitInput
from tests.waiting import wait_for_file
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


WAITS_FOR_GO = "echo $$ > command.pid; while [ ! -e go ]; do sleep 0.05; done; echo three"
SCRIPT = shell_turns("echo one", "echo two", WAITS_FOR_GO, final="Three rounds done.")
TURNS_AT_THE_THIRD_CALL = 6
"""user, (assistant, results) x 2, and the assistant turn that asked for the third call."""
TIMED = re.compile(r"duration: [^\]]*")


def comparable(turn: Turn) -> tuple[Any, ...]:
    """A turn without what differs between two runs (times, ids, token counts)."""
    if isinstance(turn, AssistantTurn):
        return ("assistant", turn.content, [(c.name, c.arguments) for c in turn.tool_calls])
    if isinstance(turn, ToolResultsTurn):
        return (
            "results",
            [(r.name, TIMED.sub("duration: -", str(r.content)), r.is_error) for r in turn.results],
        )
    if isinstance(turn, CompactionTurn):
        return ("compaction", turn.summary, turn.start, turn.end, turn.pruned_before)
    if isinstance(turn, RewindTurn):
        return ("rewind", turn.keep, turn.to_seq, turn.summary)
    return (type(turn).__name__, turn.content)


async def start_input(client: TroupeClient) -> str:
    """Submit the input and return once the third call has started."""
    session = (await client.request(CreateSession)).session.session_id
    await subscribe(client, session)
    await client.request(SubmitInput, session=session, text="three rounds")
    for _ in range(3):
        await events_until(client, "tool_call_start")
    return session


async def stored_history(client: TroupeClient, session: str) -> list[Turn]:
    return (await client.request(GetSession, session=session)).history


async def test_stored_history_after_sigkill_matches_a_run_not_killed(
    tmp_path: Path, store: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    script = msgspec.convert(SCRIPT, Script)

    # The run that is not killed: the third command is let go, the input ends.
    kept_data, kept_work = root / "kept-data", root / "kept-work"
    kept_work.mkdir()
    async with (
        serve_mock_llm(script) as mock,
        troupe_serve(kept_data, kept_work, mock.base_url, store) as serve,
        connect(serve.url, (kept_data / "token").read_text().strip()) as client,
    ):
        session = await start_input(client)
        (kept_work / "go").touch()
        await events_until(client, "processing_end")
        kept = await stored_history(client, session)
    assert [type(turn).__name__ for turn in kept][-1] == "AssistantTurn"
    assert len(kept) == TURNS_AT_THE_THIRD_CALL + 2  # the third results, the final answer

    # The run killed while the third command runs.
    data, work = root / "data", root / "work"
    work.mkdir()
    async with serve_mock_llm(script) as mock:
        try:
            async with troupe_serve(data, work, mock.base_url, store) as serve:
                token = (data / "token").read_text().strip()
                async with connect(serve.url, token) as client:
                    session = await start_input(client)
                    await wait_for_file(work / "command.pid")  # so the test can end it
                    serve.process.send_signal(signal.SIGKILL)
                    with trio.fail_after(HANG_GUARD):
                        await serve.process.wait()
        finally:
            end_orphaned_command(work)
        async with (
            troupe_serve(data, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            recovered = await stored_history(client, session)
    assert len(recovered) == TURNS_AT_THE_THIRD_CALL
    assert [comparable(t) for t in recovered] == [
        comparable(t) for t in kept[:TURNS_AT_THE_THIRD_CALL]
    ]
