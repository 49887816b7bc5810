"""File tools' paths are judged after the environment resolves them: a symlink
to /etc inside the working directory and ``../outside.txt`` are refused for
writes; a plain write inside the working directory goes through."""

from __future__ import annotations

from typing import Any

from protocol.wire import CreateSession, SubmitInput
from tests.wire.conftest import StartStack, events_until, subscribe


def write_turns(*paths: str) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "write_file", "arguments": {"file_path": p, "content": "x"}}]}
        for p in paths
    ]
    turns.append({"text": "done"})
    return {"turns": turns}


async def test_symlink_to_etc_and_dotdot_are_refused_for_writes(start_stack: StartStack) -> None:
    script = write_turns("etc-link/troupe-test", "../outside.txt", "inside.txt")
    async with start_stack(script) as stack:
        (stack.work / "etc-link").symlink_to("/etc")
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="write")
            seen = await events_until(client, "processing_end")
        ends = [e.data for e in seen if e.kind == "tool_call_end"]
        decisions = [e.data for e in seen if e.kind == "policy_decision"]
        assert [d["action"] for d in decisions] == ["deny", "deny", "allow"]
        assert decisions[0]["rule"] == "paths"
        assert "resolves to /etc/troupe-test" in ends[0]["output"]
        assert "outside the allowed paths" in ends[1]["output"]
        assert not (stack.work.parent / "outside.txt").exists()
        assert (stack.work / "inside.txt").read_text() == "x"


async def test_reads_of_credentials_are_refused(start_stack: StartStack) -> None:
    script = {
        "turns": [
            {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "/etc/shadow"}}]},
            {"text": "done"},
        ]
    }
    async with start_stack(script) as stack:
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="read")
            seen = await events_until(client, "processing_end")
        (end,) = [e.data for e in seen if e.kind == "tool_call_end"]
        assert end["is_error"] and "denied path" in end["output"]
