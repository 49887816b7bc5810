"""ACP's ``initialize``, answered before the runtime is imported.

An editor starts ``troupe acp``, sends ``initialize`` and waits for the answer
before anything else. The answer says what this agent can do: it is the same on
every start and needs neither the server nor trio. Importing trio alone costs
more than ten bare interpreter starts on this stack, so ``troupe acp`` reads the
first line with plain blocking I/O, answers it here when it is ``initialize``,
and only then imports the runtime and starts the server (issue #36). Anything
else on the first line, and everything after it, is the agent's to handle
(:class:`actors.acp.agent.AcpAgent`), which answers a later ``initialize`` with
the same :func:`initialize_result`.

Standard library only, ``msgspec`` included among what it avoids: this module is
on the path before anything else is imported.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

import actors

PROTOCOL_VERSION = 1
_READ_SIZE = 65_536


class Handshake(NamedTuple):
    """What reading the first line left for the agent (a ``NamedTuple``, immutable
    like the frozen Structs elsewhere, because msgspec is not imported yet)."""

    unread: bytes
    """What was read from stdin and not handled here: the agent reads it first."""
    client_capabilities: dict[str, Any] | None
    """The editor's ``clientCapabilities`` when ``initialize`` was answered here."""


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """ACP's ``InitializeResponse``: the protocol version and this agent's
    capabilities (``params``, the editor's request, changes nothing in it)."""
    del params
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"fork": {}},
        },
        "authMethods": [],
        "agentInfo": {"name": "troupe", "title": "Troupe", "version": actors.__version__},
    }


def answer_initialize(stdin: int, stdout: int) -> Handshake:
    """Read ``stdin`` up to the end of its first line (or its end) and, when that
    line is an ``initialize`` request, write its answer to ``stdout``. Blocks until
    the line has arrived: an editor sends it as soon as it has started the agent."""
    read = b""
    while b"\n" not in read:
        chunk = os.read(stdin, _READ_SIZE)
        if not chunk:
            break
        read += chunk
    first, _, rest = read.partition(b"\n")
    request = _initialize_request(first)
    if request is None:
        return Handshake(read, None)
    params = request.get("params") or {}
    answer = {"jsonrpc": "2.0", "id": request["id"], "result": initialize_result(params)}
    _write_all(stdout, json.dumps(answer, separators=(",", ":")).encode() + b"\n")
    capabilities = params.get("clientCapabilities")
    return Handshake(rest, capabilities if isinstance(capabilities, dict) else {})


def _initialize_request(line: bytes) -> dict[str, Any] | None:
    """The line as an ``initialize`` request this module can answer, or None: a
    malformed or unusual one (a float id, params that are not an object) is left
    to the agent, which has the errors for it."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if message.get("method") != "initialize" or "id" not in message:
        return None
    identifier = message["id"]
    if isinstance(identifier, bool) or not isinstance(identifier, int | str):
        return None
    if not isinstance(message.get("params", {}), dict | None):
        return None
    return message


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
