"""Operations a client serves for the sessions it creates (server -> client calls).

An editor holds what the disk does not: unsaved buffers, and terminals the user
watches. A client that says so in ``create_session`` (``client_operations``) is
sent a ``client_call`` frame for each such operation of that session, and answers
it with one ``client_call_result`` frame carrying the same ``id`` (numbered by the
server, apart from the client's own request ids). The session's policy has judged
the operation before it is sent; paths are absolute.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

ClientOperation = Literal["read_text_file", "write_text_file", "run_command"]
"""What a client may offer to serve: reading a text file (its result
``{"content": "..."}``, the whole text, unsaved edits included), writing one
(its result ``{}``), and running a shell command where the user sees it (an
editor's terminal; its result a :class:`RunCommandResult`)."""


class ReadTextFileCall(msgspec.Struct, frozen=True, tag="read_text_file", tag_field="operation"):
    """Answer with ``{"content": <the file's whole text>}``."""

    path: str


class WriteTextFileCall(msgspec.Struct, frozen=True, tag="write_text_file", tag_field="operation"):
    """Replace the file's text with ``content`` (creating it); answer with ``{}``."""

    path: str
    content: str


class RunCommandCall(msgspec.Struct, frozen=True, tag="run_command", tag_field="operation"):
    """Run ``command`` with ``bash -c`` in ``working_dir`` with ``env`` added to the
    client's environment; stop it after ``timeout_ms`` (then ``timed_out``); keep at
    most the last ``output_byte_limit`` bytes of its output (stdout and stderr
    together). A ``client_call_cancel`` for this id means: kill it now."""

    command: str
    working_dir: str
    timeout_ms: int
    output_byte_limit: int
    env: dict[str, str] = {}


class RunCommandResult(msgspec.Struct, frozen=True):
    """How a command the client ran ended. ``exit_code`` is null when a signal
    ended it (``signal`` names it)."""

    output: str
    exit_code: int | None = None
    signal: str | None = None
    truncated: bool = False
    timed_out: bool = False


ClientCallBody = ReadTextFileCall | WriteTextFileCall | RunCommandCall


class ClientCall(msgspec.Struct, frozen=True, tag="client_call", tag_field="type"):
    """Server -> client: serve ``call`` for ``session`` (the id the client created)."""

    id: int
    session: str
    call: ClientCallBody


class ClientCallCancel(msgspec.Struct, frozen=True, tag="client_call_cancel", tag_field="type"):
    """Server -> client: the server no longer waits for call ``id`` (the session's
    work was interrupted, or the call timed out): stop what it started (kill a
    command). Its result, if one is still sent, is dropped."""

    id: int


class ClientCallError(msgspec.Struct, frozen=True):
    """Why the client could not serve a call. ``code`` is one of the environment's
    codes where one fits (``file_not_found``, ``permission_denied``), else any name."""

    code: str
    message: str


class ClientCallResult(msgspec.Struct, frozen=True, tag="client_call_result", tag_field="type"):
    """Client -> server: the answer to the ``client_call`` with this ``id``: a
    ``result`` or an ``error``. No reply comes back; an answer too late is dropped."""

    id: int
    result: dict[str, Any] | None = None
    error: ClientCallError | None = None


class ReadTextFileResult(msgspec.Struct, frozen=True):
    content: str


__all__ = [
    "ClientCall",
    "ClientCallBody",
    "ClientCallCancel",
    "ClientCallError",
    "ClientCallResult",
    "ClientOperation",
    "ReadTextFileCall",
    "ReadTextFileResult",
    "RunCommandCall",
    "RunCommandResult",
    "WriteTextFileCall",
]
