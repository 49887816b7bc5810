"""Compaction from the command line: ``/compact [instructions]`` in an interactive
conversation (a real pty, then ``/cost`` shows the ledger), and ``troupe run
--context-window N`` compacting a long headless run on its own against a mock with
that window."""

from __future__ import annotations

import json

import trio

from actors.session.compaction import TRANSCRIPT_MARKER
from actors.session.context_view import SUMMARY_HEADER
from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal
from tests.cli.test_interactive import ENTER, Screen, plain_env

BIG = "".join(f"line {i} of the big file, with a few words\n" for i in range(100))


def rounds(count: int, window: int | None = None) -> dict[str, object]:
    script: dict[str, object] = {
        "rounds": count,
        "rounds_tool": "read_file",
        "rounds_arguments": {"file_path": "big.txt"},
        "conversations": [{"match": TRANSCRIPT_MARKER, "turns": [{"text": "Summary: reads."}]}],
    }
    if window is not None:
        script["context_window"] = window
    return script


async def test_slash_compact_with_instructions(home: Home) -> None:
    (home.work / "big.txt").write_text(BIG)
    async with mock_llm(rounds(6)) as mock:
        terminal = Terminal(home.argv("--base-url", mock.base_url), home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect("/help lists the commands")
                await screen.prompt()
                await terminal.type("read it again and again" + ENTER)
                await screen.expect("done")
                await screen.prompt()
                await terminal.type("/compact keep the file names" + ENTER)
                await screen.expect("compaction: summarized")
                await screen.prompt()
                await terminal.type("and now?" + ENTER)
                await screen.expect("done")
                await screen.prompt()
                await terminal.type("/cost" + ENTER)  # the ledger: compactions included
                await screen.expect("subagents and compactions included")
                await screen.expect("cache read")
                await screen.prompt()
                await terminal.type("/exit" + ENTER)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        bodies = request_bodies(mock)
    summary_requests = [b for b in bodies if TRANSCRIPT_MARKER in text_of(b)]
    assert len(summary_requests) == 1
    assert "keep the file names" in text_of(summary_requests[0])
    assert SUMMARY_HEADER in text_of(bodies[-1]) and "and now?" in text_of(bodies[-1])


async def test_run_with_a_context_window_compacts_on_its_own(home: Home) -> None:
    (home.work / "big.txt").write_text(BIG)
    window = 12_000
    async with mock_llm(rounds(40, window)) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--policy", "permissive",
            "--context-window", str(window), "--output-format", "stream-json", "read it all",
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr.decode()
    kinds = [json.loads(line).get("kind") for line in done.stdout.decode().splitlines() if line]
    assert "compaction_end" in kinds
    assert max(len(json.dumps(b)) // 4 for b in bodies) <= window * 1.1


async def test_a_bad_compaction_mode_is_one_line(home: Home) -> None:
    done = await home.troupe("run", "--compaction", "sometimes", "hello")
    assert done.returncode == 2
    assert b"unknown compaction 'sometimes'" in done.stderr and b"Traceback" not in done.stderr
