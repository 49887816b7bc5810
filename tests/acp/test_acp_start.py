"""``troupe acp`` answers ``initialize`` before its server is there (issue 36): the
answer needs no server, and an editor waits for it before anything else. Every
other request waits for the server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import trio

HANG_GUARD = 60


def _line(request: dict[str, object]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **request}) + "\n").encode()


async def test_initialize_is_answered_while_the_server_has_not_answered(tmp_path: Path) -> None:
    # A server that accepts the connection and never answers the WebSocket handshake.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"ws://127.0.0.1:{silent.getsockname()[1]}"
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "actors.cli", "acp", "--data-dir", str(tmp_path),
             "--connect", url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        try:
            with trio.fail_after(HANG_GUARD):
                initialize = {"protocolVersion": 1}
                new = {"cwd": str(tmp_path), "mcpServers": []}
                await process.stdin.send_all(
                    _line({"id": 1, "method": "initialize", "params": initialize})
                    + _line({"id": 2, "method": "session/new", "params": new})
                )
                received = b""
                while b"\n" not in received:
                    chunk = await process.stdout.receive_some()
                    assert chunk, "troupe acp ended without answering initialize"
                    received += chunk
            answer = json.loads(received.split(b"\n")[0])
            assert answer["id"] == 1
            assert answer["result"]["protocolVersion"] == 1
            # session/new needs the server, which has not answered: no reply yet
            assert received.split(b"\n", 1)[1] == b""
            assert process.poll() is None
        finally:
            process.kill()
            await process.wait()
