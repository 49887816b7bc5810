"""The editor's file system and terminals for ACP sessions: ``fs/read_text_file``,
``fs/write_text_file`` and ``terminal/*`` where the editor offers them.

A session created through ACP names the operations the editor's capabilities
allow (``client_operations`` in ``create_session``); the server then sends each
such file operation of the session to this host as a ``client_call`` frame,
which becomes the ACP request to the editor, and the editor's answer goes back
as ``client_call_result``. So the agent reads unsaved buffers, the editor shows
every write, and commands run in the editor's terminals, where the user watches
them. The server has already applied the policy, and bounds the wait for an
answer; a ``client_call_cancel`` (an interrupted input, a timeout) kills the
command by releasing its terminal.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import trio

from protocol.wire import ClientCall, ClientCallCancel, ClientCallError
from protocol.wire_client_calls import (
    ClientOperation,
    ReadTextFileCall,
    RunCommandCall,
    WriteTextFileCall,
)

if TYPE_CHECKING:
    from protocol.client import TroupeClient

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
"""ACP's error code for a file the editor does not have."""
EDITOR_ANSWER_LIMIT = 120.0
"""How long a request to the editor is kept open (the server gave up well before)."""

AskEditor = Callable[[str, dict[str, Any]], Awaitable[Any]]
ShowTerminal = Callable[[str, str], Awaitable[None]]
"""Called with (session id, terminal id) once a command's terminal exists."""
RELEASE_LIMIT = 5.0


class EditorRefused(Exception):
    """The editor answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def served_operations(capabilities: dict[str, Any]) -> list[ClientOperation]:
    """What the editor's ``clientCapabilities`` let it serve."""
    fs = capabilities.get("fs")
    if not isinstance(fs, dict):
        fs = {}
    served: list[ClientOperation] = []
    if fs.get("readTextFile") is True:
        served.append("read_text_file")
    if fs.get("writeTextFile") is True:
        served.append("write_text_file")
    if capabilities.get("terminal") is True:
        served.append("run_command")
    return served


async def serve_client_calls(
    client: TroupeClient, ask_editor: AskEditor, show_terminal: ShowTerminal
) -> None:
    """Answer every ``client_call`` through the editor, each in its own task that
    a ``client_call_cancel`` cancels."""
    running: dict[int, trio.CancelScope] = {}
    async with trio.open_nursery() as nursery:
        async for call in client.calls():
            if isinstance(call, ClientCallCancel):
                scope = running.get(call.id)
                if scope is not None:
                    scope.cancel()
                continue
            running[call.id] = trio.CancelScope()
            editor = _Editor(ask_editor, show_terminal)
            nursery.start_soon(_serve, client, editor, call, running)


class _Editor:
    def __init__(self, ask: AskEditor, show_terminal: ShowTerminal) -> None:
        self.ask = ask
        self.show_terminal = show_terminal


async def _serve(
    client: TroupeClient, editor: _Editor, call: ClientCall, running: dict[int, trio.CancelScope]
) -> None:
    result: dict[str, Any] | None = None
    error: ClientCallError | None = None
    limit = EDITOR_ANSWER_LIMIT
    if isinstance(call.call, RunCommandCall):
        limit += call.call.timeout_ms / 1000
    with running[call.id], trio.move_on_after(limit):
        try:
            result = await _ask(editor, call)
        except EditorRefused as refused:
            code = "file_not_found" if refused.code == RESOURCE_NOT_FOUND else "client_error"
            error = ClientCallError(code, f"the editor refused: {refused}")
    del running[call.id]
    if result is None and error is None:
        return  # the server stopped waiting long ago
    # the WebSocket stack's error, imported once there is a call to answer: ``troupe
    # acp`` answers ``initialize`` before it has a connection (issue #36)
    from protocol.client import ConnectionClosed

    try:
        await client.answer_call(call.id, result, error)
    except ConnectionClosed:
        log.info("client_call %s: the server connection is gone", call.id)


async def _ask(editor: _Editor, call: ClientCall) -> dict[str, Any]:
    ask_editor = editor.ask
    match call.call:
        case ReadTextFileCall(path=path):
            params = {"sessionId": call.session, "path": path}
            answer = await ask_editor("fs/read_text_file", params)
            content = answer.get("content") if isinstance(answer, dict) else None
            if not isinstance(content, str):
                raise EditorRefused(0, "fs/read_text_file answered without text content")
            return {"content": content}
        case WriteTextFileCall(path=path, content=content):
            params = {"sessionId": call.session, "path": path, "content": content}
            await ask_editor("fs/write_text_file", params)
            return {}
        case RunCommandCall() as command:
            return await _run_in_terminal(editor, call.session, command)


async def _run_in_terminal(
    editor: _Editor, session: str, command: RunCommandCall
) -> dict[str, Any]:
    """``bash -c`` in a terminal of the editor: wait (killing it at the timeout),
    read its output, release it (which kills it if still running, e.g. when this
    call is cancelled)."""
    params = {
        "sessionId": session,
        "command": "bash",
        "args": ["-c", command.command],
        "cwd": command.working_dir,
        "env": [{"name": name, "value": value} for name, value in command.env.items()],
        "outputByteLimit": command.output_byte_limit,
    }
    created = await editor.ask("terminal/create", params)
    terminal = created.get("terminalId") if isinstance(created, dict) else None
    if not isinstance(terminal, str):
        raise EditorRefused(0, "terminal/create answered without a terminalId")
    ids = {"sessionId": session, "terminalId": terminal}
    exited: Any = None
    try:
        await editor.show_terminal(session, terminal)
        timed_out = False
        with trio.move_on_after(command.timeout_ms / 1000) as waiting:
            exited = await editor.ask("terminal/wait_for_exit", ids)
        if waiting.cancelled_caught:
            timed_out = True
            await editor.ask("terminal/kill", ids)
            exited = await editor.ask("terminal/wait_for_exit", ids)
        shown = await editor.ask("terminal/output", ids)
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(RELEASE_LIMIT):
            try:
                await editor.ask("terminal/release", ids)
            except EditorRefused as refused:
                log.info("terminal/release %s: %s", terminal, refused)
    shown = shown if isinstance(shown, dict) else {}
    status = shown.get("exitStatus") or (exited if isinstance(exited, dict) else {}) or {}
    return {
        "output": str(shown.get("output", "")),
        "truncated": bool(shown.get("truncated", False)),
        "exit_code": status.get("exitCode"),
        "signal": status.get("signal"),
        "timed_out": timed_out,
    }
