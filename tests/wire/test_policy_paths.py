"""File tools' paths are judged after the environment resolves them: a symlink
to /etc inside the working directory and ``../outside.txt`` are refused for
writes; a plain write inside the working directory goes through."""

from __future__ import annotations

from typing import Any

import msgspec

from actors.mockllm import Script
from protocol.session import SessionConfig
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


async def test_the_token_and_server_file_in_a_moved_data_dir_are_out_of_reach(
    start_stack: StartStack,
) -> None:
    """Reproduction (issue 30): the model read the server token and ``server.json``
    and answered its own approval. Here the data dir is a temporary directory (not
    a default place), so only the host knows it; it adds it to the denied paths:
    the file tools refuse it and the sandbox hides it."""
    async with start_stack({"turns": [{"text": "placeholder"}]}) as stack:
        token = stack.server.token_file
        files = (str(token), str(stack.data_dir / "server.json"), str(stack.data_dir / "x.txt"))
        turns: list[dict[str, Any]] = [
            {"tool_calls": [{"name": "read_file", "arguments": {"file_path": files[0]}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"file_path": files[1]}}]},
            {"tool_calls": [{"name": "write_file",
                             "arguments": {"file_path": files[2], "content": "x"}}]},
            {"tool_calls": [{"name": "shell", "arguments": {"command": f"cat {token}"}}]},
            {"text": "done"},
        ]  # fmt: skip
        stack.mock.script = msgspec.convert({"turns": turns}, Script)
        async with stack.client() as client:
            config = SessionConfig(policy_overrides={"sandbox": "on", "admin": "allow"})
            created = await client.request(CreateSession, config=config)
            session = created.session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="read the token")
            seen = await events_until(client, "processing_end")
    ends = [e.data for e in seen if e.kind == "tool_call_end"]
    assert len(ends) == 4
    for end in ends[:3]:
        assert end["is_error"] and "denied path" in end["output"], end
    assert stack.server.token not in ends[3]["output"], "the sandbox hides the data dir"
    assert not (stack.data_dir / "x.txt").exists()
