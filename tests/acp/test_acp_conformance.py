"""The official ACP SDK client's probe of ``troupe acp`` (see ``client.mjs``: every
message checked against the SDK's own schemas) finds no failure: malformed
JSON-RPC gets -32600 and the agent keeps serving; ``session/load`` answers an
object; instruction files are read from disk, never asked of the editor (no
failed ``fs/read_text_file`` per absent file); an ``admin`` call is asked through
``session/request_permission``, and the editor's reject and allow-once decide."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acp.test_acp_sdk_client import drive, scripted_provider

MALFORMED = [
    "null",
    "{}",
    json.dumps({"jsonrpc": "1.0", "id": 1, "method": "initialize"}),
    json.dumps({"jsonrpc": "2.0", "id": 2, "method": 42}),
    json.dumps({"jsonrpc": "2.0", "id": {}, "method": "initialize"}),
]


def test_the_sdk_clients_probe_finds_no_failure(tmp_path: Path):
    work = tmp_path.resolve() / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("Project rule: answer in haiku.\n")
    notes = work / "notes.txt"
    notes.write_text("on disk\n")
    admin = 'eval "echo admin-$((6 * 7))"'
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "notes.txt"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": admin}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": admin}}]},
        {"text": "Done."},
    ]
    buffers = {str(notes): "in the editor\n"}
    for url in scripted_provider(tmp_path, turns):
        result = drive(
            tmp_path, url, prompts=["go"], buffers=buffers, malformed=MALFORMED,
            permissions=["reject_once", "allow_once"],
        )  # fmt: skip
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        # Invalid requests: each answered -32600 (null id), and the session went on.
        codes = [answer["error"]["code"] for answer in result["invalidAnswers"]]
        assert codes == [-32600] * len(MALFORMED)
        # File reads: the model's read is the editor's buffer; AGENTS.md, CLAUDE.md
        # and the project's tool file came from disk, so no request failed.
        assert [(r["method"], r["path"]) for r in result["fsRequests"]] == [("read", str(notes))]
        assert result["failedRequests"] == []
        # Permission requests: the admin call is asked twice; reject, then allow.
        asked = result["permissionRequests"]
        assert [request["toolCall"]["title"] for request in asked] == [f"command: {admin}"] * 2
        calls = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call"]
        assert [request["toolCall"]["toolCallId"] for request in asked] == [
            call["toolCallId"] for call in calls[1:]
        ]
        assert {option["kind"] for option in asked[0]["options"]} >= {
            "allow_once", "reject_once",
        }  # fmt: skip
        ends = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"
                and u.get("status")]  # fmt: skip
        outputs = [end["content"][0]["content"]["text"] for end in ends]
        assert "in the editor" in outputs[0]
        assert "rejected in the editor" in outputs[1] and "admin-42" not in outputs[1]
        assert ends[2]["status"] == "completed" and "admin-42" in outputs[2]

        # session/load answers an object; the probe checks it on the wire.
        loaded = drive(tmp_path, url, prompts=[], loadSessionId=result["sessionId"])
        assert "error" not in loaded, loaded
        assert loaded["loaded"] == {}
        assert loaded["schemaErrors"] == [] and loaded["failedRequests"] == []
