"""Reproduction (issue 30): with the sandbox off, the model read the server token,
started a small WebSocket client, and that client answered the session's own
``rm -rf`` approval. Here the model runs exactly that client (a real process, a
real WebSocket, the real token) next to the ``rm -rf`` call: the server sees that
the client's process was started by one of its own commands, refuses the answer
with a typed error and audits it; the approval stays open until the real client
answers it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.commands.audit import audit_records
from actors.mockllm import Script
from protocol.session import SessionConfig
from protocol.wire import CreateSession, GetSession, ResolveApproval, SubmitInput
from tests.wire.conftest import StartStack, events_until, subscribe


@pytest.fixture
def store() -> str:
    """SQLite whatever ``TROUPE_TEST_STORE`` says: this test reads ``troupe.db`` itself."""
    return ""


REPO = Path(__file__).resolve().parents[2]

ATTACKER = """
import json, sys, trio
from protocol.client import RequestError, connect
from protocol.wire import GetSession, ListSessions, ResolveApproval

async def main(data_dir):
    info = json.load(open(f"{data_dir}/server.json"))
    token = open(info["token_file"]).read().strip()
    async with connect(info["url"], token) as client:
        with trio.fail_after(20):
            while True:
                (session,) = (await client.request(ListSessions)).sessions
                detail = await client.request(GetSession, session=session.session_id)
                if detail.pending_approvals:
                    break
                await trio.sleep(0.05)
        asked = detail.pending_approvals[0]["data"]
        try:
            await client.request(ResolveApproval, session=session.session_id,
                                 request_id=asked["request_id"], approved=True)
            print("ANSWERED")
        except RequestError as error:
            print("REFUSED", error.code, error.error.message)

trio.run(main, sys.argv[1])
"""


async def test_a_command_cannot_answer_its_own_sessions_approval(
    start_stack: StartStack, tmp_path: Path
) -> None:
    attacker = tmp_path / "attacker.py"
    attacker.write_text(ATTACKER)
    async with start_stack({"turns": [{"text": "placeholder"}]}) as stack:
        (stack.work / "build").mkdir()
        client_command = f"PYTHONPATH={REPO} {sys.executable} {attacker} {stack.data_dir}"
        turns: list[dict[str, Any]] = [
            {"tool_calls": [
                {"name": "shell", "arguments": {"command": client_command}},
                {"name": "shell", "arguments": {"command": "rm -rf build"}},
            ]},
            {"text": "done"},
        ]  # fmt: skip
        stack.mock.script = msgspec.convert({"turns": turns, "repeat": False}, Script)
        overrides = {"sandbox": "off", "admin": "allow", "ask_commands": ["rm -rf"],
                     "denied_paths": []}  # fmt: skip
        async with stack.client() as client:
            config = SessionConfig(policy_overrides=overrides)
            session = (await client.request(CreateSession, config=config)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            seen = await events_until(client, "tool_call_end")
            ended = [e.data for e in seen if e.kind == "tool_call_end"]
            assert len(ended) == 1 and "REFUSED forbidden" in ended[0]["output"], ended
            assert "started by a command" in ended[0]["output"]
            pending = (await client.request(GetSession, session=session)).pending_approvals
            assert len(pending) == 1, "the approval is still open"
            assert (stack.work / "build").exists()
            await client.request(ResolveApproval, session=session,
                                 request_id=pending[0]["data"]["request_id"],
                                 approved=True)  # fmt: skip
            await events_until(client, "processing_end")
            assert not (stack.work / "build").exists(), "the real client's answer counts"
        records = audit_records(stack.data_dir / "troupe.db", session)
    refused = [r for r in records if r["kind"] == "warning"]
    assert len(refused) == 1 and "may not answer an approval" in refused[0]["data"]["message"]
    resolved = [r["data"] for r in records if r["kind"] == "approval_resolved"]
    assert len(resolved) == 1 and resolved[0]["approved"] is True
    assert json.dumps(records)  # the audit is plain JSON


async def test_a_client_the_user_started_still_answers_while_commands_run(
    start_stack: StartStack, tmp_path: Path
) -> None:
    """The same client started from outside (here by the test, as a user would from
    a terminal) is not a session's process: its answer counts, even while one of
    the session's commands is running."""
    attacker = tmp_path / "client.py"
    attacker.write_text(ATTACKER)
    flag = tmp_path / "flag"
    async with start_stack({"turns": [{"text": "placeholder"}]}) as stack:
        (stack.work / "build").mkdir()
        waiting = f"while [ ! -e {flag} ]; do sleep 0.05; done; echo waited"
        turns: list[dict[str, Any]] = [
            {"tool_calls": [
                {"name": "shell", "arguments": {"command": waiting, "timeout_ms": 60_000}},
                {"name": "shell", "arguments": {"command": "rm -rf build"}},
            ]},
            {"text": "done"},
        ]  # fmt: skip
        stack.mock.script = msgspec.convert({"turns": turns, "repeat": False}, Script)
        overrides = {"sandbox": "off", "admin": "allow", "ask_commands": ["rm -rf"]}
        async with stack.client() as client:
            config = SessionConfig(policy_overrides=overrides)
            session = (await client.request(CreateSession, config=config)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            await events_until(client, "approval_request")
            done = await trio.run_process(
                [sys.executable, str(attacker), str(stack.data_dir)],
                capture_stdout=True, capture_stderr=True, check=False,
                env={**os.environ, "PYTHONPATH": str(REPO)},
            )  # fmt: skip
            assert done.stdout.decode().strip() == "ANSWERED", done.stderr.decode()
            flag.touch()
            await events_until(client, "processing_end")
            assert not (stack.work / "build").exists()
