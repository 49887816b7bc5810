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


# ``troupe acp`` through the console script's entry point, recording the modules
# imported at the moment it writes its answer to ``initialize``.
_RECORD_AT_THE_ANSWER = """
import json, sys
record, sys.argv = sys.argv[1], ["troupe", *sys.argv[2:]]
from actors.acp import handshake
write = handshake._write_all
def recorded(fd, data):
    with open(record, "w") as out:
        json.dump(sorted(name for name, module in sys.modules.items() if module), out)
    write(fd, data)
handshake._write_all = recorded
from actors.console import main
sys.exit(main())
"""


def test_initialize_is_answered_before_the_runtime_is_imported(tmp_path: Path) -> None:
    """The answer is the same on every start: it is written before trio, msgspec
    or the agent are imported (trio alone costs more than ten bare starts), and the
    editor's capabilities and the line sent with it still reach the agent."""
    record = tmp_path / "modules.json"
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}}
    initialize = {"protocolVersion": 1, "clientCapabilities": capabilities}
    stdin = _line({"id": "first", "method": "initialize", "params": initialize}) + _line(
        {"id": 2, "method": "unknown/method"}
    )
    done = subprocess.run(
        [sys.executable, "-c", _RECORD_AT_THE_ANSWER, str(record), "acp",
         "--data-dir", str(tmp_path), "--connect", "ws://127.0.0.1:9"],
        input=stdin, capture_output=True, timeout=HANG_GUARD, cwd=tmp_path,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["id"] == "first"
    assert answers[0]["result"]["protocolVersion"] == 1
    assert answers[0]["result"]["agentCapabilities"]["loadSession"] is True
    modules = json.loads(record.read_text())
    assert "actors.acp.handshake" in modules
    early = {"trio", "msgspec", "httpx", "actors.acp.agent", "actors.commands.acp_serve"}
    assert early.isdisjoint(modules)
    # the second line was the agent's: an unknown method, answered as one
    assert answers[1] == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": -32601, "message": "unknown method unknown/method"},
    }


def test_a_first_line_that_is_not_a_plain_initialize_is_the_agents(tmp_path: Path) -> None:
    """Garbage, or an ``initialize`` the handshake does not take on (a float id),
    goes to the agent whole, which answers each line in order."""
    stdin = (
        b"not json\n"
        + _line({"id": 1.5, "method": "initialize", "params": {"protocolVersion": 1}})
        + _line({"id": 3, "method": "initialize", "params": {"protocolVersion": 1}})
    )
    done = subprocess.run(
        [sys.executable, "-m", "actors.cli", "acp", "--data-dir", str(tmp_path),
         "--connect", "ws://127.0.0.1:9"],
        input=stdin, capture_output=True, timeout=HANG_GUARD, cwd=tmp_path,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [None, 1.5, 3]
    assert answers[0]["error"]["code"] == -32700
    assert answers[1]["result"] == answers[2]["result"]
    assert answers[2]["result"]["protocolVersion"] == 1
