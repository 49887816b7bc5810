"""The editor's file system for ACP sessions: ``fs/read_text_file`` and
``fs/write_text_file`` where the editor offers them.

A session created through ACP names the operations the editor's capabilities
allow (``client_operations`` in ``create_session``); the server then sends each
such file operation of the session to this host as a ``client_call`` frame,
which becomes the ACP request to the editor, and the editor's answer goes back
as ``client_call_result``. So the agent reads unsaved buffers and the editor
shows every write. The server has already applied the policy, and bounds the
wait for an answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from protocol.client import ConnectionClosed, TroupeClient
from protocol.wire import ClientCall, ClientCallError
from protocol.wire_client_calls import ClientOperation, ReadTextFileCall, WriteTextFileCall

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
"""ACP's error code for a file the editor does not have."""
EDITOR_ANSWER_LIMIT = 120.0
"""How long a request to the editor is kept open (the server gave up well before)."""

AskEditor = Callable[[str, dict[str, Any]], Awaitable[Any]]


class EditorRefused(Exception):
    """The editor answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def served_operations(capabilities: dict[str, Any]) -> list[ClientOperation]:
    """What the editor's ``clientCapabilities`` let it serve."""
    fs = capabilities.get("fs")
    if not isinstance(fs, dict):
        return []
    served: list[ClientOperation] = []
    if fs.get("readTextFile") is True:
        served.append("read_text_file")
    if fs.get("writeTextFile") is True:
        served.append("write_text_file")
    return served


async def serve_client_calls(client: TroupeClient, ask_editor: AskEditor) -> None:
    """Answer every ``client_call`` through the editor, each in its own task."""
    async with trio.open_nursery() as nursery:
        async for call in client.calls():
            nursery.start_soon(_serve, client, ask_editor, call)


async def _serve(client: TroupeClient, ask_editor: AskEditor, call: ClientCall) -> None:
    result: dict[str, Any] | None = None
    error: ClientCallError | None = None
    with trio.move_on_after(EDITOR_ANSWER_LIMIT):
        try:
            result = await _ask(ask_editor, call)
        except EditorRefused as refused:
            code = "file_not_found" if refused.code == RESOURCE_NOT_FOUND else "client_error"
            error = ClientCallError(code, f"the editor refused: {refused}")
    if result is None and error is None:
        return  # the server stopped waiting long ago
    try:
        await client.answer_call(call.id, result, error)
    except ConnectionClosed:
        log.info("client_call %s: the server connection is gone", call.id)


async def _ask(ask_editor: AskEditor, call: ClientCall) -> dict[str, Any]:
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
