"""``session/fork`` (unstable in ACP) driven by the official ACP SDK's client: the
fork goes on with the original's conversation (the scripted provider answers by
how many answers the request carries), and a fork into another ``cwd`` gets its
own copy of the working tree there. ACP has no rewind (docs/decisions.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from tests.acp.test_acp_sdk_client import drive

SCRIPT = {
    "conversations": [{"match": "write the file", "turns": [
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"file_path": "hello.txt", "content": "hi\n"}}]},
        {"text": "Wrote hello.txt."},
        {"text": "The fork remembers the file."},
    ]}],
    "turns": [{"text": "a conversation without its history"}],
}  # fmt: skip


def test_session_fork_goes_on_with_the_conversation_in_its_own_tree(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_bytes(msgspec.json.encode(SCRIPT))
    command = [sys.executable, "-m", "actors.cli", "mock-llm", "--script", str(script)]
    mock = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert mock.stdout is not None
        url = next(w for w in mock.stdout.readline().split() if w.startswith("http"))
        own_tree = tmp_path.resolve() / "forked-tree"
        result = drive(
            tmp_path, url, prompts=["write the file"], forkPrompts=["what did you do?"],
            forkCwd=str(own_tree),
        )  # fmt: skip
    finally:
        mock.terminate()
        mock.wait()
    assert "error" not in result, result
    assert result["initialize"]["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
    fork = result["forkSessionId"]
    assert fork.startswith("s-") and fork != result["sessionId"]
    assert result["prompts"][-1] == {"stopReason": "end_turn", "fork": True}
    said = "".join(
        u["content"]["text"]
        for u in result["updates"]
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said.endswith("The fork remembers the file.")
    assert (own_tree / "hello.txt").read_text() == "hi\n"
