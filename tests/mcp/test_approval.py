"""A destructive MCP tool goes through the safety policy end to end: a real
``troupe``-side stack (server, WebSocket client), the SDK-built fixture server over
stdio, and the scripted model calling its ``wipe`` tool (``destructiveHint``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.session import SessionConfig
from protocol.wire import CreateSession, ResolveApproval, SubmitInput
from tests.mcp.servers import fixture_server
from tests.session.scripts import call, turns
from tests.wire.conftest import StartStack, events_until, subscribe


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event.data for event in events if event.kind == kind]


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file in the stack's working directory (where writes are allowed at all)."""
    work = tmp_path.resolve() / "work"
    work.mkdir()
    path = work / "victim.txt"
    path.write_text("precious\n")
    return path


async def test_a_destructive_tool_asks_rejected_then_allowed(
    start_stack: StartStack, victim: Path
) -> None:
    script = turns(
        [call("fx__echo", text="looking first")],
        [call("fx__wipe", path=str(victim))],
        [call("fx__wipe", path=str(victim))],
        "done",
    )
    async with start_stack(script) as stack, stack.client() as client:
        config = SessionConfig(mcp_servers=[fixture_server()])
        session = (await client.request(CreateSession, config=config)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="clean up")
        seen = await events_until(client, "approval_request")
        assert [end["output"] for end in _of(seen, "tool_call_end")] == [
            "echo: looking first"  # readOnlyHint: read, never asked
        ]
        asked = _of(seen, "approval_request")[0]
        assert str(victim) in str(asked)
        await client.request(ResolveApproval, session=session,
                             request_id=asked["request_id"], approved=False,
                             message="keep it")  # fmt: skip
        seen = await events_until(client, "approval_request")
        rejected = _of(seen, "tool_call_end")[0]
        assert rejected["is_error"] is True and "not approved: keep it" in rejected["output"]
        assert await trio.Path(victim).read_text() == "precious\n"
        again = _of(seen, "approval_request")[-1]
        await client.request(ResolveApproval, session=session,
                             request_id=again["request_id"], approved=True)  # fmt: skip
        seen = await events_until(client, "processing_end")
        allowed = _of(seen, "tool_call_end")[0]
        assert allowed["is_error"] is False and allowed["output"] == f"deleted {victim}"
        assert not await trio.Path(victim).exists()
        decisions = [(d["action"], d["decided_by"]) for d in _of(seen, "policy_decision")]
        assert ("allow", "client") in decisions
