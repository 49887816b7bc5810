"""The editor's file system over ACP: a client advertising ``fs.readTextFile`` and
``fs.writeTextFile`` (the official SDK's client, answering from in-memory buffers
that differ from the disk) gets the session's reads and writes; the disk does not."""

from __future__ import annotations

from pathlib import Path

from tests.acp.test_acp_sdk_client import drive, scripted_provider


def test_reads_and_writes_go_through_the_editors_buffers(tmp_path: Path):
    work = tmp_path.resolve() / "work"
    work.mkdir()
    notes = work / "notes.txt"
    notes.write_text("saved on disk\n")
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "notes.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "file_path": "notes.txt", "old_string": "unsaved", "new_string": "edited"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {
            "file_path": "new.txt", "content": "fresh\n"}}]},
        {"text": "Done."},
    ]  # fmt: skip
    buffers = {str(notes): "unsaved buffer\nsecond line\n"}
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["edit notes"], buffers=buffers)
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        ends = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"]
        assert [end["status"] for end in ends] == ["completed"] * 3, ends
        read_output = ends[0]["content"][0]["content"]["text"]
        assert "unsaved buffer" in read_output and "saved on disk" not in read_output
        assert result["buffers"][str(notes)] == "edited buffer\nsecond line\n"
        assert result["buffers"][str(work / "new.txt")] == "fresh\n"
        assert notes.read_text() == "saved on disk\n", "the disk is left alone"
        assert not (work / "new.txt").exists()
        requests = result["fsRequests"]
        assert {r["sessionId"] for r in requests} == {result["sessionId"]}
        assert all(Path(r["path"]).is_absolute() for r in requests)
        writes = [(r["path"], r["content"]) for r in requests if r["method"] == "write"]
        assert writes == [
            (str(notes), "edited buffer\nsecond line\n"),
            (str(work / "new.txt"), "fresh\n"),
        ]
