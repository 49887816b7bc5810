"""A pending approval survives a server SIGKILL: after the restart the session is
back awaiting it, a client that subscribes sees the request, answers it, and the
round carries on (real ``troupe serve`` processes, a real WebSocket client)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import CreateSession, ListSessions, ResolveApproval, SubmitInput
from tests.wire.conftest import HANG_GUARD, events_until, subscribe, troupe_serve


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


ROUND = {
    "turns": [
        {
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo one >> one.txt"}},
                {"name": "shell", "arguments": {"command": "rm -rf build"}},
            ]
        },
        {"text": "Cleaned."},
    ],
    "repeat": False,
}


async def test_pending_approval_is_answered_after_a_sigkill(tmp_path: Path, store: str) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    (work / "build").mkdir(parents=True)
    async with serve_mock_llm(msgspec.convert(ROUND, Script)) as mock:
        async with troupe_serve(data_dir, work, mock.base_url, store) as serve:
            token = (data_dir / "token").read_text().strip()
            async with connect(serve.url, token) as client:
                session = (await client.request(CreateSession)).session.session_id
                await subscribe(client, session)
                await client.request(SubmitInput, session=session, text="clean up")
                seen = await events_until(client, "approval_request")
                if not any(event.kind == "tool_call_end" for event in seen):
                    await events_until(client, "tool_call_end", into=seen)  # calls run in parallel
                serve.process.send_signal(signal.SIGKILL)
                with trio.fail_after(HANG_GUARD):
                    await serve.process.wait()
        (asked,) = [event.data for event in seen if event.kind == "approval_request"]
        assert asked["subject"] == "rm -rf build"
        highest = max(event.seq for event in seen)

        async with (
            troupe_serve(data_dir, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            listed = await client.request(ListSessions)
            (info,) = [s for s in listed.sessions if s.session_id == session]
            assert info.state == "processing"
            await subscribe(client, session, after_seq=highest)
            again = (await events_until(client, "approval_request"))[-1]
            assert again.resent and again.data["request_id"] == asked["request_id"]
            assert (work / "build").exists()
            await client.request(ResolveApproval, session=session,
                                 request_id=asked["request_id"], approved=True)  # fmt: skip
            after = await events_until(client, "processing_end")
    kinds = [event.kind for event in after]
    assert "input_interrupted" not in kinds, kinds
    resolved = [e.data for e in after if e.kind == "approval_resolved"]
    assert [(r["approved"], r["by"]) for r in resolved] == [(True, "client")]
    assert not (work / "build").exists()
    assert (work / "one.txt").read_text() == "one\n", "the finished call did not run again"
    ended = [e.data for e in after if e.kind == "tool_call_end"]
    assert [e["tool_name"] for e in ended] == ["shell"] and not ended[0]["is_error"]
    # The model's next request carries both calls' results.
    last: Any = msgspec.json.decode(mock.requests[-1].body)
    outputs = [item for item in last["input"] if item.get("type") == "function_call_output"]
    assert len(outputs) == 2, outputs
    assert "[exit code: 0" in outputs[0]["output"] and "[exit code: 0" in outputs[1]["output"]
