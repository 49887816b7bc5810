"""Bad input to ``troupe acp`` gets JSON-RPC errors, one per request, and every
request sent before stdin closes is answered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HANG_GUARD = 60


def test_every_request_gets_an_answer_or_a_typed_error(tmp_path: Path):
    initialize = {"protocolVersion": 1, "clientCapabilities": {"terminal": False}}
    requests = [
        "not json",
        "[1]",
        # The official SDK's own list of malformed calls (its jsonrpc tests), each
        # answered -32600 with a null id, the connection kept open.
        "null",
        "42",
        "{}",
        {"jsonrpc": "1.0", "id": 10, "method": "initialize"},
        '{"jsonrpc": "2.0", "id": 11, "method": 42}',
        '{"jsonrpc": "2.0", "id": {}, "method": "initialize"}',
        '{"jsonrpc": "2.0", "id": true, "method": "initialize"}',
        # A response to nothing asked: not answered back.
        {"id": 99, "result": {}},
        {"id": 0, "method": "initialize", "params": initialize},
        {"id": 1, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}},
        {"id": 2, "method": "bogus"},
        {"id": 3, "method": "session/new", "params": {"cwd": "relative"}},
        {"id": 4, "method": "session/load", "params": {"sessionId": "s-x", "cwd": "/tmp"}},
        {"id": 5, "method": "session/new", "params": {}},
    ]
    lines = [r if isinstance(r, str) else json.dumps({"jsonrpc": "2.0", **r}) for r in requests]
    done = subprocess.run(
        [sys.executable, "-m", "actors.cli", "acp", "--data-dir", str(tmp_path), "--api-key", "k"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=HANG_GUARD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {answer["id"]: answer for answer in answers}
    assert [a["error"]["code"] for a in answers if a["id"] is None] == [-32700] + [-32600] * 8
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)
    assert 99 not in by_id and 10 not in by_id and 11 not in by_id
    assert by_id[0]["result"]["protocolVersion"] == 1
    assert by_id[0]["result"]["agentCapabilities"]["loadSession"] is True
    assert {i: by_id[i]["error"]["code"] for i in (1, 2, 3, 4, 5)} == {
        1: -32602, 2: -32601, 3: -32602, 4: -32602, 5: -32602,
    }  # fmt: skip
    assert "Traceback" not in done.stderr
