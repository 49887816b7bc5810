"""A client that serves a session's file reads and writes (``client_operations``):
the session's file tools reach the client's copy (an editor's unsaved buffer), not
the disk; the policy judges paths before anything is sent; a client that does not
answer, answers badly, or goes away gives the tool a typed error, never a hang."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.client import RequestError, TroupeClient
from protocol.session import SessionConfig
from protocol.wire import (
    AbortSession,
    ClientCall,
    ClientCallCancel,
    ClientCallError,
    CreateSession,
    Event,
    SubmitInput,
)
from protocol.wire_client_calls import ReadTextFileCall, RunCommandCall, WriteTextFileCall
from tests.wire.conftest import HANG_GUARD, StartStack, events_until, subscribe

SERVED = ["read_text_file", "write_text_file"]
PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-unsaved edit\n+saved edit\n*** End Patch"


def calls_script(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "arguments": arguments}]} for name, arguments in calls
    ]
    turns.append({"text": "done"})
    return {"turns": turns}


async def serve_buffers(
    client: TroupeClient, buffers: dict[str, str], seen: list[ClientCall]
) -> None:
    """Answer calls from ``buffers`` (path -> text), as an editor would."""
    async for call in client.calls():
        if not isinstance(call, ClientCall):
            continue
        seen.append(call)
        match call.call:
            case ReadTextFileCall(path=path) if path in buffers:
                await client.answer_call(call.id, {"content": buffers[path]})
            case ReadTextFileCall(path=path):
                error = ClientCallError("file_not_found", f"no buffer for {path}")
                await client.answer_call(call.id, error=error)
            case WriteTextFileCall(path=path, content=content):
                buffers[path] = content
                await client.answer_call(call.id, {})


def path_of(call: ClientCall | ClientCallCancel) -> str:
    assert isinstance(call, ClientCall)
    assert isinstance(call.call, ReadTextFileCall | WriteTextFileCall)
    return call.call.path


def tool_ends(events: list[Event]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "tool_call_end"]


async def test_file_tools_use_the_clients_buffers(start_stack: StartStack) -> None:
    script = calls_script(
        ("read_file", {"file_path": "notes.txt"}),
        ("apply_patch", {"patch": PATCH}),
        ("write_file", {"file_path": "sub/new.txt", "content": "fresh\n"}),
        ("read_file", {"file_path": "/etc/shadow"}),
        ("read_file", {"file_path": "missing.txt"}),
    )
    async with start_stack(script) as stack:
        disk = stack.work / "notes.txt"
        disk.write_text("on disk\n")
        notes = str(stack.work / "notes.txt")
        buffers = {notes: "unsaved edit\nline two\n"}
        seen: list[ClientCall] = []
        async with stack.client() as client, trio.open_nursery() as nursery:
            nursery.start_soon(serve_buffers, client, buffers, seen)
            created = await client.request(CreateSession, client_operations=SERVED)
            session = created.session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="work on notes")
            events = await events_until(client, "processing_end")
            nursery.cancel_scope.cancel()
    ends = tool_ends(events)
    assert "unsaved edit" in ends[0]["output"] and "on disk" not in ends[0]["output"]
    assert not ends[1]["is_error"] and not ends[2]["is_error"], ends[1:3]
    assert buffers[notes] == "saved edit\nline two\n"
    assert buffers[str(stack.work / "sub" / "new.txt")] == "fresh\n"
    assert disk.read_text() == "on disk\n", "the disk is not written"
    assert not (stack.work / "sub").exists()
    assert ends[3]["is_error"] and "denied path" in ends[3]["output"]
    assert ends[4]["is_error"] and "no buffer for" in ends[4]["output"]
    assert all(call.session == session for call in seen)
    paths = [path_of(call) for call in seen]
    assert all(Path(path).is_absolute() for path in paths)
    assert "/etc/shadow" not in paths, "the policy refused before the client was asked"


async def test_an_unknown_operation_is_refused(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        with pytest.raises(RequestError) as refused:
            await client.request(CreateSession, client_operations=["teleport"])
        assert refused.value.code == "invalid_request"
        assert "client_operations" in str(refused.value)


async def test_without_client_operations_nothing_is_asked(start_stack: StartStack) -> None:
    script = calls_script(("write_file", {"file_path": "plain.txt", "content": "disk\n"}))
    async with start_stack(script) as stack:
        seen: list[ClientCall] = []
        async with stack.client() as client, trio.open_nursery() as nursery:
            nursery.start_soon(serve_buffers, client, {}, seen)
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="write")
            events = await events_until(client, "processing_end")
            nursery.cancel_scope.cancel()
        assert not tool_ends(events)[0]["is_error"]
        assert (stack.work / "plain.txt").read_text() == "disk\n"
        assert seen == []


async def test_a_silent_or_wrong_client_is_a_typed_tool_error(start_stack: StartStack) -> None:
    script = calls_script(
        ("read_file", {"file_path": "a.txt"}),
        ("read_file", {"file_path": "a.txt"}),
    )
    async with start_stack(script, client_call_timeout=0.5) as stack:
        (stack.work / "a.txt").write_text("disk\n")
        async with stack.client() as client, trio.open_nursery() as nursery:

            async def silent_then_wrong() -> None:
                answered = 0
                async for call in client.calls():
                    if isinstance(call, ClientCallCancel):
                        cancelled.append(call.id)
                        continue
                    if not path_of(call).endswith("/a.txt"):  # project docs: none
                        error = ClientCallError("file_not_found", "none")
                        await client.answer_call(call.id, error=error)
                        continue
                    answered += 1
                    if answered == 1:
                        silent.append(call.id)
                    if answered == 2:  # the first is never answered
                        await client.answer_call(call.id, {"text": "not the field"})
                        await client.answer_call(call.id, {"content": "twice"})  # dropped

            silent: list[int] = []
            cancelled: list[int] = []
            nursery.start_soon(silent_then_wrong)
            created = await client.request(CreateSession, client_operations=["read_text_file"])
            session = created.session.session_id
            await subscribe(client, session)
            with trio.fail_after(HANG_GUARD):
                await client.request(SubmitInput, session=session, text="read")
                events = await events_until(client, "processing_end")
            nursery.cancel_scope.cancel()
    first, second = tool_ends(events)
    assert first["is_error"] and "did not answer within 0.5 s" in first["output"]
    assert second["is_error"] and "bad result" in second["output"]
    assert cancelled == silent, "the server said it gave up on the silent call"


async def test_a_client_gone_mid_call_then_the_disk(start_stack: StartStack) -> None:
    script = calls_script(
        ("read_file", {"file_path": "a.txt"}),
        ("read_file", {"file_path": "a.txt"}),
    )

    async def leave_at_first_read(editor: TroupeClient, scope: trio.CancelScope) -> None:
        async for call in editor.calls():
            if path_of(call).endswith("/a.txt"):
                scope.cancel()  # the editor goes away without answering
                return
            error = ClientCallError("file_not_found", "none")  # project docs
            await editor.answer_call(call.id, error=error)

    async with start_stack(script) as stack:
        (stack.work / "a.txt").write_text("from disk\n")
        async with stack.client() as watcher:
            async with stack.client() as editor, trio.open_nursery() as nursery:
                nursery.start_soon(leave_at_first_read, editor, nursery.cancel_scope)
                created = await editor.request(CreateSession, client_operations=SERVED)
                session = created.session.session_id
                await subscribe(watcher, session)
                await editor.request(SubmitInput, session=session, text="read twice")
                await trio.sleep(HANG_GUARD)
            # That call fails; the next one reads the disk.
            events = await events_until(watcher, "processing_end")
            served_by = stack.server.registry.client_environments[session]
            assert served_by.alive
            await watcher.request(AbortSession, session=session)
            await events_until(watcher, "session_end")
            with trio.fail_after(HANG_GUARD):
                await served_by.wait_stopped()  # ended with its session
    first, second = tool_ends(events)
    assert first["is_error"] and "disconnected before answering" in first["output"]
    assert not second["is_error"] and "from disk" in second["output"]


async def test_commands_run_on_the_client_unless_the_policy_confines_them(
    start_stack: StartStack,
) -> None:
    script = calls_script(("shell", {"command": "echo from-the-server"}))
    script["turns"] = [*script["turns"]] * 3  # one session after another
    async with start_stack(script) as stack:
        seen: list[ClientCall] = []

        async def terminal(client: TroupeClient) -> None:
            async for call in client.calls():
                if isinstance(call, ClientCall) and isinstance(call.call, RunCommandCall):
                    seen.append(call)
                    result = {"output": "from the client\n", "signal": "SIGTERM"}
                    await client.answer_call(call.id, result)

        async def run(config: SessionConfig) -> dict[str, Any]:
            async with stack.client() as client, trio.open_nursery() as nursery:
                nursery.start_soon(terminal, client)
                created = await client.request(
                    CreateSession, client_operations=["run_command"], config=config
                )
                session = created.session.session_id
                await subscribe(client, session)
                await client.request(SubmitInput, session=session, text="run")
                events = await events_until(client, "processing_end")
                nursery.cancel_scope.cancel()
            (end,) = tool_ends(events)
            return end

        # The client's terminal cannot confine a command: only a session whose policy
        # turns the sandbox off and passes the variables on has its commands served.
        unconfined = {"sandbox": "off", "env": "deny_secrets"}
        served = await run(SessionConfig(policy_overrides=unconfined))
        assert "from the client" in served["output"] and "ended by SIGTERM" in served["output"]
        assert "[exit code: 143," in served["output"], "128 + SIGTERM, as a shell says"
        (call,) = seen
        assert isinstance(call.call, RunCommandCall)
        assert (call.call.command, call.call.working_dir) == (
            "echo from-the-server",
            str(stack.work),
        )
        assert call.call.timeout_ms > 0 and call.call.output_byte_limit > 0
        confined = await run(SessionConfig(policy_overrides={"sandbox": "off"}))
        assert "from-the-server" in confined["output"], "the environment enforces the allowlist"
        sandboxed = await run(SessionConfig())
        assert "from-the-server" in sandboxed["output"], "the environment enforces the sandbox"
        assert len(seen) == 1
